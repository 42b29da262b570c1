"""Engines: what runs a DAG job's pretraining, sampling, fine-tuning and RL.

An engine is one class (:class:`Engine`, a Protocol) named in :data:`fgx.settings.ENGINES`: the four operations the
DAG's scripts call, each taking the job's settings as :mod:`fgx.plan.params` builds them and writing the
same files (docs/architecture.md), and what the DAG asks of it before any job runs: the environment file
its sampling and training jobs use, the GPUs each asks for, whether its RL jobs take turns on a host, and
the settings it reads. Its knobs, if it has any, are the config section named after it (``verl:``).

Adding an engine: a package ``fgx/engines/<name>/`` whose class implements :class:`Engine`, one line in
:data:`fgx.settings.ENGINES` (the config's ``engine`` choices and this registry), its ``envs/<name>.yaml``,
and its config section if it has knobs (declared in :mod:`fgx.settings`). Nothing in rules/ or plan/ names
an engine.
"""

from __future__ import annotations

import importlib
from typing import Any, ClassVar, Mapping, Protocol

from fgx.settings import ENGINES  # the registry, declared with every other list of allowed values


class Engine(Protocol):
    """What the DAG calls and what it asks of an engine. Every operation takes a ``work_dir`` outside the job's
    declared outputs (resume state) and the job's ``settings``; outputs are written atomically."""

    name: ClassVar[str]
    env_file: ClassVar[str]             # its sampling and training jobs' conda environment, relative to the repo
    one_rl_job_per_host: ClassVar[bool]  # its RL jobs take turns on a host (the rl rule's ``verl_rl`` resource)

    @staticmethod
    def gpus_per_job(config: Mapping) -> int:
        """GPUs a sampling or training job asks for (the rules' ``gpu`` resource; profiles may set more)."""

    @staticmethod
    def job_settings(config: Mapping) -> dict:
        """The settings every job of this engine reads besides its section's: ``tensor_parallel_size``."""

    def pretrain(self, data_paths, out_dir, work_dir, settings: Mapping[str, Any]) -> Any:
        """The tiny base from scratch (``model.source: scratch``): a Hugging Face directory ``out_dir``."""

    def sample(self, model_dir, rows, out_path, work_dir, settings: Mapping[str, Any]) -> Any:
        """``n`` scored samples per prompt row (a parquet path or a frame), written to ``out_path``."""

    def sft(self, model_dir, data_path, out_dir, work_dir, settings: Mapping[str, Any]) -> Any:
        """Supervised fine-tuning on the responses of ``data_path``: a Hugging Face directory ``out_dir``."""

    def rl(self, model_dir, train_path, val_path, out_dir, metrics_path, work_dir,
           settings: Mapping[str, Any]) -> Any:
        """RL from ``model_dir`` on ``train_path``, validated on ``val_path``: ``out_dir`` and ``metrics_path``."""


def engine_class(name: str) -> type[Engine]:
    """The class of the engine config key ``engine`` names (its module imported now, not before)."""
    if name not in ENGINES:
        raise ValueError(f"engine {name!r} unknown; set config 'engine' to one of {', '.join(ENGINES)}")
    module, _, cls = ENGINES[name].partition(":")
    return getattr(importlib.import_module(module), cls)


def get_engine(name: str) -> Engine:
    """An instance of the engine ``name``."""
    return engine_class(name)()


def engine_settings(config: Mapping) -> dict:
    """What every job carries about the engine that runs it: its name, the device, what the engine declares
    it reads (:meth:`Engine.job_settings`), and each engine's config section under its name, empty but the
    running engine's: one shape of settings whichever engine runs, so that a knob of one engine reruns that
    engine's jobs only."""
    engine = engine_class(config["engine"])
    sections = {name: config[name] if name == engine.name else {} for name in ENGINES if name in config}
    return {"engine": engine.name, "device": config["device"], **sections, **engine.job_settings(config)}
