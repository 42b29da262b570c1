"""Paper Fig. 2: held-out accuracy per level over RL steps, one line per RL run, with its band.

A point is pass@1 as the test set measures it: at one RL step, the mean over a level's validation
prompts (``data.val_per_level``, held-out functions, drawn as the test set is) of each prompt's share of
correct answers among ``rl.val_n`` samples at ``rl.val_temperature`` (the evaluation's temperature by
default), at step 0 (the starting model), every ``rl.eval_every`` steps and the last step. Its band is the
``evaluate.ci`` percentile bootstrap interval over the level's prompts (``evaluate.bootstrap`` resamples;
a prompt's samples are not independent draws). The prompts are the same at every step, so the table also
holds each point's change from step 0 with a paired bootstrap interval (``change``, ``change_ci_low``,
``change_ci_high``): what the findings read (:mod:`fgx.analysis.findings`).

Inputs: the validation tables of the RL runs (``results/rl/<run>/validation.parquet``,
:mod:`fgx.engines.validation`).
"""

from __future__ import annotations

import pandas as pd

from fgx.figures import read_with_provenance
from fgx.figures.style import finish_grid, label, level_grid, palette
from fgx.io import read_settings
from fgx.metrics import validation_curve
from fgx.plan import paths
from fgx.plan.figures import FigureSpec, bootstrap_settings
from fgx.plan.models import rl_model_of_dir, rl_validation

COLUMNS = ["model", "step", "level", "accuracy", "ci_low", "ci_high", "change", "change_ci_low", "change_ci_high",
           "n_prompts", "n_samples", "temperature", "source", "config_hash"]
VALIDATION_INPUT = ("step", "level", "prompt_row", "n_samples", "n_correct")


def planned_inputs(config) -> list[str]:
    """The validation table of every run (rl.runs)."""
    return [rl_validation(run) for run in config["rl"]["runs"]]


SPEC = FigureSpec(planned_inputs, settings=bootstrap_settings)


def table(inputs, settings) -> pd.DataFrame:
    frames = []
    for path in inputs:
        df = read_with_provenance(path, VALIDATION_INPUT)
        curve = validation_curve(df, resamples=settings["bootstrap"], ci=settings["ci"],
                                 seed=settings["bootstrap_seed"])
        run_settings = read_settings(path) or {}
        curve["model"] = rl_model_of_dir(paths.parse(paths.RL_VALIDATION, path)["rl_dir"])
        curve["temperature"] = float(run_settings.get("val_temperature", float("nan")))
        curve["source"], curve["config_hash"] = df["source"].iloc[0], df["config_hash"].iloc[0]
        frames.append(curve)
    out = pd.concat(frames, ignore_index=True)
    return out[COLUMNS].sort_values(["model", "level", "step"]).reset_index(drop=True)


def draw(df: pd.DataFrame, pdf, settings) -> None:
    levels = sorted(df["level"].unique())
    fig, panels = level_grid(levels)
    models = list(dict.fromkeys(df["model"]))
    colours = palette(models)
    for level, ax in panels.items():
        sub = df[df["level"] == level]
        for model in models:
            m = sub[sub["model"] == model]
            ax.plot(m["step"], 100 * m["accuracy"], marker="o", ms=2.5, color=colours[model], label=label(model))
            ax.fill_between(m["step"], 100 * m["ci_low"], 100 * m["ci_high"], color=colours[model], alpha=0.15, lw=0)
        prompts = "/".join(str(n) for n in sorted(sub["n_prompts"].unique()))
        ax.set(title=f"Level {level} ({prompts} prompts)", ylim=(-2, 102), xlabel="RL step", ylabel="pass@1 (%)")
    samples = "/".join(str(n) for n in sorted(df["n_samples"].unique()))
    temps = "/".join(f"{t:g}" for t in sorted(df["temperature"].unique()))
    finish_grid(fig, panels, f"Held-out accuracy during RL: pass@1 of {samples} samples per prompt at T = {temps} "
                             f"(bands: {100 * settings['ci']:g} % bootstrap CI over prompts)", pdf)
