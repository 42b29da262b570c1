"""The settings each DAG job receives, as typed objects both engines read.

A job's settings are JSON built by :mod:`fgx.plan.params` from config.yaml: one config section (its keys
unchanged) plus the runtime keys every job carries (:class:`Runtime`). The dataclasses below name
their fields exactly as the config keys, have no defaults (config.yaml is the one layer of
defaults) and refuse a missing or unknown key, naming it. ``tests/test_settings.py`` checks every
field list against the schema, so a key cannot exist in one and not the other.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any, Mapping


class SettingsError(ValueError):
    """A job's settings lack a key, or carry one nothing reads."""


_TYPES = {"int": "an integer", "float": "a number", "str": "a string", "bool": "true or false",
          "dict": "a mapping", "int | None": "an integer or null", "list[int]": "a list of integers"}


def _is(value, kind: str) -> bool:
    if kind == "int | None":
        return value is None or _is(value, "int")
    if kind == "list[int]":
        return isinstance(value, list) and all(_is(v, "int") for v in value)
    if kind == "float":
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    want = {"int": int, "str": str, "bool": bool, "dict": dict}[kind]
    return isinstance(value, want) and not (want is int and isinstance(value, bool))


def check_types(settings: Mapping[str, Any], where: str, **kinds: str) -> None:
    """Refuse a value of the wrong type (``kinds``: key -> "int", "float", "str", "bool", "dict",
    "int | None" or "list[int]"), naming the key, so that it does not fail later with a traceback
    or, worse, run (a string where a list belongs is iterated one character at a time)."""
    for key, kind in kinds.items():
        if key in settings and not _is(settings[key], kind):
            import json

            raise SettingsError(f"--settings key {key!r} ({where}): got {json.dumps(settings[key], default=str)}; "
                                f"expected {_TYPES[kind]}. Settings come from config.yaml (schemas/config.schema.yaml "
                                "types every key): fix the value there, or the JSON.")


def _build(cls, settings: Mapping[str, Any], where: str, ignore: tuple[str, ...] = ()):
    names = [f.name for f in dataclasses.fields(cls)]
    missing = [n for n in names if n not in settings]
    unknown = sorted(set(settings) - set(names) - set(ignore))
    if missing or unknown:
        parts = ([f"missing {', '.join(missing)}"] if missing else []) + \
                ([f"unknown {', '.join(unknown)}"] if unknown else [])
        raise SettingsError(f"{where} settings: {'; '.join(parts)}. They come from config.yaml "
                            f"(schemas/config.schema.yaml lists every key); rerun through Snakemake or fix the JSON.")
    check_types(settings, f"{where} settings", **{f.name: f.type for f in dataclasses.fields(cls) if f.type in _TYPES})
    return cls(**{n: settings[n] for n in names})


@dataclass(frozen=True)
class Runtime:
    """Keys every job carries besides its section: which engine and device run it, its seed, its
    thread count (from Snakemake's ``{threads}``, never a rerun trigger) and the verl machine knobs."""

    engine: str
    device: str
    seed: int
    threads: int | None
    verl: dict
    tensor_parallel_size: int

    @classmethod
    def from_settings(cls, settings: Mapping[str, Any]) -> "Runtime":
        check_types(settings, "runtime", **{f.name: f.type for f in dataclasses.fields(cls)})
        return cls(engine=settings["engine"], device=settings["device"], seed=int(settings["seed"]),
                   threads=settings.get("threads"), verl=dict(settings["verl"]),
                   tensor_parallel_size=int(settings["tensor_parallel_size"]))


RUNTIME_KEYS = tuple(f.name for f in dataclasses.fields(Runtime))


class _Section:
    """A config section a job receives with the runtime keys beside it."""

    @classmethod
    def from_settings(cls, settings: Mapping[str, Any]):
        return _build(cls, settings, cls.__name__, RUNTIME_KEYS)


@dataclass(frozen=True)
class ModelShape:
    """config ``base.model``: the tiny Llama's architecture (Hugging Face names)."""

    hidden_size: int
    num_hidden_layers: int
    num_attention_heads: int
    num_key_value_heads: int
    intermediate_size: int
    max_position_embeddings: int


@dataclass(frozen=True)
class PretrainTrain:
    """config ``base.train``."""

    steps: int
    batch_size: int
    lr: float
    warmup_steps: int
    weight_decay: float


@dataclass(frozen=True)
class Pretrain:
    """The ``pretrain_base`` job: ``base.model`` and ``base.train``."""

    model: ModelShape
    train: PretrainTrain

    @classmethod
    def from_settings(cls, settings: Mapping[str, Any]) -> "Pretrain":
        _build(cls, settings, "pretraining", RUNTIME_KEYS)
        return cls(model=_build(ModelShape, settings["model"], "pretraining (base.model)"),
                   train=_build(PretrainTrain, settings["train"], "pretraining (base.train)"))


@dataclass(frozen=True)
class Sampling(_Section):
    """``stage1.rollout``, ``rft_baseline.rollout``, ``evaluate`` (its sampling keys) and
    ``countdown.evaluate``: samples per prompt at a temperature, up to a token budget."""

    n: int
    temperature: float
    max_new_tokens: int


@dataclass(frozen=True)
class SFT(_Section):
    """``stage1.sft``, ``rft_baseline.sft``, ``countdown.sft``: supervised fine-tuning on responses."""

    epochs: int
    batch_size: int
    lr: float
    max_length: int


@dataclass(frozen=True)
class RL(_Section):
    """config ``rl`` (without ``runs``, which the DAG plans): one RL run of either engine."""

    algorithm: str
    reward: str
    steps: int
    batch_size: int
    group_size: int
    lr: float
    kl_coef: float
    entropy_coef: float
    loss_agg_mode: str
    dynamic_sampling: bool
    max_generation_batches: int
    temperature: float
    max_new_tokens: int
    overlong_buffer: int
    eval_every: int
    save_every: int


# which config section each job dataclass mirrors (tests/test_settings.py compares them with the schema)
CONFIG_SECTIONS = {
    ModelShape: ("base", "model"), PretrainTrain: ("base", "train"), Sampling: ("stage1", "rollout"),
    SFT: ("stage1", "sft"), RL: ("rl",),
}
