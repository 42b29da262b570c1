"""The task plug-in: what a task family declares, in one record the DAG and the analyses look up.

A task family (the string functions, Countdown, ...) is one package that exposes ``FAMILY``, a
:class:`TaskFamily`, and one line of :data:`fgx.tasks.registry.FAMILIES`. The record says what fgx needs
to know of the family and nothing else: the data sources it scores, the problem sets it generates and how
(``splits``, ``generate_args``), how a row's ground truth is checked, its reward (the package's
``compute_score``), how the leakage check compares its expressions, its config section, and what it adds
to the study: models trained on its data, figures, findings rows, a failure-mode classifier. fgx.plan,
the rules, the leakage check, the findings and the sample browser read these fields and never test a
family's name.

Everything here is plain data or a function of the config returning plain data (split and model names,
config keys): a family package imports nothing above fgx.tasks (the plan turns names into paths), so
the plan can read every record without an import cycle.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Mapping, Sequence

# what a problem set is for: pretraining data of the tiny base, training data (RFT, RL), or held out
ROLES = ("pretrain", "train", "eval")


class GroundTruthError(ValueError):
    """A row's ground truth is not what its family writes: ``field`` names the key (``ref_output``,
    ``numbers[2]``), the message what it holds and what it should."""

    def __init__(self, field: str, problem: str):
        super().__init__(f"{field}: {problem}")
        self.field, self.problem = field, problem


def json_object(ground_truth: Any, want: str) -> dict:
    """A row's ``reward_model.ground_truth`` as a dict: JSON text (str or bytes) or a dict; GroundTruthError
    naming ``want`` (what it should be) otherwise (for a family's ``check_ground_truth``)."""
    import json

    if isinstance(ground_truth, bytes):
        ground_truth = ground_truth.decode("utf-8", "replace")
    if isinstance(ground_truth, str):
        try:
            ground_truth = json.loads(ground_truth)
        except ValueError:
            raise GroundTruthError("reward_model.ground_truth", f"is not JSON text; want {want}") from None
    if not isinstance(ground_truth, dict):
        raise GroundTruthError("reward_model.ground_truth", f"is a JSON {type(ground_truth).__name__}; want {want}")
    return ground_truth


@dataclass(frozen=True)
class Split:
    """One problem set of a family, as the DAG sees it.

    ``role``: one of :data:`ROLES`. ``excludes``: the splits whose expressions it must not contain (their
    files are inputs of its generator, which receives their paths). ``rollout``: the config section
    (``stage1`` or ``rft_baseline``) whose ``rollout`` and ``filter`` settings sample a model on it for
    rejection fine-tuning (None: no model is sampled on it for training). ``evaluate``: the config keys of
    the sampling settings its evaluations use (``("evaluate",)``, ``("countdown", "evaluate")``)."""

    role: str
    excludes: tuple[str, ...] = ()
    rollout: str | None = None
    evaluate: tuple[str, ...] = ("evaluate",)

    def __post_init__(self):
        if self.role not in ROLES:
            raise ValueError(f"split role {self.role!r}: use one of {', '.join(ROLES)}")


@dataclass(frozen=True)
class Source:
    """A file of the DAG named by what makes it: the problem set ``split`` itself, or (``rollouts_of``) the
    filtered rollouts of that model on it (rule filter_rollouts)."""

    split: str
    rollouts_of: str | None = None


@dataclass(frozen=True)
class SFTModel:
    """A model a family adds: supervised fine-tuning of ``init`` on ``data``, one (Source, repeats) per
    file (several files are merged first, each repeated so many times: rule mix_sft_data), with the SFT
    settings under the config keys ``settings`` (``("countdown", "sft")``)."""

    name: str
    init: str
    data: tuple[tuple[Source, int], ...]
    settings: tuple[str, ...]


@dataclass(frozen=True)
class RLLineage:
    """RL runs a family adds: models ``rl_<prefix><run>`` started from ``init``, trained with the config's
    ``rl:`` settings on the problem set ``train.format(run=run)`` (``level1``, ...), validated on ``val``, for
    ``steps(config)`` steps where that is not None (else ``rl.steps``); ``runs(config)``: the runs the
    config asks for (each one of fgx.settings.RL_RUNS); rule ``rule`` (logs/<rule>/<run>.log)."""

    name: str
    prefix: str
    init: str
    rule: str
    runs: Callable[[Mapping], Sequence[str]]
    train: str = "{run}"
    val: str = "val"
    steps: Callable[[Mapping], int | None] = lambda config: None


@dataclass(frozen=True)
class Findings:
    """The findings rows a family adds to results/analysis/findings.md and the README's results table.

    ``check``: ``"module:function"``, a function of the figure tables (``{figure: DataFrame}``) returning
    one row per finding: ``finding``, ``paper``, ``measured``, ``verdict`` and ``short`` (the verdict and
    key number in the README's table cell). ``tables``: the figure tables it reads. ``readme``: the README
    row name and paper column of each row, in the order ``check`` returns them."""

    check: str
    tables: tuple[str, ...]
    readme: tuple[tuple[str, str], ...]


@dataclass(frozen=True)
class ConfigSection:
    """A family's own config section: its key, the dataclass declaring its keys (fields made with
    :func:`fgx.settings.knob`) and a one-line description."""

    key: str
    settings: type
    doc: str


def _no_models(config: Mapping) -> list[SFTModel]:
    return []


def _nothing_external(config: Mapping) -> dict[str, str | None]:
    return {}


def _no_problems(config: Mapping) -> list[str]:
    return []


@dataclass(frozen=True, eq=False)  # one record per family: compared (and hashed) by identity
class TaskFamily:
    """Everything fgx knows of one task family (see the module docstring).

    - ``name``: its problem sets' directory (results/data/<name>/) and rule (generate_<name>).
    - ``package``: the module that exposes ``compute_score(data_source, solution_str, ground_truth,
      extra_info=None)`` (verl's custom-reward signature) and ``FAMILY``.
    - ``data_source_prefix``: the ``data_source`` of every row it writes starts with it.
    - ``splits(config)``: ``{name: Split}``, every problem set the config asks for, in the DAG's order.
    - ``generate_args(config, split, seed, excluded)``: the generator's command-line arguments for one split
      (``excluded``: the files of its ``excludes``), without ``--out``; ``generate_command``: the command
      that takes them (a script on the rules' PATH, or ``python -m <package> generate``).
    - ``seed_name``: the name a split's seed is derived under (``derive_seed(seed, seed_name, split)``).
    - ``check_ground_truth(ground_truth)``: raise GroundTruthError on a row's ``reward_model.ground_truth``
      that is not what the family writes (every field, its type); return nothing.
    - ``leakage_keys(rows)``: per row of a frame of its rows, ``(key, stage)``: the normalised expression the
      leakage check compares, and 1 for a row that teaches an atom (a Level-1 overlap with such a row is
      expected) else 0. ``checks_leakage``: whether rule check_leakage compares its held-out sets with its
      training sets.
    - ``config``: its own config section, if it has one; ``external(config)``: ``{split: file or None}``, the
      splits a config points at an existing file instead of generating them.
    - ``models(config)``, ``rl_lineages``: models trained on its data (SFT) and RL runs it adds.
    - ``figures``: ``{figure: module}``, the figures it adds (each module declares ``SPEC``, fgx.plan.figures);
      ``findings``: the findings rows it adds; ``failure_modes``: the module of its failure-mode classifier
      (``CATEGORIES``, ``FAILURES``, ``CORRECT``, ``classify_eval(rows, level, style, source)``), if any.
    - ``generate_minutes``: the generate job's time limit.
    - ``check_config(config)``: the cross-key rules of its section that a schema cannot say, one readable
      problem each (``key 'arithmetic.transfer_levels': got ...; ...``), checked with the rest of the config
      before any job; its keys' types and bounds are already checked."""

    name: str
    package: str
    data_source_prefix: str
    splits: Callable[[Mapping], Mapping[str, Split]]
    generate_args: Callable[[Mapping, str, int, Sequence[str]], str]
    check_ground_truth: Callable[[Any], None]
    leakage_keys: Callable[[Any], list[tuple[str, int]]]
    generate_command: str = ""
    seed_name: str = "data"
    checks_leakage: bool = True
    config: ConfigSection | None = None
    external: Callable[[Mapping], Mapping[str, str | None]] = _nothing_external
    models: Callable[[Mapping], Sequence[SFTModel]] = _no_models
    rl_lineages: tuple[RLLineage, ...] = ()
    figures: Mapping[str, str] = field(default_factory=dict)
    findings: Findings | None = None
    failure_modes: str | None = None
    generate_minutes: int = 10
    check_config: Callable[[Mapping], list[str]] = _no_problems

    @property
    def command(self) -> str:
        """The command the generate rule runs (arguments follow)."""
        return self.generate_command or f"python -m {self.package} generate"
