"""The step funnel of compact traces (hand-built responses against known programs)."""

import pandas as pd
import pytest

from fgx.analysis.step_funnel import (call_signature, funnel_table, length_table, main, reference_steps,
                                      repeats_previous_call, response_outcomes, trace_outcome, written_steps)
from fgx.tasks.strings import Call, X, evaluate
from fgx.tasks.strings.generate import Problem, make_row

X0 = "ufkvgj"
LEVEL3 = Call(12, (Call(10, (Call(2, (X,)),)),))  # f12(f10(f2(x)))


def _row(e, level, trace="steps", render="chain", index=0):
    row = make_row(Problem(e, X0, evaluate(e, X0), level), stage=2, split="test", style="compact", index=index,
                   trace=trace, render=render)
    row["level"] = level
    return row


def test_reference_steps_follow_the_reduction_order():
    steps = reference_steps(_row(LEVEL3, 3))
    assert [c for c, _ in steps] == ['f2("ufkvgj")', 'f10("fkvgj")', f'f12("{evaluate(Call(10, (Call(2, (X,)),)), X0)}")']
    assert steps[0][1] == 'f2("ufkvgj")="fkvgj"'


@pytest.mark.parametrize("trace, render", [("steps", "chain"), ("redex", "chain"), ("call_steps", "chain"),
                                           ("redex", "nested"), ("redex_arg_first", "nested")])
def test_every_trace_form_of_the_reference_solution_is_complete(trace, render):
    row = _row(LEVEL3, 3, trace=trace, render=render)
    written = written_steps(row["extra_info"]["solution"])
    assert len(written) == 3
    assert trace_outcome(reference_steps(row), written) == ("complete", 3)


def test_departures_are_found_at_their_step():
    ref = reference_steps(_row(LEVEL3, 3))
    s1, s2, s3 = (line for _, line in ref)
    assert trace_outcome(ref, []) == ("stopped", 1)
    assert trace_outcome(ref, written_steps(f'"ufkvgj".f2()="fkvgj"\n"fkvgj".f10()="fKvGj"\n{{"output": "fKvGj"}}')) \
        == ("stopped", 3)
    assert trace_outcome(ref, ['f12("ufkvgj")="x"']) == ("wrong_call", 1)
    assert trace_outcome(ref, [s1, 'f10("fkvg")="fKvG"']) == ("wrong_call", 2)  # a miscarried value
    assert trace_outcome(ref, [s1, 'f10("fkvgj")="fkvgj"']) == ("wrong_value", 2)
    assert trace_outcome(ref, [s1, s2, s3, s3]) == ("extra_steps", 3)
    # lines after the answer are not steps
    assert written_steps('"ufkvgj".f2()="fkvgj"\n{"output": "fkvgj"}\n"fkvgj".f10()="fKvGj"') == [s1]


def test_a_wrong_call_that_repeats_the_previous_step_is_told_apart():
    assert call_signature('f8("abc",2)') == (8, "2") and call_signature('upper("abc")') == ("upper",)
    assert call_signature('("a"+"b")') is None and call_signature("?(") is None
    ref = reference_steps(_row(LEVEL3, 3))
    s1 = ref[0][1]
    repeat = written_steps(f'{s1}\n"fkvgj".f2()="fkvgj"')  # f2 again on the carried value
    other = written_steps(f'{s1}\n"fkvgj".f12()="fkvgj"')
    assert trace_outcome(ref, repeat) == trace_outcome(ref, other) == ("wrong_call", 2)
    assert repeats_previous_call(ref, repeat, 2) and not repeats_previous_call(ref, other, 2)
    assert not repeats_previous_call(ref, repeat, 1) and not repeats_previous_call(ref, repeat, 3)
    row = _row(LEVEL3, 3)
    row["responses"] = [f'{s1}\n"fkvgj".f2()="fkvgj"', f'{s1}\n"fkvgj".f12()="x"', row["extra_info"]["solution"]]
    out = response_outcomes(pd.DataFrame([row]))
    assert out["repeated"].tolist() == [True, False, False]
    funnel = funnel_table(out).set_index(["level", "step"])
    assert funnel.loc[(3, 2), "wrong_call"] == 2 / 3 and funnel.loc[(3, 2), "repeated_call"] == 1 / 3


def test_tables_count_per_level_and_step(tmp_path):
    l3 = _row(LEVEL3, 3)
    l1 = _row(Call(2, (X,)), 1, index=1)
    sol = l3["extra_info"]["solution"]
    lines = sol.split("\n")
    l3["responses"] = [sol,                                    # complete
                       "\n".join(lines[:2]) + '\n{"output": "x"}',  # two steps, then answers: stopped at 3
                       '"ufkvgj".f12()="x"',                   # wrong call at 1
                       lines[0].replace('"fkvgj"', '"fkv"')]   # wrong value at 1
    l1["responses"] = [l1["extra_info"]["solution"], '{"output": "fkvgj"}']
    df = pd.DataFrame([l3, l1])
    out = response_outcomes(df)
    assert out[out.level == 3]["outcome"].tolist() == ["complete", "stopped", "wrong_call", "wrong_value"]
    funnel = funnel_table(out).set_index(["level", "step"])
    assert funnel.loc[(3, 1), "reached"] == 4 and funnel.loc[(3, 1), "wrong_call"] == 0.25
    assert funnel.loc[(3, 1), "wrong_value"] == 0.25 and funnel.loc[(3, 1), "right"] == 0.5
    assert funnel.loc[(3, 3), "reached"] == 2 and funnel.loc[(3, 3), "stopped"] == 0.5
    assert funnel.loc[(3, 3), "reached_share"] == 0.5
    assert funnel.loc[(1, 1), "stopped"] == 0.5 and funnel.loc[(1, 1), "right"] == 0.5
    lengths = length_table(out).set_index("level")
    assert lengths.loc[3, "short"] == 0.75 and lengths.loc[3, "exact"] == 0.25
    assert lengths.loc[3, "short_mode"] == 1  # wrong call / wrong value write one line, the stopped one two
    assert lengths.loc[1, "short_mode"] == 0
    # the CLI writes the funnel table
    df.to_parquet(tmp_path / "eval.parquet")
    assert main(["--eval", str(tmp_path / "eval.parquet"), "--levels", "3", "--out", str(tmp_path / "f.csv")]) == 0
    assert pd.read_csv(tmp_path / "f.csv")["level"].unique().tolist() == [3]


def test_bad_input_is_named():
    paper = make_row(Problem(Call(2, (X,)), X0, evaluate(Call(2, (X,)), X0), 1), stage=2, split="test",
                     style="paper", index=0)
    paper["level"], paper["responses"] = 1, ["?"]
    with pytest.raises(ValueError, match="compact"):
        response_outcomes(pd.DataFrame([paper]))
    row = _row(LEVEL3, 3)
    row["responses"] = ["?"]
    with pytest.raises(ValueError, match="levels"):
        response_outcomes(pd.DataFrame([row]), levels=[5])
