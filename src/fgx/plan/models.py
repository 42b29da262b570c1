"""The models: their names, and one record per model saying which model it starts from and which data it
trains on. The study's own (Stage 1, the iterative-RFT baseline, RL on the Stage-2 train splits) are here;
a task family adds its own through its record (fgx.tasks.family: ``models``, ``rl_lineages``), read the same
way."""

from __future__ import annotations

import re
from typing import Mapping

from fgx.plan import paths
from fgx.plan.splits import data_path
from fgx.settings import RL_RUNS
from fgx.tasks.family import RLLineage, SFTModel, Source
from fgx.tasks.registry import families
from fgx.tasks.strings.splits import rft_chunk

RL_RUN_WILDCARD = "|".join(RL_RUNS)
STAGE1 = "stage1"
RFT_ITER = re.compile(r"^rft_level2_iter(\d+)$")
WILDCARD_RUN = "{run}"                       # an RL run left as the rules' wildcard
SCRATCH_BASE = paths.fill(paths.MODEL, model="base")  # the tiny base pretrain_base writes (model.source: scratch)
# Stage 2 (paper Section 3.2): RL from the Stage-1 model on each train split of rl.runs
STRING_LINEAGE = RLLineage("string", prefix="", init=STAGE1, rule="rl", runs=lambda config: config["rl"]["runs"])


def rft_iterations(config: Mapping) -> int:
    return config["data"]["rft_chunks"]


def rft_model(i: int) -> str:
    """Iteration ``i`` of the iterative-RFT baseline."""
    return f"rft_level2_iter{i}"


def rl_lineages() -> dict[str, RLLineage]:
    """Every RL lineage by name: the study's (``string``) and those the task families add."""
    found = {STRING_LINEAGE.name: STRING_LINEAGE}
    for family in families():
        for lineage in family.rl_lineages:
            if lineage.name in found:
                raise ValueError(f"RL lineage {lineage.name!r} of task family {family.name} exists already; rename it")
            found[lineage.name] = lineage
    return found


def _lineage(run: str, lineage: str) -> RLLineage:
    known = rl_lineages()
    if lineage not in known or run not in (*RL_RUNS, WILDCARD_RUN):
        raise ValueError(f"no RL model for lineage {lineage!r}, run {run!r}; lineages: "
                         f"{', '.join(known)}; runs: {', '.join(RL_RUNS)}")
    return known[lineage]


def rl_model(run: str, lineage: str = "string") -> str:
    """The RL model name of a lineage and train split: rl_level1 (string), rl_multi_level1 (multi)."""
    return f"rl_{_lineage(run, lineage).prefix}{run}"


def rl_dir(run: str, lineage: str = "string") -> str:
    """The name of an RL run's directory under results/rl/ (metrics, resumable work directory):
    level1 (string), multi_level1 (multi)."""
    return f"{_lineage(run, lineage).prefix}{run}"


def rl_models() -> dict[str, tuple[str, str]]:
    """Every RL model name with its (lineage, run): the one table model names are looked up in."""
    return {rl_model(run, lineage): (lineage, run) for lineage in rl_lineages() for run in RL_RUNS}


def rl_model_of_dir(name: str) -> str:
    """The RL model whose directory under results/rl/ is ``name`` (the inverse of rl_dir)."""
    models = {rl_dir(run, lineage): rl_model(run, lineage) for lineage in rl_lineages() for run in RL_RUNS}
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


def _study_models(config: Mapping) -> list[SFTModel]:
    """Stage 1 (SFT of the base on its own correct Level-1 rollouts) and the iterative-RFT baseline
    (iteration i: SFT of iteration i-1, the first from Stage 1, on its own correct rollouts of chunk i)."""
    models = [SFTModel(STAGE1, init="base", data=((Source("stage1", rollouts_of="base"), 1),),
                       settings=("stage1", "sft"))]
    for i in range(1, rft_iterations(config) + 1):
        prev = STAGE1 if i == 1 else rft_model(i - 1)
        models.append(SFTModel(rft_model(i), init=prev, data=((Source(rft_chunk(i), rollouts_of=prev), 1),),
                               settings=("rft_baseline", "sft")))
    return models


def sft_models(config: Mapping) -> dict[str, SFTModel]:
    """Every SFT (rejection fine-tuning) model the config can build, by name: the study's and the task
    families' (the Multi-Base of the transfer to Countdown, ...)."""
    found: dict[str, SFTModel] = {}
    for model in [*_study_models(config), *(m for family in families() for m in family.models(config))]:
        if model.name in found:
            raise ValueError(f"two SFT models are named {model.name!r}; rename one")
        found[model.name] = model
    return found


def sft_model_wildcard(config: Mapping) -> str:
    """The models rule rft_sft trains (its wildcard constraint)."""
    return "|".join(map(re.escape, sft_models(config)))


def sft_model(config: Mapping, model: str) -> SFTModel:
    recipe = sft_models(config).get(model)
    if recipe is None:
        raise ValueError(f"no SFT recipe for model {model!r}")
    return recipe


def source_path(config: Mapping, source: Source) -> str:
    """The file a Source names: a problem set, or a model's filtered rollouts on it."""
    return rft_data(source.rollouts_of, source.split) if source.rollouts_of else data_path(config, source.split)


def sft_sources(config: Mapping, model: str) -> dict[str, str]:
    """Which model and which file an SFT (RFT) model is trained from: its one source, or the merge of its
    sources (rule mix_sft_data)."""
    recipe = sft_model(config, model)
    data = (source_path(config, recipe.data[0][0]) if len(recipe.data) == 1
            else paths.fill(paths.RFT_MIX, model=model))
    return {"init": model_dir(config, recipe.init), "data": data}


def _mixed(config: Mapping, model: str) -> SFTModel:
    recipe = sft_models(config).get(model)
    if recipe is None or len(recipe.data) < 2:
        mixed = [name for name, m in sft_models(config).items() if len(m.data) > 1]
        raise ValueError(f"no merged SFT data for model {model!r}; known: {', '.join(mixed)}")
    return recipe


def sft_mix_sources(config: Mapping, model: str) -> list[str]:
    """The files whose rows are merged into one SFT data set (rule mix_sft_data)."""
    return [source_path(config, source) for source, _ in _mixed(config, model).data]


def sft_mix_repeats(config: Mapping, model: str) -> list[int]:
    """How many times each source of a merged SFT data set repeats (aligned with sft_mix_sources)."""
    return [repeats for _, repeats in _mixed(config, model).data]


def rl_sources(config: Mapping, model: str) -> dict[str, str]:
    """Init model, train split and held-out split of an RL model. Every lineage runs the study's RL
    (the same rl: settings); it chooses the starting checkpoint and the problem sets."""
    if model not in rl_models():
        prefixes = ", ".join(f"rl_{lineage.prefix}<run>" for lineage in rl_lineages().values())
        raise ValueError(f"{model!r} is not an RL model ({prefixes})")
    name, run = rl_models()[model]
    lineage = rl_lineages()[name]
    return {"init": model_dir(config, lineage.init), "train": data_path(config, lineage.train.format(run=run)),
            "val": data_path(config, lineage.val)}
