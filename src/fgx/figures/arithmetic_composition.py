"""Findings 1-3 on arithmetic chains: held-out pass@1 per level of the arithmetic Stage-1 model, RL on
arithmetic Level 1, Level 2 (and Level 1+2) and the last iterative-RFT iteration, with the paired
differences the findings are about.

Every model is evaluated on the one held-out test set (compositions of the held-out operations,
``results/eval/{model}/arithmetic_test.parquet``). A ``pass@1`` row is a model's mean over a level's
prompts of each prompt's share of correct samples, with a percentile bootstrap interval over prompts, and
how its responses step (:func:`fgx.tasks.arithmetic.trace.trace_stats`: step lines per response, the share
of them computed right, the share of responses that write every step of the chain right): where the model
stops. A ``difference`` row is pass@1 of ``a`` minus ``b`` on the same prompts with a paired bootstrap
interval (``fgx.metrics.level_contrast``): RL Level 1 − Stage 1 (finding 1), RL Level 2 (and Level 1+2) −
RL Level 1 (finding 2), RL Level 2 − iterative RFT (finding 3).

The table is long: ``kind``, ``a``, ``b`` (empty for pass@1), ``levels`` (a level, or a range pooled: the
transfer figure's), ``value``, ``ci_low``, ``ci_high``, ``a_value``/``b_value`` (a difference's two
pass@1), ``n_prompts``, ``n_samples``, the trace columns, provenance. Settings: ``models`` (in order),
``pairs`` ([[a, b], ...]), ``bootstrap``, ``ci``, ``bootstrap_seed``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Mapping, Sequence

import numpy as np
import pandas as pd

from fgx.figures import read_with_provenance
from fgx.figures.style import label as study_label, setup
from fgx.metrics import bootstrap_mean_ci, level_contrast
from fgx.plan import paths
from fgx.plan.figures import FigureSpec, bootstrap_settings
from fgx.plan.models import rl_model
from fgx.tasks.arithmetic.ground_truth import parse as parse_ground_truth
from fgx.tasks.arithmetic.models import ARITHMETIC, STAGE1_MODEL, rft_model
from fgx.tasks.arithmetic.splits import TEST
from fgx.tasks.arithmetic.trace import trace_stats

COLUMNS = ["kind", "a", "b", "levels", "value", "ci_low", "ci_high", "a_value", "b_value", "n_prompts",
           "n_samples", "steps_written", "step_right", "full_trace", "source", "config_hash"]
READS = ("prompt", "level", "correct", "responses", "reward_model")
PASS1, DIFFERENCE = "pass@1", "difference"
LABELS = {STAGE1_MODEL: "Stage 1 (arithmetic)", "rl_arithmetic_level1": "RL Level 1",
          "rl_arithmetic_level2": "RL Level 2", "rl_arithmetic_level1to2": "RL Level 1+2"}


def label(model: str) -> str:
    if model.startswith("rft_arithmetic_iter"):
        return f"Iterative RFT L2, iter {model.rsplit('iter', 1)[1]}"
    return LABELS.get(model, study_label(model))


def models(config: Mapping) -> list[str]:
    """The arithmetic Stage-1 model, each RL run on arithmetic, the last iterative-RFT iteration."""
    a = config["arithmetic"]
    rft = [rft_model(a["rft_chunks"])] if a["rft_chunks"] else []
    return [STAGE1_MODEL, *(rl_model(run, ARITHMETIC.name) for run in ARITHMETIC.runs(config)), *rft]


def pairs(config: Mapping) -> list[list[str]]:
    """The findings' differences among the models the config trains."""
    have = set(models(config))
    rft = [m for m in models(config) if m.startswith("rft_arithmetic_iter")]
    wanted = [("rl_arithmetic_level1", STAGE1_MODEL), ("rl_arithmetic_level2", "rl_arithmetic_level1"),
              ("rl_arithmetic_level1to2", "rl_arithmetic_level1"), *(("rl_arithmetic_level2", m) for m in rft)]
    return [[a, b] for a, b in wanted if a in have and b in have]


def eval_inputs(config: Mapping, names: Sequence[str]) -> list[str]:
    return [paths.fill(paths.EVAL, model=m, split=TEST) for m in names]


def spec_settings(config: Mapping, figure: str) -> dict:
    return {**bootstrap_settings(config, figure), "models": models(config), "pairs": pairs(config)}


SPEC = FigureSpec(lambda config: eval_inputs(config, models(config)), settings=spec_settings,
                  planned=lambda config: config["arithmetic"]["enabled"])


# ----------------------------------------------------------------------------- the table (shared with the transfer)
def read_evals(inputs, figure: str) -> dict[str, pd.DataFrame]:
    """{model: its evaluation on the arithmetic test set} of the inputs."""
    out = {}
    for path in inputs:
        names = paths.parse(paths.EVAL, path)
        if names["split"] != TEST:
            raise ValueError(f"{figure}: {path} is not an evaluation on {TEST} (results/eval/<model>/{TEST}.parquet)")
        df = read_with_provenance(path, READS)
        if df.empty:
            raise ValueError(f"{path}: no rows; rerun the evaluation that writes it")
        out[names["model"]] = df
    return out


def _groups(df: pd.DataFrame, groups: Sequence[tuple[str, Sequence[int]]]):
    for name, levels in groups:
        sub = df[df["level"].isin(levels)]
        if len(sub):
            yield name, sub


def accuracy_rows(model: str, df: pd.DataFrame, groups, settings, seed: int) -> list[dict]:
    """pass@1 and how the responses step, per group of levels, of one model's evaluation."""
    rng = np.random.default_rng(seed)
    rows = []
    for name, sub in _groups(df, groups):
        counts = sub["correct"].map(len).to_numpy()
        if counts.min() == 0:
            raise ValueError(f"{sub['source'].iloc[0]}: a prompt with no samples in 'correct'")
        per_prompt = sub["correct"].map(lambda xs: float(np.mean(np.asarray(xs, dtype=bool)))).to_numpy()
        lo, hi = bootstrap_mean_ci(per_prompt, resamples=int(settings.get("bootstrap", 1000)),
                                   ci=float(settings.get("ci", 0.95)), rng=rng)
        chains = [parse_ground_truth(rm["ground_truth"]) for rm in sub["reward_model"]]
        stats = trace_stats((r, start, steps) for (start, steps, _), responses in zip(chains, sub["responses"])
                            for r in responses)
        rows.append({"kind": PASS1, "a": model, "b": "", "levels": name, "value": float(per_prompt.mean()),
                     "ci_low": lo, "ci_high": hi, "n_prompts": len(sub), "n_samples": int(counts.min()), **stats,
                     "source": sub["source"].iloc[0], "config_hash": sub["config_hash"].iloc[0]})
    return rows


def difference_rows(a: str, b: str, evals: Mapping[str, pd.DataFrame], groups, settings, seed: int) -> list[dict]:
    """pass@1 of ``a`` minus ``b`` per group of levels, paired over the prompts both were sampled on."""
    rows = []
    for i, (name, sub_a) in enumerate(_groups(evals[a], groups)):
        sub_b = evals[b][evals[b]["level"].isin(sub_a["level"].unique())]
        c = level_contrast(sub_a.assign(level=0), sub_b.assign(level=0), [1],
                           resamples=int(settings.get("bootstrap", 1000)), ci=float(settings.get("ci", 0.95)),
                           seed=seed + i, names=(a, b)).iloc[0]
        rows.append({"kind": DIFFERENCE, "a": a, "b": b, "levels": name, "value": c["diff"], "ci_low": c["ci_low"],
                     "ci_high": c["ci_high"], "a_value": c["a"], "b_value": c["b"], "n_prompts": int(c["n_prompts"]),
                     "source": sub_a["source"].iloc[0], "config_hash": sub_a["config_hash"].iloc[0]})
    return rows


def build_table(inputs, settings, groups_of, figure: str) -> pd.DataFrame:
    """The long table of pass@1 rows (``settings["models"]``, each in the order given) and difference rows
    (``settings["pairs"]``) over the level groups ``groups_of(levels in the data)`` returns."""
    settings = settings or {}
    evals = read_evals(inputs, figure)
    seed = int(settings.get("bootstrap_seed", 0))
    order = [m for m in settings.get("models", []) if m in evals] + [m for m in evals if m not in
                                                                     settings.get("models", [])]
    levels = sorted({int(lv) for df in evals.values() for lv in df["level"]})
    groups = groups_of(levels)
    rows = []
    for i, m in enumerate(order):
        rows += accuracy_rows(m, evals[m], groups, settings, seed + 1000 * i)
    for j, (a, b) in enumerate(settings.get("pairs", [])):
        missing = [m for m in (a, b) if m not in evals]
        if missing:
            raise ValueError(f"{figure}: the difference {a} − {b} needs results/eval/{missing[0]}/{TEST}.parquet "
                             f"among the inputs (got {', '.join(map(str, inputs))})")
        rows += difference_rows(a, b, evals, groups, settings, seed + 100_000 + 1000 * j)
    return pd.DataFrame(rows, columns=COLUMNS)


def table(inputs, settings) -> pd.DataFrame:
    return build_table(inputs, settings, lambda levels: [(str(lv), [lv]) for lv in levels], "arithmetic_composition")


def draw(df: pd.DataFrame, pdf, settings) -> None:
    import matplotlib.pyplot as plt

    setup()
    fig, (left, right) = plt.subplots(1, 2, figsize=(10, 3.6))
    colours = plt.get_cmap("tab10").colors
    acc = df[df["kind"] == PASS1]
    for i, (model, m) in enumerate(acc.groupby("a", sort=False)):
        lv = m["levels"].astype(int)
        err = 100 * np.vstack([m["value"] - m["ci_low"], m["ci_high"] - m["value"]]).clip(0)
        left.errorbar(lv, 100 * m["value"], yerr=err, marker="o", markersize=3, capsize=2,
                      color=colours[i % len(colours)], label=label(model))
    left.set(xlabel="level (held-out operations)", ylabel="pass@1 (%)", ylim=(0, 100),
             title="Held-out arithmetic chains")
    left.legend(fontsize=7)
    diff = df[df["kind"] == DIFFERENCE]
    for i, ((a, b), m) in enumerate(diff.groupby(["a", "b"], sort=False)):
        lv = m["levels"].astype(int) + (i - 1.5) * 0.06
        err = 100 * np.vstack([m["value"] - m["ci_low"], m["ci_high"] - m["value"]]).clip(0)
        right.errorbar(lv, 100 * m["value"], yerr=err, marker="s", markersize=3, capsize=2,
                       color=colours[(i + 4) % len(colours)], label=f"{label(a)} − {label(b)}")
    right.axhline(0, color="black", linewidth=0.8)
    right.set(xlabel="level", ylabel="pass@1 difference (points)", title="Paired differences (95 % bootstrap CI)")
    right.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(pdf, format=Path(str(pdf)).suffix.lstrip(".") or "pdf", dpi=120)
    plt.close(fig)
