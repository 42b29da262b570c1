"""Countdown: reasoning-gym data in verl rows, and a safe exact reward."""

import json
import time

import pandas as pd
import pytest

from fgx.tasks import countdown as C

GT = json.dumps({"answer": 24, "numbers": [4, 6, 1]})
DS = "reasoning-gym-countdown-depth3"


def score(answer, gt=GT):
    return C.compute_score(DS, answer, gt)


@pytest.mark.parametrize("text,expected", [
    ("<think>4*6=24, times 1</think><answer>4 * 6 * 1</answer>", 1.0),
    ("<answer> (6 / 1) * 4 </answer>", 1.0),
    ("<answer>1 * 6 * 4 = 24</answer>", 1.0),  # a trailing '= number' is tolerated
    ("<answer>6 × 4 ÷ 1</answer>", 1.0),
    ("<answer>4*6*1</answer> ... later <answer>4+6+1</answer>", 0.0),  # the last block counts
    ("<answer>4 * 6</answer>", 0.0),  # a number unused
    ("<answer>4 * 6 * 1 * 1</answer>", 0.0),  # a number used twice
    ("<answer>24</answer>", 0.0),
    ("<answer>4 * 6 / (1 - 1)</answer>", 0.0),  # division by zero
    ("<answer>(4 - 6 / 1) * -1 + 22</answer>", 0.0),
    ("<answer>4 ** 6 * 1</answer>", -1.0),
    ("<answer>4.0 * 6 * 1</answer>", -1.0),
    ("<answer>__import__('os').system('true')</answer>", -1.0),
    ("<answer>abs(4) * 6 * 1</answer>", -1.0),
    ("<answer>4 * 6 * 1 = x</answer>", -1.0),
    ("<answer></answer>", -1.0),
    ("<answer>4 * 6 * 1", -1.0),
    ("4 * 6 * 1", -1.0),
    (None, -1.0),
])
def test_scores(text, expected):
    r = score(text)
    assert r["score"] == expected and r["acc"] == (expected == 1.0) and set(r) == {"score", "acc", "pred"}


def test_exact_rationals():
    gt = json.dumps({"answer": 24, "numbers": [8, 3, 8, 3]})
    assert score("<answer>8 / (3 - 8 / 3)</answer>", gt)["score"] == 1.0  # 8/(1/3) = 24 exactly
    gt = json.dumps({"answer": 1, "numbers": [3, 1, 3]})
    assert score("<answer>1 / 3 * 3</answer>", gt)["score"] == 1.0


def test_adversarial_inputs_fast():
    texts = ["<answer>" + "(" * 100_000 + "1" + ")" * 100_000 + "</answer>",
             "<answer>" + "1+" * 200 + "1</answer>", "<answer>" * 200_000 + "</answer>" * 200_000,
             "<answer>" + "9" * 400 + "*" + "9" * 100 + "</answer>", "x" * 2_000_000,
             "<answer>" + "-" * 300 + "4</answer>"]
    scored = 0
    for text in texts:
        t0 = time.perf_counter()
        assert score(text)["score"] in (-1.0, 0.0)
        assert time.perf_counter() - t0 < 1.0
        scored += 1
    assert scored == 6


def test_ground_truth_errors():
    with pytest.raises(ValueError, match="ground_truth"):
        score("<answer>1</answer>", "{}")
    assert score("<answer>4*6*1</answer>", {"target": 24, "numbers": [1, 4, 6]})["score"] == 1.0


def test_generate_rows_and_cli(tmp_path, capsys):
    df = C.generate(numbers=3, num=4, seed=42)
    again = C.generate(numbers=3, num=4, seed=42)
    assert df.equals(again)
    row = df.iloc[0]
    gt = json.loads(row.reward_model["ground_truth"])
    assert list(gt) == ["answer", "numbers"] and len(gt["numbers"]) == 3 and 1 <= gt["answer"] <= 999
    assert row.data_source == "reasoning-gym-countdown-depth3" and row.ability == "math"
    assert row.prompt[0]["content"] == (
        f"Using the numbers {gt['numbers']}, create an equation that equals {gt['answer']}. You can use basic "
        "arithmetic operations (+, -, *, /) and each number can only be used once. Show your work in <think> "
        "</think> tags. And return the final answer in <answer> </answer> tags, for example <answer> "
        "(1 + 2) / 3 * 4 </answer>.")
    assert row.extra_info["depth"] == 3 and row.extra_info["split"] == "test"
    import reasoning_gym

    ds = reasoning_gym.create_dataset("countdown", min_numbers=3, max_numbers=3, min_value=1, max_value=100,
                                      min_target=1, max_target=999, operators=("+", "-", "*", "/"), shuffle=True,
                                      seed=42, size=4)
    for i in range(4):  # reasoning-gym's own solutions score 1
        r = df.iloc[i]
        assert C.compute_score(r.data_source, f"<answer>{ds[i]['answer']}</answer>",
                               r.reward_model["ground_truth"])["score"] == 1.0
    out = tmp_path / "cd.parquet"
    assert C.main(["generate", "--numbers", "2", "--num", "3", "--seed", "42", "--out", str(out)]) == 0
    back = pd.read_parquet(out)
    assert len(back) == 3 and back.extra_info[0]["split"] == "train"
    assert back.data_source[0] == "reasoning-gym-countdown-depth2"
    # a value the generator refuses: one line naming it, exit status 1 (as every fgx job), nothing written
    assert C.main(["generate", "--numbers", "1", "--num", "3", "--out", str(tmp_path / "bad.parquet")]) == 1
    assert "error: " in capsys.readouterr().err and not (tmp_path / "bad.parquet").exists()
