"""A string-task row's ``reward_model.ground_truth``: upstream's JSON text, written and read."""

from __future__ import annotations

import json


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
