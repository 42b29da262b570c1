"""One reading of a row's level (fgx.tasks.contract.row_level): every reader gives the same answer
for a valid row and the same one-line error for a row without ``extra_info.depth``."""

from __future__ import annotations

import ast
import re
import importlib.util
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from fgx.io import InputError, write_parquet
from fgx.tasks import strings as S
from fgx.tasks.contract import (JOB_INPUT_FIX, ContractError, check_problem_file, data_source_level, first_per_level,
                                row_level, row_levels)
from toy import rl_settings, sampling_settings

ROOT = Path(__file__).resolve().parents[1]


def _missing(path, row: int) -> str:
    """The one message for a row without a level (a regex of it)."""
    import re

    return re.escape(f"{path}: row {row}: field extra_info.depth (the expression's level) is missing; "
                     f"{JOB_INPUT_FIX}")


@pytest.fixture()
def no_level(tmp_path):
    """A problem file whose row 1 has no extra_info.depth (rows 0, 2, 3 have theirs)."""
    rows = S.generate(stage=2, split="test", min_level=1, max_level=2, num=4, seed=0, style="compact")
    rows["extra_info"] = [{k: v for k, v in e.items() if not (i == 1 and k == "depth")}
                          for i, e in enumerate(rows["extra_info"])]
    rows["responses"] = [["x"]] * len(rows)
    path = tmp_path / "no_level.parquet"
    write_parquet(rows, path)
    return path


def test_row_level_reads_extra_info_depth_and_nothing_else():
    assert row_level({"depth": 3}) == 3 and row_level({"depth": np.int64(2)}) == 2
    assert row_level({"depth": 2.0}) == 2  # pandas' reading of an int column that holds a null
    for bad in (None, {}, {"depth": None}, {"depth": "3"}, {"depth": True}, {"depth": 2.5}, {"depth": float("nan")},
                {"level": 3}):
        with pytest.raises(ContractError, match=r"x.parquet: row 4: field extra_info.depth .* is missing"):
            row_level(bad, "x.parquet: row 4")
    assert issubclass(ContractError, InputError)  # the CLIs end a job with its one line
    frame = pd.DataFrame({"extra_info": [{"depth": 1}, {"depth": 4}]})
    assert row_levels(frame, "f.parquet") == [1, 4]
    with pytest.raises(ContractError, match="f.parquet: column extra_info"):
        row_levels(pd.DataFrame({"x": [1]}), "f.parquet")
    assert [data_source_level(d) for d in ("codeio-forward-incomplete-depth3", "reasoning-gym-countdown-depth4",
                                           "toy")] == [3, 4, None]


def test_valid_rows_read_the_same_level_everywhere(tmp_path):
    from fgx.tasks.strings.failure_modes import classify_eval
    from fgx.tasks.leakage import row_keys

    rows = S.generate(stage=2, split="test", min_level=1, max_level=3, num=6, seed=0, style="compact")
    rows["responses"] = [["x"]] * len(rows)
    write_parquet(rows, tmp_path / "ok.parquet")
    depths = [int(e["depth"]) for e in rows["extra_info"]]
    assert sorted(set(depths)) == [1, 2, 3]
    assert row_levels(rows) == depths
    assert [k.level for k in row_keys(tmp_path / "ok.parquet")] == depths
    assert classify_eval(rows, level=None)["level"].tolist() == depths
    assert row_levels(first_per_level(rows, [1, 2, 3], 2)) == [1, 1, 2, 2, 3, 3]


def test_every_reader_gives_the_one_message_for_a_missing_level(no_level, tmp_path):
    from fgx.tasks.strings.failure_modes import classify_eval
    from fgx.engines.torch import rl, sampling
    from fgx.engines.verl.engine import VerlEngine
    from fgx.tasks.leakage import row_keys

    rows = pd.read_parquet(no_level)
    readers = {
        "the contract check": lambda: check_problem_file(no_level, "prompts", JOB_INPUT_FIX),
        "first_per_level (select_prompts.py)": lambda: first_per_level(rows, [1, 2], 1, source=no_level),
        "the leakage check": lambda: row_keys(no_level),
        "classify_eval (failure modes, sample browser)": lambda: classify_eval(rows, level=None, source=no_level),
        "torch sampling": lambda: sampling.sample(tmp_path / "no_model", no_level, None, None, sampling_settings()),
        "torch RL validation": lambda: rl.rl(tmp_path / "no_model", no_level, no_level, tmp_path / "out",
                                             tmp_path / "m.parquet", tmp_path / "w", rl_settings()),
        "verl sampling": lambda: VerlEngine().sample(tmp_path / "no_model", no_level, tmp_path / "o.parquet",
                                                     tmp_path / "w", {}),
    }
    import re

    got = {}
    for name, read in readers.items():
        try:
            read()
            got[name] = "no error"
        except Exception as err:  # any other error is a reader with its own reading
            got[name] = f"{type(err).__name__}: {err}"
    expected = "ContractError: " + _missing(no_level, 1)
    wrong = {name: msg for name, msg in got.items() if not re.fullmatch(expected, msg)}
    assert len(got) == 7 and wrong == {}, wrong


def test_a_script_ends_with_the_one_message(no_level, tmp_path, capsys):
    spec = importlib.util.spec_from_file_location("select_prompts", ROOT / "scripts" / "select_prompts.py")
    script = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(script)
    settings = '{"levels": [1, 2], "per_level": 1}'
    assert script.main(["--data", str(no_level), "--out", str(tmp_path / "o.parquet"), "--settings", settings]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    import re

    assert len(err) == 1 and re.fullmatch("error: " + _missing(no_level, 1), err[0]), err


def _depth_reads(path: Path) -> list[int]:
    """Lines of ``path`` that read a depth themselves: ``x["depth"]``, ``x.get("depth")``, a depth regex."""
    lines = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Constant) and node.slice.value == "depth":
            lines.append(node.lineno)
        elif (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "get"
              and node.args and isinstance(node.args[0], ast.Constant) and node.args[0].value == "depth"):
            lines.append(node.lineno)
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and r"depth(\d+)" in node.value:
            lines.append(node.lineno)
    return lines


def test_no_module_reads_a_level_but_the_contract():
    contract = ROOT / "src/fgx/tasks/contract.py"
    assert _depth_reads(contract), "the guard must see the contract's own reading"
    own = {str(p.relative_to(ROOT)): lines for p in sorted((ROOT / "src/fgx").rglob("*.py")) if p != contract
           for lines in [_depth_reads(p)] if lines}
    assert own == {}, f"read a row's level with fgx.tasks.contract.row_level / row_levels instead: {own}"


def _with_ground_truth(rows, i: int, edit) -> None:
    import json

    rm = dict(rows.at[i, "reward_model"])
    gt = json.loads(rm["ground_truth"])
    edit(gt)
    rm["ground_truth"] = json.dumps(gt)
    rows.at[i, "reward_model"] = rm


@pytest.mark.parametrize("family, row, edit, message", [
    ("strings", 250, lambda gt: gt.update(ref_output=7),
     "field reward_model.ground_truth.ref_output must be a string, got int 7 (strings task)"),
    ("strings", 299, lambda gt: gt.update(ref_input={"x": None}),
     "field reward_model.ground_truth.ref_input.x must be a string, got null (strings task)"),
    ("strings", 3, lambda gt: gt.pop("ref_code"), "field reward_model.ground_truth lacks ref_code (strings task)"),
    ("countdown", 280, lambda gt: gt.update(numbers=[3, "x"]),
     "field reward_model.ground_truth.numbers[1] must be an integer, got 'x' (countdown task)"),
    ("countdown", 201, lambda gt: gt.update(answer=2.5),
     "field reward_model.ground_truth.answer must be an integer, got 2.5 (countdown task)"),
    ("countdown", 0, lambda gt: gt.pop("answer"), "field reward_model.ground_truth lacks answer (countdown task)"),
])
def test_every_row_and_every_ground_truth_field_is_checked(tmp_path, family, row, edit, message):
    """Each row, the last included, and each field of its family's ground truth for its type: one line naming
    the file, the row, the field and the fix."""
    from fgx.tasks import countdown as C

    rows = (S.generate(stage=2, split="test", min_level=1, max_level=2, num=300, seed=0, style="compact")
            if family == "strings" else C.generate(numbers=2, num=300, seed=0, style="compact"))
    path = tmp_path / "rows.parquet"
    write_parquet(rows, path)
    assert check_problem_file(path, "prompts", JOB_INPUT_FIX) == 300
    _with_ground_truth(rows, row, edit)
    write_parquet(rows, path)
    with pytest.raises(ContractError, match=re.escape(f"{path}: row {row}: {message}; regenerate it")) as err:
        check_problem_file(path, "prompts", JOB_INPUT_FIX)
    assert "\n" not in str(err.value)


def test_a_prompt_that_is_not_text_is_named(tmp_path):
    rows = S.generate(stage=2, split="test", min_level=1, max_level=1, num=4, seed=0, style="compact")
    rows.at[2, "prompt"] = [{"role": "user", "content": None}]
    write_parquet(rows, tmp_path / "p.parquet")
    with pytest.raises(ContractError, match=r"p.parquet: row 2: field prompt must be a list of \{role, content\}"):
        check_problem_file(tmp_path / "p.parquet")
