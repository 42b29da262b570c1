"""Countdown transfer figure (paper Table 1 / Fig. 4) on synthetic eval parquets."""

import json

import numpy as np
import pandas as pd
import pytest

from fgx.config import settings_hash
from fgx.figures import countdown_transfer as F
from fgx.io import write_parquet


# responses that compute right, carry a value no prompt shows (3 numbers: 1+2=3 is a shown value,
# 3*3=9 is not), or get the arithmetic wrong
STEPS = {2: "1+2=3\n<answer>1+2</answer>", 3: "2*3=6\n6+1=7\n<answer>2*3+1</answer>",
         4: "1+2=4\n<answer>1+2</answer>", 5: "x"}


def _eval(path, numbers, correct, settings=None):
    df = pd.DataFrame({
        "data_source": f"reasoning-gym-countdown-depth{numbers}",
        "prompt": [[{"role": "user", "content": "cd 1 2 3=6\n"}] for _ in correct],
        "responses": [[STEPS[numbers]] * len(c) for c in correct],
        "reward_model": [{"style": "rule", "ground_truth": json.dumps({"target": 6, "numbers": [1, 2, 3][:numbers]})}
                         for _ in correct],
        "correct": [list(c) for c in correct],
        "level": numbers,
        "n_correct": [int(sum(c)) for c in correct],
    })
    write_parquet(df, path, settings=settings)
    return str(path)


@pytest.fixture
def inputs(tmp_path):
    rng = np.random.default_rng(0)
    paths = []
    # given in a scrambled order; the table follows the paper's model order
    for model, rate in [("rl_level1to2", 0.0), ("multi_base", 0.2), ("rl_multi_level1to2", 0.35),
                        ("rl_multi_level1", 0.25)]:
        for n in (3, 4, 5):
            correct = rng.random((30, 32)) < rate / (n - 2)
            paths.append(_eval(tmp_path / "results/eval" / model / f"countdown{n}.parquet", n, correct,
                               settings={"model": model, "n": 32}))
    check = rng.random((30, 32)) < 0.6  # the Multi-Base's atomic skill
    paths.append(_eval(tmp_path / "results/eval/multi_base/countdown2.parquet", 2, check))
    return paths


def test_table(inputs):
    t = F.table(inputs, {"bootstrap": 200, "ci": 0.9})
    assert list(t.columns) == F.COLUMNS and len(t) == 13
    assert list(t[t.model == "multi_base"].numbers) == [2, 3, 4, 5]
    # how the responses reason: STEPS per number count
    by_n = t[t.model == "multi_base"].set_index("numbers")
    assert by_n.loc[2, ["steps", "multi_step", "step_right", "chained"]].tolist() == [1, 0, 1, 0]
    assert by_n.loc[3, ["steps", "multi_step", "step_right", "chained"]].tolist() == [2, 1, 1, 1]
    assert by_n.loc[4, ["steps", "step_right", "chained"]].tolist() == [1, 0, 0]
    assert by_n.loc[5, "steps"] == 0 and np.isnan(by_n.loc[5, "step_right"])
    assert list(dict.fromkeys(t.model)) == ["multi_base", "rl_multi_level1", "rl_multi_level1to2", "rl_level1to2"]
    assert (t.n_prompts == 30).all() and (t.n_samples == 32).all()
    assert ((t.ci_low <= t.avg_at_k) & (t.avg_at_k <= t.ci_high)).all()
    row = t[(t.model == "multi_base") & (t.numbers == 3)].iloc[0]
    back = pd.read_parquet(row.source)
    assert row.avg_at_k == pytest.approx(np.mean([np.mean(c) for c in back.correct]))
    assert row.config_hash == settings_hash({"model": "multi_base", "n": 32})
    assert t[t.model == "rl_level1to2"].avg_at_k.eq(0).all()
    again = F.table(inputs, {"bootstrap": 200, "ci": 0.9})
    pd.testing.assert_frame_equal(t, again)  # deterministic CIs
    assert set(F.table(inputs, {"bootstrap": 50, "countdown_numbers": [3]}).numbers) == {3}


def test_draw_and_labels(inputs, tmp_path):
    t = F.table(inputs, {"bootstrap": 100})
    pdf = tmp_path / "countdown_transfer.pdf"
    F.draw(t, pdf, {})
    assert pdf.read_bytes()[:4] == b"%PDF"
    assert F.label("rl_multi_level1to2") == "Multi-Base + RL L1+2"
    assert F.label("rl_level1to2") == "String-Base + RL L1+2" and F.label("other") == "other"


def test_errors(tmp_path, inputs):
    bad = tmp_path / "results/eval/m/countdown3.parquet"
    write_parquet(pd.DataFrame({"level": [3]}), bad)
    with pytest.raises(ValueError, match="correct"):
        F.table([str(bad)], {})
    with pytest.raises(ValueError, match="more than one"):
        F.table([inputs[0], inputs[0]], {"bootstrap": 10})


@pytest.mark.parametrize("answer,numbers,shape", [
    ("((1+2)*3)-4", 4, "left_chain"), ("1-(2*(3+4))", 4, "right_chain"), ("1+(2*3)-4", 4, "mixed_chain"),
    ("(1+2)*(3-4)", 4, "balanced"), ("-(1+2)*3", 3, "left_chain"), ("1+(2*3) = 7", 3, "right_chain"),
    ("1+2", 3, "fewer_numbers"), ("1+2+3+4", 3, "more_numbers"), ("1*2", 2, "one_step"), ("1+", 3, "no_answer"),
    ("2**3", 2, "no_answer"), (None, 3, "no_answer"),
])
def test_the_tree_shape_of_an_answer(answer, numbers, shape):
    from fgx.tasks.countdown import answer_shape

    response = "x" if answer is None else f"1+2=3\n<answer>{answer}</answer>"
    assert answer_shape(response, numbers) == shape


def test_the_table_says_where_each_model_stops(inputs):
    from fgx.tasks.countdown import SHAPES

    t = F.table(inputs, {"bootstrap": 50})
    shares = t[[f"{s}_share" for s in SHAPES]]
    assert np.allclose(shares.sum(axis=1), 1)
    by_n = t[t.model == "multi_base"].set_index("numbers")
    # STEPS: 3 numbers a left chain, 4 numbers an answer with two of them, 5 numbers none, 2 numbers one step
    assert by_n.loc[3, "left_chain_share"] == 1 and by_n.loc[4, "fewer_numbers_share"] == 1
    assert by_n.loc[5, "no_answer_share"] == 1 and by_n.loc[2, "one_step_share"] == 1
    row = t[(t.model == "rl_multi_level1to2") & (t.numbers == 3)].iloc[0]
    assert row.left_chain_accuracy == pytest.approx(row.avg_at_k) and np.isnan(row.balanced_accuracy)
    from fgx.tasks.countdown.findings import check

    measured = check({"countdown_transfer": t})[0]["measured"]
    assert "Multi-Base + RL L1+2's 3-number answers: 100 % a left chain" in measured


def test_the_finding_reads_a_table_without_the_best_model(inputs):
    """A config that plans fewer Countdown RL runs (countdown.rl_runs: [level1], as the verl tier's) has no
    Multi-Base + RL L1+2 row: the finding says "no" from the models it has, and names no tree shape."""
    from fgx.tasks.countdown.findings import BEST, check

    t = F.table(inputs, {"bootstrap": 50})
    row = check({"countdown_transfer": t[t.model != BEST]})[0]
    assert row["verdict"] == "no" and "3-number answers" not in row["measured"]
