"""Resumable checkpoints of the torch engine's training loops (pretraining, SFT, RL).

A work directory outside the job's declared output holds ``step_00000012/`` = HF checkpoint +
``trainer_state.pt`` (optimizer, scheduler, RNG states, the loop's own fields), each written
atomically; the newest complete one is resumed from. The directory is stamped with a fingerprint
of the run's settings and inputs (:func:`fgx.io.prepare_work_dir`): a rerun with a changed setting
or input starts clean instead of resuming another run.

Only tensors, numbers and strings are stored, so every file loads with ``weights_only=True``.

A checkpoint that does not load (a ``trainer_state.pt`` or weights file truncated by a power loss or
damaged on disk) is moved aside as ``corrupt-...`` in the work directory, named in the log, and the
next older one is tried, else the run starts clean. It is never a reason to stop: a checkpoint only
saves time (a resumed run reaches the same weights as an uninterrupted one), so recomputing loses
hours at worst, while stopping would make every retry of the job fail on the same file.
"""

from __future__ import annotations

import os
import random
import shutil
import time
from pathlib import Path
from typing import Any, Callable, Mapping

import numpy as np
import torch

from fgx.engines.torch.model import save_checkpoint
from fgx.io import prepare_work_dir, remove_work_dir, set_aside

# Seconds between time-based checkpoints of pretraining and SFT (an interrupted job loses at most
# this much work). FGX_CHECKPOINT_SECONDS changes it without changing any result.
CHECKPOINT_SECONDS = float(os.environ.get("FGX_CHECKPOINT_SECONDS", "60"))


class Checkpointer:
    """Keeps the newest ``keep`` checkpoints of one run in ``root`` (see the module docstring)."""

    def __init__(self, root: str | os.PathLike, fingerprint: str, keep: int = 1, others=()):
        self.root = prepare_work_dir(root, fingerprint, others)
        self.keep = max(1, int(keep))
        self.last_save = time.monotonic()
        self._loaded = None  # (path, (state, weights)) that latest() read, for restore()

    def all(self) -> list[Path]:
        return sorted(p for p in self.root.glob("step_*") if (p / "trainer_state.pt").exists()
                      and (p / "config.json").exists())

    def latest(self) -> Path | None:
        """The newest checkpoint that loads; those that do not are set aside (module docstring)."""
        for path in reversed(self.all()):
            try:
                self._loaded = (path, read_checkpoint(path))
                return path
            except Exception as err:  # torch, pickle, zip and safetensors raise many types; reading changes nothing
                set_aside(path, f"{type(err).__name__}: {err}")
        return None

    def due(self) -> bool:
        """Whether a time-based checkpoint is due (CHECKPOINT_SECONDS since the last one)."""
        return time.monotonic() - self.last_save >= CHECKPOINT_SECONDS

    def save(self, step: int, model, tokenizer, state: dict,
             extra: Mapping[str, Callable[[Path], Any]] | None = None) -> Path:
        files = {"trainer_state.pt": lambda p: torch.save({**state, "rng": rng_state()}, p)}
        files.update(extra or {})
        path = save_checkpoint(model, tokenizer, self.root / f"step_{step:08d}", extra_files=files)
        for old in self.all()[: -self.keep]:
            shutil.rmtree(old, ignore_errors=True)
        self.last_save = time.monotonic()
        return path

    def restore(self, path: Path, model, opt, sched) -> dict:
        """Load checkpoint ``path`` into model, optimizer, scheduler and the global RNGs; return
        its trainer state (step and the loop's own fields)."""
        loaded, self._loaded = self._loaded, None
        st, sd = loaded[1] if loaded and loaded[0] == path else read_checkpoint(path)
        load_weights_into(model, path, sd)
        opt.load_state_dict(st["optimizer"])
        sched.load_state_dict(st["scheduler"])
        set_rng_state(st["rng"])
        return st

    def remove(self) -> None:
        """Delete the work directory (the run finished and its output is written)."""
        remove_work_dir(self.root)


def rng_state() -> dict:
    """The global RNG states as tensors and plain values (loadable with ``weights_only=True``)."""
    version, internal, gauss = random.getstate()
    kind, keys, pos, has_gauss, cached = np.random.get_state()
    st = {"python": [version, torch.tensor(internal, dtype=torch.int64), gauss],
          "numpy": [kind, torch.from_numpy(keys.astype(np.int64)), int(pos), int(has_gauss), float(cached)],
          "torch": torch.get_rng_state()}
    if torch.cuda.is_available():
        st["cuda"] = torch.cuda.get_rng_state_all()
    return st


def set_rng_state(st: dict) -> None:
    version, internal, gauss = st["python"]
    random.setstate((version, tuple(int(v) for v in internal.tolist()), gauss))
    kind, keys, pos, has_gauss, cached = st["numpy"]
    np.random.set_state((kind, keys.numpy().astype(np.uint32), pos, has_gauss, cached))
    torch.set_rng_state(st["torch"])
    if "cuda" in st and torch.cuda.is_available():
        torch.cuda.set_rng_state_all(st["cuda"])


TRAINER_KEYS = ("optimizer", "scheduler", "rng", "step")


def read_checkpoint(path: Path) -> tuple[dict, dict]:
    """The trainer state and the weights of checkpoint ``path``, read whole before any of it is
    applied (a file that fails to load must leave the model as it was, for a clean start)."""
    st = torch.load(path / "trainer_state.pt", weights_only=True)
    if not isinstance(st, dict) or any(k not in st for k in TRAINER_KEYS):
        raise ValueError(f"trainer_state.pt lacks {[k for k in TRAINER_KEYS if k not in st]}"
                         if isinstance(st, dict) else "trainer_state.pt is not a dict")
    return st, read_weights(path)


def read_weights(ckpt_dir: Path) -> dict:
    from safetensors.torch import load_file

    sd = {}
    for f in sorted(Path(ckpt_dir).glob("model*.safetensors")):
        sd.update(load_file(str(f)))
    if not sd:
        raise ValueError(f"{ckpt_dir} holds no weights (model*.safetensors)")
    return sd


def load_weights_into(model, ckpt_dir: Path, sd: dict | None = None) -> None:
    sd = read_weights(ckpt_dir) if sd is None else sd
    missing, unexpected = model.load_state_dict(sd, strict=False)
    # a tied lm_head is not stored
    missing = [m for m in missing if not (m == "lm_head.weight" and model.config.tie_word_embeddings)]
    if missing or unexpected:
        raise RuntimeError(f"{ckpt_dir}: checkpoint does not match the model (missing {missing[:5]}, "
                           f"unexpected {unexpected[:5]}); delete the checkpoint directory to start over")
