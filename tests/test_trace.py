"""String task: the compact answer format (one step line per reduction, then the answer) written and read."""

import json

import pytest

from fgx.tasks import strings as S
from fgx.tasks.strings.expr import Call, Concat, Int, Method, Str, X
from fgx.tasks.strings.ground_truth import ground_truth
from fgx.tasks.strings.trace import chain_to_compact, parse_step, top_level_eq, written_steps

# A Level-3 expression with every node kind: a call in a call, a two-argument call, a method, a concat.
TRACE_EXPR = Concat(Call(1, (Call(17, (X,)), Int(2))), Method("upper", Call(9, (Str("ab"),))))


def test_steps_are_leftmost_innermost_in_chain_form_then_the_answer():
    lines = S.trace_lines(TRACE_EXPR, "xy")
    assert lines == ['"xy".f17()="yx"', '"yx".f1(2)="yxyx"', '"ab".f9()="abba"', '"abba".upper()="ABBA"',
                     '("yxyx"+"ABBA")="yxyxABBA"', '{"output": "yxyxABBA"}']
    assert [ln.rpartition("=")[2] for ln in lines[:-1]] == [json.dumps(v) for v in S.trace_values(TRACE_EXPR, "xy")]
    assert json.loads(lines[-1]) == {"output": "yxyxABBA"}
    # a chain's next step starts with the last value and the prompt's next call
    assert S.trace_lines(S.parse_chain('"mdu".f14().f10().f2()'), "") == [
        '"mdu".f14()="mmdduu"', '"mmdduu".f10()="mMdDuU"', '"mMdDuU".f2()="mMdD"', '{"output": "mMdD"}']
    # Level 1: the prompt copied with its value
    assert S.solution_text(S.parse_compact('f3("dcba")'), "") == '"dcba".f3()="abcd"\n{"output": "abcd"}\n'


def test_the_reference_answer_scores_right():
    scored = S.compute_score("codeio-forward-incomplete-depth3", S.solution_text(TRACE_EXPR, "xy"),
                             ground_truth("xy", "yxyxABBA", S.main_solution_code(TRACE_EXPR)))
    assert scored["score"] == 1.0 and scored["pred"] == "yxyxABBA"


def test_steps_are_read_back_from_a_response():
    response = S.solution_text(TRACE_EXPR, "xy")
    steps = written_steps("  garbage line\n" + response + '"after".f3()="x"\n')
    assert steps == S.trace_lines(TRACE_EXPR, "xy")[:-1]  # the answer line ends the steps
    call, value = parse_step(steps[1])
    assert call == Call(1, (Str("yx"), Int(2))) and value == "yxyx"
    assert parse_step('"a=b".f3()="=ab"') == (Call(3, (Str("a=b"),)), "=ab")  # '=' inside a literal
    for bad in ('"ab".f3()', '"ab".f99()="x"', '"ab".f3()="a"+"b"', '=', '"ab".f3()=3'):
        assert parse_step(bad) is None
    assert top_level_eq('"a=b"=c') == 5 and top_level_eq('"a\\"=b"') == -1


def test_chain_lines_convert_to_the_nested_form():
    rows = S.generate(stage=2, split="train", min_level=1, max_level=5, num=60, seed=4, style="compact")
    assert len(rows) == 60
    for row in rows.itertuples():
        gt = json.loads(row.reward_model["ground_truth"])
        e, x = S.parse_code(gt["ref_code"]), gt["ref_input"]["x"]
        assert chain_to_compact(row.prompt[0]["content"].strip()) == S.render_compact(e, x)
        for line, (redex, value) in zip(S.trace_lines(e, x), S.reductions(e, x)):
            assert chain_to_compact(line) == f"{S.render_compact(redex, x)}={json.dumps(value, ensure_ascii=False)}"
    assert chain_to_compact('f3("ab")="ba"') == 'f3("ab")="ba"'  # nested lines pass through
    assert chain_to_compact('{"output": "ab"}') == '{"output": "ab"}'


def test_a_literal_has_no_steps():
    assert S.trace_lines(Str("ab"), "") == ['{"output": "ab"}']
    with pytest.raises(S.ValueTooLong):
        S.trace_lines(X, "abcdefghij", max_len=4)
