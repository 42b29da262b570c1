"""Engines: what runs a DAG job's pretraining, sampling, fine-tuning and RL.

An engine is one class that implements :class:`Engine` (a Protocol), named in :data:`fgx.settings.ENGINES`:
the four operations the DAG's scripts call, each taking the job's settings as :mod:`fgx.plan.params` builds
them and writing the same files (docs/architecture.md), and what the DAG asks of it before any job runs:
the environment file its sampling and training jobs use, the GPUs each asks for, whether its RL jobs take
turns on a host, and the settings it reads. Its knobs, if it has any, are the config section named after
it (``verl:``). :func:`engine_class` holds a registered class to the protocol before the DAG or a job uses
it (:func:`protocol_problems`), so an engine that lacks an operation is named, not found out hours in.

Adding an engine: a module whose class implements :class:`Engine` (anywhere on the jobs' ``PYTHONPATH``:
``src/fgx/engines/<name>/`` or beside ``fgx`` in ``src/``) and one line in :data:`fgx.settings.ENGINES`;
its ``env_file`` may be one that exists (``envs/torch.yaml``) or its own. Nothing in rules/, plan/ or
dag/ names an engine.
"""

from __future__ import annotations

import importlib
import inspect
import typing
from pathlib import Path
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

    def rl(self, model_dir, train_path, val_path, out_dir, metrics_path, work_dir, settings: Mapping[str, Any], *,
           validation_path=None) -> Any:
        """RL from ``model_dir`` on ``train_path``, validated on ``val_path``: ``out_dir``, ``metrics_path`` and
        (given ``validation_path``) the held-out samples' correct counts (:mod:`fgx.engines.validation`)."""


REPO_DIR = Path(__file__).resolve().parents[3]  # env_file is relative to the checkout
_DECLARATIONS = {name: typing.get_args(tp)[0] for name, tp in typing.get_type_hints(Engine).items()}
_CALLS = [name for name, value in vars(Engine).items() if not name.startswith("_") and callable(
    value.__func__ if isinstance(value, staticmethod) else value)]


def _callable_as(want: inspect.Signature, have: inspect.Signature) -> bool:
    """Whether a function of signature ``have`` takes every call one of ``want`` takes: as many positional
    arguments (names are the implementer's), the same keyword-only ones, nothing else required."""
    positional = sum(p.kind is p.POSITIONAL_OR_KEYWORD for p in want.parameters.values())
    keywords = {p.name for p in want.parameters.values() if p.kind is p.KEYWORD_ONLY}
    takes = list(have.parameters.values())
    by_position = [p for p in takes if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    any_position = any(p.kind is p.VAR_POSITIONAL for p in takes)
    any_keyword = any(p.kind is p.VAR_KEYWORD for p in takes)
    if len(by_position) < positional and not any_position:
        return False
    if any(p.default is p.empty for p in by_position[positional:]):
        return False
    named = {p.name: p for p in by_position[positional:] + [p for p in takes if p.kind is p.KEYWORD_ONLY]}
    if any(k not in named and not any_keyword for k in keywords):
        return False
    return all(p.default is not p.empty or p.name in keywords for p in named.values())


def protocol_problems(cls: type, name: str) -> list[str]:
    """How ``cls``, registered as engine ``name``, falls short of :class:`Engine`: a declaration missing or of
    another type (``name`` not the registry's, an ``env_file`` the checkout lacks), an operation or question
    missing, or one that cannot be called as the DAG calls it (as many positional parameters as the protocol's,
    its keyword-only ones by name; any other parameter needs a default)."""
    problems = []
    for attr, kind in _DECLARATIONS.items():
        value = getattr(cls, attr, None)
        if not isinstance(value, kind):
            problems.append(f"declaration {attr} must be a {kind.__name__}, found {value!r}")
    if getattr(cls, "name", name) != name:
        problems.append(f"declaration name is {cls.name!r}, registered as {name!r}")
    if isinstance(getattr(cls, "env_file", None), str) and not (REPO_DIR / cls.env_file).is_file():
        problems.append(f"env_file {cls.env_file} is not a file of the checkout")
    for op in _CALLS:
        if not callable(getattr(cls, op, None)):
            problems.append(f"no {op}()")
            continue
        if not _callable_as(inspect.signature(getattr(Engine, op)), inspect.signature(getattr(cls, op))):
            problems.append(f"{op}{inspect.signature(getattr(cls, op))} cannot be called as "
                            f"{op}{inspect.signature(getattr(Engine, op))}")
    return problems


def engine_class(name: str) -> type[Engine]:
    """The class of the engine config key ``engine`` names (its module imported now, not before), held to
    the protocol: an engine that lacks what the DAG calls or asks is named here, with each shortfall."""
    if name not in ENGINES:
        raise ValueError(f"engine {name!r} unknown; set config 'engine' to one of {', '.join(ENGINES)}")
    module, _, attr = ENGINES[name].partition(":")
    cls = getattr(importlib.import_module(module), attr)
    problems = protocol_problems(cls, name)
    if problems:
        raise TypeError(f"engine {name!r} ({ENGINES[name]}, fgx.settings.ENGINES) does not implement "
                        f"fgx.engines.Engine: {'; '.join(problems)}")
    return cls


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
