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


def sample_counts(correct: pd.Series) -> tuple[np.ndarray, np.ndarray]:
    """Per prompt, the number of samples and of correct ones, from a column of ``correct`` lists."""
    return (correct.map(len).to_numpy(), correct.map(lambda xs: int(np.sum(xs))).to_numpy())


def level_pass_at_k(samples: pd.DataFrame, ks: Iterable[int], *, resamples: int = 1000,
                    ci: float = 0.95, seed: int = 0) -> pd.DataFrame:
    """Per-level pass@k table from an eval parquet (one row per prompt, `correct` lists).

    Returns long format: level, k, pass_at_k, ci_low, ci_high, n_prompts, n_samples.
    k larger than a level's sample count is skipped (pass@k is undefined there).
    """
    rng = np.random.default_rng(seed)
    n, c = sample_counts(samples["correct"])
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


def paired_bootstrap_diff_ci(a: np.ndarray, b: np.ndarray, *, resamples: int, ci: float,
                             rng: np.random.Generator) -> tuple[float, float, float]:
    """Percentile bootstrap CI of mean(a) - mean(b) for per-prompt scores of two models on the
    *same* prompts (``a[i]`` and ``b[i]`` belong to prompt i), resampling prompts once for both.

    Pairing removes the prompts' spread in difficulty, which dominates each model's own interval:
    two models can have overlapping intervals and still differ clearly on the prompts they share.
    Returns (ci_low, ci_high, share of resamples in which a's mean exceeds b's).
    """
    a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    if a.shape != b.shape or a.ndim != 1:
        raise ValueError(f"paired bootstrap needs two equal-length 1-d arrays, got {a.shape} and {b.shape}")
    if len(a) == 0:
        return (math.nan, math.nan, math.nan)
    idx = rng.integers(0, len(a), size=(resamples, len(a)))
    diffs = (a - b)[idx].mean(axis=1)
    alpha = (1.0 - ci) / 2.0
    return (float(np.quantile(diffs, alpha)), float(np.quantile(diffs, 1.0 - alpha)),
            float((diffs > 0).mean()))


def _prompt_key(prompt) -> str:
    return "\n".join(str(m["content"]) for m in prompt)


def level_contrast(a: pd.DataFrame, b: pd.DataFrame, ks: Iterable[int], *, resamples: int = 1000,
                   ci: float = 0.95, seed: int = 0, names: tuple[str, str] = ("a", "b")) -> pd.DataFrame:
    """Per-level pass@k of model a minus model b, from two evaluation tables of the same test set
    (one row per prompt: ``prompt``, ``level``, ``correct`` lists), with paired bootstrap CIs.

    Rows are matched by prompt text, so their order may differ; a prompt that only one table has
    is an error (the two were not evaluated on the same test set). Long format: level, k, a, b,
    diff, ci_low, ci_high, p_a_better, n_prompts.
    """
    keyed = []
    for name, df in zip(names, (a, b)):
        missing = {"prompt", "level", "correct"} - set(df.columns)
        if missing:
            raise ValueError(f"{name}: no column(s) {sorted(missing)}; pass an evaluation table "
                             "(results/eval/<model>/<split>.parquet)")
        keys = df["prompt"].map(_prompt_key)
        if keys.duplicated().any():
            raise ValueError(f"{name}: prompt {keys[keys.duplicated()].iloc[0]!r} appears twice")
        keyed.append(df.assign(_key=keys).set_index("_key"))
    ka, kb = set(keyed[0].index), set(keyed[1].index)
    if ka != kb:
        only = sorted(ka - kb)[:1] or sorted(kb - ka)[:1]
        raise ValueError(f"{names[0]} and {names[1]} were not evaluated on the same prompts "
                         f"({len(ka - kb)} only in {names[0]}, {len(kb - ka)} only in {names[1]}, e.g. "
                         f"{only[0]!r}); compare evaluations of one test set built with the same config")
    ta, tb = keyed[0], keyed[1].loc[keyed[0].index]
    rng = np.random.default_rng(seed)
    rows = []
    for level in sorted(set(ta["level"].tolist())):
        mask = (ta["level"] == level).to_numpy()
        na, ca = sample_counts(ta["correct"][mask])
        nb, cb = sample_counts(tb["correct"][mask])
        for k in sorted(set(ks)):
            if k > min(na.min(), nb.min()):
                continue
            pa, pb = pass_at_k(na, ca, k), pass_at_k(nb, cb, k)
            lo, hi, p_better = paired_bootstrap_diff_ci(pa, pb, resamples=resamples, ci=ci, rng=rng)
            rows.append({"level": int(level), "k": int(k), "a": float(pa.mean()), "b": float(pb.mean()),
                         "diff": float(pa.mean() - pb.mean()), "ci_low": lo, "ci_high": hi,
                         "p_a_better": p_better, "n_prompts": int(mask.sum())})
    return pd.DataFrame(rows, columns=["level", "k", "a", "b", "diff", "ci_low", "ci_high", "p_a_better",
                                       "n_prompts"])


def validation_curve(table: pd.DataFrame, *, resamples: int = 1000, ci: float = 0.95, seed: int = 0) -> pd.DataFrame:
    """Held-out accuracy per step and level during RL, from a validation table (one row per step and prompt:
    ``step``, ``level``, ``prompt_row``, ``n_samples``, ``n_correct``; fgx.engines.validation).

    A point is the mean over a level's prompts of each prompt's share of correct samples (pass@1), with a
    percentile bootstrap interval over prompts (a prompt's samples are not independent draws of the
    level's accuracy); ``change`` is the point minus the level's point at the first step, with a paired
    bootstrap interval over the prompts both steps hold (the same prompts at every step: their spread in
    difficulty cancels). Long format: step, level, accuracy, ci_low, ci_high, change, change_ci_low,
    change_ci_high, n_prompts, n_samples (the fewest samples of any prompt).
    """
    rng = np.random.default_rng(seed)
    cols = ["step", "level", "accuracy", "ci_low", "ci_high", "change", "change_ci_low", "change_ci_high",
            "n_prompts", "n_samples"]
    rows = []
    acc = table.assign(acc=table["n_correct"] / table["n_samples"])
    for level, by_level in acc.groupby("level", sort=True):
        per_step = {int(step): g.set_index("prompt_row")["acc"] for step, g in by_level.groupby("step", sort=True)}
        first = per_step[min(per_step)]
        for step, p in per_step.items():
            lo, hi = bootstrap_mean_ci(p.to_numpy(), resamples=resamples, ci=ci, rng=rng)
            both = p.index.intersection(first.index)
            d_lo, d_hi, _ = paired_bootstrap_diff_ci(p[both].to_numpy(), first[both].to_numpy(), resamples=resamples,
                                                     ci=ci, rng=rng)
            n_samples = by_level.loc[by_level["step"] == step, "n_samples"]
            rows.append({"step": step, "level": int(level), "accuracy": float(p.mean()), "ci_low": lo, "ci_high": hi,
                         "change": float(p[both].mean() - first[both].mean()), "change_ci_low": d_lo,
                         "change_ci_high": d_hi, "n_prompts": len(p), "n_samples": int(n_samples.min())})
    return pd.DataFrame(rows, columns=cols)
