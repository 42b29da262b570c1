"""The models: their names, and one row per model family saying which model it starts from and
which data it trains on."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Callable, Mapping

from fgx.plan import paths
from fgx.plan.splits import COUNTDOWN_TRAIN, data_path, rft_chunk
from fgx.settings import RL_RUNS

RL_RUN_WILDCARD = "|".join(RL_RUNS)
# Countdown transfer (paper Section 4.3): the Multi-Base lineage. The RL lineages ("string": Stage-2 RL
# from stage1, "multi": the same string-task RL from the Multi-Base) and the prefix of their names.
MULTI_BASE = "stage1_multi"
RL_LINEAGES = {"string": "", "multi": "multi_"}
RL_INIT = {"string": "stage1", "multi": MULTI_BASE}
RFT_ITER = re.compile(r"^rft_level2_iter(\d+)$")
# the models rule rft_sft trains (wildcard constraint)
SFT_MODEL_WILDCARD = r"stage1|stage1_multi|rft_level2_iter[0-9]+"
STRING_BASE_RUN = "level1to2"                # "String-Base + RL L1+2": the Section 4.1 model
WILDCARD_RUN = "{run}"                       # an RL run left as the rules' wildcard
SCRATCH_BASE = paths.fill(paths.MODEL, model="base")  # the tiny base pretrain_base writes (model.source: scratch)


def rft_iterations(config: Mapping) -> int:
    return config["data"]["rft_chunks"]


def rft_model(i: int) -> str:
    """Iteration ``i`` of the iterative-RFT baseline."""
    return f"rft_level2_iter{i}"


def _check_rl(run: str, lineage: str) -> None:
    if lineage not in RL_LINEAGES or run not in (*RL_RUNS, WILDCARD_RUN):
        raise ValueError(f"no RL model for lineage {lineage!r}, run {run!r}; lineages: "
                         f"{', '.join(RL_LINEAGES)}; runs: {', '.join(RL_RUNS)}")


def rl_model(run: str, lineage: str = "string") -> str:
    """The RL model name of a lineage and train split: rl_level1 (string), rl_multi_level1 (multi)."""
    _check_rl(run, lineage)
    return f"rl_{RL_LINEAGES[lineage]}{run}"


def rl_dir(run: str, lineage: str = "string") -> str:
    """The name of an RL run's directory under results/rl/ (metrics, resumable work directory):
    level1 (string), multi_level1 (multi)."""
    _check_rl(run, lineage)
    return f"{RL_LINEAGES[lineage]}{run}"


def rl_models() -> dict[str, tuple[str, str]]:
    """Every RL model name with its (lineage, run): the one table model names are looked up in."""
    return {rl_model(run, lineage): (lineage, run) for lineage in RL_LINEAGES for run in RL_RUNS}


def rl_model_of_dir(name: str) -> str:
    """The RL model whose directory under results/rl/ is ``name`` (the inverse of rl_dir)."""
    models = {rl_dir(run, lineage): rl_model(run, lineage) for lineage in RL_LINEAGES for run in RL_RUNS}
    if name not in models:
        raise ValueError(f"results/rl/{name}: not the directory of an RL run ({', '.join(models)})")
    return models[name]


def rl_metrics(run: str = WILDCARD_RUN, lineage: str = "string") -> str:
    return paths.fill(paths.RL_METRICS, rl_dir=rl_dir(run, lineage))


def rl_validation(run: str = WILDCARD_RUN, lineage: str = "string") -> str:
    return paths.fill(paths.RL_VALIDATION, rl_dir=rl_dir(run, lineage))


def rl_work(run: str = WILDCARD_RUN, lineage: str = "string") -> str:
    return paths.fill(paths.RL_WORK, rl_dir=rl_dir(run, lineage))


def rl_model_dir(run: str = WILDCARD_RUN, lineage: str = "string") -> str:
    return paths.fill(paths.MODEL, model=rl_model(run, lineage))


def model_dir(config: Mapping, name: str) -> str:
    """The directory holding model ``name`` (aliases resolved; external paths for path models)."""
    if name == "base" and config["model"]["source"] == "path":
        return config["model"]["path"]
    return paths.fill(paths.MODEL, model=name)


def rft_data(model: str, split: str) -> str:
    """The filtered rollouts of ``model`` on ``split`` (rule filter_rollouts)."""
    return paths.fill(paths.RFT, model=model, split=split)


def countdown_sft_source(config: Mapping) -> str:
    """Where the Multi-Base's Countdown 2-number SFT examples come from.

    compact style (the tiny default): the reference traces themselves (extra_info.solution).
    The tiny base has never seen Countdown and solves no 2-number problem, so rejection sampling
    from it would keep nothing: its atomic skill must come from supervised data, as an LLM's
    comes from pretraining. An SFT of the shared string base rather than a second base pretrained
    on strings + Countdown, because the SFT learns the atomic skill in a small share of the time a
    second pretraining (the DAG's most expensive job) would take (docs/research-log.md#countdown-recipe).
    paper style (an LLM that can already do arithmetic): the paper's recipe, correct rollouts
    of the base on 2-number problems (RFT data), filtered like Stage 1's string rollouts."""
    if config["task"]["style"] == "compact":
        return data_path(config, COUNTDOWN_TRAIN)
    return rft_data("base", COUNTDOWN_TRAIN)


@dataclass(frozen=True)
class SFTRecipe:
    """An SFT (rejection fine-tuning) model: the model it starts from and the file it trains on."""

    init: str
    data: Callable[[Mapping], str]


def _sft_recipes(config: Mapping) -> dict[str, SFTRecipe]:
    recipes = {"stage1": SFTRecipe("base", lambda c: rft_data("base", "stage1")),
               # Multi-Base: Stage-1's string data merged with Countdown 2-number data (rule mix_sft_data)
               MULTI_BASE: SFTRecipe("base", lambda c: paths.fill(paths.RFT_MIX, model=MULTI_BASE))}
    for i in range(1, rft_iterations(config) + 1):
        prev = "stage1" if i == 1 else rft_model(i - 1)  # iteration i: SFT of i-1 on its own rollouts of chunk i
        recipes[rft_model(i)] = SFTRecipe(prev, lambda c, prev=prev, i=i: rft_data(prev, rft_chunk(i)))
    return recipes


def sft_sources(config: Mapping, model: str) -> dict[str, str]:
    """Which model and which filtered-rollout file an SFT (RFT) model is trained from."""
    recipe = _sft_recipes(config).get(model)
    if recipe is None:
        raise ValueError(f"no SFT recipe for model {model!r}")
    return {"init": model_dir(config, recipe.init), "data": recipe.data(config)}


# merged SFT data sets (rule mix_sft_data): the files whose rows are merged, and the config keys of
# each file's repeats, aligned (the string data are not swamped by the Countdown data: the tiny model
# forgets strings)
SFT_MIXES = {MULTI_BASE: ((lambda c: rft_data("base", "stage1"), "string_repeats"),
                          (countdown_sft_source, "train_repeats"))}


def _mix(model: str):
    if model not in SFT_MIXES:
        raise ValueError(f"no merged SFT data for model {model!r}; known: {', '.join(SFT_MIXES)}")
    return SFT_MIXES[model]


def sft_mix_sources(config: Mapping, model: str) -> list[str]:
    """The files whose rows are merged into one SFT data set (rule mix_sft_data).

    Multi-Base (paper Section 4.3): Stage-1's string Level-1 RFT data (the very file the
    String-Base's Stage 1 trains on) merged with Countdown 2-number data."""
    return [source(config) for source, _ in _mix(model)]


def sft_mix_repeats(config: Mapping, model: str) -> list[int]:
    """How many times each source of a merged SFT data set repeats (countdown.string_repeats for the
    string RFT data, countdown.train_repeats for Countdown)."""
    return [config["countdown"][key] for _, key in _mix(model)]


def rl_sources(config: Mapping, model: str) -> dict[str, str]:
    """Init model, train split and held-out split of an RL model. Both lineages run the same
    string-task RL (same data and settings); only the starting checkpoint differs."""
    if model not in rl_models():
        raise ValueError(f"{model!r} is not an RL model (rl_<run> or rl_multi_<run>)")
    lineage, run = rl_models()[model]
    return {"init": model_dir(config, RL_INIT[lineage]), "train": data_path(config, run),
            "val": data_path(config, "val")}
