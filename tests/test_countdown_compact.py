"""Countdown compact style: prompt/solution format, exact search, determinism, speed."""

import json
import string
import time
from fractions import Fraction

import pandas as pd
import pytest

from fgx.tasks import countdown as C

PRINTABLE = set(string.printable) - set("\t\r\x0b\x0c")


def _steps(solution: str) -> list[str]:
    lines = solution.split("\n")
    assert lines[-1] == "" and lines[-2].startswith("<answer>") and lines[-2].endswith("</answer>")
    return lines[:-2]


def test_format_example():
    assert C.compact_prompt([25, 4, 7], 93) == "cd 25 4 7=93\n"
    assert C.solution_text([25, 4, 7], 93) == "25*4=100\n100-7=93\n<answer>(25*4)-7</answer>\n"
    assert C.solution_text([6, 4], 24) == "6*4=24\n<answer>6*4</answer>\n"  # atomic: one step
    assert C.solution_text([3, 12], 4) == "12/3=4\n<answer>12/3</answer>\n"


def test_search_prefers_integers_and_falls_back_to_fractions():
    steps, expr = C.solve([1, 2, 3, 4, 5], 120)
    assert len(steps) == 4 and all(s.value.denominator == 1 and s.value > 0 for s in steps)
    steps, expr = C.solve([8, 3, 8, 3], 24)  # only 8/(3-8/3) works
    assert any(s.value.denominator != 1 for s in steps)
    assert C.solution_text([8, 3, 8, 3], 24).startswith("8/3=(8/3)\n")
    gt = json.dumps({"answer": 24, "numbers": [8, 3, 8, 3]})
    assert C.compute_score("x", C.solution_text([8, 3, 8, 3], 24), gt)["score"] == 1.0
    assert C.solve([1, 1], 5) is None
    with pytest.raises(ValueError, match="no solution"):
        C.solution_text([1, 1], 5)
    # every step's value follows from its operands
    for s in C.solve([91, 45, 30, 26, 93], 13)[0]:
        ops = {"+": s.left + s.right, "-": s.left - s.right, "*": s.left * s.right,
               "/": s.left / s.right if s.right else None}
        assert ops[s.op] == s.value and isinstance(s.value, Fraction)


@pytest.mark.parametrize("numbers", [2, 3, 4, 5])
def test_rows_score_and_chain_length(numbers):
    df = C.generate(numbers=numbers, num=40, seed=7, style="compact")
    assert len(df) == 40 and (df.data_source == f"reasoning-gym-countdown-depth{numbers}").all()
    keys = set()
    for r in df.itertuples():
        gt = json.loads(r.reward_model["ground_truth"])
        nums, target = gt["numbers"], gt["answer"]
        assert len(nums) == numbers and all(1 <= v <= 100 for v in nums) and 1 <= target <= 999
        keys.add((tuple(sorted(nums)), target))
        prompt = r.prompt[0]["content"]
        assert prompt == "cd " + " ".join(map(str, nums)) + f"={target}\n"
        sol = r.extra_info["solution"]
        assert r.extra_info["style"] == "compact" and r.extra_info["depth"] == numbers
        assert r.extra_info["split"] == ("train" if numbers == 2 else "test")
        steps = _steps(sol)
        assert len(steps) == numbers - 1  # atomic = one step; composition = a chain
        assert steps[-1].endswith(f"={target}")
        assert all("(" not in s for s in steps)  # the sampler guarantees integer chains
        assert set(prompt + sol) <= PRINTABLE | {"\n"}
        res = C.compute_score(r.data_source, sol, r.reward_model["ground_truth"], r.extra_info)
        assert res["score"] == 1.0, (prompt, sol)
        assert C.compute_score(r.data_source, sol.replace("<answer>", "<answer>1+"),
                               r.reward_model["ground_truth"])["score"] == 0.0
    assert len(keys) == 40  # no duplicate problems


def test_determinism_and_seeds():
    a = C.generate(numbers=3, num=20, seed=3, style="compact")
    b = C.generate(numbers=3, num=20, seed=3, style="compact")
    c = C.generate(numbers=3, num=20, seed=4, style="compact")
    assert a.equals(b) and not a.equals(c)
    assert C.sample_compact_problems(numbers=4, num=5, seed=3) != C.sample_compact_problems(numbers=3, num=5, seed=3)


def test_generation_is_quick():
    t0 = time.perf_counter()
    for n in (3, 4, 5):
        assert len(C.generate(numbers=n, num=100, seed=0, style="compact")) == 100
    assert time.perf_counter() - t0 < 8.0


def test_too_many_and_bad_args():
    with pytest.raises(ValueError, match="distinct"):
        C.sample_compact_problems(numbers=2, num=50, seed=0, max_value=3)
    with pytest.raises(ValueError, match="style"):
        C.generate(numbers=3, num=2, style="fancy")


def test_cli_compact(tmp_path):
    out = tmp_path / "cd.parquet"
    assert C.main(["generate", "--numbers", "3", "--num", "5", "--seed", "1", "--style", "compact",
                   "--out", str(out)]) == 0
    back = pd.read_parquet(out)
    assert len(back) == 5 and back.extra_info[0]["style"] == "compact"
    assert back.prompt[0][0]["content"].startswith("cd ") and back.extra_info[0]["solution"].count("\n") == 3


def test_train_and_check_partitions_are_disjoint():
    train = C.sample_compact_problems(numbers=2, num=2000, seed=1, partition="train")
    check = C.sample_compact_problems(numbers=2, num=200, seed=2, partition="test")
    def key(ps):
        return {(tuple(sorted(n)), t) for n, t in ps}

    assert not key(train) & key(check)
    assert C.sample_compact_problems(numbers=3, num=20, seed=5) == C.sample_compact_problems(
        numbers=3, num=20, seed=5, partition="none")  # the default draws are unchanged
    with pytest.raises(ValueError, match="unknown partition"):
        C.in_partition([1, 2], 3, "val")


def test_a_search_trace_computes_every_step_tried_up_to_the_target():
    # + first (83), then - (5): the value no prompt shows is computed, then the target
    assert C.solution_text([44, 39], 5, "search") == "44+39=83\n44-39=5\n<answer>44-39</answer>\n"
    assert C.solution_text([44, 39], 83, "search") == C.solution_text([44, 39], 83)  # found at once
    assert C.solution_text([12, 4], 3, "search") == "12+4=16\n12-4=8\n12*4=48\n12/4=3\n<answer>12/4</answer>\n"
    assert C.solution_text([25, 4, 7], 93, "search") == C.solution_text([25, 4, 7], 93)  # chains: the solution
    for nums, target in C.sample_compact_problems(numbers=2, num=200, seed=1):
        text = C.solution_text(nums, target, "search")
        steps = _steps(text)
        assert steps[-1].endswith(f"={target}") and all(not s.endswith(f"={target}") for s in steps[:-1])
        for s in steps:  # every written value is right
            left, value = s.split("=")
            assert Fraction(eval(left)) == Fraction(value)  # digits and one operator
        gt = json.dumps({"answer": target, "numbers": nums})
        assert C.compute_score(C.data_source(2), text, gt)["score"] == 1.0
    with pytest.raises(ValueError, match="unknown trace"):
        C.solution_text([6, 4], 24, "all")


def test_max_value_bounds_every_number():
    df = C.generate(numbers=3, num=50, seed=0, style="compact", max_value=12)
    nums = [json.loads(rm["ground_truth"])["numbers"] for rm in df["reward_model"]]
    assert max(max(n) for n in nums) <= 12 and min(min(n) for n in nums) >= 1
    with pytest.raises(ValueError, match="max_value"):
        C.generate(numbers=2, num=5, seed=0, style="compact", max_value=1)
