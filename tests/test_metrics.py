import math

import numpy as np
import pandas as pd
import pytest

from fgx.metrics import (bootstrap_mean_ci, level_contrast, level_pass_at_k, paired_bootstrap_diff_ci, validation_curve,
                         pass_at_k)


def brute_force(n, c, k):
    return 1.0 - math.comb(n - c, k) / math.comb(n, k)


@pytest.mark.parametrize("n,c,k", [(1, 0, 1), (1, 1, 1), (10, 3, 1), (10, 3, 5), (10, 3, 8),
                                   (16, 1, 16), (100, 7, 10), (1000, 1, 1), (1000, 5, 999), (1000, 0, 1000)])
def test_pass_at_k_matches_exact_binomials(n, c, k):
    assert pass_at_k(n, c, k) == pytest.approx(brute_force(n, c, k), rel=1e-12, abs=1e-15)


def test_pass_at_k_hand_values():
    assert pass_at_k(4, 2, 1) == pytest.approx(0.5)
    assert pass_at_k(4, 2, 2) == pytest.approx(1 - 1 / 6)   # C(2,2)/C(4,2) = 1/6
    assert pass_at_k(4, 2, 3) == 1.0                        # fewer than k wrong samples


def test_pass_at_k_is_stable_for_large_n():
    # exact rational answer for c=1: k/n; the naive product of binomials would overflow floats
    assert pass_at_k(1000, 1, 1) == pytest.approx(1e-3, rel=1e-12)
    assert pass_at_k(1000, 1, 500) == pytest.approx(0.5, rel=1e-12)
    values = pass_at_k(1000, 3, np.arange(1, 1001))
    assert np.all(np.diff(values) >= -1e-15) and values[-1] == 1.0


def test_pass_at_k_broadcasts_arrays():
    out = pass_at_k(np.array([4, 4, 10]), np.array([0, 2, 10]), 2)
    assert out.shape == (3,)
    assert out.tolist() == pytest.approx([0.0, 1 - 1 / 6, 1.0])


@pytest.mark.parametrize("n,c,k", [(3, 4, 1), (3, 1, 4), (3, 1, 0), (3, -1, 1)])
def test_pass_at_k_rejects_impossible_counts(n, c, k):
    with pytest.raises(ValueError):
        pass_at_k(n, c, k)


def test_bootstrap_ci_brackets_the_mean_and_shrinks_with_more_prompts():
    rng = np.random.default_rng(0)
    few = rng.random(10) < 0.3
    many = rng.random(1000) < 0.3
    lo1, hi1 = bootstrap_mean_ci(few, resamples=2000, ci=0.95, rng=np.random.default_rng(1))
    lo2, hi2 = bootstrap_mean_ci(many, resamples=2000, ci=0.95, rng=np.random.default_rng(1))
    assert lo1 <= few.mean() <= hi1 and lo2 <= many.mean() <= hi2
    assert hi2 - lo2 < hi1 - lo1
    assert bootstrap_mean_ci(np.ones(5), resamples=100, ci=0.95, rng=rng) == (1.0, 1.0)


def test_level_table_pass_at_1_is_mean_accuracy():
    samples = pd.DataFrame({
        "level": [1, 1, 2, 2],
        "correct": [[True, False, False, False], [True, True, True, True],
                    [False] * 4, [False, False, False, True]],
    })
    table = level_pass_at_k(samples, ks=[1, 4, 8], resamples=100, seed=0)
    got = table.set_index(["level", "k"])["pass_at_k"]
    assert got[(1, 1)] == pytest.approx((0.25 + 1.0) / 2)
    assert got[(2, 4)] == pytest.approx(0.5)
    assert (1, 8) not in got.index            # k > n is undefined and skipped
    assert set(table.columns) >= {"level", "k", "pass_at_k", "ci_low", "ci_high", "n_prompts", "n_samples"}
    assert (table["ci_low"] <= table["pass_at_k"] + 1e-12).all()
    assert (table["pass_at_k"] <= table["ci_high"] + 1e-12).all()


def _eval_table(correct_counts, levels, n=4, tag="p"):
    """An evaluation-like table: prompt i has correct_counts[i] correct samples of n."""
    return pd.DataFrame({
        "prompt": [[{"role": "user", "content": f"{tag}{i}"}] for i in range(len(correct_counts))],
        "level": levels,
        "correct": [[True] * c + [False] * (n - c) for c in correct_counts],
    })


def test_paired_ci_of_a_constant_shift_is_that_shift():
    b = np.array([0.0, 0.25, 0.5, 1.0])
    lo, hi, p_better = paired_bootstrap_diff_ci(b + 0.25, b, resamples=200, ci=0.95,
                                                rng=np.random.default_rng(0))
    assert lo == pytest.approx(0.25) and hi == pytest.approx(0.25) and p_better == 1.0
    with pytest.raises(ValueError, match="equal-length"):
        paired_bootstrap_diff_ci(b, b[:3], resamples=10, ci=0.95, rng=np.random.default_rng(0))


def test_pairing_separates_what_overlapping_intervals_hide():
    # prompts from very easy to very hard; model a is 0.1 better on every prompt
    rng = np.random.default_rng(0)
    b = rng.uniform(0.0, 0.8, size=64)
    a = b + 0.1
    unpaired_a = bootstrap_mean_ci(a, resamples=2000, ci=0.95, rng=np.random.default_rng(1))
    unpaired_b = bootstrap_mean_ci(b, resamples=2000, ci=0.95, rng=np.random.default_rng(1))
    assert unpaired_a[0] < unpaired_b[1]                       # the two intervals overlap
    lo, hi, p_better = paired_bootstrap_diff_ci(a, b, resamples=2000, ci=0.95, rng=np.random.default_rng(1))
    assert 0.0 < lo <= 0.1 <= hi and p_better == 1.0          # the difference's interval excludes 0


def test_level_contrast_matches_prompts_by_text_not_row_order():
    a = _eval_table([4, 2, 1, 0, 3, 3], levels=[1, 1, 2, 2, 2, 2])
    b = _eval_table([4, 1, 1, 0, 1, 2], levels=[1, 1, 2, 2, 2, 2])
    table = level_contrast(a, b.iloc[::-1], ks=[1, 4, 8], resamples=500, seed=0).set_index(["level", "k"])
    assert table.loc[(1, 1), "diff"] == pytest.approx((4 + 2 - 4 - 1) / 4 / 2)
    assert table.loc[(2, 1), "diff"] == pytest.approx((0 + 0 + 2 + 1) / 4 / 4)
    assert table.loc[(2, 1), "a"] == pytest.approx((1 + 0 + 3 + 3) / 16)
    assert table.loc[(2, 4), "diff"] == pytest.approx(0.0)    # every prompt with a success counts 1 at k = n
    assert (1, 8) not in table.index                         # k > n is undefined and skipped
    assert (table["ci_low"] <= table["diff"] + 1e-12).all() and (table["diff"] <= table["ci_high"] + 1e-12).all()
    same = level_contrast(a, a, ks=[1], resamples=100, seed=0)
    assert (same[["diff", "ci_low", "ci_high", "p_a_better"]] == 0).all().all()


def test_level_contrast_refuses_different_test_sets():
    a = _eval_table([1, 2], levels=[1, 1])
    b = _eval_table([1, 2], levels=[1, 1], tag="q")
    with pytest.raises(ValueError, match="not evaluated on the same prompts.*only in a"):
        level_contrast(a, b, ks=[1])
    with pytest.raises(ValueError, match=r"b: no column\(s\) \['correct'\]"):
        level_contrast(a, a.drop(columns="correct"), ks=[1], names=("a", "b"))


def test_contrast_cli_prints_and_writes_the_table(tmp_path, capsys):
    from fgx.analysis.contrast import main

    a, b = tmp_path / "a.parquet", tmp_path / "b.parquet"
    _eval_table([3, 4, 1], levels=[2, 2, 3]).to_parquet(a)
    _eval_table([1, 4, 1], levels=[2, 2, 3]).to_parquet(b)
    out = tmp_path / "contrast.csv"
    assert main(["--a", str(a), "--b", str(b), "--ks", "1", "2", "--levels", "2", "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "p_a_better" in printed and str(a) in printed
    table = pd.read_csv(out)
    assert table.level.tolist() == [2, 2] and table.k.tolist() == [1, 2]
    assert table.loc[0, "diff"] == pytest.approx((3 - 1) / 4 / 2)
    with pytest.raises(SystemExit, match="missing.parquet: cannot read it as parquet"):
        main(["--a", str(tmp_path / "missing.parquet"), "--b", str(b)])


def test_contrast_cli_splits_prompts_by_one_step_shortcuts(tmp_path):
    from fgx.analysis.contrast import main
    from fgx.tasks.strings import generate
    from fgx.tasks.strings.shortcuts import has_shortcut

    rows = generate(stage=2, split="test", min_level=2, max_level=2, num=40, seed=2, style="compact",
                    max_value_len=8)
    flags = [has_shortcut(rm["ground_truth"], 8) for rm in rows["reward_model"]]
    assert 0 < sum(flags) < len(flags)
    rows["level"] = 2
    # model A solves exactly the prompts with a shortcut (4 of 4 samples), model B none
    a, b = tmp_path / "a.parquet", tmp_path / "b.parquet"
    rows.assign(correct=[[f] * 4 for f in flags]).to_parquet(a)
    rows.assign(correct=[[False] * 4 for _ in flags]).to_parquet(b)
    for subset, lead in (("with", 1.0), ("without", 0.0), ("all", sum(flags) / len(flags))):
        out = tmp_path / f"{subset}.csv"
        assert main(["--a", str(a), "--b", str(b), "--shortcuts", subset, "--out", str(out)]) == 0
        assert pd.read_csv(out).loc[0, "diff"] == pytest.approx(lead)
    _eval_table([1, 2], levels=[2, 2]).to_parquet(b)
    with pytest.raises(SystemExit, match="no reward_model column"):
        main(["--a", str(b), "--b", str(b), "--shortcuts", "with"])


def _validation_table(per_step: dict, n_samples=4, level=2):
    """A validation table: per step, each prompt's correct samples out of ``n_samples``."""
    return pd.DataFrame([{"step": step, "level": level, "prompt_row": i, "n_samples": n_samples, "n_correct": c}
                         for step, counts in per_step.items() for i, c in enumerate(counts)])


def test_validation_curve_points_are_pass_at_1_with_an_interval_over_prompts():
    """A point is the mean of the prompts' shares of correct samples; its interval resamples prompts (so
    it spreads with their difficulty), while the change from step 0 pairs each prompt with itself: one
    more correct sample on every prompt is a change of exactly 1 / n_samples whatever the spread."""
    rng = np.random.default_rng(0)
    start = rng.integers(0, 4, size=200)  # prompts of every difficulty
    table = _validation_table({0: start, 10: start + 1, 20: start})
    curve = validation_curve(table, resamples=500, ci=0.95, seed=1)
    assert list(curve.columns) == ["step", "level", "accuracy", "ci_low", "ci_high", "change", "change_ci_low",
                                   "change_ci_high", "n_prompts", "n_samples"]
    at = curve.set_index("step")
    assert at.loc[0, "accuracy"] == pytest.approx(start.mean() / 4)
    assert at.loc[10, "accuracy"] == pytest.approx(start.mean() / 4 + 0.25)
    assert (curve["ci_low"] < curve["accuracy"]).all() and (curve["accuracy"] < curve["ci_high"]).all()
    width = at.loc[10, "ci_high"] - at.loc[10, "ci_low"]
    assert 0.05 < width < 0.2  # 200 prompts of spread-out difficulty: about +-4.5 points
    assert at.loc[10, ["change", "change_ci_low", "change_ci_high"]].tolist() == pytest.approx([0.25] * 3)
    assert at.loc[20, ["change", "change_ci_low", "change_ci_high"]].tolist() == pytest.approx([0.0] * 3)
    assert (curve["n_prompts"] == 200).all() and (curve["n_samples"] == 4).all()
    # two levels, prompts missing at a step (a prompt verl dropped): each level on its own
    both = pd.concat([table, _validation_table({0: [4, 0], 10: [4]}, level=3)], ignore_index=True)
    l3 = validation_curve(both, resamples=100, ci=0.95, seed=1).query("level == 3").set_index("step")
    assert l3["accuracy"].tolist() == [0.5, 1.0] and l3["n_prompts"].tolist() == [2, 1]
    assert l3.loc[10, "change"] == 0.0  # prompt 0 solved at both steps
