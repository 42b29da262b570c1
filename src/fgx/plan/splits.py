"""The problem sets: which task family generates each split (fgx.tasks.registry), where its file lies,
its generator's command line and seed, which splits the leakage check compares and the base pretrains on,
and the many-samples subset of the test set."""

from __future__ import annotations

from typing import Mapping

from fgx.plan import paths
from fgx.seeds import derive_seed, dumps
from fgx.tasks.registry import all_splits, families, split_owner

# The first prompts of each test level, sampled many times for pass@k at large k (evaluate.many_samples)
TEST_MANY = "test_many"
# the many-samples subset's file (rule select_prompts)
TEST_MANY_DATA = paths.fill(paths.SUBSET_DATA, split=TEST_MANY)


def family_splits(config: Mapping, family: str) -> list[str]:
    """Every split task family ``family`` generates for the config, in the DAG's order."""
    return [name for name, (owner, _) in all_splits(config).items() if owner.name == family]


def split_info(config: Mapping, split: str):
    """The fgx.tasks.family.Split of ``split`` (its role, exclusions, sampling sections)."""
    found = all_splits(config).get(split)
    if found is None:
        split_owner(config, split)  # the error naming the splits there are
    return found[1]


def _leakage_splits(config: Mapping, held_out: bool) -> list[str]:
    return [name for name, (owner, split) in all_splits(config).items()
            if owner.checks_leakage and (split.role == "eval") == held_out]


def eval_splits(config: Mapping) -> list[str]:
    """The held-out splits the leakage check compares with the training splits (those of the families
    that check leakage: for the string task, the test and validation sets and, where the config asks
    for them, the test sets over the train functions and of full-trace prompts)."""
    return _leakage_splits(config, held_out=True)


def training_splits(config: Mapping) -> list[str]:
    """Splits a model may learn from (the leakage check compares the held-out splits against these)."""
    return _leakage_splits(config, held_out=False)


def pretrain_splits(config: Mapping) -> list[str]:
    """The tiny base model's pretraining data (model.source: scratch), every family's: for the string
    task Level-1 traces of all 25 functions, plus (if data.pretrain_prior_problems > 0) the prior's
    nested traces, one of the 25 among builtin methods and helpers, and (if data.pretrain_step_problems
    > 0) first-step problems: compositions of the 25 functions answered with their first reduction step
    only (a call computed inside a longer expression, never a composition evaluated)."""
    return [name for name, (_, split) in all_splits(config).items() if split.role == "pretrain"]


def generate_seed(config: Mapping, split: str) -> int:
    """The seed a split's generator draws with (its family's seed name, the split's name)."""
    return derive_seed(config["seed"], split_owner(config, split).seed_name, split)


def generate_exclusions(config: Mapping, split: str) -> list[str]:
    """The files whose expressions a split must not contain (its Split's ``excludes``: inputs of its job)."""
    return [data_path(config, s) for s in split_info(config, split).excludes]


def generate_args(config: Mapping, split: str) -> str:
    """The generator's command-line arguments for one split (its family's ``generate_args``)."""
    family = split_owner(config, split)
    return family.generate_args(config, split, generate_seed(config, split), generate_exclusions(config, split))


def data_path(config: Mapping, split: str) -> str:
    """The problem file of a split, as rollout/evaluate read it: the file the config points its family at
    instead (``data.external``), or the one the DAG generates."""
    if split == TEST_MANY:
        return TEST_MANY_DATA
    family = split_owner(config, split)
    return family.external(config).get(split) or paths.fill(paths.DATA, family=family.name, split=split)


def check_external_files(config: Mapping) -> None:
    """Check every file the config points a split at (``data.external``) against the task contract, every
    row of it, before any job runs."""
    from fgx.tasks.contract import check_problem_file

    for family in families():
        for split, path in family.external(config).items():
            if path:
                check_problem_file(path, f"data.external.{split} problem set")


def many_samples_enabled(config: Mapping) -> bool:
    m = config["evaluate"]["many_samples"]
    return m["prompts_per_level"] > 0 and bool(m["models"])


def many_samples_settings(config: Mapping) -> str:
    """Which test prompts the large-k evaluation samples (rule select_prompts)."""
    m = config["evaluate"]["many_samples"]
    return dumps({"levels": m["levels"], "per_level": m["prompts_per_level"]})


def asks_for(config: Mapping, split: str) -> bool:
    """Whether the config asks for problem set ``split``."""
    return split in all_splits(config)
