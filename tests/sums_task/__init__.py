"""A toy task family outside fgx (tests/test_task_plugin.py registers it): a Level-k problem sums k + 1
one-digit numbers, written ``3+4+1=`` and answered with the sum.

It exists to prove the task plug-in: this package, one line in fgx.tasks.registry.FAMILIES and one
``sums:`` section in config.yaml are all fgx needs to generate its problem sets, train a model on them,
evaluate and score it, and draw its figure.
"""

from __future__ import annotations

import json
import random
from typing import Any, Mapping, Sequence

from fgx.tasks.family import ConfigSection, GroundTruthError, SFTModel, Source, Split, TaskFamily, json_object

from .settings import Sums

PREFIX = "toy-sums"
TRAIN, TEST = "sums_train", "sums_test"
MODEL = "sums_stage1"  # SFT of the base on its own correct answers to the training problems


def rows(split: str, num: int, levels: Sequence[int], seed: int) -> list[dict]:
    """``num`` problems of every level in ``levels``, as verl rows."""
    rng = random.Random(f"{split}-{seed}")
    out = []
    for level in range(levels[0], levels[1] + 1):
        for _ in range(num):
            terms = [rng.randint(0, 9) for _ in range(level + 1)]
            prompt = "+".join(map(str, terms)) + "="
            out.append({"data_source": f"{PREFIX}-depth{level}", "prompt": [{"role": "user", "content": prompt}],
                        "ability": "math",
                        "reward_model": {"style": "rule", "ground_truth": json.dumps({"answer": sum(terms)})},
                        "extra_info": {"depth": level, "index": len(out), "split": split,
                                       "solution": f"{sum(terms)}\n", "stage": 1 if level == 1 else 2,
                                       "style": "compact"}})
    return out


def compute_score(data_source: str, solution_str: Any, ground_truth: Any, extra_info: Any = None) -> dict:
    """1.0 when the response's last line is the sum, 0.0 otherwise (never raises on a response)."""
    answer = json_object(ground_truth, "{\"answer\": int}")["answer"]
    lines = str(solution_str).strip().splitlines() if isinstance(solution_str, str) else []
    pred = lines[-1].strip() if lines else None
    acc = pred == str(answer)
    return {"score": 1.0 if acc else 0.0, "acc": acc, "pred": pred}


def check_ground_truth(ground_truth: Any) -> None:
    answer = json_object(ground_truth, "{\"answer\": int}").get("answer")
    if not isinstance(answer, int) or isinstance(answer, bool):
        raise GroundTruthError("reward_model.ground_truth.answer", f"must be an integer, got {answer!r}")


def leakage_keys(frame) -> list[tuple[str, int]]:
    return [(p[0]["content"], 0) for p in frame["prompt"]]


def splits(config: Mapping) -> dict[str, Split]:
    return {TRAIN: Split("train", rollout="stage1"), TEST: Split("eval", excludes=(TRAIN,))}


def generate_args(config: Mapping, split: str, seed: int, excluded: Sequence[str]) -> str:
    s = config["sums"]
    lo, hi = s["train_levels"] if split == TRAIN else s["test_levels"]
    return f"--split {split} --num {s['per_level']} --levels {lo} {hi} --seed {seed}"


def models(config: Mapping) -> list[SFTModel]:
    return [SFTModel(MODEL, init="base", data=((Source(TRAIN, rollouts_of="base"), 1),), settings=("stage1", "sft"))]


FAMILY = TaskFamily(
    name="sums", package=__name__, data_source_prefix=PREFIX, splits=splits, generate_args=generate_args,
    check_ground_truth=check_ground_truth, leakage_keys=leakage_keys,
    config=ConfigSection("sums", Sums, "a toy task family: sums of one-digit numbers"),
    models=models, figures={"sums_accuracy": f"{__name__}.figure"},
)
