"""TensorBoard event files of the torch engine's RL, written as the run goes.

Both engines write them to ``<work_dir>/tensorboard/`` (``results/rl/<run>/work/tensorboard/``: the
rule's work directory, not a declared output, so Snakemake neither deletes it nor sees a new file
in an output; it goes with the run's checkpoints when a changed setting starts the run clean). The
verl engine gets there through verl's own TensorBoard logger (``trainer.logger`` includes
``tensorboard``; ``TENSORBOARD_DIR`` set by :meth:`fgx.engines.verl.engine.VerlEngine.rl`), so
``tensorboard --logdir results/`` shows every RL run of either engine live.

Tags are verl's names (what verl's logger writes for the same quantity), so the curves of both
engines share tags: :data:`fgx.engines.metric_names.VERL_TAGS`, and held-out accuracy per level as
``val-core/<data_source>/acc/mean@<n>`` when the level's validation rows have one data source of their
own (``n``: ``rl.val_n``, samples per prompt). Quantities without a verl counterpart keep fgx's metric
name under ``fgx/`` (``fgx/<metric>``, per level ``fgx/<metric>/level<L>``). verl's names rather
than fgx's because verl writes its events itself: renaming its tags would mean a second writer on
that side. The metrics parquet keeps fgx's names (:mod:`fgx.engines.metric_names` holds both).

The writer is ``torch.utils.tensorboard``'s ``SummaryWriter`` (verl's tensorboard logger writes with it
too; it needs the ``tensorboard`` package, pinned in envs/requirements.txt, whose ``tensorboard``
command shows the curves). Scalars are ``simple_value`` (float32), each step flushed to the file as
it is logged, so a live TensorBoard sees it.

Resuming: every attempt writes a new event file (TensorBoard reads all files of a directory in name
order, and the writer names a file by the second it starts) and does not repeat the steps restored
from the checkpoint. The steps a killed attempt logged after its last checkpoint are logged again by
the resumed one (the same values: resuming is exact, only timings differ); the new file starts with a
``SessionLog.START`` at its first step, ``SummaryWriter``'s ``purge_step`` marker: TensorBoard (its
default loader, and ``EventAccumulator``) then drops the killed attempt's points from that step on;
``--load_fast=false`` shows both attempts' points at those steps. verl's logger writes a new file per
attempt without that marker.
"""

from __future__ import annotations

import os
from typing import Iterable, Mapping

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


def tag(metric: str, level: int = -1, sources: Mapping[int, str] | None = None, samples: int = 1) -> str:
    """The TensorBoard tag of one fgx metrics row (see the module docstring); ``samples``: validation
    samples per prompt."""
    if level == -1 and metric in VERL_TAGS:
        return VERL_TAGS[metric]
    if metric == "val_accuracy" and level != -1 and level in (sources or {}):
        return f"val-core/{sources[level]}/acc/mean@{samples}"
    return f"fgx/{metric}" if level == -1 else f"fgx/{metric}/level{level}"


class EventWriter:
    """Scalars of one attempt, in a new event file in ``log_dir``; ``purge_step``: the first step this
    attempt logs after a resume (the points an earlier attempt logged from there on are hidden)."""

    def __init__(self, log_dir: str | os.PathLike, purge_step: int | None = None):
        from torch.utils.tensorboard import SummaryWriter  # tensorboard's protobufs load in a job that logs

        self._writer = SummaryWriter(log_dir=str(log_dir), purge_step=purge_step)

    def scalars(self, step: int, values: Mapping[str, float]) -> None:
        for t, v in values.items():
            self._writer.add_scalar(t, v, step)
        if values:
            self._writer.flush()

    def close(self) -> None:
        self._writer.close()


def write_rows(writer: EventWriter, rows: Iterable[Mapping], sources: Mapping[int, str] | None = None,
               samples: int = 1) -> None:
    """Metrics rows (step, metric, level, value) under their tags, step by step."""
    steps: dict[int, dict[str, float]] = {}
    for r in rows:
        steps.setdefault(int(r["step"]), {})[tag(r["metric"], int(r["level"]), sources, samples)] = float(r["value"])
    for step, values in steps.items():
        writer.scalars(step, values)
