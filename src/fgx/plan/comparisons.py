"""Which models each comparison of the paper puts side by side, for the runs the config has."""

from __future__ import annotations

from typing import Mapping

from fgx.plan.models import rft_iterations, rft_model, rl_model, rl_models


def _trained(config: Mapping, model: str) -> bool:
    """Whether the config trains ``model`` (a string-lineage RL model only where rl.runs has its run)."""
    return model not in rl_models() or model in {rl_model(run) for run in config["rl"]["runs"]}


def rft_eval_models(config: Mapping) -> list[str]:
    return [rft_model(i) for i in range(1, rft_iterations(config) + 1)]


def passk_models(config: Mapping) -> list[str]:
    """Fig. 5's models (figures.passk_models), less the RL runs the config does not train."""
    return [m for m in config["figures"]["passk_models"] if _trained(config, m)]


def rft_vs_rl_models(config: Mapping) -> list[str]:
    """Fig. 3: the Stage-1 base, every iterative-RFT iteration, and RL on Level 2."""
    return ["stage1", *rft_eval_models(config), *([rl_model("level2")] if "level2" in config["rl"]["runs"] else [])]


def failure_mode_models(config: Mapping) -> list[str]:
    """Fig. 6: the Stage-1 base, the last iterative-RFT model, RL Level 1 and RL Level 2."""
    wanted = ["stage1", rft_model(rft_iterations(config)), rl_model("level1"), rl_model("level2")]
    return [m for m in wanted if _trained(config, m)]


def contrast_pairs(config: Mapping) -> list[list[str]]:
    """The paper's claims as (A, B) pairs whose paired difference the contrast figure shows, for the
    runs the config has: RL Level 2 and Level 1+2 against RL Level 1 (Fig. 2), RL Level 1 against the
    Stage-1 base, RL Level 2 against the last iterative-RFT model (Fig. 3)."""
    runs = config["rl"]["runs"]
    pairs = [[rl_model(run), rl_model("level1")] for run in ("level2", "level1to2") if run in runs and "level1" in runs]
    if "level1" in runs:
        pairs.append([rl_model("level1"), "stage1"])
    if "level2" in runs and rft_iterations(config):
        pairs.append([rl_model("level2"), rft_model(rft_iterations(config))])
    return pairs


def contrast_models(config: Mapping) -> list[str]:
    """Every model of a contrast pair, once, in pair order."""
    return list(dict.fromkeys(m for pair in contrast_pairs(config) for m in pair))

