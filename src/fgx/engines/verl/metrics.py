"""verl's metrics in fgx's formats: one file-logger file per attempt, numbered in the order the attempts
ran, read into ``{step: metrics}`` (a step logged twice keeps the later attempt's values), then the torch
engine's SFT ``train_log.parquet`` and RL ``metrics.parquet`` (``step, metric, level, value``)."""

from __future__ import annotations

import json
import logging
import os
import re
from pathlib import Path
from typing import Mapping, Sequence

from fgx.engines.metric_names import FGX_NAMES, VERL_SFT_TAGS, VERL_TAGS

log = logging.getLogger("fgx.engines.verl")

VAL_ACC = re.compile(r"^val-core/(?P<source>.+)/acc/mean@\d+$")
TRAINED = VERL_TAGS["num_groups_trained"]
GEN_BATCHES = VERL_TAGS["num_gen_batches"]
ATTEMPT_LOG = re.compile(r"attempt-(?P<count>\d+)\.jsonl")


def next_attempt_log(work: Path) -> Path:
    """A new metrics file for this attempt (verl's file logger truncates the file it opens), numbered one
    past the highest there: attempts sort in the order they ran, whatever the clock of the node said
    (a DST fall-back, a requeue onto a node in another zone). Created empty here, so that two attempts
    never share a number."""
    logs = work / "logs"
    logs.mkdir(parents=True, exist_ok=True)
    while True:
        count = 1 + max((n for _, n in _numbered(logs.glob("attempt-*.jsonl"))), default=0)
        path = logs / f"attempt-{count:06d}.jsonl"
        try:
            os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644))
            return path
        except FileExistsError:
            continue


def attempt_logs(work: Path) -> list[Path]:
    """The attempts' metrics files in ``work``, first attempt first (:func:`next_attempt_log`)."""
    return [p for p, _ in sorted(_numbered((work / "logs").glob("*.jsonl")), key=lambda pn: pn[1])]


def _numbered(paths) -> list[tuple[Path, int]]:
    out = []
    for p in paths:
        m = ATTEMPT_LOG.fullmatch(Path(p).name)
        if m:
            out.append((Path(p), int(m["count"])))
        else:
            log.warning("%s: not an attempt log fgx names (attempt-<count>.jsonl); its metrics are left out", p)
    return out


def read_verl_jsonl(paths: Sequence[Path]) -> dict[int, dict]:
    """{step: metrics} from verl file-logger files, in the order of their attempts (:func:`attempt_logs`'s
    count): a step a later, resumed attempt logged again has that attempt's values."""
    steps: dict[int, dict] = {}
    for path, _ in sorted(_numbered(paths), key=lambda pn: pn[1]):
        for line in Path(path).read_text().splitlines():
            line = line.strip()
            if not line:
                continue
            try:
                rec = json.loads(line)
            except json.JSONDecodeError:
                log.warning("skipping a torn line in %s", path)  # a killed attempt's last write
                continue
            steps.setdefault(int(rec["step"]), {}).update(rec.get("data") or {})
    return steps


def sft_train_log(steps: Mapping[int, Mapping]):
    """verl's SFT log as the torch engine's ``train_log.parquet``: one row per step, ``step`` and the
    columns of :data:`fgx.engines.metric_names.VERL_SFT_TAGS` (a step verl logged twice, before and after
    a resume, once: the later attempt's)."""
    import pandas as pd

    rows = [{"step": int(step), **{name: float(metrics[tag]) for name, tag in VERL_SFT_TAGS.items()}}
            for step, metrics in sorted(steps.items()) if all(tag in metrics for tag in VERL_SFT_TAGS.values())]
    return pd.DataFrame(rows, columns=["step", *VERL_SFT_TAGS]).astype({"step": "int64"})


def metrics_frame(steps: Mapping[int, Mapping], batch_size: int, dynamic_sampling: bool,
                  val_prompts: Mapping[int, int] | None = None):
    """verl's per-step metrics in fgx's long format ``step, metric, level, value``.

    ``val_accuracy`` per level comes from ``val-core/<data_source>/acc/mean@N`` (level = the
    data source's depth), and over every validation prompt (level -1, as the torch engine logs it) from
    those, weighted by ``val_prompts`` (prompts per level; None: equally); ``filtered_group_share`` = groups
    dropped by dynamic sampling over groups generated; fgx names for the common training metrics
    (``fgx.engines.metric_names.FGX_NAMES``); every other numeric verl metric is kept as ``verl:<name>``.
    """
    import pandas as pd

    from fgx.tasks.contract import data_source_level

    rows = []
    for step in sorted(steps):
        data = steps[step]
        per_level = {}
        for key, value in data.items():
            if isinstance(value, bool) or not isinstance(value, (int, float)):
                continue
            m = VAL_ACC.match(key)
            if m:
                level = data_source_level(m["source"])
                rows.append((step, "val_accuracy", -1 if level is None else level, float(value)))
                per_level[level] = float(value)
            elif key in FGX_NAMES:
                rows.append((step, FGX_NAMES[key], -1, float(value)))
            else:
                rows.append((step, f"verl:{key}", -1, float(value)))
        if per_level and None not in per_level:  # a source of no level is already the row of level -1
            weights = {lv: val_prompts.get(lv, 1) if val_prompts else 1 for lv in per_level}
            overall = sum(per_level[lv] * weights[lv] for lv in per_level) / sum(weights.values())
            rows.append((step, "val_accuracy", -1, overall))
        if dynamic_sampling and GEN_BATCHES in data:
            # fgx's replay buffer's counts: 1 - groups trained / groups sampled, as the torch engine's
            sampled = float(data[GEN_BATCHES]) * batch_size
            rows.append((step, "filtered_group_share", -1, 1.0 - float(data[TRAINED]) / sampled))
    frame = pd.DataFrame(rows, columns=["step", "metric", "level", "value"])
    return frame.astype({"step": "int64", "metric": "str", "level": "int64", "value": "float64"})
