"""The paper's comparisons as paired differences: per test level, pass@1 of model A minus model B
on the same held-out prompts, with a paired bootstrap CI over prompts (``fgx.metrics.level_contrast``).

Each model's own interval (Figs. 3 and 5) spreads with the prompts' difficulty; resampling the
prompts once for both models gives the interval of the difference, which is what the paper's
claims are about:
  RL Level 2 − RL Level 1 and RL Level 1+2 − RL Level 1 (Fig. 2: RL on Level 2 generalises),
  RL Level 1 − Stage-1 base (RL on Level 1 does not), RL Level 2 − iterative RFT (Fig. 3).

Each pair is compared on every test prompt, and on the prompts that only a full trace solves (no
one-step wrong trace reaches their answer, ``fgx.tasks.strings.shortcuts``): a deep level's gain there
is composition rather than a shorter trace that happens to end on the answer. The test set holds few
such prompts at deep levels, so where the config asks for the full-trace test set
(``test_full_trace.parquet``: every prompt such a one, ``data.test_full_trace_per_level`` per level)
each pair is compared on it too.

Beside each difference on every test prompt, each model's own pass@1 interval (``a_ci_low`` ... ``b_ci_high``)
as its metrics table has it, where the inputs hold that table: the findings read pass@1 per model from here
for the models the pass@k figure does not draw.

Inputs: eval parquets ``results/eval/{model}/test.parquet``, optionally
``results/eval/{model}/test_full_trace.parquet`` and the metrics tables ``results/metrics/{model}/test.parquet``
(a table with a ``pass_at_k`` column; fgx.plan.paths.EVAL and METRICS). Settings: ``pairs`` ([[A, B],
...], model names; required), ``bootstrap`` (resamples, default 1000), ``ci`` (default 0.95),
``bootstrap_seed`` (default 0), ``max_value_len`` (the task's value cap, for the shortcut check; default 8).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from fgx.figures import read_with_provenance
from fgx.figures.style import label, setup
from fgx.metrics import level_contrast
from fgx.plan import paths
from fgx.plan.comparisons import contrast_models, contrast_pairs
from fgx.plan.figures import ALL_PROMPTS, FULL_TRACE_PROMPTS, FULL_TRACE_SET_PROMPTS, FigureSpec, bootstrap_settings
from fgx.plan.splits import asks_for
from fgx.tasks.strings.splits import TEST_FULL_TRACE

TEST, FULL_TRACE_SET = "test", TEST_FULL_TRACE  # the splits of the eval files

# provenance: ``source`` / ``config_hash`` (every figure's columns) are model A's, ``*_b`` model B's
COLUMNS = ["a", "b", "prompts", "level", "a_accuracy", "b_accuracy", "diff", "ci_low", "ci_high", "p_a_better",
           "n_prompts", "a_ci_low", "a_ci_high", "b_ci_low", "b_ci_high", "source", "config_hash", "source_b",
           "config_hash_b"]


def planned_inputs(config) -> list[str]:
    """Every model of a pair on the test set (and the full-trace test set where the config asks for it),
    and each model's metrics on the test set (its own pass@1 interval: the findings' pass@1 of models the
    pass@k figure does not draw)."""
    models = contrast_models(config)
    splits = [TEST, *([FULL_TRACE_SET] if asks_for(config, FULL_TRACE_SET) else [])]
    return ([paths.fill(paths.EVAL, model=m, split=split) for split in splits for m in models]
            + [paths.fill(paths.METRICS, model=m, split=TEST) for m in models])


def spec_settings(config, figure: str) -> dict:
    # the shortcut check evaluates wrong traces under the task's value cap
    return {**bootstrap_settings(config, figure), "pairs": contrast_pairs(config),
            "max_value_len": config["task"]["max_value_len"]}


SPEC = FigureSpec(planned_inputs, settings=spec_settings, planned=lambda config: bool(contrast_pairs(config)))


def pair_contrast(ea: pd.DataFrame, eb: pd.DataFrame, a: str, b: str, settings, offset: int) -> pd.DataFrame:
    """Per-level pass@1 of ``a`` minus ``b`` (two evaluations read with provenance) with its paired bootstrap
    CI (resample seed: settings' ``bootstrap_seed`` + ``offset``), as this figure's rows."""
    contrast = level_contrast(ea, eb, [1], resamples=int(settings.get("bootstrap", 1000)),
                              ci=float(settings.get("ci", 0.95)),
                              seed=int(settings.get("bootstrap_seed", 0)) + offset, names=(a, b))
    contrast = contrast.rename(columns={"a": "a_accuracy", "b": "b_accuracy"}).drop(columns="k")
    return contrast.assign(a=a, b=b, source=ea["source"].iloc[0], config_hash=ea["config_hash"].iloc[0],
                           source_b=eb["source"].iloc[0], config_hash_b=eb["config_hash"].iloc[0])


def full_trace_only(evaluation: pd.DataFrame, max_len: int, cache: dict) -> pd.DataFrame:
    """The rows of a string-task evaluation whose problem no one-step wrong trace solves."""
    from fgx.tasks.strings.shortcuts import has_shortcut

    keep = []
    for rm in evaluation["reward_model"]:
        gt = rm["ground_truth"]
        key = gt if isinstance(gt, (str, bytes)) else repr(gt)
        if key not in cache:
            cache[key] = not has_shortcut(gt, max_len)
        keep.append(cache[key])
    return evaluation[keep]


def read_inputs(inputs) -> tuple[dict[str, dict[str, pd.DataFrame]], dict[str, pd.DataFrame]]:
    """({split: {model: evaluation}}, {model: its metrics' pass@1 rows indexed by level}) of the inputs."""
    from fgx.io import require_columns

    evals: dict[str, dict[str, pd.DataFrame]] = {TEST: {}, FULL_TRACE_SET: {}}
    own: dict[str, pd.DataFrame] = {}
    for p in inputs:
        names = paths.parse(paths.EVAL, p)  # a metrics table's path (paths.METRICS) has the same wildcards
        stem, model = names["split"], names["model"]
        if stem not in evals:
            raise ValueError(f"model_contrasts: {p} is neither a {TEST}.parquet nor a {FULL_TRACE_SET}.parquet "
                             "evaluation or metrics table")
        df = read_with_provenance(p)
        if "pass_at_k" in df.columns:  # a metrics table (rule metrics)
            require_columns(df, p, "metrics table", ("level", "k", "ci_low", "ci_high"))
            if stem != TEST:
                raise ValueError(f"model_contrasts: {p} is a metrics table of another split; the own intervals "
                                 f"are those of results/metrics/{{model}}/{TEST}.parquet")
            own[model] = df[df["k"] == 1].set_index("level")
            continue
        evals[stem][model] = require_columns(df, p, "evaluation", ("level", "correct", "reward_model"))
    return evals, own


def with_own_intervals(rows: pd.DataFrame, own: dict[str, pd.DataFrame]) -> pd.DataFrame:
    """``rows`` (one pair on every test prompt) with each model's pass@1 interval from its metrics table."""
    rows = rows.copy()
    for side, model in (("a", rows["a"].iloc[0]), ("b", rows["b"].iloc[0])):
        for bound in ("ci_low", "ci_high"):
            rows[f"{side}_{bound}"] = (rows["level"].map(own[model][bound]) if model in own else np.nan)
    return rows


def table(inputs, settings) -> pd.DataFrame:
    settings = settings or {}
    evals, own = read_inputs(inputs)
    test, full_set = evals[TEST], evals[FULL_TRACE_SET]
    max_len, cache = settings.get("max_value_len", 8), {}  # None: no cap
    full = {}
    rows = []
    pairs = settings["pairs"]
    for i, (a, b) in enumerate(pairs):
        missing = [m for m in (a, b) if m not in test]
        if missing:
            raise ValueError(f"model_contrasts: pair {a} - {b} needs results/eval/{missing[0]}/{TEST}.parquet "
                             f"among the inputs (got {', '.join(map(str, inputs))})")
        rows.append(with_own_intervals(pair_contrast(test[a], test[b], a, b, settings, i), own)
                    .assign(prompts=ALL_PROMPTS))
        for m in (a, b):
            if m not in full:
                full[m] = full_trace_only(test[m], max_len, cache)
        rows.append(pair_contrast(full[a], full[b], a, b, settings, i + len(pairs))
                    .assign(prompts=FULL_TRACE_PROMPTS))
        if full_set:
            missing = [m for m in (a, b) if m not in full_set]
            if missing:
                raise ValueError(f"model_contrasts: pair {a} - {b} needs results/eval/{missing[0]}/"
                                 f"{FULL_TRACE_SET}.parquet among the inputs, as every model of a pair has one")
            rows.append(pair_contrast(full_set[a], full_set[b], a, b, settings, i + 2 * len(pairs))
                        .assign(prompts=FULL_TRACE_SET_PROMPTS))
    return pd.concat(rows, ignore_index=True).reindex(columns=COLUMNS)


def pair_label(a: str, b: str) -> str:
    return f"{label(a)} − {label(b)}"


def draw(df: pd.DataFrame, pdf, settings) -> None:
    import matplotlib.pyplot as plt

    setup()
    pairs = list(dict.fromkeys(zip(df["a"], df["b"])))
    levels = sorted(df["level"].unique())
    colours = plt.get_cmap("tab10").colors
    width = 0.8 / max(1, len(pairs))
    panels = list(dict.fromkeys(df["prompts"]))
    fig, axes = plt.subplots(len(panels), 1, sharex=True, squeeze=False,
                             figsize=(max(6, 1.1 * len(levels) + 2), 1.2 + 2.8 * len(panels)))
    x = np.arange(len(levels))
    for ax, prompts in zip(axes[:, 0], panels):
        sub = df[df["prompts"] == prompts]
        for i, (a, b) in enumerate(pairs):
            m = sub[(sub["a"] == a) & (sub["b"] == b)].set_index("level").reindex(levels)
            err = np.vstack([m["diff"] - m["ci_low"], m["ci_high"] - m["diff"]]) * 100
            ax.bar(x + (i - (len(pairs) - 1) / 2) * width, 100 * m["diff"], width, yerr=err, capsize=1.5,
                   color=colours[i % len(colours)], label=pair_label(a, b))
        ax.axhline(0, color="black", linewidth=0.8)
        ax.set_ylabel("pass@1 difference (points)")
        n = sub.drop_duplicates("level").set_index("level")["n_prompts"].reindex(levels)
        what = {ALL_PROMPTS: "every held-out test prompt", FULL_TRACE_PROMPTS: "test prompts only a full trace solves",
                FULL_TRACE_SET_PROMPTS: "the full-trace test set"}[prompts]
        ax.set_title(f"{what} (prompts per level: {', '.join(str(int(v)) for v in n.fillna(0))})", fontsize=9)
    ax = axes[-1, 0]
    ax.set_xticks(x, [f"L{lv}" for lv in levels])
    # below the axes: no bar hidden
    ax.legend(fontsize=7, ncol=2, loc="upper center", bbox_to_anchor=(0.5, -0.12), frameon=False)
    fig.suptitle("Paired differences on the held-out test prompts (95 % bootstrap CI)", fontsize=10)
    fig.tight_layout()
    fig.savefig(pdf, format=Path(str(pdf)).suffix.lstrip(".") or "pdf", dpi=120)
    plt.close(fig)
