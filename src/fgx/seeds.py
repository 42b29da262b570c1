"""Per-job seeds and the canonical JSON every job's params are written in: the plan derives each job's seed
from the config's, an engine the seeds within a job from the job's."""

from __future__ import annotations

import hashlib
import json
from typing import Any


def derive_seed(seed: int, *names: Any) -> int:
    """A per-job seed: stable across runs and machines, different for every job name."""
    blob = ":".join([str(seed), *map(str, names)]).encode()
    return int.from_bytes(hashlib.sha256(blob).digest()[:4], "little")


def dumps(obj: Any) -> str:
    """Canonical JSON for params (sorted keys: equal settings give equal strings)."""
    return json.dumps(obj, sort_keys=True, separators=(",", ":"))
