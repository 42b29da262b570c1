import math

import numpy as np
import pandas as pd
import pytest

from fgx.metrics import bootstrap_mean_ci, level_pass_at_k, pass_at_k


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
