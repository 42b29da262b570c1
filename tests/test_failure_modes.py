"""Failure-mode classifier: hand-written responses for every category (compact and free text),
determinism, totality on garbage, and classify_eval on generated rows."""

import json
import random

import pandas as pd
import pytest

from fgx.tasks.strings import failure_modes as FM
from fgx.tasks.strings.failure_modes import (ATOMIC, CATEGORIES, CORRECT, IGNORES, INCOMPLETE, INCORRECT, classify,
                                        classify_detailed, classify_eval)
from fgx.tasks.strings import evaluate, generate, parse_code, solution_text, trace_lines
from fgx.tasks.strings.generate import program_code
from fgx.tasks.strings.ground_truth import ground_truth

# f17(f8(f5("dcx","ab"),1)): add_prefix -> "abdcx", rotate by 1 -> "bdcxa", reverse -> "axcdb"
CODE = "func_17(func_8(func_5(x, 'ab'), 1))"
X = "dcx"
EXPR = parse_code(CODE)


def gt(stage=2, code=CODE, x=X):
    e = parse_code(code)
    return ground_truth(x, evaluate(e, x), program_code(e, stage))


GT = gt()


def _rewrites(e, x):
    """The rewrite trace the classifier reads a step trace as (repeated lines dropped)."""
    from fgx.tasks.strings.trace import chain_to_compact

    got = FM._as_rewrite_trace([chain_to_compact(ln) for ln in trace_lines(e, x, 16)], FM._inline(e, x))
    return [ln for i, ln in enumerate(got) if i == 0 or ln != got[i - 1]]


def test_reference_trace_is_what_the_cases_assume():
    assert trace_lines(EXPR, X) == ['"dcx".f5("ab")="abdcx"', '"abdcx".f8(1)="bdcxa"', '"bdcxa".f17()="axcdb"',
                                    '{"output": "axcdb"}']
    assert _rewrites(EXPR, X) == ['f17(f8("abdcx",1))', 'f17("bdcxa")', '"axcdb"', '{"output": "axcdb"}']


COMPACT = [
    # Correct: the reference trace, a shortened one, and a bare right answer
    (solution_text(EXPR, X), CORRECT),
    ('f17("bdcxa")\n"axcdb"\n{"output": "axcdb"}\n', CORRECT),
    ('{"output": "axcdb"}', CORRECT),
    # Ignores Composition: no in-context rewrite at all
    ('{"output": "zzz"}', IGNORES),  # jumps straight to an answer
    ('"zzz"\n{"output": "zzz"}', IGNORES),  # writes only a (wrong) final literal
    ('f17(f8(f5("dcx","ab"),1))\n{"output": "bad"}', IGNORES),  # echoes the prompt, then answers
    ('f8(f5("dcx","ab"),1)\n{"output": "xyz"}', IGNORES),  # rewrites the structure, never evaluates
    ("", IGNORES),
    (None, IGNORES),
    # Incomplete Trace
    ('f17(f8("abdcx",1))\nf17("bdc', INCOMPLETE),  # truncated, no answer
    ('f17(f8("abdcx",1))\nf17("bdcxa")\n"axcdb"\n', INCOMPLETE),  # right trace, no output line
    ('f17(f8("abdcx",1))\nf17("bdcxa")\n{"output": "bdcxa"}', INCOMPLETE),  # answers an intermediate
    ('f17(f8("abdcx",1))\n{"output": "abdcx"}', INCOMPLETE),  # answers an earlier intermediate
    ('f17(f8("abdcx",1))\n{"output": "qqqq"}', INCOMPLETE),  # skips two steps, wrong value
    ('f17("qqqq")\n"qqqq"\n{"output": "qqqq"}', INCOMPLETE),  # skips two inner steps in context, wrong
    # Incorrect Composition
    ('f17(f8("abdcx",2))\nf17("dcxab")\n"baxcd"\n{"output": "baxcd"}', INCORRECT),  # parameter changed
    ('f17(f8("abdcx",1))\nf8("bdcxa",1)\n{"output": "dcxab"}', INCORRECT),  # a function vanishes
    ('f17(f8("abdcx",1))\nf17("abdcx")\n"xcdba"\n{"output": "xcdba"}', INCORRECT),  # drops f8
    ('f17(f8("abdcx",1))\nf17("xcdba")\n"abdcx"\n{"output": "abdcx"}', INCORRECT),  # f17 first: wrong order
    ('f17(f8("abdcx",1))\nf17("cxd")\n"dxc"\n{"output": "dxc"}', INCORRECT),  # f8 on x: wrong argument
    ('f17(f8("abdcx",1))\nf17("bdcxa")\nf17("bdcxb")\n"bxcdb"\n{"output": "bxcdb"}', INCORRECT),  # carry
    ('f17(f8("abdcx",1))\nf17("bdcxa")\n"axcdb"\n{"output": "axcd"}', INCORRECT),  # answer != own trace
    ('f17(f8("abdcx",1))\n{"output": "xcdba"}', INCORRECT),  # the answer drops f8
    # Atomic Error
    ('f17(f8("abdc",1))\nf17("bdca")\n"acdb"\n{"output": "acdb"}', ATOMIC),  # f5 wrong
    ('f17(f8("abdcx",1))\nf17("bdcax")\n"xacdb"\n{"output": "xacdb"}', ATOMIC),  # f8 wrong
    ('f17(f8("abdcx",1))\nf17("bdcxa")\n"axdcb"\n{"output": "axdcb"}', ATOMIC),  # f17 wrong
    ('f17(f8("abdcx",1))\nf17("bdcxa")\n{"output": "axdcb"}', ATOMIC),  # f17 wrong, no literal line
]


@pytest.mark.parametrize("response,expected", COMPACT)
def test_compact_categories(response, expected):
    c = classify_detailed(response, GT, style="compact")
    assert c.category == expected, c.reason
    assert c.reason


def test_step_traces_imply_one_rewrite_per_step_on_generated_problems():
    df = generate(stage=2, split="train", min_level=1, max_level=5, num=100, seed=5, style="compact",
                  max_value_len=16)
    assert len(df) == 100
    for r in df.itertuples():
        gt_ = json.loads(r.reward_model["ground_truth"])
        e, x = parse_code(gt_["ref_code"]), gt_["ref_input"]["x"]
        lines = _rewrites(e, x)
        assert len(lines) == len(trace_lines(e, x, 16))  # one rewrite per step, then the answer
        assert lines[-2] == json.dumps(evaluate(e, x), ensure_ascii=False)


@pytest.mark.parametrize("response,expected", [
    (solution_text(EXPR, X), CORRECT),
    # the steps forms of the chain cases above: an atomic error at f8, a wrong order, a stop after step 1
    ('"dcx".f5("ab")="abdcx"\n"abdcx".f8(1)="bdcax"\n"bdcax".f17()="xacdb"\n{"output": "xacdb"}', ATOMIC),
    ('"dcx".f5("ab")="abdcx"\n"abdcx".f17()="xcdba"\n"xcdba".f8(1)="cdbax"\n{"output": "cdbax"}', INCORRECT),
    ('"dcx".f5("ab")="abdcx"\n{"output": "abdcx"}', INCOMPLETE),
    ('"dcx".f5("ab")="abdcx"\n"abdcx".f8(1)="bdcxa"\n"bdcxb".f17()="bxcdb"\n{"output": "bxcdb"}',
     INCORRECT),  # a value miscopied into the next step
])
def test_steps_traces_are_read_as_the_rewrite_steps_they_imply(response, expected):
    c = classify_detailed(response, GT, style="compact")
    assert c.category == expected, c.reason


def test_compact_reasons_name_the_step():
    c = classify_detailed('f17(f8("abdcx",1))\nf17("bdcax")\n', GT)
    assert c.step == 2 and 'f8("abdcx",1)' in c.reason and '"bdcxa"' in c.reason
    c = classify_detailed('f17(f8("abdcx",1))\nf17("xcdba")\n', GT)
    assert "wrong order" in c.reason
    c = classify_detailed('f17(f8("abdcx",1))\nf17("cxd")\n', GT)
    assert "wrong argument" in c.reason


def test_compact_binary_and_methods():
    code = "(func_17(x) + upper(func_3(x)))".replace("upper(func_3(x))", "(func_3(x)).upper()")
    g = gt(code=code, x="bca")
    e = parse_code(code)
    assert classify(solution_text(e, "bca"), g) == CORRECT
    assert _rewrites(e, "bca")[0] == '("acb"+upper(f3("bca")))'
    assert classify('("acb"+upper("abd"))\n', g) == ATOMIC
    assert classify('("acb"+upper("abc"))\n("acb"+"ABC")\n"ABCacb"\n{"output": "ABCacb"}', g) == INCORRECT  # swapped
    assert classify('("acb"+upper("abc"))\n("acb"+"ABC")\n"acbABD"\n{"output": "acbABD"}', g) == ATOMIC


def test_level1_errors_are_atomic_not_ignored_composition():
    # a Level-1 problem has one step, the root: a wrong value there is that function's error (or a
    # dropped function), never "ignores composition" (there is no sub-expression to evaluate)
    g = gt(code="func_8(x, 1)", x="ezb")  # rotate by 1: "zbe"
    assert classify('f8("ezb",1)="yez"\n{"output": "yez"}\n', g) == ATOMIC
    assert classify('{"output": "yez"}', g) == ATOMIC
    c = classify_detailed('f8("ezb",1)="ezb"\n{"output": "ezb"}\n', g)
    assert c.category == INCORRECT and "drops f8" in c.reason
    assert classify('f8("ezb",1)', g) == INCOMPLETE  # no answer
    assert classify('f8("ezb",1)="zbe"\n{"output": "zbe"}\n', g) == CORRECT


PAPER = [
    ('First func_5 adds the prefix: "abdcx". func_8 rotates by one: "bdcxa". func_17 reverses: "axcdb".\n'
     '```json\n{"output": "axcdb"}\n```', CORRECT),
    # Ignores Composition: no intermediate value, nothing computed after naming the first function
    ('The code reverses the string, so the output is the reverse.\n{"output": "zzz"}', IGNORES),
    ('func_17 reverses its input, so main_solution just reverses x.\n{"output": "xcd"}', IGNORES),
    ("I cannot determine this.", IGNORES),
    # Incomplete Trace
    ('func_5 adds the prefix "ab": "abdcx". Next func_8 rotates it, which gives', INCOMPLETE),
    ('func_5 gives "abdcx", func_8 gives "bdcxa".\n{"output": "bdcxa"}', INCOMPLETE),
    ('func_5 gives "abdcx". Then the other functions apply.\n{"output": "qqqq"}', INCOMPLETE),
    # Incorrect Composition
    ('func_5 gives "abdcx". func_17 reverses it first: "xcdba", then func_8 rotates.\n{"output": "cdbax"}',
     INCORRECT),
    ('func_5 gives "abdcx". func_8 rotates x: "cxd". Reversed.\n{"output": "dxc"}', INCORRECT),
    ('func_5 gives "abdcx".\n{"output": "xcdba"}', INCORRECT),  # the answer drops func_8
    ('func_5: "abdcx"; func_8: "bdcxa"; func_17: "axcdb".\n{"output": "axcd"}', INCORRECT),  # says it, answers other
    # Atomic Error
    ('func_5 prepends: "abcdx". func_8 rotates: "bcdxa". Reverse.\n{"output": "axdcb"}', ATOMIC),  # step 1
    ('func_5 prepends: "abdcx". func_8 rotates: "bdcax". Reverse: "xacdb".\n{"output": "xacdb"}', ATOMIC),
    ('func_5 prepends: "abdcx". func_8 rotates: "bdcxa". Reverse.\n{"output": "axdcb"}', ATOMIC),  # final
]


@pytest.mark.parametrize("stage", [1, 2])
@pytest.mark.parametrize("response,expected", PAPER)
def test_free_text_categories(response, expected, stage):
    c = classify_detailed(response, gt(stage=stage), "codeio-forward-incomplete-depth3", style="paper")
    assert c.category == expected, c.reason


def test_free_text_ground_truth_as_dict_and_quotes():
    g = json.loads(GT)
    single = "func_5 gives 'abdcx', then func_8 gives `bdcxa`.\n{\"output\": \"bdcxa\"}"
    assert classify(single, g, style="paper") == INCOMPLETE
    # apostrophes in prose are not quotes
    assert classify("It's func_5's job; it doesn't matter.\n{\"output\": \"q\"}", g, style="paper") == IGNORES


def test_deterministic_and_total_on_garbage():
    rng = random.Random(0)
    alphabet = 'f17(8)"abdcx,{}:output\n\\\'` +upper' + "«»é"
    garbage = ["".join(rng.choice(alphabet) for _ in range(rng.randint(0, 80))) for _ in range(150)]
    garbage += ["(" * 5000, '{"output": 5}', '{"output": null}', "f17(" * 300 + '"a"' + ")" * 300,
                "x" * 100_000, '{"output": "axcdb"', b"bytes", 12, ["list"], '"\\ud800"\n{"output": "\\ud800"}']
    assert len(garbage) == 160
    styles = []
    for style in ("compact", "paper"):
        first = [classify_detailed(r, GT, style=style) for r in garbage]
        again = [classify_detailed(r, GT, style=style) for r in reversed(garbage)][::-1]
        assert len(first) == len(garbage) and first == again
        assert all(c.category in CATEGORIES and c.reason for c in first)
        styles.append(style)
    assert styles == ["compact", "paper"]


def test_bad_inputs_raise_clear_errors():
    with pytest.raises(ValueError, match="ground_truth"):
        classify("x", "not json")
    with pytest.raises(ValueError, match="ref_code"):
        classify("x", {"ref_output": "a"})
    with pytest.raises(ValueError, match="style"):
        classify("x", GT, style="prose")
    with pytest.raises(ValueError, match="string task"):
        classify("x", GT, data_source="reasoning-gym-countdown-depth3")


def _eval_rows(style):
    df = generate(stage=2, split="test", min_level=2, max_level=3, num=6, seed=3, style=style)
    responses = []
    for _, row in df.iterrows():
        answer = json.loads(row["reward_model"]["ground_truth"])["ref_output"]
        sol = row["extra_info"].get("solution") or json.dumps({"output": answer})
        third = sol.split("\n")[0] if style == "compact" else "I give up."
        responses.append([sol, '{"output": "zzz"}', third])
    df["responses"] = responses
    df["level"] = [r["depth"] for r in df["extra_info"]]
    return df


@pytest.mark.parametrize("style", ["compact", "paper"])
def test_classify_eval(style):
    df = _eval_rows(style)
    out = classify_eval(df, level=3)
    assert list(out.columns) == FM.EVAL_COLUMNS
    assert len(out) == 3 * 3 and set(out["level"]) == {3}
    assert (out["style"] == style).all()
    by_sample = out.groupby("sample_index")["category"].apply(list).to_dict()
    assert by_sample[0] == [CORRECT] * 3
    assert by_sample[1] == [IGNORES] * 3
    assert all(c != CORRECT for c in by_sample[2])
    assert out["truth"].str.contains('{"output"', regex=False).all()
    assert len(classify_eval(df, level=None)) == 18
    assert classify_eval(df, level=7).empty


def test_classify_eval_skips_countdown_and_needs_columns():
    df = _eval_rows("compact")
    df.loc[0, "data_source"] = "reasoning-gym-countdown-depth3"
    assert 0 not in set(classify_eval(df, level=None)["prompt_index"])
    with pytest.raises(ValueError, match="responses"):
        classify_eval(pd.DataFrame({"reward_model": []}))
