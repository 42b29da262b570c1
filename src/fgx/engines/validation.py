"""Held-out accuracy during RL, per prompt: the table both engines write beside an RL run's metrics
(``results/rl/<run>/validation.parquet``).

At step 0, every ``rl.eval_every`` steps and the last step, each prompt of the validation file is sampled
``rl.val_n`` times at ``rl.val_temperature``; one row per (step, prompt) holds how many of those samples
are correct. A point of the RL curves (figures/rl_level_accuracy) is a level's mean of ``n_correct /
n_samples`` at one step, pass@1 as the test set measures it, and its interval a bootstrap over the
level's prompts (:func:`fgx.metrics.validation_curve`): the samples of one prompt are not independent.
The prompts are the same at every step, so a change between steps is a paired difference.

The torch engine counts its own samples (:func:`fgx.engines.torch.rl.validate`); the verl engine reads
the validation generations verl dumps (``trainer.validation_data_dir``) back into this table
(:func:`from_verl_dumps`), matching each sample to its prompt by the ground truth.
"""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Iterable, Mapping, Sequence

COLUMNS = ("step", "level", "prompt_row", "n_samples", "n_correct")

log = logging.getLogger("fgx")


def frame(rows: Iterable[Mapping]):
    """The validation table from rows with :data:`COLUMNS` (every column int64), in step and row order."""
    import pandas as pd

    df = pd.DataFrame(list(rows), columns=list(COLUMNS)).astype({c: "int64" for c in COLUMNS})
    return df.sort_values(["step", "prompt_row"]).reset_index(drop=True)


def rows_of_step(step: int, levels: Sequence[int], correct: Sequence[Sequence[bool]]) -> list[dict]:
    """One step's rows: prompt ``i`` of the validation file (level ``levels[i]``) with its samples'
    ``correct`` flags."""
    return [{"step": int(step), "level": int(level), "prompt_row": i, "n_samples": len(flags),
             "n_correct": int(sum(bool(f) for f in flags))} for i, (level, flags) in enumerate(zip(levels, correct))]


def ground_truths(rows, path) -> list[str]:
    """The ground truth of every validation row, which verl's dumps name a sample's prompt by: two rows
    with one ground truth are refused before any training (their samples could not be told apart)."""
    from fgx.io import InputError

    truths = [str(rm["ground_truth"]) for rm in rows["reward_model"]]
    first: dict[str, int] = {}
    for i, gt in enumerate(truths):
        if gt in first:
            raise InputError(f"{path}: rows {first[gt]} and {i} have the same reward_model.ground_truth; the verl "
                             "engine tells validation prompts apart by it: drop the duplicate row")
        first[gt] = i
    return truths


def from_verl_dumps(dump_dir: str | Path, ground_truths: Sequence[str], levels: Sequence[int]):
    """The validation table from verl's validation dumps (``<step>.jsonl`` in ``dump_dir``, one JSON
    object per sample with its prompt's ground truth ``gts`` and its ``acc``): ``ground_truths[i]`` and
    ``levels[i]`` are row ``i`` of the validation file (:func:`ground_truths`). A torn line (a killed
    writer) is skipped; a sample whose ground truth is no validation row's is an error (the dumps are of
    another file)."""
    row_of = {str(gt): i for i, gt in enumerate(ground_truths)}
    rows = []
    for path in sorted(Path(dump_dir).glob("*.jsonl"), key=lambda p: int(p.stem) if p.stem.isdigit() else -1):
        if not path.stem.isdigit():
            continue
        flags: dict[int, list[bool]] = {}
        for line in path.read_text().splitlines():
            try:
                rec = json.loads(line)
            except json.JSONDecodeError:
                log.warning("skipping a torn line in %s", path)
                continue
            gt = str(rec["gts"])
            if gt not in row_of:
                raise ValueError(f"{path}: a validation sample whose ground truth is no row of the validation "
                                 f"file ({gt[:80]!r}); remove {dump_dir} and rerun the RL job")
            flags.setdefault(row_of[gt], []).append(float(rec["acc"]) > 0)
        rows += [r for r in rows_of_step(int(path.stem), levels, [flags.get(i, []) for i in range(len(levels))])
                 if r["n_samples"]]
    return frame(rows)
