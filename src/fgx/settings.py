"""Every config key, declared once: its type, allowed values and a one-line description.

The dataclasses below mirror config.yaml section by section (:class:`Config` is the whole file but the
sections task families declare for themselves: fgx.tasks.family.ConfigSection, joined by fgx.knobs). A
field's annotation is its type and :func:`~fgx.schema.knob` its bounds, choices and description; they have no
defaults, because config.yaml is the one layer of defaults. ``python -m fgx.knobs --write`` turns them
into schemas/config.schema.yaml and the key tables of docs/knobs.md (a test keeps both equal to what
it writes), so a key cannot exist in one and not the other.

The same classes are the typed settings each DAG job receives: JSON built by :mod:`fgx.plan.params` from
config.yaml, one config section (its keys unchanged) plus the runtime keys every job carries
(:class:`Runtime`); a few light jobs receive settings of their own (:class:`Metrics`, ...). ``from_settings``
refuses a missing or unknown key, naming it, and a value of a type or choice its declaration does not allow,
in the words the config check uses (:mod:`fgx.schema`: one validator for config.yaml and for every job).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any, Mapping

from fgx import schema
from fgx.algos.rl import ALGORITHMS, LOSS_AGG_MODES
from fgx.schema import knob, knob_of

# What some keys allow, declared once here; the code that gives the values their meaning imports them
# (the RL objective's, torch-free, from fgx.algos.rl: its algorithms and loss aggregations; RL_RUNS, the
# Stage-2 train splits, below).
# The engines (config key ``engine``), the registry fgx.engines looks them up in: name -> "module:class" of
# its fgx.engines.Engine, imported only when asked for. A new engine is a module and a line here.
ENGINES = {
    "torch": "fgx.engines.torch:TorchEngine",
    "verl": "fgx.engines.verl:VerlEngine",
}
DEVICES = ("cpu", "cuda", "auto")                     # fgx.engines.torch.model.resolve_device
REWARDS = ("acc", "score")                            # fgx.tasks.reward
STYLES = ("compact", "paper")                         # every task family's prompt template (task.style)
ATTN_IMPLEMENTATIONS = ("flash_attention_2", "sdpa")  # fgx.engines.verl.commands


class SettingsError(ValueError):
    """A job's settings lack a key, carry one nothing reads, or hold a value out of range."""


def levels(doc: str) -> Any:
    """A [min, max] range of expression depths."""
    return knob(doc, each={"ge": 1, "le": 12}, min_items=2, max_items=2)


def _check(cls, settings: Mapping[str, Any], where: str) -> None:
    """Refuse a value of the wrong type or choice among the keys ``cls`` declares, naming the key, by the
    schema the declarations make and in the config check's words (:mod:`fgx.schema`): such a value would
    otherwise fail later with a traceback or, worse, run (a string where a list belongs is iterated one
    character at a time). The bounds are the config's, checked before any job; the engines run settings
    outside them when called as a library (greedy sampling at temperature 0)."""
    names = {f.name for f in dataclasses.fields(cls)}
    given = {k: v for k, v in settings.items() if k in names}
    problems = schema.problems(schema.types_only(schema.object_schema(cls, partial=True)), given)
    if problems:
        raise SettingsError(f"--settings ({where}): {'; '.join(problems)}. Settings come from config.yaml "
                            "(schemas/config.schema.yaml says what every key allows): fix the value there, or "
                            "the JSON.")


def _build(cls, settings: Mapping[str, Any], where: str, ignore: tuple[str, ...] = ()):
    names = [f.name for f in dataclasses.fields(cls)]
    optional = {f.name for f in dataclasses.fields(cls) if knob_of(f).optional}
    missing = [n for n in names if n not in settings and n not in optional]
    unknown = sorted(set(settings) - set(names) - set(ignore))
    if missing or unknown:
        parts = ([f"missing {', '.join(missing)}"] if missing else []) + \
                ([f"unknown {', '.join(unknown)}"] if unknown else [])
        raise SettingsError(f"{where} settings: {'; '.join(parts)}. They come from config.yaml "
                            f"(schemas/config.schema.yaml lists every key); rerun through Snakemake or fix the JSON.")
    _check(cls, settings, f"{where} settings")
    return cls(**{n: settings.get(n) for n in names})


class _Job:
    """Settings a job receives without the runtime keys (filters, metrics, the merges of data)."""

    @classmethod
    def from_settings(cls, settings: Mapping[str, Any]):
        return _build(cls, settings, cls.WHERE)

    @classmethod
    def check(cls, settings: Mapping[str, Any]) -> None:
        """Refuse a wrong value among the keys ``settings`` gives (a job that has defaults for the others)."""
        _check(cls, settings, cls.WHERE)


@dataclass(frozen=True)
class Runtime:
    """Keys every job carries besides its section: which engine and device run it, its seed, its
    thread count (from Snakemake's ``{threads}``, never a rerun trigger), the torch sampler's GPU
    shapes (``compute``'s machine keys, from the command line too; None: the job was given none) and the
    GPUs of one model instance; beside them each engine's config section, named after it and empty but the
    running engine's (:func:`fgx.engines.engine_settings`), which that engine reads."""

    engine: str = knob("the engine that runs the job", choices=ENGINES)
    device: str = knob("where the torch engine runs it", choices=DEVICES)
    seed: int = knob("the job's own seed (fgx.seeds: from config key seed and the job's name)", ge=0)
    threads: int | None = knob("torch threads (Snakemake's {threads}; left out: torch's default)", ge=1,
                               optional=True)
    gpu_slots: int | None = knob("the torch sampler's slots on a GPU (compute.gpu_slots, the job's --gpu-slots; left "
                                 "out: none given)", ge=1, optional=True)
    gpu_chunk_prompts: int | None = knob("prompts per sampling chunk on a GPU (compute.gpu_chunk_prompts, the job's "
                                         "--gpu-chunk-prompts; left out: none given)", ge=1, optional=True)
    tensor_parallel_size: int = knob("GPUs per model instance, as the engine declares (Engine.job_settings)", ge=1)

    @classmethod
    def from_settings(cls, settings: Mapping[str, Any]) -> "Runtime":
        _check(cls, settings, "runtime")
        return cls(engine=settings["engine"], device=settings["device"], seed=int(settings["seed"]),
                   threads=settings.get("threads"), gpu_slots=settings.get("gpu_slots"),
                   gpu_chunk_prompts=settings.get("gpu_chunk_prompts"),
                   tensor_parallel_size=int(settings["tensor_parallel_size"]))


# with each engine's config section, named after it (fgx.engines.engine_settings)
RUNTIME_KEYS = (*(f.name for f in dataclasses.fields(Runtime)), *ENGINES)
# the runtime keys that change how a job runs, never what it computes: no fingerprint or output holds them
MACHINE_RUNTIME_KEYS = ("threads", "gpu_slots", "gpu_chunk_prompts")


class _Section:
    """A config section a job receives with the runtime keys beside it."""

    @classmethod
    def from_settings(cls, settings: Mapping[str, Any]):
        return _build(cls, settings, cls.__name__, RUNTIME_KEYS)


# ----------------------------------------------------------------------------- model, task
@dataclass(frozen=True)
class Model:
    """config ``model``: where the base model comes from."""

    source: str = knob("scratch: pretrain the tiny Llama (rule pretrain_base); path: start from model.path",
                       choices=["scratch", "path"])
    path: str | None = knob("a local Hugging Face model directory (model.source: path); nothing is downloaded")
    tensor_parallel_size: int = knob("verl engine: GPUs per vLLM engine", ge=1)


@dataclass(frozen=True)
class Task:
    """config ``task``: how problems are written."""

    style: str = knob("compact: chain prompts answered step by step, for the tiny model; paper: upstream's code "
                      "prompt and JSON answer, for an LLM", choices=STYLES)
    max_value_len: int | None = knob("longest string any problem may produce along the way (null: no cap, as "
                                     "upstream)", ge=3)


# ----------------------------------------------------------------------------- data
@dataclass(frozen=True)
class External:
    """config ``data.external``: split -> an existing parquet file used instead of generating it."""

    stage1: str | None = knob("upstream-format parquet file for the Stage-1 split")
    level1: str | None = knob("upstream-format parquet file for the level1 train split")
    level2: str | None = knob("upstream-format parquet file for the level2 train split")
    level1to2: str | None = knob("upstream-format parquet file for the level1to2 train split")
    test: str | None = knob("upstream-format parquet file for the test split")
    val: str | None = knob("upstream-format parquet file for the validation split")


@dataclass(frozen=True)
class Data:
    """config ``data``: the problem sets, written to results/data/strings/."""

    pretrain_problems: int = knob("Level-1 problems of all 25 functions with their traces (model.source: "
                                  "scratch)", ge=1)
    pretrain_prior_problems: int = knob("nested traces with one of the 25 among builtin methods and helpers: the "
                                        "stand-in for an LLM's skill of evaluating nested code", ge=0)
    pretrain_prior_levels: list[int] = levels("[min, max] depth of those traces, min ≥ 2 (never two of the 25 "
                                              "composed)")
    pretrain_prior_level_shares: list[int] | None = knob(
        "traces per depth of pretrain_prior_levels in proportion (null: evenly)", each={"ge": 1}, min_items=1,
        forms="null (evenly) or one positive integer per depth of pretrain_prior_levels, e.g. [3, 3, 1, 1]")
    pretrain_step_problems: int = knob("compositions of the 25 answered with their first step only (0: none)", ge=0)
    pretrain_step_levels: list[int] = levels("[min, max] depth of those compositions, min ≥ 2")
    pretrain_step_unmarked: float = knob("share of them written without the '>' mark, so the base answers a "
                                         "composition after its first call", ge=0, le=1)
    stage1_problems: int = knob("Stage-1 RFT prompts: Level 1, all 25 functions", ge=1)
    stage2_train_problems: int = knob("problems per Stage-2 train split (level1, level2, level1to2), train "
                                      "functions only", ge=1)
    test_per_level: int = knob("held-out test prompts per level (eval functions)", ge=1)
    val_per_level: list[int] = knob("held-out prompts of each level of test_levels that RL validates on (one count per "
                                    "level, in order)", each={"ge": 1}, min_items=1)
    test_levels: list[int] = levels("[min, max] depth of the test and validation sets")
    test_train_funcs_per_level: int = knob("a second test set: new compositions of the train functions (0: none)",
                                           ge=0)
    test_train_funcs_levels: list[int] = levels("[min, max] depth of that set")
    test_full_trace_per_level: int = knob("a third test set: held-out prompts only a full trace solves (0: none)",
                                          ge=0)
    test_full_trace_levels: list[int] = levels("[min, max] depth of that set, min ≥ 2")
    rft_chunks: int = knob("iterative-RFT baseline: iterations, one fresh Level-2 chunk each", ge=1)
    rft_chunk_problems: int = knob("problems per chunk", ge=1)
    external: External = knob("split -> an existing parquet file of verl rows used instead of generating that "
                              "split (checked against the task contract before any job)", partial=True)


# ----------------------------------------------------------------------------- base model
@dataclass(frozen=True)
class ModelShape:
    """config ``base.model``: the tiny Llama's architecture (Hugging Face names)."""

    hidden_size: int = knob("width of the residual stream", ge=1)
    num_hidden_layers: int = knob("transformer blocks", ge=1)
    num_attention_heads: int = knob("query heads", ge=1)
    num_key_value_heads: int = knob("key/value heads (grouped-query attention)", ge=1)
    intermediate_size: int = knob("width of the MLP", ge=1)
    max_position_embeddings: int = knob("longest sequence in tokens", ge=1)


@dataclass(frozen=True)
class PretrainTrain:
    """config ``base.train``: pretraining's schedule."""

    steps: int = knob("optimizer steps; cosine decay to a tenth of lr after the warm-up", ge=1)
    batch_size: int = knob("sequences per step", ge=1)
    lr: float = knob("peak learning rate", gt=0)
    warmup_steps: int = knob("linear warm-up steps", ge=0)
    weight_decay: float = knob("AdamW weight decay", ge=0)


@dataclass(frozen=True)
class Base:
    """config ``base``: the tiny Llama (model.source: scratch)."""

    model: ModelShape = knob("its architecture")
    train: PretrainTrain = knob("its pretraining")


@dataclass(frozen=True)
class Pretrain:
    """The ``pretrain_base`` job: ``base.model`` and ``base.train``."""

    model: ModelShape = knob("base.model")
    train: PretrainTrain = knob("base.train")

    @classmethod
    def from_settings(cls, settings: Mapping[str, Any]) -> "Pretrain":
        _build(cls, settings, "pretraining", RUNTIME_KEYS)
        return cls(model=_build(ModelShape, settings["model"], "pretraining (base.model)"),
                   train=_build(PretrainTrain, settings["train"], "pretraining (base.train)"))


# ----------------------------------------------------------------------------- sampling, RFT
# n (sampling), rl.group_size and verl's --n are one concept: responses sampled per prompt. The keys
# keep their names (a renamed key would rerun every RL job); code reads it as ``samples_per_prompt``.
SAMPLES_PER_PROMPT = "samples per prompt (the concept rl.group_size names in RL)"


@dataclass(frozen=True)
class Sampling(_Section):
    """``stage1.rollout``, ``rft_baseline.rollout``, ``evaluate`` (its sampling keys) and
    ``countdown.evaluate``: samples per prompt at a temperature, up to a token budget."""

    n: int = knob(SAMPLES_PER_PROMPT, ge=1)
    temperature: float = knob("sampling temperature", gt=0, le=10)
    max_new_tokens: int = knob("response tokens at most", ge=1)

    @property
    def samples_per_prompt(self) -> int:
        return self.n


@dataclass(frozen=True)
class Filter(_Job):
    """``stage1.filter``, ``rft_baseline.filter``: which correct responses RFT keeps."""

    WHERE = "the filter"

    drop_all_solved: bool = knob("drop prompts every sample solves (upstream's option)")
    max_per_prompt: int = knob("distinct correct responses kept per prompt", ge=1)


@dataclass(frozen=True)
class SFT(_Section):
    """``stage1.sft``, ``rft_baseline.sft``, ``countdown.sft``: supervised fine-tuning on responses."""

    epochs: int = knob("passes over the data", ge=1)
    batch_size: int = knob("sequences per step", ge=1)
    lr: float = knob("learning rate", gt=0)
    max_length: int = knob("prompt + response tokens (longer examples are cut)", ge=1)


@dataclass(frozen=True)
class RFTStage:
    """``stage1`` and ``rft_baseline``: rejection fine-tuning (sample, keep the correct, fine-tune)."""

    rollout: Sampling = knob("sampling of the responses")
    filter: Filter = knob("which correct responses are kept")
    sft: SFT = knob("fine-tuning on them")


# ----------------------------------------------------------------------------- RL
RL_RUNS = ("level1", "level2", "level1to2")


@dataclass(frozen=True)
class RL(_Section):
    """config ``rl`` (without ``runs``, which the DAG plans): one RL run of either engine."""

    algorithm: str = knob(" | ".join(f"{name}: {words}" for name, words in ALGORITHMS.items()) +
                          " (one module of src/fgx/algos/rl each)", choices=ALGORITHMS)
    reward: str = knob("acc: 1 correct, 0 otherwise | score: compute_score's 1 / 0 / -1 (unparsable)",
                       choices=REWARDS)
    steps: int = knob("RL steps (a longer run resumes a shorter one's last checkpoint, torch)", ge=1)
    batch_size: int = knob("prompts per step, after dynamic sampling; one on-policy update per step", ge=1)
    group_size: int = knob("rollouts per prompt: samples per prompt (the concept n names in sampling, verl's "
                           "--n)", ge=2)
    lr: float = knob("constant learning rate", gt=0)
    kl_coef: float = knob("low-variance KL to the starting model (0: none, as the paper)", ge=0)
    entropy_coef: float = knob("entropy bonus", ge=0)
    loss_agg_mode: str = knob("how token losses are averaged",
                              choices=LOSS_AGG_MODES)
    dynamic_sampling: bool = knob("drop groups whose rewards are all equal, sample more")
    max_generation_batches: int = knob("generation batches per step at most when filling a batch", ge=1)
    temperature: float = knob("sampling temperature", gt=0, le=10)
    max_new_tokens: int = knob("response tokens at most", ge=1)
    overlong_buffer: int = knob("DAPO overlong penalty over the last N tokens, N below max_new_tokens (0: off)", ge=0)
    eval_every: int = knob("steps between held-out validations (and the last step)", ge=1)
    val_n: int = knob("samples per validation prompt: a point is their mean, pass@1", ge=1)
    val_temperature: float = knob("their temperature (0: greedy); evaluate.temperature's makes a point the test "
                                  "set's pass@1", ge=0, le=10)
    save_every: int = knob("steps between resumable checkpoints (results/rl/<run>/work/)", ge=1)

    @property
    def samples_per_prompt(self) -> int:
        return self.group_size


@dataclass(frozen=True)
class RLConfig(RL):
    """config ``rl``: the RL settings and the runs the DAG plans."""

    runs: list[str] = knob("the Stage-2 train splits trained on, one RL run each", each={"choices": RL_RUNS},
                           unique=True)


# ----------------------------------------------------------------------------- evaluate
MODEL_PATTERN = f"^(stage1|rl_({'|'.join(RL_RUNS)}))$"


@dataclass(frozen=True)
class ManySamples:
    """config ``evaluate.many_samples``: pass@k to large k, many samples on a few test prompts."""

    n: int = knob(SAMPLES_PER_PROMPT, ge=1)
    prompts_per_level: int = knob("the first prompts of each level of the test set (0: no subset)", ge=0)
    levels: list[int] = levels("[min, max] test level")
    models: list[str] = knob("the models sampled on the subset", each={"pattern": MODEL_PATTERN}, unique=True)


@dataclass(frozen=True)
class Evaluate(Sampling):
    """config ``evaluate``: every model on the held-out test set."""

    bootstrap: int = knob("bootstrap resamples over prompts for every interval", ge=1)
    ci: float = knob("level of every interval", gt=0, lt=1)
    many_samples: ManySamples = knob("pass@k to large k on a subset of the test set")


@dataclass(frozen=True)
class Metrics(_Job):
    """The ``metrics`` job (:func:`fgx.plan.params.metrics_settings`): pass@k with bootstrap intervals."""

    WHERE = "metrics"
    ks: list[int] = knob("every k of pass@k (the powers of two up to the samples per prompt, and that)",
                         each={"ge": 1}, min_items=1)
    bootstrap: int = knob("evaluate.bootstrap", ge=1)
    ci: float = knob("evaluate.ci", gt=0, lt=1)
    seed: int = knob("the job's own seed", ge=0)


@dataclass(frozen=True)
class PromptSubset(_Job):
    """The ``select_prompts`` job: the test prompts sampled many times (``evaluate.many_samples``)."""

    WHERE = "evaluate.many_samples"
    levels: list[int] = levels("evaluate.many_samples.levels")
    per_level: int = knob("evaluate.many_samples.prompts_per_level", ge=0)


@dataclass(frozen=True)
class SampleBrowser(_Job):
    """The ``sample_browser`` job (the script has a default for either key)."""

    WHERE = "the sample browser"
    per_cell: int = knob("responses shown per model, level and failure category", ge=1)
    seed: int = knob("the job's own seed: which responses are shown", ge=0)


@dataclass(frozen=True)
class SFTMix(_Job):
    """The ``mix_sft_data`` job (:func:`fgx.plan.params.sft_mix_settings`): how often each source repeats."""

    WHERE = "the SFT mix"
    repeats: list[int] = knob("times each source's rows appear, aligned with the inputs (a task family's SFT model "
                              "declares them: fgx.tasks.family.SFTModel)", each={"ge": 0}, min_items=1)


# ----------------------------------------------------------------------------- figures, compute
@dataclass(frozen=True)
class Figures:
    """config ``figures``: plot settings (a change reruns only the figure that reads it)."""

    passk_models: list[str] = knob("models whose pass@k curves figures/passk_level_curve draws (RL runs not in "
                                   "rl.runs are left out)", each={"pattern": MODEL_PATTERN}, min_items=1,
                                   unique=True)
    passk_ks: list[int] = knob("the k's of passk_level_curve", each={"ge": 1}, min_items=1)
    passk_levels: list[int] = knob("the levels of passk_level_curve", each={"ge": 1}, min_items=1)
    failure_level: int = knob("test level whose answers figures/failure_modes classifies", ge=1)


@dataclass(frozen=True)
class Compute:
    """config ``compute``: how jobs use the machine (a change reruns nothing; the thread count changes the weights
    on some CPU kinds)."""

    torch_threads: int = knob("threads per heavy torch job (Snakemake's threads:; profiles may set a rule's own); "
                              "on some CPU kinds (an Intel Xeon) the count changes the weights", ge=1)
    gpu_slots: int = knob("sequences the torch sampler decodes together on a GPU (its fixed-shape step's slots); "
                          "the samples do not depend on it", ge=1, machine=True)
    gpu_chunk_prompts: int = knob("prompts per resumable chunk of a torch sampling job on a GPU (128 on the CPU); "
                                  "the samples do not depend on it", ge=1, machine=True)


# ----------------------------------------------------------------------------- verl
@dataclass(frozen=True)
class VerlSFT:
    """config ``verl.sft``: verl's SFT trainer."""

    truncation: str = knob("what verl does with an example longer than max_length", choices=["right", "left", "error"])
    micro_batch_size_per_gpu: int = knob("micro-batch per GPU", ge=1, machine=True)
    max_token_len_per_gpu: int = knob("token budget per GPU (dynamic batch size)", ge=1, machine=True)
    use_dynamic_bsz: bool = knob("pack micro-batches by token budget", machine=True)
    warmup_steps_ratio: float = knob("share of the steps spent warming up the lr", ge=0, le=1)
    overrides: list[str] = knob("extra Hydra overrides of verl's sft_trainer, appended verbatim")


@dataclass(frozen=True)
class VerlSample:
    """config ``verl.sample``: vLLM sampling shards."""

    gpu_memory_utilization: float = knob("vLLM's share of GPU memory", gt=0, le=1, machine=True)
    max_model_len: int | None = knob(
        "vLLM's context (null: verl.max_prompt_length + max_new_tokens, at most the model's positions)", ge=1)
    chunk_prompts: int = knob("prompts per resumable chunk file", ge=1)
    enforce_eager: bool = knob("vLLM without CUDA graphs", machine=True)


@dataclass(frozen=True)
class Verl:
    """config ``verl``: the verl engine's machine knobs (the science keys are the sections above)."""

    n_gpus_per_node: int = knob("GPUs per node, used only when the job cannot count its GPUs", ge=1, machine=True)
    max_prompt_length: int = knob("prompt tokens (longer prompts are dropped from RL data)", ge=1)
    gpu_memory_utilization: float = knob("vLLM's share of GPU memory during RL rollouts", gt=0, le=1, machine=True)
    enforce_eager: bool = knob("vLLM without CUDA graphs during RL", machine=True)
    attn_implementation: str = knob("training attention: flash_attention_2 (packed sequences) | sdpa (padded "
                                    "batches, no flash-attn)", choices=ATTN_IMPLEMENTATIONS)
    ppo_max_token_len_per_gpu: int = knob("actor update token budget per GPU (dynamic batch size)", ge=1,
                                          machine=True)
    log_prob_max_token_len_per_gpu: int = knob("log-prob recompute token budget per GPU", ge=1, machine=True)
    param_offload: bool = knob("FSDP parameter offload (actor, ref)", machine=True)
    optimizer_offload: bool = knob("FSDP optimizer-state offload", machine=True)
    filter_groups_metric: str = knob("dynamic sampling's group metric: reward = score + overlong penalty "
                                     "(upstream's seq_reward)", min_length=1)
    overlong_penalty_factor: float = knob("DAPO overlong penalty at the last token", ge=0)
    log_val_generations: int = knob("validation responses verl logs at each validation (console, tensorboard)",
                                    ge=0, machine=True)
    max_actor_ckpt_to_keep: int = knob("resumable RL checkpoints kept (an 8B FSDP one is ~100 GB)", ge=1,
                                       machine=True)
    logger: list[str] = knob("verl's loggers (file: per-step JSON lines -> metrics.parquet; tensorboard: event "
                             "files in the RL work dir)", each={"min_length": 1}, machine=True)
    project_name: str = knob("verl's project name (logs)", min_length=1, machine=True)
    ppo_overrides: list[str] = knob("extra Hydra overrides of verl's main_ppo, appended verbatim")
    cpu_kv_cache_gb: int = knob("vLLM's KV cache on a CPU (VLLM_CPU_KVCACHE_SPACE), when no GPU is visible", ge=1,
                                machine=True)
    sft: VerlSFT = knob("verl's SFT trainer")
    sample: VerlSample = knob("vLLM sampling")

    @classmethod
    def from_config(cls, verl: Mapping[str, Any]) -> "Verl":
        """The ``verl:`` section as a job receives it (``settings["verl"]``): config.yaml gives every key
        and the schema checks them; a hand-made dict that lacks one, or has one more, is refused here."""
        v = dict(verl or {})
        _require_keys(cls, v, "verl")
        for name, sub in (("sft", VerlSFT), ("sample", VerlSample)):
            _require_keys(sub, v[name] if isinstance(v[name], Mapping) else {}, f"verl.{name}")
        return cls(**{**v, "sft": VerlSFT(**v["sft"]), "sample": VerlSample(**v["sample"])})


def _require_keys(cls, given: Mapping[str, Any], where: str) -> None:
    names = [f.name for f in dataclasses.fields(cls)]
    missing, unknown = [n for n in names if n not in given], sorted(set(given) - set(names))
    if missing or unknown:
        parts = ([f"unknown key(s) {', '.join(unknown)}"] if unknown else []) + \
                ([f"missing key(s) {', '.join(missing)}"] if missing else [])
        raise SettingsError(f"config key {where!r}: {'; '.join(parts)}; known: {', '.join(sorted(names))} "
                            "(config.yaml's verl: section sets every one)")


def machine_keys(cls=Verl) -> dict[str, Any]:
    """The keys declared ``machine=True``: {key: True} and {section: {key: True}} for nested sections."""
    out: dict[str, Any] = {}
    for f in dataclasses.fields(cls):
        if dataclasses.is_dataclass(_type_of(cls, f)):
            out[f.name] = machine_keys(_type_of(cls, f))
        elif knob_of(f).machine:
            out[f.name] = True
    return out


# ----------------------------------------------------------------------------- the whole file
@dataclass(frozen=True)
class Config:
    """config.yaml: every section, every key required (the task families' own sections besides)."""

    engine: str = knob("torch: embedded, a CPU or one GPU | verl: the paper's verl + vLLM stack on GPUs",
                       choices=ENGINES)
    seed: int = knob("master seed; every job derives its own seed from it and its name", ge=0)
    device: str = knob("torch engine: auto (a GPU when one is visible, else the CPU) | cpu | cuda",
                       choices=DEVICES)
    model: Model = knob("the base model")
    task: Task = knob("the task's format")
    data: Data = knob("problem sets")
    base: Base = knob("the tiny Llama (model.source: scratch)")
    stage1: RFTStage = knob("Stage 1: rejection fine-tuning on Level-1 problems (paper Section 3.2)")
    rl: RLConfig = knob("Stage 2: RL with outcome reward only, one run per train split (paper Fig. 2)")
    rft_baseline: RFTStage = knob("Stage-2 baseline: iterative RFT on the same kind of Level-2 data (paper Fig. 3)")
    evaluate: Evaluate = knob("every model on the held-out test set (paper Fig. 5)")
    figures: Figures = knob("plot settings")
    compute: Compute = knob("threads, and the torch sampler's shapes on a GPU")
    verl: Verl = knob("the verl engine's machine knobs")


def _type_of(cls, field: dataclasses.Field):
    """A field's annotation resolved (this module uses postponed annotations)."""
    import typing

    return typing.get_type_hints(cls)[field.name]


# which config section each job dataclass mirrors (tests/test_settings.py compares them with the schema)
CONFIG_SECTIONS = {
    ModelShape: ("base", "model"), PretrainTrain: ("base", "train"), Sampling: ("stage1", "rollout"),
    SFT: ("stage1", "sft"), RL: ("rl",),
}
