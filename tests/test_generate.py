"""String task: the problem generator (upstream's draw order), verl rows, the pretraining sets and the CLI."""

import json
import random
import re
import string

import pandas as pd
import pytest

from fgx.tasks import strings as S
from fgx.tasks.strings import functions as F
from fgx.tasks.strings.expr import Concat, Str, X

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
        assert gt["ref_code"] in content and list(a.extra_info) == ["index", "split", "depth"]  # upstream's
        e = S.parse_code(gt["ref_code"])
        assert b.prompt[0]["content"] == S.render_chain(e, gt["ref_input"]["x"]) + "\n"
        sol = b.extra_info["solution"]
        assert sol.endswith(json.dumps({"output": gt["ref_output"]}, ensure_ascii=False) + "\n")
        assert S.compute_score(b.data_source, sol, b.reward_model["ground_truth"])["score"] == 1.0
    stage2 = S.generate(stage=2, split="train", min_level=1, max_level=1, num=3, seed=0)
    code = json.loads(stage2.reward_model[0]["ground_truth"])["ref_code"]
    assert code.startswith("def main_solution(x):\n    return ") and "def func_" not in code


def test_compact_rows_write_chain_prompts_and_step_solutions_over_the_same_ground_truth():
    from fgx.tasks.strings.generate import Problem, make_row
    p = Problem(S.parse_compact('f10(f3("dcba"))'), "q", "ABCD"[::-1].lower().swapcase(), 2)
    paper, compact = (make_row(p, stage=2, split="test", style=s, index=0) for s in ("paper", "compact"))
    assert compact["prompt"][0]["content"] == '"dcba".f3().f10()\n'
    assert compact["reward_model"] == paper["reward_model"] and compact["data_source"] == paper["data_source"]
    assert compact["extra_info"]["solution"] == '"dcba".f3()="abcd"\n"abcd".f10()="aBcD"\n{"output": "aBcD"}\n'
    assert "solution" not in paper["extra_info"]
    a = S.generate(stage=2, split="test", min_level=1, max_level=3, num=9, seed=3, style="compact")
    b = S.generate(stage=2, split="test", min_level=1, max_level=3, num=9, seed=3)
    assert list(a["reward_model"]) == list(b["reward_model"])  # the same problems, prompted otherwise
    for row in a.itertuples():
        gt = json.loads(row.reward_model["ground_truth"])
        e, x = S.parse_code(gt["ref_code"]), gt["ref_input"]["x"]
        assert row.prompt[0]["content"] == S.render_chain(e, x) + "\n"
        assert row.extra_info["solution"] == S.solution_text(e, x)


def test_first_step_rows_ask_for_the_first_step_as_its_level1_problem():
    from fgx.tasks.strings.generate import FIRST_STEP_MARK, Problem, generate, make_row
    e = S.parse_compact('f10(f3("dcba"))')
    p = Problem(e, "q", S.evaluate(e, "q"), 2)
    row = make_row(p, stage=1, split="train", style="compact", index=0, first_step=True)
    assert FIRST_STEP_MARK == ">" and row["prompt"][0]["content"] == '>"dcba".f3().f10()\n'
    level1 = make_row(Problem(S.parse_compact('f3("dcba")'), "q", "abcd", 1), stage=1, split="train", style="compact",
                      index=0)
    assert row["extra_info"]["solution"] == level1["extra_info"]["solution"]
    assert row["extra_info"]["solution"] == '"dcba".f3()="abcd"\n{"output": "abcd"}\n'
    gt = json.loads(row["reward_model"]["ground_truth"])
    assert gt["ref_output"] == "abcd" and S.render_code(S.parse_code(gt["ref_code"])) == S.render_code(e)
    assert row["extra_info"]["task"] == "first_step" and row["extra_info"]["depth"] == 2
    gt_text = row["reward_model"]["ground_truth"]
    assert S.compute_score(row["data_source"], row["extra_info"]["solution"], gt_text)["acc"]
    # the whole expression's answer is wrong here
    assert not S.compute_score(row["data_source"], '{"output": "%s"}' % p.output, gt_text)["acc"]
    with pytest.raises(ValueError, match="Level >= 2"):
        make_row(Problem(S.parse_compact('f3("dcba")'), "q", "abcd", 1), stage=1, split="train", style="compact",
                 index=0, first_step=True)
    with pytest.raises(ValueError, match="compact-style"):
        make_row(p, stage=1, split="train", style="paper", index=0, first_step=True)
    rows = generate(stage=1, split="train", min_level=2, max_level=5, num=40, seed=1, style="compact", max_value_len=8,
                    first_step=True)
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
              first_step=True)
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


def test_prior_has_one_custom_call_and_never_one_inside_another():
    """The pretraining prior evaluates one custom function inside builtin and helper contexts (the
    skill a pretrained LLM brings), but composition proper, a custom call inside a custom call, is
    left for Stage-2 RL."""
    from fgx.tasks.strings.expr import Call, children

    probs = S.generate_problems(stage=1, split="train", min_level=2, max_level=3, num=400, seed=5,
                                max_value_len=16, grammar="prior")
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
    assert helpers > len(probs) // 2
    with pytest.raises(ValueError, match="unknown grammar 'builtins'.*upstream, prior"):
        S.generate_problems(stage=1, split="train", min_level=2, max_level=2, num=1, seed=0, grammar="builtins")


def test_level_shares_split_the_problems_in_proportion():
    from collections import Counter

    probs = S.generate_problems(stage=1, split="train", min_level=2, max_level=5, num=83, seed=5,
                                max_value_len=8, grammar="prior", level_shares=[3, 3, 1, 1])
    # 83 * 3 // 8 = 31, 83 // 8 = 10; the one left over goes to the lowest level
    assert Counter(p.level for p in probs) == {2: 32, 3: 31, 4: 10, 5: 10}
    even = S.generate_problems(stage=1, split="train", min_level=2, max_level=5, num=83, seed=5,
                               max_value_len=8, grammar="prior", level_shares=[2, 2, 2, 2])
    assert even == S.generate_problems(stage=1, split="train", min_level=2, max_level=5, num=83, seed=5,
                                       max_value_len=8, grammar="prior")
    for bad in ([3, 1], [3, 3, 1, 0], [1, 1, 1, 1.5]):
        with pytest.raises(ValueError, match="level_shares must be 4 positive integers, one per level 2..5"):
            S.generate_problems(stage=1, split="train", min_level=2, max_level=5, num=8, seed=0,
                                grammar="prior", level_shares=bad)


def test_carried_pretraining_inputs_are_values_the_functions_produce():
    """``inputs="carried"``: every other Level-1 problem reads a string that one or two of the 25
    functions made (what a composition's second step reads), within the value cap; seeded; the
    problems stay Level 1 and their outputs are the function applied to that input."""
    from fgx.tasks.strings.generate import ExprSampler, carried_input, generate_problems
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
    rng, sampler = random.Random(0), ExprSampler(range(25))
    values = [carried_input(rng, 8, sampler) for _ in range(200)]
    assert all(2 <= len(v) <= 8 for v in values) and len(set(values)) > 150


def _assert_prompts_read_the_inputs(problems):
    """The drawn input is what the prompt shows: the chain's head (the first step's string) is ``p.x``
    for every problem, and the heads span the input lengths, not the grammar's 3..6-letter literals."""
    heads = [re.match(r'\(?"([^"]*)"', S.render_chain(p.expr, p.x)).group(1) for p in problems]
    assert heads == [p.x for p in problems]
    assert sum(len(h) > 6 for h in heads) > 0.1 * len(heads)
    assert sum(not (h.isalpha() and h.islower()) for h in heads[1::2]) > 0.2 * len(heads[1::2])


def test_with_first_leaf_replaces_the_string_the_first_step_reads():
    from fgx.tasks.strings.generate import with_first_leaf

    e = S.parse_code("def main_solution(x):\n    return func_17(func_8(x, 2))")
    assert S.render_chain(with_first_leaf(e, "AbC"), "zz") == '"AbC".f8(2).f17()'
    concat = Concat(Str("ab"), X)  # the left operand is the first leaf; x stays x
    assert S.render_code(with_first_leaf(concat, "Q1")) == "('Q1' + x)"


def test_full_trace_only_keeps_problems_no_one_step_wrong_trace_solves():
    """``full_trace_only``: every problem needs its full trace (``fgx.tasks.strings.shortcuts``); about five in
    six unfiltered Level-4 problems have such a shortcut at the tiny default's value cap."""
    from fgx.tasks.strings.shortcuts import shortcut_kinds

    kw = dict(stage=2, split="test", min_level=4, max_level=4, num=40, seed=3, max_value_len=8, partition="test")
    plain = S.generate_problems(**kw)
    full = S.generate_problems(**kw, full_trace_only=True)
    assert len(full) == 40 and all(p.level == 4 for p in full)
    assert not any(shortcut_kinds(p.expr, p.x, p.output, 8) for p in full)
    assert any(shortcut_kinds(p.expr, p.x, p.output, 8) for p in plain)
    assert full == S.generate_problems(**kw, full_trace_only=True)  # seeded
    df = S.generate(**kw, style="compact", full_trace_only=True)
    assert len(df) == 40


def test_cli_full_trace_only(tmp_path):
    from fgx.tasks.strings.cli import main
    from fgx.tasks.strings.shortcuts import has_shortcut

    out = tmp_path / "full.parquet"
    assert main(["generate", "--stage", "2", "--split", "test", "--min-level", "3", "--max-level", "3", "--num", "12",
                 "--seed", "1", "--style", "compact", "--max-value-len", "8", "--partition", "test",
                 "--full-trace-only", "--out", str(out)]) == 0
    df = pd.read_parquet(out)
    assert len(df) == 12 and not any(has_shortcut(rm["ground_truth"], 8) for rm in df["reward_model"])
