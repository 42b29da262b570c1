"""An arithmetic-chain row's ``reward_model.ground_truth``: JSON text ``{"ref_input": 417, "ref_output": 207,
"ops": [["sub", 3], ["div", 2]]}`` (the start value, the answer, the chain's operations with their
parameters, null for none), written, read and checked."""

from __future__ import annotations

import json
from typing import Sequence

from fgx.tasks.family import GroundTruthError, json_object

from .chain import Step
from .operations import OPERATIONS, apply, check_param

WANT = 'an object {"ref_input": int, "ref_output": int, "ops": [[name, int or null], ...]}'


def ground_truth(start: int, steps: Sequence[Step], output: int) -> str:
    return json.dumps({"ref_input": start, "ref_output": output, "ops": [[name, param] for name, param in steps]})


def _integer(value) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _kind(value) -> str:
    return "null" if value is None else f"{type(value).__name__} {json.dumps(value, default=str)[:40]}"


def parse(ground_truth) -> tuple[int, list[Step], int]:
    """(start, steps, answer) of a row's ground truth (JSON text, bytes or a dict); GroundTruthError
    naming the field otherwise. The operations, applied to the start value, must give the answer."""
    gt = json_object(ground_truth, WANT)
    lacking = [k for k in ("ref_input", "ref_output", "ops") if k not in gt]
    if lacking:
        raise GroundTruthError("reward_model.ground_truth", f"lacks {', '.join(lacking)}; want {WANT}")
    field = "reward_model.ground_truth"
    for key in ("ref_input", "ref_output"):
        if not _integer(gt[key]) or gt[key] < 0:
            raise GroundTruthError(f"{field}.{key}", f"must be a non-negative integer, got {_kind(gt[key])}")
    ops = gt["ops"]
    if not isinstance(ops, list) or not ops:
        raise GroundTruthError(f"{field}.ops", f"must be a non-empty list of [name, parameter], got {_kind(ops)}")
    steps: list[Step] = []
    for i, op in enumerate(ops):
        where = f"{field}.ops[{i}]"
        if not (isinstance(op, list) and len(op) == 2 and isinstance(op[0], str)
                and (op[1] is None or _integer(op[1]))):
            raise GroundTruthError(where, f"must be [name, integer or null], got {_kind(op)}")
        if op[0] not in OPERATIONS:
            raise GroundTruthError(where, f"unknown operation {op[0]!r}; known: {', '.join(OPERATIONS)}")
        try:
            check_param(op[0], op[1])
        except ValueError as err:
            raise GroundTruthError(where, str(err)) from None
        steps.append((op[0], op[1]))
    x = gt["ref_input"]
    try:
        for name, param in steps:
            x = apply(name, x, param)  # a negative value stops the chain: no operation reads one
    except ValueError:
        x = "no value"
    if x != gt["ref_output"]:
        raise GroundTruthError(f"{field}.ref_output", f"is {gt['ref_output']}, but the ops applied to ref_input "
                               f"give {x}")
    return gt["ref_input"], steps, gt["ref_output"]


def check(ground_truth) -> None:
    """Raise GroundTruthError unless ``ground_truth`` is what the arithmetic-chain task writes (every field,
    its type, and the answer the operations give)."""
    parse(ground_truth)
