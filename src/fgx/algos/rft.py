"""Rejection-sampling fine-tuning data: filter a rollout parquet (docs/architecture.md columns) to
one row per kept (prompt, correct response) pair, with a ``response`` column for SFT."""

from __future__ import annotations

import numpy as np
import pandas as pd

ROLLOUT_COLUMNS = ("responses", "scores", "correct", "response_tokens")


def filter_rollouts(df: pd.DataFrame, *, drop_all_solved: bool = False, dedup: bool = True,
                    max_per_prompt: int | None = None, seed: int = 0, source: str = "rollouts") -> pd.DataFrame:
    """Keep correct responses; one output row per kept response.

    drop_all_solved: drop prompts whose every sample is correct (nothing left to learn there).
    dedup: keep each distinct response text once per prompt.
    max_per_prompt: keep at most this many responses per prompt (a seeded random choice).
    Output: the prompt-row columns (rollout list columns removed) plus ``response`` (str).
    """
    missing = [c for c in ("responses", "correct") if c not in df.columns]
    if missing:
        raise ValueError(f"{source}: missing column(s) {missing}; expected a rollout parquet written by "
                         "engine.sample (columns responses, scores, correct, response_tokens)")
    rng = np.random.default_rng(seed)
    base_cols = [c for c in df.columns if c not in ROLLOUT_COLUMNS]
    keep_idx, keep_resp = [], []
    for i, (responses, correct) in enumerate(zip(df["responses"], df["correct"])):
        responses, correct = list(responses), [bool(c) for c in correct]
        if len(responses) != len(correct):
            raise ValueError(f"{source}: row {i} has {len(responses)} responses but {len(correct)} correct flags")
        if drop_all_solved and correct and all(correct):
            continue
        kept = [r for r, c in zip(responses, correct) if c]
        if dedup:
            kept = list(dict.fromkeys(kept))
        if max_per_prompt is not None and len(kept) > max_per_prompt:
            pick = sorted(rng.choice(len(kept), size=max_per_prompt, replace=False).tolist())
            kept = [kept[j] for j in pick]
        keep_idx += [i] * len(kept)
        keep_resp += kept
    out = df.iloc[keep_idx][base_cols].reset_index(drop=True)
    out["response"] = pd.Series(keep_resp, dtype=object)
    return out


SFT_COLUMNS = ("data_source", "prompt", "ability", "reward_model", "extra_info", "response")


def sft_rows(df: pd.DataFrame, source: str = "rows") -> pd.DataFrame:
    """Rows ready for SFT: filtered rollouts as they are, or problem rows whose reference
    solution (``extra_info.solution``, compact style) becomes the ``response``."""
    missing = [c for c in SFT_COLUMNS[:-1] if c not in df.columns]
    if missing:
        raise ValueError(f"{source}: missing column(s) {missing}; expected verl-schema rows")
    out = df[list(SFT_COLUMNS[:-1])].copy()
    if "response" in df.columns:
        out["response"] = df["response"].astype(object)
        return out.reset_index(drop=True)
    solutions = []
    for i, extra in enumerate(df["extra_info"]):
        sol = extra.get("solution") if isinstance(extra, dict) else None
        if not isinstance(sol, str) or not sol:
            raise ValueError(f"{source}: row {i} has neither a 'response' column nor extra_info.solution; "
                             "use filtered rollouts, or problems generated with style='compact'")
        solutions.append(sol)
    out["response"] = pd.Series(solutions, dtype=object, index=out.index)
    return out.reset_index(drop=True)


def mix_sft_data(frames, repeats=None, sources=None) -> pd.DataFrame:
    """Merge SFT data sets (see :func:`sft_rows`) into one, each repeated ``repeats[i]`` times
    (default once). The trainer shuffles, so the order here does not matter."""
    frames = list(frames)
    repeats = [1] * len(frames) if repeats is None else [int(r) for r in repeats]
    sources = sources or [f"input {i}" for i in range(len(frames))]
    if len(repeats) != len(frames):
        raise ValueError(f"{len(repeats)} repeat counts for {len(frames)} inputs; give one per input")
    if any(r < 0 for r in repeats):
        raise ValueError(f"repeat counts must be >= 0, got {repeats}")
    parts = []
    for df, r, src in zip(frames, repeats, sources):
        rows = sft_rows(df, src)
        parts += [rows] * r
    if not parts:
        return pd.DataFrame(columns=list(SFT_COLUMNS))
    return pd.concat(parts, ignore_index=True)
