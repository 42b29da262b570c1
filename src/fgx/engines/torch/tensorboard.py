"""TensorBoard event files of the torch engine's RL, written as the run goes.

Both engines write them to ``<work_dir>/tensorboard/`` (``results/rl/<run>/work/tensorboard/``: the
rule's work directory, not a declared output, so Snakemake neither deletes it nor sees a new file
in an output; it goes with the run's checkpoints when a changed setting starts the run clean). The
verl engine gets there through verl's own TensorBoard logger (``trainer.logger`` includes
``tensorboard``; ``TENSORBOARD_DIR`` set by :meth:`fgx.engines.verl.engine.VerlEngine.rl`), so
``tensorboard --logdir results/`` shows every RL run of either engine live.

Tags are verl's names (what verl's logger writes for the same quantity), so the curves of both
engines share tags: :data:`fgx.engines.metric_names.VERL_TAGS`, and held-out accuracy per level as
``val-core/<data_source>/acc/mean@1`` when the level's validation rows have one data source of their
own (greedy, one sample: verl's ``val_n`` 1). Quantities without a verl counterpart keep fgx's metric
name under ``fgx/`` (``fgx/<metric>``, per level ``fgx/<metric>/level<L>``). verl's names rather
than fgx's because verl writes its events itself: renaming its tags would mean a second writer on
that side. The metrics parquet keeps fgx's names (:mod:`fgx.engines.metric_names` holds both).

The writer is self-contained (no ``tensorboard`` / protobuf dependency in the torch environment): an
event file is TFRecord-framed ``Event`` protobufs (length, masked CRC32C of the length, payload,
masked CRC32C of the payload); the few fields used are encoded here by hand. Scalars are
``simple_value`` (float32), as ``torch.utils.tensorboard``'s ``add_scalar`` (verl's writer) stores
them.

Resuming: every attempt writes a new event file (TensorBoard reads all files of a directory in name
order) and does not repeat the steps restored from the checkpoint. The steps a killed attempt logged
after its last checkpoint are logged again by the resumed one (the same values: resuming is exact,
only timings differ); the new file starts with a ``SessionLog.START`` at its first step, the
``purge_step`` marker of ``SummaryWriter``: TensorBoard (its default loader, and ``EventAccumulator``)
then drops the killed attempt's points from that step on; ``--load_fast=false`` shows both attempts'
points at those steps. verl's logger writes a new file per attempt without that marker.
"""

from __future__ import annotations

import os
import socket
import struct
import time
from pathlib import Path
from typing import Iterable, Iterator, Mapping

from fgx.engines.metric_names import VERL_TAGS

SUBDIR = "tensorboard"


def val_sources(levels: Iterable[int], sources: Iterable[str]) -> dict[int, str]:
    """{level: data_source} for the levels whose validation rows have one data source that no
    other level shares (verl reports held-out accuracy per data source)."""
    by_level: dict[int, set] = {}
    for level, src in zip(levels, sources):
        by_level.setdefault(int(level), set()).add(str(src))
    owners: dict[str, int] = {}
    for level, srcs in by_level.items():
        for src in srcs:
            owners[src] = owners.get(src, 0) + 1
    return {level: next(iter(srcs)) for level, srcs in by_level.items()
            if len(srcs) == 1 and owners[next(iter(srcs))] == 1}


def tag(metric: str, level: int = -1, sources: Mapping[int, str] | None = None) -> str:
    """The TensorBoard tag of one fgx metrics row (see the module docstring)."""
    if level == -1 and metric in VERL_TAGS:
        return VERL_TAGS[metric]
    if metric == "val_accuracy" and level != -1 and level in (sources or {}):
        return f"val-core/{sources[level]}/acc/mean@1"
    return f"fgx/{metric}" if level == -1 else f"fgx/{metric}/level{level}"


# ----------------------------------------------------------------------------- encoding
def _crc32c_table() -> list[int]:
    table = []
    for n in range(256):
        c = n
        for _ in range(8):
            c = (c >> 1) ^ 0x82F63B78 if c & 1 else c >> 1
        table.append(c)
    return table


_TABLE = _crc32c_table()


def crc32c(data: bytes) -> int:
    c = 0xFFFFFFFF
    for b in data:
        c = _TABLE[(c ^ b) & 0xFF] ^ (c >> 8)
    return c ^ 0xFFFFFFFF


def masked_crc(data: bytes) -> int:
    c = crc32c(data)
    return (((c >> 15) | (c << 17)) + 0xA282EAD8) & 0xFFFFFFFF


def _varint(n: int) -> bytes:
    n &= (1 << 64) - 1  # int64 as protobuf writes it (two's complement)
    out = bytearray()
    while True:
        b, n = n & 0x7F, n >> 7
        out.append(b | (0x80 if n else 0))
        if not n:
            return bytes(out)


def _bytes_field(field: int, payload: bytes) -> bytes:
    return _varint(field << 3 | 2) + _varint(len(payload)) + payload


def _float32(value: float) -> bytes:
    try:
        return struct.pack("<f", value)
    except OverflowError:  # beyond float32: +-inf, as numpy's float32 conversion gives
        return struct.pack("<f", float("inf") if value > 0 else float("-inf"))


def event(step: int, wall_time: float, *, scalars: Mapping[str, float] | None = None,
          file_version: str | None = None, session_start: bool = False) -> bytes:
    """One serialized ``tensorboard.Event``: wall_time (1), step (2), file_version (3),
    summary (5: ``Summary.value`` (1) of tag (1) + simple_value (2)), session_log (7: status START)."""
    out = b"\x09" + struct.pack("<d", wall_time) + b"\x10" + _varint(int(step))
    if file_version is not None:
        out += _bytes_field(3, file_version.encode())
    if scalars:
        values = b"".join(_bytes_field(1, _bytes_field(1, t.encode()) + b"\x15" + _float32(float(v)))
                          for t, v in scalars.items())
        out += _bytes_field(5, values)
    if session_start:
        out += _bytes_field(7, b"\x08\x01")
    return out


def record(payload: bytes) -> bytes:
    """TFRecord framing of one payload."""
    n = struct.pack("<Q", len(payload))
    return n + struct.pack("<I", masked_crc(n)) + payload + struct.pack("<I", masked_crc(payload))


class EventWriter:
    """Appends scalar events to a new event file in ``log_dir`` (one file per writer; each
    :meth:`scalars` call is written and closed at once, so a live TensorBoard sees it)."""

    _count = 0

    def __init__(self, log_dir: str | os.PathLike, purge_step: int | None = None):
        self.dir = Path(log_dir)
        self.dir.mkdir(parents=True, exist_ok=True)
        EventWriter._count += 1
        now = time.time()
        # TensorBoard reads a directory's files in name order: attempts in time order (a counter
        # for several writers of one process in one second)
        name = f"events.out.tfevents.{int(now)}.{socket.gethostname()}.{os.getpid()}.{self._count:06d}"
        self.path = self.dir / name
        head = record(event(0, now, file_version="brain.Event:2"))
        if purge_step is not None:
            head += record(event(purge_step, now, session_start=True))
        self._append(head)

    def _append(self, data: bytes) -> None:
        with open(self.path, "ab") as f:
            f.write(data)

    def scalars(self, step: int, values: Mapping[str, float]) -> None:
        if values:
            self._append(record(event(step, time.time(), scalars=values)))


def write_rows(writer: EventWriter, rows: Iterable[Mapping], sources: Mapping[int, str] | None = None) -> None:
    """Metrics rows (step, metric, level, value) as one event per step."""
    steps: dict[int, dict[str, float]] = {}
    for r in rows:
        steps.setdefault(int(r["step"]), {})[tag(r["metric"], int(r["level"]), sources)] = float(r["value"])
    for step, values in steps.items():
        writer.scalars(step, values)


# ----------------------------------------------------------------------------- reading (tests, checks)
def _fields(buf: bytes) -> Iterator[tuple[int, int, object]]:
    i = 0
    while i < len(buf):
        key, i = _read_varint(buf, i)
        field, wire = key >> 3, key & 7
        if wire == 0:
            value, i = _read_varint(buf, i)
        elif wire == 1:
            value, i = buf[i:i + 8], i + 8
        elif wire == 5:
            value, i = buf[i:i + 4], i + 4
        elif wire == 2:
            n, i = _read_varint(buf, i)
            value, i = buf[i:i + n], i + n
        else:
            raise ValueError(f"unsupported protobuf wire type {wire}")
        yield field, wire, value


def _read_varint(buf: bytes, i: int) -> tuple[int, int]:
    n = shift = 0
    while True:
        b = buf[i]
        i += 1
        n |= (b & 0x7F) << shift
        shift += 7
        if not b & 0x80:
            return n, i


def read_records(path: str | os.PathLike) -> Iterator[bytes]:
    """Payloads of a TFRecord file, checking both CRCs; a torn last record (a killed writer) ends it."""
    data = Path(path).read_bytes()
    i = 0
    while i + 12 <= len(data):
        head = data[i:i + 8]
        (n,) = struct.unpack("<Q", head)
        if struct.unpack("<I", data[i + 8:i + 12])[0] != masked_crc(head):
            raise ValueError(f"{path}: bad length CRC at byte {i}")
        if i + 16 + n > len(data):
            return
        payload = data[i + 12:i + 12 + n]
        if struct.unpack("<I", data[i + 12 + n:i + 16 + n])[0] != masked_crc(payload):
            raise ValueError(f"{path}: bad payload CRC at byte {i}")
        yield payload
        i += 16 + n


def read_scalars(path: str | os.PathLike) -> list[tuple[int, str, float]]:
    """(step, tag, simple_value) of every scalar in one event file, in file order."""
    out = []
    for payload in read_records(path):
        step = 0
        values = []
        for field, _, value in _fields(payload):
            if field == 2:
                step = value
            elif field == 5:
                for f, _, v in _fields(value):
                    if f == 1:
                        d = {ff: vv for ff, _, vv in _fields(v)}
                        if 2 in d:
                            values.append((d[1].decode(), struct.unpack("<f", d[2])[0]))
        out += [(step, t, v) for t, v in values]
    return out
