"""Evaluation metrics: unbiased pass@k (Chen et al. 2021), bootstrap CIs, per-level tables."""

from __future__ import annotations

import math
from typing import Iterable

import numpy as np
import pandas as pd


def _pass_at_k_scalar(n: int, c: int, k: int) -> float:
    if not 0 <= c <= n:
        raise ValueError(f"pass_at_k: need 0 <= c <= n, got n={n}, c={c}")
    if not 1 <= k <= n:
        raise ValueError(f"pass_at_k: need 1 <= k <= n, got n={n}, k={k}")
    if n - c < k:
        return 1.0
    # 1 - C(n-c, k) / C(n, k) = 1 - prod_{i=n-c+1}^{n} (1 - k/i); summing log1p terms and
    # finishing with expm1 keeps full precision for n up to thousands (no huge binomials).
    i = np.arange(n - c + 1, n + 1, dtype=np.float64)
    return float(-np.expm1(np.log1p(-k / i).sum()))


def pass_at_k(n, c, k):
    """Unbiased pass@k: the chance that k of n samples (c of them correct) contain a correct one.

    Scalars give a float; any array argument broadcasts and gives a numpy array.
    """
    if np.ndim(n) == 0 and np.ndim(c) == 0 and np.ndim(k) == 0:
        return _pass_at_k_scalar(int(n), int(c), int(k))
    n_, c_, k_ = np.broadcast_arrays(np.asarray(n), np.asarray(c), np.asarray(k))
    out = np.empty(n_.shape, dtype=np.float64)
    for idx in np.ndindex(n_.shape):
        out[idx] = _pass_at_k_scalar(int(n_[idx]), int(c_[idx]), int(k_[idx]))
    return out


def bootstrap_mean_ci(values: np.ndarray, *, resamples: int, ci: float,
                      rng: np.random.Generator) -> tuple[float, float]:
    """Percentile bootstrap CI of the mean of ``values`` (resampling prompts)."""
    values = np.asarray(values, dtype=np.float64)
    if len(values) == 0:
        return (math.nan, math.nan)
    idx = rng.integers(0, len(values), size=(resamples, len(values)))
    means = values[idx].mean(axis=1)
    alpha = (1.0 - ci) / 2.0
    return float(np.quantile(means, alpha)), float(np.quantile(means, 1.0 - alpha))


def level_pass_at_k(samples: pd.DataFrame, ks: Iterable[int], *, resamples: int = 1000,
                    ci: float = 0.95, seed: int = 0) -> pd.DataFrame:
    """Per-level pass@k table from an eval parquet (one row per prompt, `correct` lists).

    Returns long format: level, k, pass_at_k, ci_low, ci_high, n_prompts, n_samples.
    k larger than a level's sample count is skipped (pass@k is undefined there).
    """
    rng = np.random.default_rng(seed)
    n = samples["correct"].map(len).to_numpy()
    c = samples["correct"].map(lambda xs: int(np.sum(xs))).to_numpy()
    levels = samples["level"].to_numpy()
    rows = []
    for level in sorted(set(levels.tolist())):
        mask = levels == level
        n_l, c_l = n[mask], c[mask]
        for k in sorted(set(ks)):
            if k > n_l.min():
                continue
            per_prompt = pass_at_k(n_l, c_l, k)
            lo, hi = bootstrap_mean_ci(per_prompt, resamples=resamples, ci=ci, rng=rng)
            rows.append({"level": int(level), "k": int(k), "pass_at_k": float(per_prompt.mean()),
                         "ci_low": lo, "ci_high": hi, "n_prompts": int(mask.sum()),
                         "n_samples": int(n_l.min())})
    return pd.DataFrame(rows, columns=["level", "k", "pass_at_k", "ci_low", "ci_high",
                                       "n_prompts", "n_samples"])
