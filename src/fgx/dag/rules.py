"""What the rules call: the config bound once, every method a Snakemake input or params function
of the job's ``wildcards`` (rules only wire files; every decision is in fgx.plan and in
:mod:`fgx.dag.targets`)."""

from __future__ import annotations

from typing import Callable, Mapping

from fgx.dag import targets
from fgx.plan import comparisons, models, params, paths, splits
from fgx.tasks.family import RLLineage, TaskFamily
from fgx.tasks.registry import families


class Plan:
    """``plan = Plan(config)`` in rules/common.smk; ``input: plan.data``, ``params: settings=plan.eval_settings``."""

    def __init__(self, config: Mapping):
        self.config = config
        # the torch sampler's GPU shapes (config compute:), a sampling or RL job's resources: a change
        # reruns nothing, and a profile's set-resources can override them per machine
        self.gpu_slots = config["compute"]["gpu_slots"]
        self.gpu_chunk_prompts = config["compute"]["gpu_chunk_prompts"]

    # targets
    def all_targets(self, wildcards=None) -> list[str]:
        """Every planned figure, the leakage report, the sample browser, the findings (rule all)."""
        return [*targets.figure_targets(self.config), paths.LEAKAGE, paths.SAMPLE_BROWSER, paths.FINDINGS]

    # problem sets: one generate rule per task family (rules/data.smk)
    def task_families(self) -> tuple[TaskFamily, ...]:
        return families()

    def generate_args(self, wildcards) -> str:
        return splits.generate_args(self.config, wildcards.split)

    def generate_exclusions(self, wildcards) -> list[str]:
        return splits.generate_exclusions(self.config, wildcards.split)

    def leakage_test(self, wildcards) -> list[str]:
        return [splits.data_path(self.config, s) for s in splits.eval_splits(self.config)]

    def leakage_train(self, wildcards) -> list[str]:
        return [splits.data_path(self.config, s) for s in splits.training_splits(self.config)]

    def test_data(self, wildcards) -> str:
        return splits.data_path(self.config, "test")

    def many_samples_settings(self, wildcards) -> str:
        return splits.many_samples_settings(self.config)

    def data(self, wildcards) -> str:
        """The problem file of ``{split}``."""
        return splits.data_path(self.config, wildcards.split)

    # models
    def model(self, wildcards) -> str:
        """The directory of ``{model}``."""
        return models.model_dir(self.config, wildcards.model)

    def pretrain_data(self, wildcards) -> list[str]:
        return [splits.data_path(self.config, s) for s in splits.pretrain_splits(self.config)]

    def pretrain_settings(self, wildcards) -> str:
        return params.pretrain_settings(self.config)

    def sft_init(self, wildcards) -> str:
        return models.sft_sources(self.config, wildcards.model)["init"]

    def sft_data(self, wildcards) -> str:
        return models.sft_sources(self.config, wildcards.model)["data"]

    def sft_settings(self, wildcards) -> str:
        return params.sft_settings(self.config, wildcards.model)

    def mix_sources(self, wildcards) -> list[str]:
        return models.sft_mix_sources(self.config, wildcards.model)

    def mix_settings(self, wildcards) -> str:
        return params.sft_mix_settings(self.config, wildcards.model)

    def sft_model_wildcard(self) -> str:
        return models.sft_model_wildcard(self.config)

    # RL: one rule per lineage (rules/rl.smk)
    def rl_lineages(self) -> list[RLLineage]:
        return list(models.rl_lineages().values())

    def rl_inputs(self, lineage: str) -> Callable:
        """init, train and val of the lineage's RL model of {run} (unpack)."""
        return lambda wildcards: models.rl_sources(self.config, models.rl_model(wildcards.run, lineage))

    def rl_settings(self, lineage: str) -> Callable:
        return lambda wildcards: params.rl_settings(self.config, wildcards.run, lineage)

    # sampling, filtering, metrics
    def rollout_settings(self, wildcards) -> str:
        return params.sampling_settings(self.config, "rollout", wildcards.model, wildcards.split)

    def eval_settings(self, wildcards) -> str:
        return params.sampling_settings(self.config, "eval", wildcards.model, wildcards.split)

    def filter_settings(self, wildcards) -> str:
        return params.filter_settings(self.config, wildcards.split)

    def metrics_settings(self, wildcards) -> str:
        return params.metrics_settings(self.config, wildcards.split)

    # figures and analyses
    def figure_inputs(self, wildcards) -> list[str]:
        return targets.figure_inputs(self.config, wildcards.figure)

    def figure_settings(self, wildcards) -> str:
        return targets.figure_settings(self.config, wildcards.figure)

    def browser_inputs(self, wildcards) -> list[str]:
        return [paths.fill(paths.EVAL, model=m, split="test") for m in comparisons.failure_mode_models(self.config)]

    def browser_settings(self, wildcards) -> str:
        return params.browser_settings(self.config)

    def findings_inputs(self, wildcards) -> list[str]:
        return targets.findings_inputs(self.config)

    def family_findings_inputs(self, wildcards) -> list[str]:
        return targets.family_findings_inputs(self.config, wildcards.family)
