"""The step funnel of compact traces (hand-built responses against known programs)."""

import pandas as pd
import pytest

from fgx.analysis.step_funnel import (call_signature, funnel_table, length_table, main, reference_steps,
                                      repeats_previous_call, response_outcomes, trace_outcome)
from fgx.tasks.strings import Call, Int, Method, Str, X, evaluate, parse_chain
from fgx.tasks.strings.generate import Problem, make_row
from fgx.tasks.strings.trace import written_steps

X0 = "ufkvgj"
LEVEL3 = Call(12, (Call(10, (Call(2, (X,)),)),))  # x.f2().f10().f12()


def _row(e, level, index=0):
    row = make_row(Problem(e, X0, evaluate(e, X0), level), stage=2, split="test", style="compact", index=index)
    row["level"] = level
    return row


def test_reference_steps_follow_the_reduction_order():
    steps = reference_steps(_row(LEVEL3, 3))
    mid = evaluate(Call(10, (Call(2, (X,)),)), X0)
    assert [c for c, _ in steps] == [Call(2, (Str("ufkvgj"),)), Call(10, (Str("fkvgj"),)), Call(12, (Str(mid),))]
    assert steps[0][1] == "fkvgj"


def test_the_reference_solution_is_complete():
    row = _row(LEVEL3, 3)
    written = written_steps(row["extra_info"]["solution"])
    assert len(written) == 3
    assert trace_outcome(reference_steps(row), written) == ("complete", 3)


def test_departures_are_found_at_their_step():
    ref = reference_steps(_row(LEVEL3, 3))
    s1, s2, s3 = written_steps(_row(LEVEL3, 3)["extra_info"]["solution"])
    assert trace_outcome(ref, []) == ("stopped", 1)
    assert trace_outcome(ref, written_steps(f'{s1}\n{s2}\n{{"output": "fKvGj"}}')) == ("stopped", 3)
    assert trace_outcome(ref, ['"ufkvgj".f12()="x"']) == ("wrong_call", 1)
    assert trace_outcome(ref, [s1, '"fkvg".f10()="fKvG"']) == ("wrong_call", 2)  # a miscarried value
    assert trace_outcome(ref, [s1, '"fkvgj".f10()="fkvgj"']) == ("wrong_value", 2)
    assert trace_outcome(ref, [s1, "not a step = at all"]) == ("wrong_call", 2)
    assert trace_outcome(ref, [s1, s2, s3, s3]) == ("extra_steps", 3)
    # lines after the answer are not steps
    assert written_steps(f'{s1}\n{{"output": "fkvgj"}}\n{s2}') == [s1]


def test_a_wrong_call_that_repeats_the_previous_step_is_told_apart():
    assert call_signature(parse_chain('"abc".f8(2)')) == (8, "2")
    assert call_signature(Method("upper", Str("abc"))) == ("upper",)
    assert call_signature(parse_chain('("a"+"b")')) is None and call_signature(None) is None
    assert call_signature(Call(8, (Str("x"), Int(2)))) == call_signature(parse_chain('"abc".f8(2)'))
    ref = reference_steps(_row(LEVEL3, 3))
    s1 = written_steps(_row(LEVEL3, 3)["extra_info"]["solution"])[0]
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
