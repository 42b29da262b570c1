"""First-line categories of compact traces (hand-built responses)."""

import pandas as pd
import pytest

from fgx.analysis.first_lines import (first_line_category, first_line_table, first_step_right, main,
                                      stop_after_first_step_table, stops_after_first_step)
from fgx.tasks.strings import Call, Method, X, evaluate
from fgx.tasks.strings.generate import Problem, make_row


@pytest.mark.parametrize("response, category", [
    ('f2("ufkvgj")="fkvgj"\nf10("fkvgj")\n', "innermost"),
    ('f10("ufkvgj")="uFkVgJ"\n{"output": "uFkVgJ"}', "root_first"),
    ('upper("ufkvgj")="UFKVGJ"\nf10("UFKVGJ")', "invented_builtin"),
    ('g0("ufkvgj")="fkvgj"\nf10("fkvgj")', "invented_helper"),
    ('f12("ufkvgj")="ufkvgj"', "other"),
    ('{"output": "x"}', "other"),
    ("", "other"),
])
def test_categories_of_a_level2_prompt(response, category):
    assert first_line_category('f10(f2("ufkvgj"))', 'f2("ufkvgj")', "f10", response) == category


def test_a_builtin_in_the_expression_is_not_invented():
    expr = 'f10(f16(lower("eso")))'
    assert first_line_category(expr, 'lower("eso")', "f10", 'lower("eso")="eso"') == "innermost"
    assert first_line_category(expr, 'lower("eso")', "f10", 'upper("eso")="ESO"') == "other"
    # a concatenation at the root has no root function
    assert first_line_category('("ab"+f2("cd"))', 'f2("cd")', None, '("ab"+"cd")="abcd"') == "other"


def _samples():
    nested = Call(10, (Call(2, (X,)),))  # alternate_case(remove_vowels(x))
    deeper = Call(10, (Call(16, (Method("lower", X),)),))
    rows = [make_row(Problem(e, "ufkvgj", evaluate(e, "ufkvgj"), lvl), stage=2, split="test", style="compact",
                     index=i) for i, (e, lvl) in enumerate([(nested, 2), (deeper, 3)])]
    df = pd.DataFrame(rows)
    df["level"] = [2, 3]
    df["responses"] = [['f2("ufkvgj")="fkvgj"', 'f10("ufkvgj")="uFkVgJ"', 'upper("ufkvgj")="UFKVGJ"', "?"],
                       ['lower("ufkvgj")="ufkvgj"', 'f10("ufkvgj")="uFkVgJ"']]
    return df


def test_table_counts_and_shares_per_level(tmp_path):
    t = first_line_table(_samples()).set_index(["level", "category"])
    assert t.loc[(2, "innermost"), "responses"] == 1 and t.loc[(2, "root_first"), "responses"] == 1
    assert t.loc[(2, "invented_builtin"), "responses"] == 1 and t.loc[(2, "other"), "responses"] == 1
    assert t.loc[(3, "innermost"), "share"] == 0.5 and t.loc[(3, "root_first"), "share"] == 0.5
    assert t.loc[(3, "invented_builtin"), "responses"] == 0
    assert t.groupby("level")["share"].sum().tolist() == [1.0, 1.0]
    only3 = first_line_table(_samples(), levels=[3])
    assert set(only3["level"]) == {3}
    # the CLI writes the same long table
    _samples().to_parquet(tmp_path / "eval.parquet")
    assert main(["--eval", str(tmp_path / "eval.parquet"), "--out", str(tmp_path / "t.csv")]) == 0
    assert pd.read_csv(tmp_path / "t.csv")["responses"].sum() == 6


def test_paper_style_rows_are_refused():
    df = _samples()
    df["extra_info"] = [dict(e, style="paper") for e in df["extra_info"]]
    with pytest.raises(ValueError, match="compact"):
        first_line_table(df)


def test_located_answers_that_stop_after_the_first_step():
    assert stops_after_first_step('f2("ufkvgj")="fkvgj"\n{"output": "fkvgj"}')
    assert stops_after_first_step('f2("ufkvgj")="fkvgj"\n"fkvgj"\n{"output": "fkvgj"}')  # redex_full
    assert not stops_after_first_step('f2("ufkvgj")="fkvgj"\nf10("fkvgj")')
    assert not stops_after_first_step('f2("ufkvgj")="fkvgj"')
    df = _samples()
    df["responses"] = [['f2("ufkvgj")="fkvgj"\n{"output": "fkvgj"}', 'f2("ufkvgj")="fkvgj"\nf10("fkvgj")',
                        'f10("ufkvgj")="uFkVgJ"\n{"output": "uFkVgJ"}'],
                       ['f10("ufkvgj")="uFkVgJ"\n{"output": "uFkVgJ"}']]
    t = stop_after_first_step_table(df).set_index("level")
    assert t.loc[2, ["responses", "located", "stopped"]].tolist() == [3, 2, 1] and t.loc[2, "stopped_share"] == 0.5
    assert t.loc[3, "located"] == 0 and pd.isna(t.loc[3, "stopped_share"])  # a root-first answer is no stop


def test_cli_names_a_missing_or_unreadable_file(tmp_path):
    with pytest.raises(SystemExit, match="nope.parquet: cannot read it as parquet"):
        main(["--eval", str(tmp_path / "nope.parquet")])
    (tmp_path / "text.parquet").write_text("not parquet")
    with pytest.raises(SystemExit, match="text.parquet: cannot read it as parquet"):
        main(["--eval", str(tmp_path / "text.parquet")])


def test_arg_first_steps_are_read_as_redex_steps():
    # redex_arg_first writes a step first argument first; the categories are the same
    expression, innermost, root = 'f10(f2("ufkvgj"))', 'f2("ufkvgj")', "f10"
    assert first_line_category(expression, innermost, root, '"ufkvgj".f2()="fkvgj"\nf10("fkvgj")') == "innermost"
    assert first_line_category(expression, innermost, root, '"ufkvgj".f10()="uFkVgJ"') == "root_first"
    assert first_line_category('f1(f7("ab",2))', 'f7("ab",2)', "f1", '"ab".f7(2)="abab"') == "innermost"
    assert first_line_category('f1(("ab"+"c"))', '("ab"+"c")', "f1", '"ab"+"c"="abc"') == "innermost"
    assert first_line_category(expression, innermost, root, '"ufkvgj".upper()="UFKVGJ"') == "invented_builtin"
    # a step line after the first is no stop, though it starts with a string like a bare value
    assert not stops_after_first_step('"ufkvgj".f2()="fkvgj"\n"fkvgj".f10()="fKvGj"')
    assert stops_after_first_step('"ufkvgj".f2()="fkvgj"\n"fkvgj"')
    assert stops_after_first_step('"ufkvgj".f2()="fkvgj"\n{"output": "fkvgj"}')


def test_located_answers_whose_step_value_is_right():
    assert first_step_right('f2("ufkvgj")="fkvgj"', 'f2("ufkvgj")="fkvgj"\nf10("fkvgj")')
    assert first_step_right('f2("ufkvgj")="fkvgj"', '"ufkvgj".f2()="fkvgj"\nf10("fkvgj")')  # redex_arg_first
    assert not first_step_right('f2("ufkvgj")="fkvgj"', 'f2("ufkvgj")="fkvg"')
    df = _samples()
    df["responses"] = [['f2("ufkvgj")="fkvgj"\nf10("fkvgj")', '"ufkvgj".f2()="ufkvgj"\nf10("ufkvgj")',
                        '"ufkvgj".f2()="fkvgj"', 'f10("ufkvgj")="uFkVgJ"'], ['?']]
    t = stop_after_first_step_table(df).set_index("level")
    assert t.loc[2, ["located", "step_right"]].tolist() == [3, 2] and t.loc[2, "step_right_share"] == 2 / 3
    assert t.loc[3, "step_right"] == 0 and pd.isna(t.loc[3, "step_right_share"])


def test_chain_rendered_rows_are_read_as_redex_steps():
    # task.render: chain writes prompts and steps in evaluation order; the categories are the same
    e = Call(10, (Call(2, (X,)),))
    row = make_row(Problem(e, "ufkvgj", evaluate(e, "ufkvgj"), 2), stage=2, split="test", style="compact",
                   index=0, render="chain")
    assert row["prompt"][0]["content"] == '"ufkvgj".f2().f10()\n'
    responses = ['"ufkvgj".f2()="fkvgj"\n"fkvgj".f10()\n', '"ufkvgj".f2()="fkvgj"\n{"output": "fkvgj"}',
                 '"ufkvgj".f10()="uFkVgJ"\n{"output": "uFkVgJ"}', '"ufkvgj".f2()="ufk"\n"ufk".f10()\n']
    df = pd.DataFrame([{**row, "level": 2, "responses": responses}])
    shares = first_line_table(df).set_index("category")["share"]
    assert shares["innermost"] == 0.75 and shares["root_first"] == 0.25
    stops = stop_after_first_step_table(df).iloc[0]
    assert (stops["located"], stops["stopped"], stops["step_right"]) == (3, 1, 2)


def test_call_steps_call_lines_are_skipped():
    # task.trace: call_steps writes each call alone before its step; the first step is the second line
    expression, innermost, root = 'f10(f2("ufkvgj"))', 'f2("ufkvgj")', "f10"
    located = '"ufkvgj".f2()\n"ufkvgj".f2()="fkvgj"\n"fkvgj".f10()\n"fkvgj".f10()="fKvGj"\n{"output": "fKvGj"}'
    assert first_line_category(expression, innermost, root, located) == "innermost"
    assert first_step_right('f2("ufkvgj")="fkvgj"', located)
    assert not stops_after_first_step(located)
    assert stops_after_first_step('"ufkvgj".f2()\n"ufkvgj".f2()="fkvgj"\n{"output": "fkvgj"}')
    root_first = '"ufkvgj".f10()\n"ufkvgj".f10()="uFkVgJ"\n{"output": "uFkVgJ"}'
    assert first_line_category(expression, innermost, root, root_first) == "root_first"
    # a call line with no step after it is read as it is
    assert not first_step_right('f2("ufkvgj")="fkvgj"', '"ufkvgj".f2()\n{"output": "fkvgj"}')
