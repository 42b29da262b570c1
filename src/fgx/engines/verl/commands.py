"""Pure builders of every command the verl engine runs: argv lists from the job's settings.

Nothing here imports verl, vLLM or torch, touches the file system or reads the environment: the
same settings give the same argv, and tests/test_verl_commands.py composes every Hydra override
list below against verl's own config (``ppo_trainer`` / ``sft_trainer_engine``) in struct mode, so
a misspelt or stale key fails CI instead of hour 3 of a GPU job.

Settings (the JSON each job receives, see fgx.plan.params) carry the science keys (``lr``,
``group_size``, ``max_new_tokens`` ...) and the config's ``verl:`` section under ``settings["verl"]``
(machine knobs: token budgets, offloading, memory fractions), every key of it: config.yaml sets them
all, :class:`fgx.settings.Verl` declares them.

verl 0.9 facts these builders rely on (checked against verl 0.9.1's yaml files by the tests):

* RL is ``python -m verl.trainer.main_ppo`` (Hydra config ``ppo_trainer``, V1 trainer). Token-level
  loss is ``actor_rollout_ref.actor.loss_agg_mode=token-mean``; dynamic sampling is
  ``algorithm.filter_groups`` (the V1 trainer then fetches prompts one by one and ignores
  ``max_num_gen_batches``: fgx's ``trainer.v1.sampler.custom_sampler``,
  :mod:`fgx.engines.verl.replay_buffer`, keeps the generation budget); the overlong penalty is the
  ``dapo`` reward manager with ``+reward.reward_kwargs.overlong_buffer_cfg.*``
  (keys verl expects to be added with ``+``).
* The custom reward is ``reward.custom_reward_function.{path,name}`` (the legacy top-level
  ``custom_reward_function`` is only migrated there).
* SFT is ``torchrun -m verl.trainer.sft_trainer`` (Hydra config ``sft_trainer_engine``) on a
  ``messages`` column; loss on assistant turns only.
* Checkpoints merge with ``python -m verl.model_merger merge --backend fsdp``.
* Metrics: ``trainer.logger=[console,file,tensorboard]``; the file logger writes one JSON object per
  step (``{"step": s, "data": {...}}``) to ``$VERL_FILE_LOGGER_PATH``, the tensorboard logger event
  files to ``$TENSORBOARD_DIR`` (default ``tensorboard_log/<project>/<experiment>`` under the cwd).
"""

from __future__ import annotations

import copy
import re
from typing import Any, Mapping, Sequence

from fgx.algos import optimizer
from fgx.settings import ATTN_IMPLEMENTATIONS, SettingsError, Verl, machine_keys

PPO_CONFIG = "ppo_trainer"
SFT_CONFIG = "sft_trainer_engine"
PPO_MODULE = "verl.trainer.main_ppo"
SFT_MODULE = "verl.trainer.sft_trainer"
MERGE_MODULE = "verl.model_merger"
SAMPLE_MODULE = "fgx.engines.verl.vllm_sample"
SAMPLER_MODULE = "pkg://fgx.engines.verl.replay_buffer"  # dynamic sampling's replay buffer (verl loads it by name)

# verl knobs that change how a job runs (memory, token budgets per micro-batch, kernels' shapes,
# bookkeeping), not what it computes: declared ``machine=True`` in fgx.settings and left out of a job's
# resume fingerprint, so that fixing an out-of-memory setting resumes days of checkpoints instead of
# starting again. Every other knob (prompt length filter, generation batch, filter metric, penalty,
# validation sampling, chunking, extra overrides) and the world size are in it.
_MACHINE = machine_keys(Verl)
MACHINE_KEYS = tuple(k for k, v in _MACHINE.items() if v is True)
MACHINE_SUBKEYS = {k: tuple(v) for k, v in _MACHINE.items() if isinstance(v, dict)}


def result_settings(settings: Mapping) -> dict:
    """``settings`` with the merged ``verl:`` section less :data:`MACHINE_KEYS`: what a resume fingerprint holds."""
    v = verl_settings(settings)
    kept = {k: val for k, val in v.items() if k not in MACHINE_KEYS}
    for section, keys in MACHINE_SUBKEYS.items():
        kept[section] = {k: val for k, val in v[section].items() if k not in keys}
    return {**settings, "verl": kept}


def verl_settings(settings: Mapping) -> dict:
    """``settings["verl"]``, refused naming the key when one is missing or unknown (config.yaml gives
    every key; a hand-made settings dict may not)."""
    v = settings.get("verl") or {}
    Verl.from_config(v)
    return copy.deepcopy(dict(v))


# ----------------------------------------------------------------------------- Hydra values
_PLAIN = re.compile(r"^[A-Za-z0-9_./:@+-]+$")


def hydra_value(value: Any) -> str:
    """A Python value written in Hydra's override grammar (strings quoted unless plain)."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return repr(value)
    if isinstance(value, (list, tuple)):
        return "[" + ",".join(hydra_value(v) for v in value) + "]"
    text = str(value)
    if _PLAIN.match(text) and text.lower() not in ("null", "true", "false", "none") and not _is_number(text):
        return text
    return "'" + text.replace("\\", "\\\\").replace("'", "\\'") + "'"


def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def _listify(x) -> list:
    return [x] if isinstance(x, (str, bytes)) or not hasattr(x, "__iter__") else list(x)


# verl's FSDP mixed-precision setting for fp32 compute (a key verl's yaml leaves out, so added with '+')
FP32_MIXED_PRECISION = "{param_dtype:fp32,reduce_dtype:fp32,buffer_dtype:fp32}"


def _ov(key: str, value: Any) -> str:
    return f"{key}={hydra_value(value)}"


def _attention_overrides(prefix: str, v: Mapping) -> list[str]:
    """Sequence packing (remove padding) with flash attention, or padded batches with SDPA."""
    impl = v["attn_implementation"]
    if impl not in ATTN_IMPLEMENTATIONS:
        raise SettingsError(f"verl.attn_implementation {impl!r}: use one of {', '.join(ATTN_IMPLEMENTATIONS)}")
    if impl == "flash_attention_2":
        return [_ov(f"{prefix}.use_remove_padding", True)]
    # override_config is a free-form dict in verl's config: new keys are added with '+'
    return [_ov(f"{prefix}.use_remove_padding", False),
            _ov(f"+{prefix}.override_config.attn_implementation", "sdpa")]


# ----------------------------------------------------------------------------- CPU
def cpu_ppo_overrides(n_ranks: int) -> list[str]:
    """What ``main_ppo`` needs on a CPU (with :mod:`fgx.engines.verl.cpu_platform`), each for a reason:
    FSDP2 (FSDP1 refuses CPU parameters with ``sync_module_states``); no torch.compile, gradient
    checkpointing or vLLM sleep mode (CUDA-only); the actor's compute, vLLM and the weights it
    receives in fp32 (the torch engine's precision; verl's FSDP engine computes in bf16 unless told);
    a 64 MB weight bucket instead of 2 GB of shared memory; one agent-loop and one reward worker; Ray
    told that each CPU rank is a "GPU" (verl's resource pools ask for GPUs), given enough logical
    CPUs for verl's helper actors."""
    a, r = "actor_rollout_ref.actor.", "actor_rollout_ref.rollout."
    return [
        _ov("trainer.device", "cpu"),
        _ov(a + "strategy", "fsdp2"), _ov("actor_rollout_ref.ref.strategy", "fsdp2"),
        _ov(a + "use_torch_compile", False), _ov("actor_rollout_ref.ref.use_torch_compile", False),
        _ov("actor_rollout_ref.model.enable_gradient_checkpointing", False),
        _ov(r + "dtype", "float32"),
        "+" + a + "fsdp_config.mixed_precision=" + FP32_MIXED_PRECISION,
        _ov("+" + r + "enable_sleep_mode", False), _ov(r + "free_cache_engine", False),
        _ov(r + "enforce_eager", True),
        _ov(r + "checkpoint_engine.update_weights_bucket_megabytes", 64),
        _ov(r + "agent.num_workers", 1), _ov("reward.num_workers", 1),
        _ov("data.dataloader_num_workers", 0),
        _ov("transfer_queue.backend.SimpleStorage.num_data_storage_units", 1),
        _ov("+ray_kwargs.ray_init.num_gpus", int(n_ranks)),
        _ov("ray_kwargs.ray_init.num_cpus", max(8, 4 * int(n_ranks))),
    ]


def cpu_sft_overrides() -> list[str]:
    """What ``sft_trainer`` needs on a CPU: FSDP2, no torch.compile or gradient checkpointing, fp32
    compute (the torch engine's; verl's FSDP engine computes in bf16 unless told), data loaded in the
    trainer's process."""
    return [_ov("trainer.device", "cpu"), _ov("engine.strategy", "fsdp2"), _ov("engine.use_torch_compile", False),
            _ov("model.enable_gradient_checkpointing", False), "+engine.mixed_precision=" + FP32_MIXED_PRECISION,
            _ov("data.num_workers", 0)]


# ----------------------------------------------------------------------------- RL
def ppo_overrides(settings: Mapping, *, model_dir: str, train_files: Sequence[str] | str,
                  val_files: Sequence[str] | str, checkpoint_dir: str, experiment_name: str,
                  reward_path: str, n_gpus_per_node: int, nnodes: int = 1,
                  ray_num_cpus: int | None = None, cpu: bool = False,
                  validation_dir: str | None = None) -> list[str]:
    """Hydra overrides of ``verl.trainer.main_ppo`` for one fgx RL run (paper Section 3.2, Stage 2): the
    objective of :mod:`fgx.algos.objective` (the torch engine's) with the advantages of the algorithm
    ``rl.algorithm`` names, mapped onto verl's trainer by the algorithm's ``VERL_OVERRIDES``. Validation
    samples ``rl.val_n`` responses per prompt at ``rl.val_temperature``, as the torch engine does, and dumps
    them to ``validation_dir`` (``<step>.jsonl``: :func:`fgx.engines.validation.from_verl_dumps`)."""
    from fgx.algos import objective
    from fgx.algos.rl import algorithm
    from fgx.settings import RL, Runtime

    s, rt = RL.from_settings(settings), Runtime.from_settings(settings)
    v = verl_settings(settings)
    bsz, n, max_new, kl = s.batch_size, s.samples_per_prompt, s.max_new_tokens, float(s.kl_coef)
    tp = rt.tensor_parallel_size
    o = [
        *(_ov(key, value) for key, value in algorithm(s.algorithm).VERL_OVERRIDES.items()),
        _ov("algorithm.use_kl_in_reward", False),
        _ov("algorithm.kl_ctrl.kl_coef", 0.0),
        # data
        _ov("data.train_files", _listify(train_files)),
        _ov("data.val_files", _listify(val_files)),
        _ov("data.prompt_key", "prompt"),
        _ov("data.train_batch_size", bsz),
        _ov("data.max_prompt_length", int(v["max_prompt_length"])),
        _ov("data.max_response_length", max_new),
        _ov("data.filter_overlong_prompts", True),
        _ov("data.truncation", "error"),
        _ov("data.shuffle", True),
        _ov("data.seed", rt.seed),
        # model
        _ov("actor_rollout_ref.model.path", model_dir),
        *_attention_overrides("actor_rollout_ref.model", v),
        _ov("actor_rollout_ref.model.enable_gradient_checkpointing", True),
        # actor: one on-policy update per step (mini-batch = batch), so the clip never binds
        _ov("actor_rollout_ref.actor.optim.lr", float(s.lr)),
        _ov("actor_rollout_ref.actor.optim.weight_decay", optimizer.RL_WEIGHT_DECAY),  # the torch engine's AdamW
        _ov("actor_rollout_ref.actor.optim.betas", list(optimizer.RL_BETAS)),
        _ov("actor_rollout_ref.actor.optim.lr_scheduler_type", "constant"),
        _ov("actor_rollout_ref.actor.optim.lr_warmup_steps_ratio", 0.0),
        _ov("actor_rollout_ref.actor.grad_clip", optimizer.GRAD_CLIP),
        _ov("actor_rollout_ref.actor.ppo_mini_batch_size", bsz),
        _ov("actor_rollout_ref.actor.ppo_epochs", 1),
        _ov("actor_rollout_ref.actor.clip_ratio_low", objective.CLIP_RATIO),
        _ov("actor_rollout_ref.actor.clip_ratio_high", objective.CLIP_RATIO),
        _ov("actor_rollout_ref.actor.clip_ratio_c", objective.CLIP_RATIO_C),
        _ov("actor_rollout_ref.actor.loss_agg_mode", s.loss_agg_mode),
        _ov("actor_rollout_ref.actor.entropy_coeff", float(s.entropy_coef)),
        _ov("actor_rollout_ref.actor.use_kl_loss", kl > 0),
        _ov("actor_rollout_ref.actor.kl_loss_coef", kl),
        _ov("actor_rollout_ref.actor.kl_loss_type", objective.KL_KIND),
        _ov("actor_rollout_ref.actor.use_dynamic_bsz", True),
        _ov("actor_rollout_ref.actor.ppo_max_token_len_per_gpu", int(v["ppo_max_token_len_per_gpu"])),
        _ov("actor_rollout_ref.actor.fsdp_config.param_offload", bool(v["param_offload"])),
        _ov("actor_rollout_ref.actor.fsdp_config.optimizer_offload", bool(v["optimizer_offload"])),
        _ov("actor_rollout_ref.actor.checkpoint.save_contents", ["model", "optimizer", "extra"]),
        # rollout: vLLM
        _ov("actor_rollout_ref.rollout.name", "vllm"),
        _ov("actor_rollout_ref.rollout.n", n),
        _ov("actor_rollout_ref.rollout.temperature", float(s.temperature)),
        _ov("actor_rollout_ref.rollout.top_p", 1.0),
        _ov("actor_rollout_ref.rollout.top_k", -1),
        _ov("actor_rollout_ref.rollout.tensor_model_parallel_size", tp),
        _ov("actor_rollout_ref.rollout.gpu_memory_utilization", float(v["gpu_memory_utilization"])),
        _ov("actor_rollout_ref.rollout.enforce_eager", bool(v["enforce_eager"])),
        _ov("actor_rollout_ref.rollout.log_prob_use_dynamic_bsz", True),
        _ov("actor_rollout_ref.rollout.log_prob_max_token_len_per_gpu", int(v["log_prob_max_token_len_per_gpu"])),
        _ov("actor_rollout_ref.rollout.seed", rt.seed),
        _ov("actor_rollout_ref.rollout.val_kwargs.do_sample", float(s.val_temperature) > 0),
        _ov("actor_rollout_ref.rollout.val_kwargs.temperature", float(s.val_temperature)),
        _ov("actor_rollout_ref.rollout.val_kwargs.n", int(s.val_n)),
        _ov("trainer.log_val_generations", int(v["log_val_generations"])),
        _ov("actor_rollout_ref.ref.log_prob_use_dynamic_bsz", True),
        _ov("actor_rollout_ref.ref.log_prob_max_token_len_per_gpu", int(v["log_prob_max_token_len_per_gpu"])),
        _ov("actor_rollout_ref.ref.fsdp_config.param_offload", True),
        # reward: fgx's compute_score through the DAPO manager (overlong penalty)
        _ov("reward.custom_reward_function.path", reward_path),
        _ov("reward.custom_reward_function.name", "compute_score"),
        _ov("+reward.custom_reward_function.reward_kwargs.reward", s.reward),
        _ov("reward.reward_manager.name", "dapo"),
    ]
    buffer = s.overlong_buffer
    if buffer >= max_new:
        raise SettingsError(f"rl.overlong_buffer ({buffer}) must be smaller than rl.max_new_tokens ({max_new})")
    o += [
        _ov("+reward.reward_kwargs.overlong_buffer_cfg.enable", buffer > 0),
        _ov("+reward.reward_kwargs.overlong_buffer_cfg.len", max(buffer, 1)),
        _ov("+reward.reward_kwargs.overlong_buffer_cfg.penalty_factor", float(v["overlong_penalty_factor"])),
        _ov("+reward.reward_kwargs.overlong_buffer_cfg.log", True),
        _ov("+reward.reward_kwargs.max_resp_len", max_new),
    ]
    # dynamic sampling (DAPO group filter)
    o += [
        _ov("algorithm.filter_groups.enable", bool(s.dynamic_sampling)),
        _ov("algorithm.filter_groups.metric", v["filter_groups_metric"]),
    ]
    if s.dynamic_sampling:  # verl's V1 buffer ignores max_num_gen_batches; fgx's keeps the torch engine's budget
        o += [
            _ov("trainer.v1.sampler.custom_sampler.path", SAMPLER_MODULE),
            _ov("trainer.v1.sampler.custom_sampler.name", "BudgetedReplayBuffer"),
            _ov("+trainer.v1.sampler.sampler_kwargs.metric", v["filter_groups_metric"]),
            _ov("+trainer.v1.sampler.sampler_kwargs.batch_size", bsz),
            _ov("+trainer.v1.sampler.sampler_kwargs.max_generation_batches", int(s.max_generation_batches)),
        ]
    # trainer
    o += [
        _ov("trainer.total_training_steps", int(s.steps)),
        _ov("trainer.total_epochs", 1000),  # steps bound the run; epochs only need to be large enough
        _ov("trainer.test_freq", int(s.eval_every)),
        _ov("trainer.save_freq", int(s.save_every)),
        _ov("trainer.val_before_train", True),
        _ov("trainer.validation_data_dir", validation_dir),
        _ov("trainer.critic_warmup", 0),
        _ov("trainer.logger", list(v["logger"])),
        _ov("trainer.project_name", v["project_name"]),
        _ov("trainer.experiment_name", experiment_name),
        _ov("trainer.default_local_dir", checkpoint_dir),
        _ov("trainer.resume_mode", "auto"),
        _ov("trainer.max_actor_ckpt_to_keep", int(v["max_actor_ckpt_to_keep"])),
        _ov("trainer.n_gpus_per_node", int(n_gpus_per_node)),
        _ov("trainer.nnodes", int(nnodes)),
        # Ray without its dashboard, whose job API runs code for anyone who reaches it (fgx.engines.verl.environment)
        _ov("+ray_kwargs.ray_init.include_dashboard", False),
    ]
    if cpu:
        o += cpu_ppo_overrides(n_gpus_per_node)
    elif ray_num_cpus:
        o.append(_ov("ray_kwargs.ray_init.num_cpus", int(ray_num_cpus)))
    return o + [str(x) for x in v["ppo_overrides"]]


def effective_settings(overrides: Sequence[str]) -> dict:
    """What a ``main_ppo`` run built by :func:`ppo_overrides` optimises, read back from its overrides
    in engine-neutral names (the torch engine's: :func:`fgx.engines.torch.rl.effective_settings`)."""
    import ast

    ov = {}
    for item in overrides:
        key, _, value = item.lstrip("+").partition("=")
        try:
            ov[key] = ast.literal_eval(value.replace("true", "True").replace("false", "False"))
        except (ValueError, SyntaxError):
            ov[key] = value.strip("'")
    actor, rollout, buffer = "actor_rollout_ref.actor.", "actor_rollout_ref.rollout.", "reward.reward_kwargs."
    sampler = "trainer.v1.sampler.sampler_kwargs."
    return {
        "steps": ov["trainer.total_training_steps"], "prompts_per_step": ov["data.train_batch_size"],
        "prompts_per_update": ov[actor + "ppo_mini_batch_size"], "updates_per_batch": ov[actor + "ppo_epochs"],
        "group_size": ov[rollout + "n"], "lr": float(ov[actor + "optim.lr"]),
        "lr_schedule": ov[actor + "optim.lr_scheduler_type"], "warmup": ov[actor + "optim.lr_warmup_steps_ratio"],
        "weight_decay": ov[actor + "optim.weight_decay"], "betas": tuple(ov[actor + "optim.betas"]),
        "grad_clip": ov[actor + "grad_clip"],
        "algorithm": algorithm_of(ov), "clip_low": ov[actor + "clip_ratio_low"],
        "clip_high": ov[actor + "clip_ratio_high"], "clip_ratio_c": ov[actor + "clip_ratio_c"],
        "loss_agg_mode": ov[actor + "loss_agg_mode"], "entropy_coef": float(ov[actor + "entropy_coeff"]),
        "kl_coef": float(ov[actor + "kl_loss_coef"]) if ov[actor + "use_kl_loss"] else 0.0,
        "kl_kind": ov[actor + "kl_loss_type"], "kl_reference": "starting model",
        "reward": ov["reward.custom_reward_function.reward_kwargs.reward"],
        "overlong_buffer": ov[buffer + "overlong_buffer_cfg.len"] if ov[buffer + "overlong_buffer_cfg.enable"] else 0,
        "overlong_penalty_factor": float(ov[buffer + "overlong_buffer_cfg.penalty_factor"]),
        "dynamic_sampling": ov["algorithm.filter_groups.enable"], "filter_metric": ov["algorithm.filter_groups.metric"],
        "generation_batch": ov.get(sampler + "batch_size"),
        "max_generation_batches": ov.get(sampler + "max_generation_batches"),
        "temperature": float(ov[rollout + "temperature"]), "top_p": float(ov[rollout + "top_p"]),
        "max_new_tokens": ov["data.max_response_length"], "eval_every": ov["trainer.test_freq"],
        "save_every": ov["trainer.save_freq"], "val_n": ov[rollout + "val_kwargs.n"],
        "val_temperature": float(ov[rollout + "val_kwargs.temperature"]),
    }


def algorithm_of(overrides: Mapping[str, Any]) -> str | None:
    """The fgx algorithm whose ``VERL_OVERRIDES`` the parsed ``overrides`` (key -> value) carry, or None."""
    from fgx.algos.rl import ALGORITHMS, algorithm

    return next((name for name in ALGORITHMS
                 if all(overrides.get(k) == v for k, v in algorithm(name).VERL_OVERRIDES.items())), None)


def ppo_command(settings: Mapping, *, python: str = "python", **kwargs) -> list[str]:
    """argv of one RL run: ``python -m verl.trainer.main_ppo <overrides>`` (see :func:`ppo_overrides`)."""
    return [python, "-m", PPO_MODULE, *ppo_overrides(settings, **kwargs)]


# ----------------------------------------------------------------------------- SFT (RFT)
def sft_overrides(settings: Mapping, *, model_dir: str, train_file: str, checkpoint_dir: str,
                  experiment_name: str, n_gpus_per_node: int, cpu: bool = False) -> list[str]:
    """Hydra overrides of ``verl.trainer.sft_trainer`` for one rejection-fine-tuning model."""
    from fgx.settings import SFT, Runtime

    job, rt = SFT.from_settings(settings), Runtime.from_settings(settings)
    s = verl_settings(settings)["sft"]
    v = verl_settings(settings)
    return [
        _ov("data.train_files", train_file),
        _ov("data.val_files", None),
        _ov("data.messages_key", "messages"),
        _ov("data.train_batch_size", int(job.batch_size)),
        _ov("data.micro_batch_size_per_gpu", int(s["micro_batch_size_per_gpu"])),
        _ov("data.use_dynamic_bsz", bool(s["use_dynamic_bsz"])),
        _ov("data.max_token_len_per_gpu", int(s["max_token_len_per_gpu"])),
        _ov("data.max_length", int(job.max_length)),
        _ov("data.truncation", s["truncation"]),
        _ov("model.path", model_dir),
        _ov("model.enable_gradient_checkpointing", True),
        *_attention_overrides("model", v),
        # the torch engine's fine-tuning optimizer: AdamW's betas, no weight decay, cosine to a floor, the clip
        _ov("optim.lr", float(job.lr)),
        _ov("optim.lr_warmup_steps_ratio", float(s["warmup_steps_ratio"])),
        _ov("optim.betas", list(optimizer.SUPERVISED_BETAS)),
        _ov("optim.weight_decay", optimizer.SFT_WEIGHT_DECAY),
        _ov("optim.lr_scheduler_type", "cosine"),
        _ov("optim.min_lr_ratio", optimizer.MIN_LR_RATIO),
        _ov("optim.clip_grad", optimizer.GRAD_CLIP),
        _ov("trainer.total_epochs", int(job.epochs)),
        _ov("trainer.seed", rt.seed),
        _ov("trainer.logger", list(v["logger"])),
        _ov("trainer.project_name", v["project_name"]),
        _ov("trainer.experiment_name", experiment_name),
        _ov("trainer.default_local_dir", checkpoint_dir),
        _ov("trainer.resume_mode", "auto"),
        _ov("trainer.save_freq", "after_each_epoch"),
        _ov("trainer.max_ckpt_to_keep", 1),
        _ov("trainer.n_gpus_per_node", int(n_gpus_per_node)),
        _ov("trainer.nnodes", 1),
        *(cpu_sft_overrides() if cpu else []),
        *[str(x) for x in s["overrides"]],
    ]


def sft_command(settings: Mapping, *, python: str = "python", **kwargs) -> list[str]:
    """argv of one SFT run: ``torchrun --standalone ... -m verl.trainer.sft_trainer <overrides>``."""
    n = int(kwargs["n_gpus_per_node"])
    return [python, "-m", "torch.distributed.run", "--standalone", "--nnodes=1", f"--nproc_per_node={n}",
            "-m", SFT_MODULE, *sft_overrides(settings, **kwargs)]


# ----------------------------------------------------------------------------- merge / sample
def merge_command(*, checkpoint_dir: str, target_dir: str, python: str = "python") -> list[str]:
    """argv merging one FSDP checkpoint directory into a Hugging Face model directory."""
    return [python, "-m", MERGE_MODULE, "merge", "--backend", "fsdp",
            "--local_dir", str(checkpoint_dir), "--target_dir", str(target_dir)]


def rollout_command(settings: Mapping, *, model_dir: str, data_path: str, out_dir: str,
                    shard: int = 0, num_shards: int = 1, python: str = "python", cpu: bool = False) -> list[str]:
    """argv of one vLLM sampling shard (``python -m fgx.engines.verl.vllm_sample``)."""
    from fgx.settings import Runtime, Sampling

    job, rt = Sampling.from_settings(settings), Runtime.from_settings(settings)
    v = verl_settings(settings)
    s = v["sample"]
    max_model_len = s["max_model_len"] or int(v["max_prompt_length"]) + int(job.max_new_tokens)
    argv = [python, "-m", SAMPLE_MODULE,
            "--model", str(model_dir), "--data", str(data_path), "--out-dir", str(out_dir),
            "--shard", str(shard), "--num-shards", str(num_shards),
            "--n", str(int(job.samples_per_prompt)),
            "--temperature", repr(float(job.temperature)),
            "--max-tokens", str(int(job.max_new_tokens)),
            "--seed", str(rt.seed),
            "--tensor-parallel-size", str(rt.tensor_parallel_size),
            "--gpu-memory-utilization", repr(float(s["gpu_memory_utilization"])),
            "--chunk-prompts", str(int(s["chunk_prompts"])),
            "--max-model-len", str(int(max_model_len))]
    if s["enforce_eager"] or cpu:
        argv.append("--enforce-eager")
    if cpu:  # fp32 as the torch engine samples (vLLM makes fp32 bf16 unless told); whole prefills: vllm_sample's help
        argv += ["--dtype", "float32", "--whole-prefills"]
    return argv
