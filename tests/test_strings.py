"""String task: the 25 functions, expressions, executor, generator, prompts, CLI."""

import json
import random
import re
import string

import pandas as pd
import pytest

from fgx.tasks import strings as S
from fgx.tasks.strings import display, functions as F
from fgx.tasks.strings.expr import Call, Concat, Int, Method, Str, UnsupportedCode, ValueTooLong, X

# ----------------------------------------------------------------------------- the 25 functions
CASES = [
    (0, ("",), ""), (0, ("a",), "a"), (0, ("abc",), "acb"), (0, ("abcd",), "adcb"),
    (0, ("abcdef",), "afedcb"), (0, ("abcdefghijklmno",), "ahognfmeldkcjbi"),  # m = 5, 5, 7
    (1, ("ab", 3), "ababab"), (1, ("ab", 0), ""), (1, ("ab", -2), ""),
    (2, ("Education",), "dctn"), (2, ("",), ""),
    (3, ("dcBa",), "Bacd"), (3, ("«b»a",), "ab«»"),
    (4, ("  hello   big\tworld ",), "world big hello"), (4, ("abc",), "abc"), (4, ("   ",), ""),
    (5, ("cd", "ab"), "abcd"), (6, ("ab", "cd"), "abcd"),
    (7, ("abc", "12345"), "a1b2c345"), (7, ("", "xy"), "xy"), (7, ("xyz", ""), "xyz"),
    (8, ("abcde", 2), "cdeab"), (8, ("abc", 7), "bca"), (8, ("", 3), ""), (8, ("abc", -1), "cab"),
    (8, ("abc", 3), "abc"),
    (9, ("ab",), "abba"), (9, ("",), ""),
    (10, ("abcd",), "aBcD"), (10, ("ABCDE",), "aBcDe"), (10, ("a1b",), "a1b"),
    (11, ("xyz", 3), "abc"), (11, ("XyZ-1", 1), "YzA-1"), (11, ("abc", 27), "bcd"), (11, ("é«", 1), "é«"),
    (11, ("abc", -1), "zab"),
    (12, ("AEIOUaeiouxyz",), "1234512345xyz"),
    (13, ("abc", "-"), "a-b-c"), (13, ("", "-"), ""), (13, ("a", "|"), "a"),
    (14, ("ab",), "aabb"), (15, ("ab",), "«a»«b»"), (15, ("",), ""),
    (16, ("aaabccdaa",), "abcda"), (16, ("",), ""), (16, ("aAa",), "aAa"),
    (17, ("abc",), "cba"), (17, ("",), ""),
    (18, ("ab", 3), "ababab"), (18, ("ab", 0), ""), (18, ("ab", -1), ""),
    (19, ("abcde", 2), "cdeab"), (19, ("abc", 5), "cab"), (19, ("", 3), ""), (19, ("abc", 0), "abc"),
    (19, ("abc", -2), "abc"),
    (20, ("abc", "12345"), "a1b2c345"), (20, ("", "xy"), "xy"), (20, ("xyz", ""), "xyz"),
    (21, ("a1-b_Cé2«",), "abCé"),
    (22, ("abc",), "ab"), (22, ("abcd",), "abcd"), (22, ("",), ""), (22, ("a",), ""),
    (23, ("abc", 1), "abc1"), (23, ("ab3", 2), "ab3"), (23, ("abc", 0), "abc"), (23, ("", 1), "1"),
    (23, ("abc", -1), "abc1"), (23, ("a²", 1), "a²"),
    (24, ("abc", 1), "abccba"), (24, ("aba", 3), "aba"), (24, ("abc", 0), "abc"), (24, ("", 2), ""),
    (24, ("ab", 3), "abba"), (24, ("ab", -1), "ab"),
]


@pytest.mark.parametrize("fn,args,expected", CASES)
def test_function_edge_cases(fn, args, expected):
    assert F.FUNCS[fn](*args) == expected
    assert getattr(display, f"func_{fn}")(*args) == expected


def test_names_sets_and_pools():
    assert len(F.NAMES) == 25 and F.NAMES[15] == "fancy_brackets" and F.NAMES[24] == "backchain_palindrome"
    assert F.TRAIN_FUNCS == {1, 3, 4, 5, 9, 11, 13, 15, 17, 19, 20, 22, 23}
    assert F.EVAL_FUNCS == set(range(25)) - F.TRAIN_FUNCS and len(F.EVAL_FUNCS) == 12
    assert set(F.NO_PARAM_ORDER) | set(F.PARAM_ORDER) | {7, 20} == set(range(25))
    assert F.PARAM_ORDER == (1, 5, 6, 8, 11, 13, 19, 18, 23, 24)


def _random_text(rng, n):
    return "".join(rng.choice("abcAEIxyzou019 -_|«»é²") for _ in range(n))


def test_fast_functions_match_displayed_definitions():
    rng = random.Random(7)
    for _ in range(400):
        s, t = _random_text(rng, rng.randint(0, 13)), _random_text(rng, rng.randint(0, 6))
        for fn in range(25):
            sig = F.SIGNATURES[fn]
            if sig == "s":
                args = (s,)
            elif sig == "si":
                args = (s, rng.randint(-4, 30))
            else:
                args = (s, t)
            assert F.FUNCS[fn](*args) == getattr(display, f"func_{fn}")(*args), (fn, args)


def test_display_sources_are_self_contained_and_named():
    for fn in range(25):
        src = S.definition_source(fn)
        assert src.startswith(f"def func_{fn}(") and src.endswith("\n")
        assert "fgx" not in src and "_VOWEL" not in src
    assert "from math import gcd" in S.definition_source(0)
    assert "func_17(s[1:])" in S.definition_source(17)  # recursion shown under the prompt name


# ----------------------------------------------------------------------------- expressions
def test_parse_render_round_trip_and_compact():
    code = "def main_solution(x):\n    return func_5(interlace(x), 'ab')".replace("interlace(x)", "func_7(x, 'cd')")
    e = S.parse_code(code)
    assert e == Call(5, (Call(7, (X, Str("cd"))), Str("ab")))
    assert S.main_solution_code(e) == code
    assert S.render_compact(e, "xy") == 'f5(f7("xy","cd"),"ab")'
    e2 = S.parse_code("def main_solution(x):\n    return ((x + 'ab')).upper()")
    assert S.render_code(e2) == "((x + 'ab')).upper()" and S.render_compact(e2, "q") == 'upper(("q"+"ab"))'
    assert S.parse_compact(S.render_compact(e, "xy")) == Call(5, (Call(7, (Str("xy"), Str("cd"))), Str("ab")))
    assert S.depth(e) == 2 and S.depth(e2) == 2 and S.depth(Call(1, (X, Int(3)))) == 1


def test_architecture_trace_example():
    e = S.parse_code("def main_solution(x):\n    return func_17(func_3(x))")
    assert S.render_compact(e, "dcba") + "\n" == 'f17(f3("dcba"))\n'
    assert S.solution_text(e, "dcba") == 'f17("abcd")\n"dcba"\n{"output": "dcba"}\n'
    assert S.trace_values(e, "dcba") == ["abcd", "dcba"]


# A Level-3 expression with every node kind: a call in a call, a two-argument call, a method, a concat.
TRACE_EXPR = Concat(Call(1, (Call(17, (X,)), Int(2))), Method("upper", Call(9, (Str("ab"),))))


def _assert_scored_right(trace: str):
    """compute_score reads the answer of TRACE_EXPR's reference trace (input "xy") as right."""
    from fgx.tasks.strings.generate import ground_truth
    scored = S.compute_score("codeio_level_3", S.solution_text(TRACE_EXPR, "xy", trace=trace),
                             ground_truth("xy", "yxyxABBA", S.main_solution_code(TRACE_EXPR)))
    assert scored["score"] == 1.0 and scored["pred"] == "yxyxABBA"


def test_trace_is_leftmost_innermost_and_replays():
    e = TRACE_EXPR
    lines = S.trace_lines(e, "xy")
    assert lines == ['(f1("yx",2)+upper(f9("ab")))', '("yxyx"+upper(f9("ab")))', '("yxyx"+upper("abba"))',
                     '("yxyx"+"ABBA")', '"yxyxABBA"', '{"output": "yxyxABBA"}']
    assert S.trace_values(e, "xy") == ["yx", "yxyx", "abba", "ABBA", "yxyxABBA"]
    # every line is a valid compact expression with the same value
    for line in lines[:-1]:
        assert S.evaluate(S.parse_compact(line), "") == "yxyxABBA"
    assert json.loads(lines[-1]) == {"output": "yxyxABBA"}


def test_redex_trace_copies_each_call_with_its_value_then_rewrites():
    e = TRACE_EXPR
    lines = S.trace_lines(e, "xy", trace="redex")
    assert lines == ['f17("xy")="yx"', '(f1("yx",2)+upper(f9("ab")))', 'f1("yx",2)="yxyx"',
                     '("yxyx"+upper(f9("ab")))', 'f9("ab")="abba"', '("yxyx"+upper("abba"))',
                     'upper("abba")="ABBA"', '("yxyx"+"ABBA")', '("yxyx"+"ABBA")="yxyxABBA"',
                     '{"output": "yxyxABBA"}']
    # a Level-1 answer is its call copied with the value: the local context of every later step
    assert S.solution_text(S.parse_compact('f3("dcba")'), "", trace="redex") == (
        'f3("dcba")="abcd"\n{"output": "abcd"}\n')
    # the same steps as the rewrite trace: its expression lines, then the last value
    rewrite = S.trace_lines(e, "xy")
    assert [ln for ln in lines[:-1] if "=" not in ln] == rewrite[:-2]
    assert lines[-2].split("=")[-1] == rewrite[-2]
    with pytest.raises(ValueError, match="unknown trace 'tree'.*rewrite, redex"):
        S.trace_lines(e, "xy", trace="tree")
    # redex_full: the same lines, and the last step is also followed by the (now bare) expression
    full = S.trace_lines(e, "xy", trace="redex_full")
    assert full == lines[:-1] + ['"yxyxABBA"', lines[-1]]
    assert S.solution_text(S.parse_compact('f3("dcba")'), "", trace="redex_full") == (
        'f3("dcba")="abcd"\n"abcd"\n{"output": "abcd"}\n')
    _assert_scored_right("redex_full")


def test_redex_arg_first_trace_writes_each_step_first_argument_first():
    e = TRACE_EXPR
    lines = S.trace_lines(e, "xy", trace="redex_arg_first")
    assert lines == ['"xy".f17()="yx"', '(f1("yx",2)+upper(f9("ab")))', '"yx".f1(2)="yxyx"',
                     '("yxyx"+upper(f9("ab")))', '"ab".f9()="abba"', '("yxyx"+upper("abba"))',
                     '"abba".upper()="ABBA"', '("yxyx"+"ABBA")', '"yxyx"+"ABBA"="yxyxABBA"',
                     '{"output": "yxyxABBA"}']
    # the same steps as redex: each step line converts back to redex's form, other lines are equal
    assert [S.arg_first_to_compact(ln) for ln in lines] == S.trace_lines(e, "xy", trace="redex")
    # a Level-1 answer starts with the prompt's first literal, as the innermost step of a nest does
    assert S.solution_text(S.parse_compact('f3("dcba")'), "", trace="redex_arg_first") == (
        '"dcba".f3()="abcd"\n{"output": "abcd"}\n')
    assert S.trace_lines(S.parse_compact('f10(f3("dcba"))'), "", trace="redex_arg_first")[0].startswith('"dcba".f3()')
    # quotes and backslashes inside the literal survive the conversion
    q = S.trace_lines(Call(17, (Str('a"b\\c'),)), "", trace="redex_arg_first")[0]
    assert S.arg_first_to_compact(q) == S.trace_lines(Call(17, (Str('a"b\\c'),)), "", trace="redex")[0]
    _assert_scored_right("redex_arg_first")


def test_chain_render_writes_calls_in_evaluation_order():
    assert S.render_chain(S.parse_compact('f17(f3("dcba"))'), "") == '"dcba".f3().f17()'
    assert S.render_chain(S.parse_compact('f7(f3("ab"),"cd")'), "") == '"ab".f3().f7("cd")'
    assert S.render_chain(S.parse_compact('upper(f1("ab",3))'), "") == '"ab".f1(3).upper()'
    assert S.render_chain(TRACE_EXPR, "xy") == '("xy".f17().f1(2)+"ab".f9().upper())'
    assert S.render_expr(TRACE_EXPR, "xy", "nested") == S.render_compact(TRACE_EXPR, "xy")
    with pytest.raises(ValueError, match="unknown render 'tree'.*nested, chain"):
        S.render_expr(TRACE_EXPR, "xy", "tree")


def test_chain_trace_has_redex_steps_in_chain_form():
    e = TRACE_EXPR
    lines = S.trace_lines(e, "xy", trace="redex", render="chain")
    assert lines == ['"xy".f17()="yx"', '("yx".f1(2)+"ab".f9().upper())', '"yx".f1(2)="yxyx"',
                     '("yxyx"+"ab".f9().upper())', '"ab".f9()="abba"', '("yxyx"+"abba".upper())',
                     '"abba".upper()="ABBA"', '("yxyx"+"ABBA")', '("yxyx"+"ABBA")="yxyxABBA"',
                     '{"output": "yxyxABBA"}']
    # the same steps and values as the nested redex trace, line for line
    nested = S.trace_lines(e, "xy", trace="redex")
    assert [ln.rpartition("=")[2] for ln in lines if "=" in ln] == [ln.rpartition("=")[2] for ln in nested if "=" in ln]
    assert len(lines) == len(nested)
    # a Level-1 answer is the prompt copied with its value; a composition's first step is the prompt's prefix
    assert S.solution_text(S.parse_compact('f3("dcba")'), "", trace="redex", render="chain") == (
        '"dcba".f3()="abcd"\n{"output": "abcd"}\n')
    two = S.trace_lines(S.parse_compact('f10(f3("dcba"))'), "", trace="redex", render="chain")
    assert two[:2] == ['"dcba".f3()="abcd"', '"abcd".f10()']
    assert S.trace_lines(e, "xy", trace="redex_full", render="chain")[-2] == '"yxyxABBA"'
    with pytest.raises(ValueError, match="render 'chain' writes redex or redex_full"):
        S.trace_lines(e, "xy", trace="rewrite", render="chain")
    from fgx.tasks.strings.generate import ground_truth
    scored = S.compute_score("codeio_level_3", S.solution_text(e, "xy", trace="redex", render="chain"),
                             ground_truth("xy", "yxyxABBA", S.main_solution_code(e)))
    assert scored["score"] == 1.0


def test_steps_trace_is_the_chain_redex_steps_without_rewritten_expressions():
    e = TRACE_EXPR
    lines = S.trace_lines(e, "xy", trace="steps", render="chain")
    assert lines == ['"xy".f17()="yx"', '"yx".f1(2)="yxyx"', '"ab".f9()="abba"', '"abba".upper()="ABBA"',
                     '("yxyx"+"ABBA")="yxyxABBA"', '{"output": "yxyxABBA"}']
    redex = S.trace_lines(e, "xy", trace="redex", render="chain")
    assert lines == [ln for ln in redex if "=" in ln or ln.startswith("{")]
    # a chain's next step starts with the last value and the prompt's next call
    assert S.trace_lines(S.parse_chain('"mdu".f14().f10().f2()'), "", trace="steps", render="chain") == [
        '"mdu".f14()="mmdduu"', '"mmdduu".f10()="mMdDuU"', '"mMdDuU".f2()="mMdD"', '{"output": "mMdD"}']
    # Level 1: the same answer as redex
    assert S.solution_text(S.parse_compact('f3("dcba")'), "", trace="steps", render="chain") == (
        '"dcba".f3()="abcd"\n{"output": "abcd"}\n')
    with pytest.raises(ValueError, match="steps trace needs render 'chain'"):
        S.trace_lines(e, "xy", trace="steps")
    from fgx.tasks.strings.generate import ground_truth
    scored = S.compute_score("codeio_level_3", S.solution_text(e, "xy", trace="steps", render="chain"),
                             ground_truth("xy", "yxyxABBA", S.main_solution_code(e)))
    assert scored["score"] == 1.0


def test_call_steps_trace_writes_each_call_alone_before_its_step():
    from fgx.tasks.strings.expr import top_level_eq

    lines = S.trace_lines(S.parse_chain('"mdu".f14().f10()'), "", trace="call_steps", render="chain")
    assert lines == ['"mdu".f14()', '"mdu".f14()="mmdduu"', '"mmdduu".f10()', '"mmdduu".f10()="mMdDuU"',
                     '{"output": "mMdDuU"}']
    # the step lines are those of the steps trace, each after its call: the line a Level-1 prompt reads
    steps = S.trace_lines(TRACE_EXPR, "xy", trace="steps", render="chain")
    calls = S.trace_lines(TRACE_EXPR, "xy", trace="call_steps", render="chain")
    assert calls[1::2] == steps[:-1] and calls[-1] == steps[-1]
    assert calls[0:-1:2] == [s[:top_level_eq(s)] for s in steps[:-1]]
    # Level 1: the prompt's line, then the step
    assert S.solution_text(S.parse_compact('f3("dcba")'), "", trace="call_steps", render="chain") == (
        '"dcba".f3()\n"dcba".f3()="abcd"\n{"output": "abcd"}\n')
    with pytest.raises(ValueError, match="call_steps trace needs render 'chain'"):
        S.trace_lines(TRACE_EXPR, "xy", trace="call_steps")
    from fgx.tasks.strings.generate import ground_truth
    scored = S.compute_score("codeio_level_3", "".join(ln + "\n" for ln in calls),
                             ground_truth("xy", "yxyxABBA", S.main_solution_code(TRACE_EXPR)))
    assert scored["score"] == 1.0


def test_chain_lines_parse_back_to_their_expressions():
    from fgx.tasks.strings.generate import generate
    df = generate(
        stage=2, split="train", min_level=1, max_level=5, num=60, seed=4, style="compact", render="chain")
    for row in df.itertuples():
        gt = json.loads(row.reward_model["ground_truth"])
        e, x = S.parse_code(gt["ref_code"]), gt["ref_input"]["x"]
        assert S.chain_to_compact(row.prompt[0]["content"].strip()) == S.render_compact(e, x)
        nested = S.trace_lines(e, x, trace="redex")
        assert [S.chain_to_compact(ln) for ln in S.trace_lines(e, x, trace="redex", render="chain")] == nested
    assert S.chain_to_compact('f3("ab")="ba"') == 'f3("ab")="ba"'  # nested lines pass through
    assert S.chain_to_compact('{"output": "ab"}') == '{"output": "ab"}'
    assert S.chain_to_compact('"a=b".f3()="=ab"') == 'f3("a=b")="=ab"'  # '=' inside a literal
    for bad in ('"ab".f3(2)', '"ab".f99()', '"ab".upper(1)', '"ab".strip()', '3.f3()', '"ab".f3'):
        with pytest.raises(ValueError):
            S.parse_chain(bad)
        assert S.chain_to_compact(bad) == bad


def test_chain_rows_say_so_and_keep_the_ground_truth():
    from fgx.tasks.strings.generate import Problem, generate, make_row
    p = Problem(S.parse_compact('f10(f3("dcba"))'), "q", "ABCD"[::-1].lower().swapcase(), 2)
    nested, chain = (make_row(p, stage=2, split="test", style="compact", index=0, render=r) for r in ("nested", "chain"))
    assert chain["prompt"][0]["content"] == '"dcba".f3().f10()\n'
    assert chain["reward_model"] == nested["reward_model"] and chain["data_source"] == nested["data_source"]
    assert chain["extra_info"]["render"] == "chain" and "render" not in nested["extra_info"]
    # rewrite (the default of non-pretraining splits) has no chain form: such a row's solution is its redex trace
    assert chain["extra_info"]["solution"].startswith('"dcba".f3()="abcd"\n')
    with pytest.raises(ValueError, match="compact-style rendering"):
        make_row(p, stage=2, split="test", style="paper", index=0, render="chain")
    a = generate(stage=2, split="test", min_level=1, max_level=3, num=9, seed=3, style="compact", render="chain")
    b = generate(stage=2, split="test", min_level=1, max_level=3, num=9, seed=3, style="compact")
    assert list(a["reward_model"]) == list(b["reward_model"])  # the same problems, rendered otherwise
    for row in a.itertuples():
        e = S.parse_code(json.loads(row.reward_model["ground_truth"])["ref_code"])
        x = json.loads(row.reward_model["ground_truth"])["ref_input"]["x"]
        assert row.prompt[0]["content"] == S.render_chain(e, x) + "\n"


def test_first_step_rows_ask_for_the_first_step_as_its_level1_problem():
    from fgx.tasks.strings.generate import FIRST_STEP_MARK, Problem, generate, make_row
    e = S.parse_compact('f10(f3("dcba"))')
    p = Problem(e, "q", S.evaluate(e, "q"), 2)
    row = make_row(p, stage=1, split="train", style="compact", index=0, trace="steps", render="chain", first_step=True)
    assert FIRST_STEP_MARK == ">" and row["prompt"][0]["content"] == '>"dcba".f3().f10()\n'
    level1 = make_row(Problem(S.parse_compact('f3("dcba")'), "q", "abcd", 1), stage=1, split="train", style="compact",
                      index=0, trace="steps", render="chain")
    assert row["extra_info"]["solution"] == level1["extra_info"]["solution"] == '"dcba".f3()="abcd"\n{"output": "abcd"}\n'
    gt = json.loads(row["reward_model"]["ground_truth"])
    assert gt["ref_output"] == "abcd" and S.render_code(S.parse_code(gt["ref_code"])) == S.render_code(e)
    assert row["extra_info"]["task"] == "first_step" and row["extra_info"]["depth"] == 2
    assert S.compute_score(row["data_source"], row["extra_info"]["solution"], row["reward_model"]["ground_truth"])["acc"]
    # the whole expression's answer is wrong here
    assert not S.compute_score(row["data_source"], '{"output": "%s"}' % p.output, row["reward_model"]["ground_truth"])["acc"]
    with pytest.raises(ValueError, match="Level >= 2"):
        make_row(Problem(S.parse_compact('f3("dcba")'), "q", "abcd", 1), stage=1, split="train", style="compact",
                 index=0, first_step=True)
    with pytest.raises(ValueError, match="compact-style"):
        make_row(p, stage=1, split="train", style="paper", index=0, first_step=True)
    rows = generate(stage=1, split="train", min_level=2, max_level=5, num=40, seed=1, style="compact", max_value_len=8,
                    trace="steps", render="chain", first_step=True)
    for r in rows.itertuples():
        gt = json.loads(r.reward_model["ground_truth"])
        e, x = S.parse_code(gt["ref_code"]), gt["ref_input"]["x"]
        redex, value = S.reductions(e, x)[0]
        assert r.prompt[0]["content"] == ">" + S.render_chain(e, x) + "\n" and gt["ref_output"] == value
        assert r.extra_info["solution"].splitlines()[-1] == '{"output": %s}' % json.dumps(value, ensure_ascii=False)
        assert S.compute_score(r.data_source, r.extra_info["solution"], r.reward_model["ground_truth"])["acc"]


def test_unmarked_first_step_rows_drop_the_mark_only():
    """first_step_unmarked: that share of the rows loses the '>' mark (an ordinary composition answered after
    its first step); the expressions, solutions and answers stay the plain split's."""
    from fgx.tasks.strings.generate import generate
    kw = dict(stage=1, split="train", min_level=2, max_level=5, num=200, seed=3, style="compact", max_value_len=8,
              trace="steps", render="chain", first_step=True)
    plain, some = generate(**kw), generate(**kw, first_step_unmarked=0.3)
    unmarked = [not r[0]["content"].startswith(">") for r in some.prompt]
    assert 40 <= sum(unmarked) <= 80 and not any(not r[0]["content"].startswith(">") for r in plain.prompt)
    for a, b, u in zip(plain.itertuples(), some.itertuples(), unmarked):
        assert b.prompt[0]["content"] == (a.prompt[0]["content"][1:] if u else a.prompt[0]["content"])
        assert a.reward_model == b.reward_model and a.extra_info["solution"] == b.extra_info["solution"]
        assert b.extra_info["task"] == ("first_step_unmarked" if u else "first_step")
    assert all(not r[0]["content"].startswith(">") for r in generate(**kw, first_step_unmarked=1.0).prompt)
    with pytest.raises(ValueError, match="share"):
        generate(**kw, first_step_unmarked=1.5)
    with pytest.raises(ValueError, match="needs first_step"):
        generate(**{**kw, "first_step": False}, first_step_unmarked=0.3)


def test_quoting_of_special_characters():
    e = Call(5, (X, Str('a"b\\c\n')))
    assert S.parse_compact(S.render_compact(e, "é«")) == Call(5, (Str("é«"), Str('a"b\\c\n')))
    assert S.parse_code(S.main_solution_code(e)) == e


def test_execute_upstream_stage1_program_and_other_param_names():
    code = S.program_code(S.parse_code("func_20(func_17(x), func_1('ab', 2))"), stage=1)
    assert code.startswith("def func_1(s, n):") and "def func_17" in code and "def func_20" in code
    assert S.execute(code, "xyz") == "zaybxab"
    assert S.execute("def main_solution(s):\n    '''doc'''\n    return func_8(s, -1)", "abc") == "cab"
    assert S.execute("func_3(x)", "cba") == "abc"  # a bare expression


@pytest.mark.parametrize("code", [
    "def main_solution(x):\n    return eval('x')",
    "def main_solution(x):\n    return __import__('os').system('true')",
    "import os\ndef main_solution(x):\n    return x",
    "def main_solution(x):\n    return x.join('ab')",
    "def main_solution(x):\n    return func_25(x)",
    "def main_solution(x):\n    return func_03(x)",
    "def main_solution(x):\n    return func_1(x)",
    "def main_solution(x):\n    return func_1(x, 'a')",
    "def main_solution(x):\n    return func_5(x, 3)",
    "def main_solution(x):\n    return x * 3",
    "def main_solution(x):\n    return (lambda: x)()",
    "def main_solution(x):\n    return y",
    "def main_solution(x):\n    return f'{x}'",
    "def main_solution(x):\n    return x[::-1]",
    "def main_solution(x):\n    return 3",
    "def main_solution(x):\n    return x + 1",
    "def main_solution(x):\n    return func_3(x=x)",
    "def main_solution(x):\n    return func_3(*x)",
    "def main_solution(x):\n    y = x\n    return y",
    "def main_solution(x, y):\n    return x",
    "def main_solution(x):\n    return b'ab'",
    "def main_solution(x):\n    return True",
    "def main_solution(x):\n    return (x).title()",
    "def main_solution(x):\n    return",
    "def main_solution(x) return x",
    "x = 1",
    "(" * 300 + "x" + ")" * 300,
    "func_3(" * 150 + "x" + ")" * 150,
])
def test_execute_rejects_everything_else(code):
    with pytest.raises(ValueError):
        S.execute(code, "abc")


def test_execute_refuses_runaway_sizes():
    with pytest.raises(ValueTooLong):
        S.execute("def main_solution(x):\n    return func_1(x, 10**9)".replace("10**9", "1000000000"), "ab")
    with pytest.raises(ValueTooLong):
        S.execute("func_13(func_1(x, 2000), func_1('-', 2000))", "abcdefghij")
    with pytest.raises(ValueTooLong):
        S.execute("func_9(x)", "abcdef", max_len=10)
    assert S.execute("func_9(x)", "abcde", max_len=10) == "abcdeedcba"
    assert S.execute("func_23(func_19(func_24(x, 1000000000), 1000000000000), 99999999999)", "ab") == "abba1"
    with pytest.raises(ValueError):
        S.execute("func_3(x)", 3)


def test_parse_compact_rejects_code_names():
    for bad in ['func_3("a")', 'f25("a")', 'x', 'upper("a","b")', '("a").upper()']:
        with pytest.raises(UnsupportedCode):
            S.parse_compact(bad)


# ----------------------------------------------------------------------------- generator
def _upstream_style_draws(funcs, depths, per_depth, seed):
    """An independent, string-based transcription of upstream's draw order (reference check)."""
    rnd = random.Random(seed)
    names = {F.NAMES[i]: i for i in funcs}
    no_param = [n for n in ["deterministic_shuffle", "remove_vowels", "sort_chars", "reverse_words", "mirror_str",
                            "alternate_case", "vowel_to_number", "duplicate_every_char", "fancy_brackets",
                            "compress_repeats", "recursive_reverse", "loop_filter_nonalpha",
                            "verify_even_length"] if n in names]
    param = [n for n in ["repeat_str", "add_prefix", "add_suffix", "rotate_str", "shift_chars", "insert_separator",
                         "while_rotate", "loop_concat", "backchain_add_digit", "backchain_palindrome"] if n in names]
    lower = string.ascii_lowercase

    def expr(d):
        if d == 0:
            return "x" if rnd.random() < 0.5 else "'" + "".join(rnd.choices(lower, k=rnd.randint(3, 6))) + "'"
        if rnd.random() < 0.2:
            a, b = expr(d - 1), expr(d - 1)
            if rnd.random() < 0.5:
                return f"({a} + {b})"
            return f"{'interlace_str' if 'interlace_str' in names else 'recursive_interlace'}({a}, {b})"
        if rnd.random() < 0.02:
            op = rnd.choice(["upper", "lower", "capitalize", "swapcase"])
            return f"({expr(d - 1)}).{op}()"
        if rnd.random() < 0.5:
            op = rnd.choice(no_param)
            return f"{op}({expr(d - 1)})"
        op = rnd.choice(param)
        sub = expr(d - 1)
        p = {"repeat_str": lambda: rnd.randint(2, 4), "loop_concat": lambda: rnd.randint(2, 4),
             "add_prefix": lambda: "'" + "".join(rnd.choices(lower, k=rnd.randint(2, 4))) + "'",
             "add_suffix": lambda: "'" + "".join(rnd.choices(lower, k=rnd.randint(2, 4))) + "'",
             "shift_chars": lambda: rnd.randint(1, 5), "insert_separator": lambda: repr(rnd.choice(["-", "_", "|"]))
             }.get(op, lambda: rnd.randint(1, 3))()
        return f"{op}({sub}, {p})"

    seen, out = set(), []
    for d in depths:
        count = 0
        while count < per_depth:
            e = expr(d)
            x = "".join(rnd.choices(lower, k=rnd.randint(3, 10)))
            if e in seen:
                continue
            seen.add(e)
            for name, i in sorted(F.INDEX.items(), key=lambda kv: -len(kv[0])):
                e = e.replace(name, f"func_{i}")
            out.append((e, x))
            count += 1
    return out


@pytest.mark.parametrize("stage,split", [(2, "train"), (2, "test"), (1, "train")])
def test_generator_reproduces_upstream_draw_order(stage, split):
    ps = S.generate_problems(stage=stage, split=split, min_level=1, max_level=3, num=300, seed=42)
    ref = _upstream_style_draws(S.function_set(stage, split), [1, 2, 3], 100, 42)
    assert [(p.code, p.x) for p in ps] == ref


def test_generator_levels_sets_dedup_and_outputs():
    ps = S.generate_problems(stage=2, split="test", min_level=1, max_level=4, num=202, seed=3)
    assert [sum(p.level == lv for p in ps) for lv in (1, 2, 3, 4)] == [51, 51, 50, 50]
    assert len({p.code for p in ps}) == len(ps)
    for p in ps:
        assert S.depth(p.expr) == p.level
        assert S.functions_used(p.expr) <= S.EVAL_FUNCS
        assert 3 <= len(p.x) <= 10 and set(p.x) <= set(string.ascii_lowercase)
        assert S.execute(S.main_solution_code(p.expr), p.x) == p.output
    train = S.generate_problems(stage=2, split="train", min_level=1, max_level=3, num=150, seed=3)
    assert all(S.functions_used(p.expr) <= S.TRAIN_FUNCS for p in train)
    assert any(20 in S.functions_used(p.expr) for p in train)


def test_generator_max_value_len_exclude_and_termination():
    ps = S.generate_problems(stage=2, split="train", min_level=3, max_level=5, num=90, seed=1, max_value_len=16)
    for p in ps:
        assert len(p.x) <= 16 and all(len(v) <= 16 for v in S.trace_values(p.expr, p.x, max_len=16))
    first = S.generate_problems(stage=2, split="test", min_level=1, max_level=1, num=30, seed=5)
    again = S.generate_problems(stage=2, split="test", min_level=1, max_level=1, num=30, seed=5,
                                exclude={p.code for p in first[:10]})
    assert not {p.code for p in again} & {p.code for p in first[:10]}
    with pytest.raises(ValueError, match="level 1: only"):
        S.generate_problems(stage=2, split="test", min_level=1, max_level=1, num=50, seed=0, max_value_len=3,
                            max_attempts_per_problem=2)
    with pytest.raises(ValueError, match="split"):
        S.generate_problems(stage=2, split="dev", min_level=1, max_level=1, num=1, seed=0)
    with pytest.raises(ValueError, match="min_level"):
        S.generate_problems(stage=2, split="test", min_level=3, max_level=2, num=1, seed=0)


def test_shortcuts_are_wrong_traces_that_reach_the_answer():
    from fgx.tasks.strings.shortcuts import shortcut_kinds, shortcut_variants

    # "abcd".f22() keeps an even-length string: leaving the call out gives the answer
    assert shortcut_kinds(Call(22, (X,)), "abcd", "abcd", 8) == {"skip"}
    assert shortcut_kinds(Call(22, (X,)), "abc", "ab", 8) == set()
    # x.f3().f17(): sort, then reverse; "cba" sorted is "abc", reversed "cba" -- the input itself
    e = Call(17, (Call(3, (X,)),))
    assert F.FUNCS[17](F.FUNCS[3]("cba")) == "cba"
    assert sorted(k for k, _ in shortcut_variants(e)) == ["other_call", "other_call", "skip", "skip"]
    # the other call in place of the first: f17(f17(x)) = x; nothing short of the two calls gives "dcba"
    assert "other_call" in shortcut_kinds(e, "cba", "cba", 8)
    assert shortcut_kinds(e, "bdca", "dcba", 8) == set()
    # another call keeps its own extra arguments: f8(x, 2) in place of f8(x, 1)
    two = Call(8, (Call(8, (X, Int(1))), Int(2)))
    assert {v for k, v in shortcut_variants(two) if k == "other_call"} == {
        Call(8, (Call(8, (X, Int(2))), Int(2))), Call(8, (Call(8, (X, Int(1))), Int(1)))}


def test_generator_rejects_shortcut_problems_on_request_and_keeps_upstream_draws_otherwise():
    from fgx.tasks.strings.shortcuts import shortcut_kinds

    kw = dict(stage=2, split="train", min_level=1, max_level=2, num=200, seed=4, max_value_len=8)
    kept = S.generate_problems(**kw)
    assert [p.code for p in kept] == [p.code for p in S.generate_problems(**kw, shortcuts="keep")]
    assert sum(bool(shortcut_kinds(p.expr, p.x, p.output, 8)) for p in kept) > 20  # a third of Level 2
    rejected = S.generate_problems(**kw, shortcuts="reject")
    assert len(rejected) == 200 and not any(shortcut_kinds(p.expr, p.x, p.output, 8) for p in rejected)
    assert all(S.functions_used(p.expr) <= S.TRAIN_FUNCS for p in rejected)
    with pytest.raises(ValueError, match="unknown shortcuts 'drop'"):
        S.generate_problems(**kw, shortcuts="drop")


def test_level_shares_split_the_problems_in_proportion_and_equal_shares_change_nothing():
    from collections import Counter

    kw = dict(stage=1, split="train", min_level=2, max_level=3, num=401, seed=5, max_value_len=8,
              grammar="helper_context")
    even = S.generate_problems(**kw)
    assert [p.code for p in S.generate_problems(**kw, level_shares=[2, 2])] == [p.code for p in even]
    skewed = S.generate_problems(**kw, level_shares=[3, 1])
    assert Counter(p.level for p in skewed) == {2: 301, 3: 100}  # 300.75 / 100.25, the remainder to depth 2
    # the same random stream: the two-step problems begin as the even split's do
    assert [p.code for p in skewed[:201]] == [p.code for p in even[:201]]
    with pytest.raises(ValueError, match="level_shares must be 2 positive integers, one per level 2..3"):
        S.generate_problems(**kw, level_shares=[3, 1, 1])
    with pytest.raises(ValueError, match="got \\[3, 0\\]"):
        S.generate_problems(**kw, level_shares=[3, 0])
    df = S.generate(**kw, level_shares=[1, 3])
    assert df["extra_info"].map(lambda e: e["depth"]).value_counts().to_dict() == {3: 300, 2: 101}


def test_rows_paper_and_compact():
    paper = S.generate(stage=1, split="train", min_level=1, max_level=2, num=20, seed=11)
    compact = S.generate(stage=1, split="train", min_level=1, max_level=2, num=20, seed=11, style="compact")
    assert list(paper.columns) == ["data_source", "prompt", "ability", "reward_model", "extra_info"]
    for (_, a), (_, b) in zip(paper.iterrows(), compact.iterrows()):
        gt = json.loads(a.reward_model["ground_truth"])
        assert list(gt) == ["ref_input", "ref_output", "ref_code", "funcname"] and gt["funcname"] == "main_solution"
        assert a.reward_model == b.reward_model and a.reward_model["style"] == "rule"
        assert a.data_source == f"codeio-forward-incomplete-depth{a.extra_info['depth']}" == b.data_source
        assert a.ability == "reasoning"
        content = a.prompt[0]["content"]
        assert a.prompt[0]["role"] == "user" and content.startswith("You are given a code:\n\n")
        used = S.functions_used(S.parse_code(gt["ref_code"]))
        assert all(f"def func_{i}(" in content for i in used)
        assert ("def func_" in content) == bool(used)
        assert f'Can you predict the output of `main_solution("{gt["ref_input"]["x"]}")` without writing any code?' \
            in content
        assert content.endswith('in the following json format: {"output": <your output>}, where <your output> '
                                'should be the final string.')
        assert gt["ref_code"] in content and a.extra_info["solution"] is None
        e = S.parse_code(gt["ref_code"])
        assert b.prompt[0]["content"] == S.render_compact(e, gt["ref_input"]["x"]) + "\n"
        sol = b.extra_info["solution"]
        assert sol.endswith(json.dumps({"output": gt["ref_output"]}, ensure_ascii=False) + "\n")
        assert S.compute_score(b.data_source, sol, b.reward_model["ground_truth"])["score"] == 1.0
    stage2 = S.generate(stage=2, split="train", min_level=1, max_level=1, num=3, seed=0)
    code = json.loads(stage2.reward_model[0]["ground_truth"])["ref_code"]
    assert code.startswith("def main_solution(x):\n    return ") and "def func_" not in code


def test_cli_deterministic_atomic_and_round_trips(tmp_path):
    from fgx.tasks.strings.cli import main

    args = ["generate", "--stage", "2", "--split", "test", "--min-level", "1", "--max-level", "3", "--num", "30",
            "--seed", "9", "--style", "compact", "--max-value-len", "24"]
    a, b = tmp_path / "a.parquet", tmp_path / "sub" / "b.parquet"
    assert main([*args, "--out", str(a)]) == 0 and main([*args, "--out", str(b)]) == 0
    assert a.read_bytes() == b.read_bytes()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.parquet", "sub"]  # no temp files left
    df = pd.read_parquet(a)
    assert len(df) == 30 and list(df.prompt[0][0]) == ["role", "content"]
    assert isinstance(df.reward_model[0]["ground_truth"], str) and df.extra_info[0]["style"] == "compact"
    c = tmp_path / "c.parquet"
    assert main([*args, "--out", str(c), "--exclude", str(a)]) == 0
    assert not set(pd.read_parquet(c).prompt.map(lambda p: p[0]["content"])) & set(
        df.prompt.map(lambda p: p[0]["content"]))


def test_cli_bad_arguments(tmp_path, capsys):
    from fgx.tasks.strings.cli import main

    with pytest.raises(SystemExit) as err:
        main(["generate", "--stage", "2", "--split", "dev", "--min-level", "1", "--max-level", "1", "--num", "1",
              "--seed", "0", "--out", str(tmp_path / "x.parquet")])
    assert err.value.code == 2 and "--split" in capsys.readouterr().err
    assert main(["generate", "--stage", "2", "--split", "test", "--min-level", "3", "--max-level", "1", "--num", "1",
                 "--seed", "0", "--out", str(tmp_path / "x.parquet")]) == 2
    assert "--min-level" in capsys.readouterr().err and not (tmp_path / "x.parquet").exists()
    steps = ["generate", "--stage", "1", "--split", "train", "--min-level", "2", "--max-level", "3", "--num", "20",
             "--seed", "0", "--style", "compact", "--first-step", "--out", str(tmp_path / "s.parquet")]
    assert main([*steps, "--first-step-unmarked", "1.5"]) == 1
    assert "first_step_unmarked" in capsys.readouterr().err and not (tmp_path / "s.parquet").exists()
    assert main([*steps, "--first-step-unmarked", "1"]) == 0
    assert not any(p[0]["content"].startswith(">") for p in pd.read_parquet(tmp_path / "s.parquet").prompt)


def test_hash_partitions_make_splits_disjoint_without_reading_each_other():
    from fgx.tasks.strings.generate import generate_problems

    def codes(stage, split, partition, seed):
        return {p.code for p in generate_problems(stage=stage, split=split, min_level=1, max_level=2, num=400,
                                                  seed=seed, max_value_len=12, partition=partition)}

    test, val, train = codes(2, "test", "test", 1), codes(2, "test", "val", 2), codes(2, "train", "train", 3)
    assert test and val and train
    assert not test & val and not test & train and not val & train
    # without partitions the function-free expressions ("(x + x)", "x.upper()") do collide
    plain_test, plain_train = codes(2, "test", "none", 1), codes(2, "train", "none", 3)
    assert plain_test & plain_train


@pytest.mark.parametrize("grammar", ["builtins", "outer_call", "helper_call"])
def test_pretraining_prior_grammars_never_put_a_custom_function_inside_a_context(grammar):
    """The tiny model's prior shows nested traces, but a custom function is never evaluated
    below the root: that skill (composition) is left for Stage-2 RL to discover."""
    from fgx.tasks.strings.expr import Call, children, functions_used

    probs = S.generate_problems(stage=1, split="train", min_level=2, max_level=3, num=400, seed=5,
                              max_value_len=16, grammar=grammar)
    assert {p.level for p in probs} == {2, 3}
    rooted = 0
    for p in probs:
        stack = list(children(p.expr))
        while stack:
            e = stack.pop()
            assert not functions_used(e), f"custom function inside a context: {p.expr}"
            stack += list(children(e))
        rooted += type(p.expr) is Call
    if grammar == "builtins":
        assert rooted == 0
    else:  # half the time a custom function (any of the 25) wraps the builtin sub-expression
        assert 0.35 < rooted / len(probs) < 0.65
    helpers = sum(f"g{i}(" in S.render_compact(p.expr, p.x) for p in probs for i in range(6))
    assert (helpers > len(probs) // 2) == (grammar == "helper_call")


def test_helper_functions_are_none_of_the_25_and_round_trip_through_code_and_compact_text():
    """The helper_call prior's helpers must not teach any task function under another name, and
    their rows must score and parse like every other row."""
    import random
    from fgx.tasks.strings.functions import FUNCS, HELPERS, SIGNATURES
    from fgx.tasks.strings.generate import random_input

    rng = random.Random(0)
    inputs = ["a", "ab", "abc", "Hello", "xyzzy"] + [random_input(rng) for _ in range(50)]
    params = {"i": [0, 1, 2, 3], "p": ["-", "ab"], "s": ["ab", "xyz"]}
    for name, helper in HELPERS.items():
        assert helper("") == ""
        for fn, sig in SIGNATURES.items():
            for extra in (params[sig[1]] if len(sig) > 1 else [None]):
                same = all(helper(x) == (FUNCS[fn](x) if extra is None else FUNCS[fn](x, extra)) for x in inputs)
                assert not same, f"helper {name} behaves as func_{fn}{'' if extra is None else (extra,)}"
    e = S.parse_compact('g4(upper(g0("abcd")))')
    assert S.render_compact(e, "") == 'g4(upper(g0("abcd")))'
    assert S.evaluate(e, "") == "DCB"  # "abcd" -> "bcd" -> "BCD" -> ends swapped
    code = S.main_solution_code(S.parse_compact('f17(g2("q"))'))
    assert "g2('q')" in code and S.execute(code, "zz") == "qq"  # "q" -> "qq" -> reversed
    assert S.parse_code(S.render_code(e)) == e
    with pytest.raises(S.UnsupportedCode, match="g1"):
        S.parse_compact('g1("a","b")')
    with pytest.raises(S.UnsupportedCode, match="g9"):
        S.parse_compact('g9("a")')


@pytest.mark.parametrize("grammar", ["context_call", "helper_context"])
def test_context_call_prior_has_one_custom_call_and_never_one_inside_another(grammar):
    """The stronger prior evaluates a custom function inside builtin contexts too (the skill a
    pretrained LLM brings), but composition proper, a custom call inside a custom call, is
    still left for Stage-2 RL."""
    from fgx.tasks.strings.expr import Call, children

    probs = S.generate_problems(stage=1, split="train", min_level=2, max_level=3, num=400, seed=5,
                                max_value_len=16, grammar=grammar)
    assert {p.level for p in probs} == {2, 3}
    below_root = 0
    for p in probs:
        calls, stack = [], [(p.expr, 0)]
        while stack:
            e, depth = stack.pop()
            if type(e) is Call:
                calls.append(depth)
            stack += [(c, depth + 1) for c in children(e)]
        assert len(calls) == 1, f"want exactly one custom call: {p.expr}"
        below_root += calls[0] > 0
    # the call sits at a uniformly drawn depth: below the root in about 1/2 (level 2) to 2/3 (level 3)
    assert 0.45 < below_root / len(probs) < 0.7
    helpers = sum(f"g{i}(" in S.render_compact(p.expr, p.x) for p in probs for i in range(6))
    assert (helpers > len(probs) // 2) == (grammar == "helper_context")


def test_carried_pretraining_inputs_are_values_the_functions_produce():
    """``inputs="carried"``: every other Level-1 problem reads a string that one or two of the 25
    functions made (what a composition's second step reads), within the value cap; seeded; the
    problems stay Level 1 and their outputs are the function applied to that input."""
    from fgx.tasks.strings.generate import carried_input, generate_problems, _SAMPLERS
    import random

    kw = dict(stage=1, split="train", min_level=1, max_level=1, num=300, seed=5, max_value_len=8)
    carried = generate_problems(**kw, inputs="carried")
    assert [p.code for p in generate_problems(**kw, inputs="carried")] == [p.code for p in carried]
    assert all(p.level == 1 and S.evaluate(p.expr, p.x) == p.output for p in carried)
    assert all(p.x.islower() and p.x.isalpha() and 3 <= len(p.x) <= 10 for p in carried[0::2])
    odd = [p.x for p in carried[1::2]]
    assert all(2 <= len(x) <= 8 for x in odd)
    # values no lowercase draw makes: doubled letters from repeat/interleave, digits, upper case
    assert sum(not (x.isalpha() and x.islower()) for x in odd) > 0.2 * len(odd)
    _assert_prompts_read_the_inputs(carried)
    rng, sampler = random.Random(0), _SAMPLERS["upstream"](range(25))
    values = [carried_input(rng, 8, sampler) for _ in range(200)]
    assert all(2 <= len(v) <= 8 for v in values) and len(set(values)) > 150


def _assert_prompts_read_the_inputs(problems):
    """The drawn input is what the prompt shows: the chain's head (the first step's string) is ``p.x``
    for every problem, and the heads span the input lengths, not the grammar's 3..6-letter literals."""
    heads = [re.match(r'\(?"([^"]*)"', S.render_expr(p.expr, p.x, "chain")).group(1) for p in problems]
    assert heads == [p.x for p in problems]
    assert sum(len(h) > 6 for h in heads) > 0.1 * len(heads)
    assert sum(not (h.isalpha() and h.islower()) for h in heads[1::2]) > 0.2 * len(heads[1::2])


def test_with_first_leaf_replaces_the_string_the_first_step_reads():
    from fgx.tasks.strings.generate import with_first_leaf

    e = S.parse_code("def main_solution(x):\n    return func_17(func_8(x, 2))")
    assert S.render_expr(with_first_leaf(e, "AbC"), "zz", "chain") == '"AbC".f8(2).f17()'
    concat = Concat(Str("ab"), X)  # the left operand is the first leaf; x stays x
    assert S.render_code(with_first_leaf(concat, "Q1")) == "('Q1' + x)"


def test_mixed_pretraining_inputs_cover_the_values_inside_compositions():
    """``inputs="mixed"``: every other problem takes upper-case / mixed-case / alphanumeric input of up
    to the value cap (values inside compositions look like that); the default stays upstream's."""
    from fgx.tasks.strings.generate import generate_problems

    kw = dict(stage=1, split="train", min_level=1, max_level=1, num=400, seed=7, max_value_len=16)
    plain = generate_problems(**kw)
    assert all(p.x.isalpha() and p.x.islower() and 3 <= len(p.x) <= 10 for p in plain)
    mixed = generate_problems(**kw, inputs="mixed")
    assert [p.code for p in generate_problems(**kw, inputs="mixed")] == [p.code for p in mixed]  # seeded
    odd = [p.x for p in mixed[1::2]]
    assert all(p.x.islower() and p.x.isalpha() for p in mixed[0::2])
    assert sum(not (x.isalpha() and x.islower()) for x in odd) > 0.9 * len(odd)
    assert any(c.isupper() for x in odd for c in x) and any(c.isdigit() for x in odd for c in x)
    assert max(len(x) for x in odd) > 10 and all(3 <= len(x) <= 16 for x in odd)
    for p in mixed:  # the reference output is the function applied to that input
        assert S.evaluate(p.expr, p.x) == p.output
    _assert_prompts_read_the_inputs(mixed)
    with pytest.raises(ValueError, match="unknown inputs 'upper'.*lowercase, mixed, carried"):
        generate_problems(**{**kw, "num": 2}, inputs="upper")
