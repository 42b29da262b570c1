"""A string-task row's ``reward_model.ground_truth``: upstream's JSON text, written and read."""

from __future__ import annotations

import json

from fgx.tasks.family import GroundTruthError, json_object


def ground_truth(x: str, output: str, code: str) -> str:
    return json.dumps({"ref_input": {"x": x}, "ref_output": output, "ref_code": code,
                       "funcname": "main_solution"})


def parse_ground_truth(ground_truth) -> dict:
    """A row's ``reward_model.ground_truth`` (JSON text, bytes or dict) as a dict, with the input
    string under ``"x"`` as well; a clear error if it is not the string task's."""
    if isinstance(ground_truth, bytes):
        ground_truth = ground_truth.decode("utf-8")
    if isinstance(ground_truth, str):
        try:
            ground_truth = json.loads(ground_truth)
        except ValueError as err:
            raise ValueError(f"reward_model.ground_truth is not JSON ({err}); regenerate the data with "
                             "`python -m fgx.tasks.strings generate`") from None
    if not isinstance(ground_truth, dict) or not {"ref_code", "ref_output", "ref_input"} <= set(ground_truth):
        raise ValueError("reward_model.ground_truth needs 'ref_input', 'ref_output' and 'ref_code' (string task); "
                         "this is defined for the string task only")
    x = ground_truth["ref_input"]
    x = x.get("x") if isinstance(x, dict) else x
    if not isinstance(x, str):
        raise ValueError("reward_model.ground_truth.ref_input.x must be a string")
    return ground_truth | {"x": x}


def check(ground_truth) -> None:
    """Raise GroundTruthError unless ``ground_truth`` is what the string task writes: JSON text (or a dict)
    with ``ref_input`` (``{"x": str}`` or a string), ``ref_output`` and ``ref_code`` strings and, where
    present, ``funcname`` a string."""
    ground_truth = json_object(ground_truth, "an object with ref_input, ref_output, ref_code")
    lacking = [k for k in ("ref_input", "ref_output", "ref_code") if k not in ground_truth]
    if lacking:
        raise GroundTruthError("reward_model.ground_truth", f"lacks {', '.join(lacking)}")
    field = "reward_model.ground_truth"
    x = ground_truth["ref_input"]
    if isinstance(x, dict):
        if not isinstance(x.get("x"), str):
            raise GroundTruthError(f"{field}.ref_input.x", f"must be a string, got {_kind(x.get('x'))}")
    elif not isinstance(x, str):
        raise GroundTruthError(f"{field}.ref_input", f"must be {{\"x\": string}}, got {_kind(x)}")
    for key in ("ref_output", "ref_code", *(("funcname",) if "funcname" in ground_truth else ())):
        if not isinstance(ground_truth[key], str):
            raise GroundTruthError(f"{field}.{key}", f"must be a string, got {_kind(ground_truth[key])}")


def _kind(value) -> str:
    return "null" if value is None else f"{type(value).__name__} {json.dumps(value, default=str)[:40]}"
