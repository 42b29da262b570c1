"""Atomic file writes: nothing half-written is ever left under a final name.

Every writer goes to a temporary name in the destination's directory and renames it into
place, so an interrupted job leaves either the old file or nothing (Snakemake then reruns it).
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import tempfile
from pathlib import Path
from typing import Any, Iterator


@contextlib.contextmanager
def atomic_path(path: str | os.PathLike, suffix: str = "") -> Iterator[Path]:
    """Yield a temporary path beside ``path``; rename it to ``path`` if the block succeeds."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=suffix or ".tmp", dir=path.parent)
    os.close(fd)
    tmp = Path(tmp)
    try:
        yield tmp
        os.replace(tmp, path)
    finally:
        if tmp.exists():
            tmp.unlink()


@contextlib.contextmanager
def atomic_dir(path: str | os.PathLike) -> Iterator[Path]:
    """Yield a temporary directory beside ``path``; it replaces ``path`` if the block succeeds."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent))
    try:
        yield tmp
        if path.exists():
            shutil.rmtree(path)
        os.replace(tmp, path)
    finally:
        if tmp.exists():
            shutil.rmtree(tmp, ignore_errors=True)


PROVENANCE_KEY = b"fgx.settings"


def write_parquet(df, path: str | os.PathLike, settings: Any = None) -> None:
    """Write a pandas DataFrame to parquet atomically (no index column).

    ``settings`` (the job's resolved settings) is stored as JSON in the file's schema metadata,
    so every artifact carries the configuration that made it (see ``read_settings``).
    """
    import pyarrow as pa
    import pyarrow.parquet as pq

    table = pa.Table.from_pandas(df, preserve_index=False)
    if settings is not None:
        meta = dict(table.schema.metadata or {})
        meta[PROVENANCE_KEY] = json.dumps(settings, sort_keys=True, default=str).encode()
        table = table.replace_schema_metadata(meta)
    with atomic_path(path, suffix=".parquet") as tmp:
        pq.write_table(table, tmp)


def read_settings(path: str | os.PathLike) -> dict | None:
    """The settings stored by ``write_parquet`` (None if the file has none)."""
    import pyarrow.parquet as pq

    meta = pq.read_schema(path).metadata or {}
    blob = meta.get(PROVENANCE_KEY)
    return json.loads(blob) if blob else None


def write_json(obj: Any, path: str | os.PathLike) -> None:
    """Write JSON atomically, sorted keys, so equal content gives equal bytes."""
    with atomic_path(path, suffix=".json") as tmp:
        tmp.write_text(json.dumps(obj, indent=2, sort_keys=True, default=str) + "\n")


def write_text(text: str, path: str | os.PathLike) -> None:
    with atomic_path(path) as tmp:
        tmp.write_text(text)
