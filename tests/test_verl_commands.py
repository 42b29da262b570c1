"""The verl engine without a GPU: every verl command fgx would run, checked against verl itself.

* Every Hydra override list (GRPO, SFT) that config.paper.yaml (and the CPU configs) produce is
  composed with verl's own config (``ppo_trainer`` / ``sft_trainer_engine``) in struct mode, so a
  misspelt or stale key fails here; the composed PPO config then goes through verl's own
  ``validate_config`` (batch-size divisibility, micro-batch settings) and dataclass conversion.
* The merge, torchrun and vLLM-sampling argv are parsed by the parsers that will read them.
* The engine's plumbing (sharded sampling, checkpoint resume, metrics parsing, atomic merge) runs
  with fake subprocess runners standing in for vLLM and verl.

The Hydra checks need verl installed (``FGX_EXTRAS=verl bash envs/install.sh``; CI does this).
"""

from __future__ import annotations

import copy
import json
import os
import sys
from pathlib import Path

import pandas as pd
import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

from configs import verl_section  # noqa: E402
from fgx.algos.rl import ALGORITHMS, algorithm  # noqa: E402
from toy import string_rows  # noqa: E402
from fgx.plan import comparisons, params  # noqa: E402
from fgx.engines.verl import commands as C  # noqa: E402
from fgx.engines.verl import engine as E  # noqa: E402
from fgx.engines.verl import environment as ENV  # noqa: E402
from fgx.engines.verl import formats as FMT  # noqa: E402
from fgx.engines.verl import metrics as M  # noqa: E402
from fgx.engines.verl import vllm_sample as VS  # noqa: E402

try:
    import verl
    from hydra import compose, initialize_config_dir
    from hydra.errors import ConfigCompositionException
    from omegaconf import OmegaConf

    VERL_CONFIG_DIR = str(Path(verl.__file__).parent / "trainer" / "config")
    HAVE_VERL = True
except ImportError:  # pragma: no cover - depends on the environment
    HAVE_VERL = False

needs_verl = pytest.mark.skipif(
    not HAVE_VERL, reason="verl not installed: `FGX_EXTRAS=verl bash envs/install.sh` (CI installs it)")


def merged_config(*files: str, model_path: str = "/models/Llama-3.1-8B-Instruct") -> dict:
    """config.yaml updated by each file, as Snakemake's --configfile does."""
    def merge(a, b):
        out = dict(a)
        for k, v in b.items():
            out[k] = merge(a[k], v) if isinstance(v, dict) and isinstance(a.get(k), dict) else v
        return out

    cfg = yaml.safe_load((ROOT / "config.yaml").read_text())
    for f in files:
        cfg = merge(cfg, yaml.safe_load((ROOT / f).read_text()))
    if cfg["model"]["source"] == "path":
        cfg["model"]["path"] = model_path
    return cfg


PAPER = merged_config("config.paper.yaml")
CPU_DEFAULT = {**merged_config(), "engine": "verl"}  # config.yaml's sizes on the verl engine


def rl_jobs(cfg):
    return [(run, json.loads(params.rl_settings(cfg, run))) for run in cfg["rl"]["runs"]]


def sft_jobs(cfg):
    models = ["stage1", *comparisons.rft_eval_models(cfg)]
    return [(m, json.loads(params.sft_settings(cfg, m))) for m in models]


def ppo_kwargs(run, **extra):
    kw = dict(model_dir="/work/results/models/stage1", train_files=[f"/work/results/data/strings/{run}.parquet"],
              val_files=["/work/results/data/strings/val.parquet"], checkpoint_dir=f"/work/results/rl/{run}/work/ckpt",
              experiment_name=f"rl_{run}", reward_path=str(E.REWARD_PATH), n_gpus_per_node=8, nnodes=1)
    kw.update(extra)
    return kw


def sft_kwargs(model, **extra):
    kw = dict(model_dir="/models/init", train_file=f"/work/results/models/.{model}.verl/sft.parquet",
              checkpoint_dir=f"/work/results/models/.{model}.verl/checkpoints", experiment_name=model,
              n_gpus_per_node=8)
    kw.update(extra)
    return kw


@pytest.fixture(scope="module")
def hydra():
    """compose(config_name, overrides) against verl's installed config directory (struct mode)."""
    with initialize_config_dir(config_dir=VERL_CONFIG_DIR, version_base=None):
        def _compose(name, overrides):
            cfg = compose(config_name=name, overrides=list(overrides))
            assert OmegaConf.is_struct(cfg)
            return cfg
        yield _compose


def verl_checks_ppo(cfg):
    """What verl's main_ppo does with the config before any GPU work."""
    from verl.experimental.reward_loop.reward_loop import migrate_legacy_reward_impl
    from verl.trainer.ppo.utils import need_critic, need_reference_policy
    from verl.utils.config import omega_conf_to_dataclass, validate_config

    validate_config(cfg, use_reference_policy=need_reference_policy(cfg), use_critic=need_critic(cfg))
    omega_conf_to_dataclass(cfg.algorithm)
    omega_conf_to_dataclass(cfg.actor_rollout_ref.rollout)
    omega_conf_to_dataclass(cfg.actor_rollout_ref.actor.checkpoint)
    migrate_legacy_reward_impl(copy.deepcopy(cfg))
    OmegaConf.to_container(cfg.trainer, resolve=True)
    OmegaConf.to_container(cfg.data, resolve=True)


# ----------------------------------------------------------------------------- GRPO
@needs_verl
@pytest.mark.parametrize("cfg_name,cfg", [("paper", PAPER), ("cpu-default", CPU_DEFAULT)])
def test_every_rl_command_composes_in_struct_mode(hydra, cfg_name, cfg):
    jobs = rl_jobs(cfg)
    assert {"level1", "level2", "level1to2"} <= {run for run, _ in jobs}, cfg_name
    for run, settings in jobs:
        for nnodes in (1, 2):
            overrides = C.ppo_overrides(settings, **ppo_kwargs(run, nnodes=nnodes))
            composed = hydra(C.PPO_CONFIG, overrides)
            verl_checks_ppo(composed)
            assert composed.trainer.nnodes == nnodes


@needs_verl
def test_cpu_commands_compose_and_mean_the_cpu_setup(hydra):
    """The CPU additions (no GPU visible) compose against verl's config and change only how it runs."""
    run, settings = rl_jobs(CPU_DEFAULT)[0]
    gpu = hydra(C.PPO_CONFIG, C.ppo_overrides(settings, **ppo_kwargs(run, n_gpus_per_node=1)))
    cfg = hydra(C.PPO_CONFIG, C.ppo_overrides(settings, **ppo_kwargs(run, n_gpus_per_node=1), cpu=True))
    verl_checks_ppo(cfg)
    actor, rollout = cfg.actor_rollout_ref.actor, cfg.actor_rollout_ref.rollout
    assert cfg.trainer.device == "cpu" and actor.strategy == "fsdp2" and cfg.actor_rollout_ref.ref.strategy == "fsdp2"
    assert rollout.dtype == "float32" and rollout.enforce_eager and not rollout.enable_sleep_mode
    assert rollout.checkpoint_engine.update_weights_bucket_megabytes == 64
    assert cfg.ray_kwargs.ray_init.num_gpus == 1 and cfg.ray_kwargs.ray_init.num_cpus == 8
    assert cfg.ray_kwargs.ray_init.include_dashboard is False
    for key in ("optim", "ppo_mini_batch_size", "loss_agg_mode", "clip_ratio_low", "clip_ratio_high"):
        assert actor[key] == gpu.actor_rollout_ref.actor[key], key
    assert cfg.algorithm == gpu.algorithm and cfg.data.train_batch_size == gpu.data.train_batch_size
    model, sft = sft_jobs(CPU_DEFAULT)[0]
    sft_cfg = hydra(C.SFT_CONFIG, C.sft_overrides(sft, **sft_kwargs(model, n_gpus_per_node=1), cpu=True))
    assert sft_cfg.trainer.device == "cpu" and sft_cfg.engine.strategy == "fsdp2"
    assert not sft_cfg.engine.use_torch_compile and sft_cfg.data.num_workers == 0
    argv = C.rollout_command(json.loads(params.sampling_settings(CPU_DEFAULT, "eval", "stage1", "test")),
                             model_dir="/m", data_path="/d.parquet", out_dir="/o", cpu=True)
    assert argv[argv.index("--dtype") + 1] == "float32" and "--enforce-eager" in argv
    # on the CPU no prefill is split (a split rewinds the request's seeded generator, which a CPU one cannot)
    assert VS.parse_args(argv[3:]).whole_prefills


@needs_verl
@pytest.mark.parametrize("name", list(ALGORITHMS))
def test_every_rl_algorithm_composes_and_names_an_advantage_estimator_verl_has(hydra, name):
    from verl.trainer.ppo.core_algos import get_adv_estimator_fn

    run, settings = rl_jobs(PAPER)[0]
    cfg = hydra(C.PPO_CONFIG, C.ppo_overrides({**settings, "algorithm": name}, **ppo_kwargs(run)))
    verl_checks_ppo(cfg)
    for key, value in algorithm(name).VERL_OVERRIDES.items():
        assert OmegaConf.select(cfg, key) == value, key
    assert callable(get_adv_estimator_fn(cfg.algorithm.adv_estimator))


@needs_verl
def test_paper_rl_command_means_the_paper_setup(hydra):
    run, settings = rl_jobs(PAPER)[1]
    cfg = hydra(C.PPO_CONFIG, C.ppo_overrides(settings, **ppo_kwargs(run, ray_num_cpus=64)))
    actor, rollout = cfg.actor_rollout_ref.actor, cfg.actor_rollout_ref.rollout
    assert cfg.algorithm.adv_estimator == "grpo" and cfg.algorithm.norm_adv_by_std_in_grpo
    assert cfg.data.train_batch_size == 16 and actor.ppo_mini_batch_size == 16 and rollout.n == 16
    assert actor.optim.lr == 1e-6 and actor.clip_ratio_low == 0.2 and actor.clip_ratio_high == 0.2
    assert actor.loss_agg_mode == "token-mean" and actor.entropy_coeff == 0.0
    assert not actor.use_kl_loss and actor.kl_loss_coef == 0.0 and not cfg.algorithm.use_kl_in_reward
    assert rollout.name == "vllm" and rollout.temperature == 1.0 and rollout.tensor_model_parallel_size == 1
    assert cfg.data.max_response_length == 8192
    assert cfg.data.gen_batch_size is None  # verl fetches prompts one by one under dynamic sampling
    fg = cfg.algorithm.filter_groups
    assert fg.enable and fg.metric == "reward"
    sampler = cfg.trainer.v1.sampler
    assert sampler.custom_sampler.name == "BudgetedReplayBuffer" and sampler.sampler_kwargs.max_generation_batches == 10
    assert sampler.sampler_kwargs.batch_size == 16 and sampler.sampler_kwargs.metric == "reward"
    assert cfg.reward.reward_manager.name == "dapo"
    assert cfg.reward.reward_kwargs.overlong_buffer_cfg.enable and cfg.reward.reward_kwargs.max_resp_len == 8192
    assert cfg.reward.custom_reward_function.path.endswith("fgx/engines/verl/reward.py")
    assert cfg.reward.custom_reward_function.name == "compute_score"
    assert cfg.trainer.total_training_steps == 700 and cfg.trainer.test_freq == 25 and cfg.trainer.save_freq == 25
    assert list(cfg.trainer.logger) == ["console", "file", "tensorboard"] and cfg.trainer.resume_mode == "auto"
    assert cfg.ray_kwargs.ray_init.num_cpus == 64
    assert cfg.actor_rollout_ref.model.path == "/work/results/models/stage1"


@needs_verl
def test_misspelt_or_unknown_keys_fail_composition(hydra):
    run, settings = rl_jobs(PAPER)[0]
    good = C.ppo_overrides(settings, **ppo_kwargs(run))
    for bad in ("actor_rollout_ref.actor.loss_agg_mod=token-mean",      # typo
                "actor_rollout_ref.actor.use_token_level_loss=true",    # removed in current verl
                "reward_model.penalize_overlong=true"):                  # upstream's patched key
        with pytest.raises(ConfigCompositionException):
            hydra(C.PPO_CONFIG, [*good, bad])
    settings = {**settings, "verl": {**settings["verl"], "ppo_overrides": ["trainer.nnode=2"]}}
    with pytest.raises(ConfigCompositionException):
        hydra(C.PPO_CONFIG, C.ppo_overrides(settings, **ppo_kwargs(run)))


@needs_verl
def test_awkward_paths_survive_hydra_quoting(hydra):
    run, settings = rl_jobs(PAPER)[0]
    odd = "/data/my models/Llama 3.1 (8B),v=2's"
    cfg = hydra(C.PPO_CONFIG, C.ppo_overrides(settings, **ppo_kwargs(run, model_dir=odd, experiment_name="123")))
    assert cfg.actor_rollout_ref.model.path == odd and cfg.trainer.experiment_name == "123"


@needs_verl
def test_sdpa_attention_composes_for_rl_and_sft(hydra):
    run, settings = rl_jobs(PAPER)[0]
    settings = {**settings, "verl": {**settings["verl"], "attn_implementation": "sdpa"}}
    cfg = hydra(C.PPO_CONFIG, C.ppo_overrides(settings, **ppo_kwargs(run)))
    assert cfg.actor_rollout_ref.model.override_config.attn_implementation == "sdpa"
    assert not cfg.actor_rollout_ref.model.use_remove_padding
    model, sft = sft_jobs(PAPER)[0]
    sft = {**sft, "verl": {**sft["verl"], "attn_implementation": "sdpa"}}
    argv = C.sft_command(sft, **sft_kwargs(model))
    cfg = hydra(C.SFT_CONFIG, argv[argv.index(C.SFT_MODULE) + 1:])
    assert cfg.model.override_config.attn_implementation == "sdpa" and not cfg.model.use_remove_padding


def test_reinforce_and_kl_map_to_verl_switches():
    run, settings = rl_jobs(PAPER)[0]
    ov = C.ppo_overrides({**settings, "algorithm": "reinforce", "kl_coef": 0.01, "dynamic_sampling": False},
                         **ppo_kwargs(run))
    assert "algorithm.norm_adv_by_std_in_grpo=false" in ov
    assert "actor_rollout_ref.actor.use_kl_loss=true" in ov and "actor_rollout_ref.actor.kl_loss_coef=0.01" in ov
    assert "algorithm.filter_groups.enable=false" in ov
    with pytest.raises(C.SettingsError, match="overlong_buffer"):
        C.ppo_overrides({**settings, "overlong_buffer": 9000}, **ppo_kwargs(run))
    with pytest.raises(C.SettingsError, match="unknown key"):
        C.ppo_overrides({**settings, "verl": {"max_prompt_lenght": 1}}, **ppo_kwargs(run))


# ----------------------------------------------------------------------------- SFT
@needs_verl
@pytest.mark.parametrize("cfg_name,cfg", [("paper", PAPER), ("cpu-default", CPU_DEFAULT)])
def test_every_sft_command_composes_in_struct_mode(hydra, cfg_name, cfg):
    from verl.utils.config import omega_conf_to_dataclass

    jobs = sft_jobs(cfg)
    assert [model for model, _ in jobs][:2] == ["stage1", "rft_level2_iter1"], cfg_name
    for model, settings in jobs:
        argv = C.sft_command(settings, **sft_kwargs(model))
        module_at = argv.index(C.SFT_MODULE)
        composed = hydra(C.SFT_CONFIG, argv[module_at + 1:])
        for section in ("optim", "engine", "checkpoint"):
            omega_conf_to_dataclass(composed[section])
        assert composed.data.train_files.endswith("sft.parquet") and composed.data.messages_key == "messages"
        assert composed.trainer.experiment_name == model


@needs_verl
def test_paper_sft_command_means_the_paper_setup(hydra):
    model, settings = sft_jobs(PAPER)[0]
    argv = C.sft_command(settings, **sft_kwargs(model))
    cfg = hydra(C.SFT_CONFIG, argv[argv.index(C.SFT_MODULE) + 1:])
    assert cfg.optim.lr == 2e-5 and cfg.data.train_batch_size == 128 and cfg.trainer.total_epochs == 2
    assert cfg.data.max_length == 9216 and cfg.model.path == "/models/init"
    # the launcher part is torchrun's own argument syntax
    from torch.distributed.run import get_args_parser

    args = get_args_parser().parse_args(argv[3:])
    assert args.standalone and args.nproc_per_node == "8" and args.module and args.training_script == C.SFT_MODULE


# ----------------------------------------------------------------------------- merge / sample
@needs_verl
def test_merge_command_parses_with_verls_model_merger(monkeypatch):
    from verl.model_merger.base_model_merger import parse_args

    argv = C.merge_command(checkpoint_dir="/w/ckpt/global_step_700/actor", target_dir="/w/.rl_level1.tmp")
    assert argv[1:3] == ["-m", C.MERGE_MODULE]
    monkeypatch.setattr(sys, "argv", ["merger", *argv[3:]])
    args = parse_args()
    assert (args.operation, args.backend) == ("merge", "fsdp")
    assert args.local_dir.endswith("actor") and args.target_dir == "/w/.rl_level1.tmp"


def test_rollout_command_round_trips_through_vllm_sample_args():
    settings = json.loads(params.sampling_settings(PAPER, "eval", "rl_level2", "test"))
    argv = C.rollout_command(settings, model_dir="/m", data_path="/d.parquet", out_dir="/o", shard=3, num_shards=8)
    assert argv[1:3] == ["-m", C.SAMPLE_MODULE]
    a = VS.parse_args(argv[3:])
    assert (a.n, a.temperature, a.top_p, a.max_tokens) == (1024, 1.0, 1.0, 8192)
    assert (a.shard, a.num_shards, a.tensor_parallel_size, a.chunk_prompts) == (3, 8, 1, 128)
    assert a.max_model_len == 1024 + 8192 and a.seed == settings["seed"]
    assert not a.whole_prefills  # a GPU keeps vLLM's chunked prefill


@pytest.mark.parametrize("bad", [["--shard", "8", "--num-shards", "8"], ["--n", "0"], ["--top-p", "0"],
                                 ["--gpu-memory-utilization", "1.5"], ["--temperature", "-1"]])
def test_vllm_sample_rejects_bad_arguments(bad, capsys):
    base = ["--model", "m", "--data", "d", "--out-dir", "o", "--n", "4", "--max-tokens", "16"]
    with pytest.raises(SystemExit):
        VS.parse_args([*base, *bad])
    assert "error" in capsys.readouterr().err


def test_vllm_sample_sharding_and_seeds():
    parts = [VS.shard_indices(103, s, 8) for s in range(8)]
    assert sorted(i for p in parts for i in p) == list(range(103))
    assert VS.chunks(list(range(10)), 4) == [[0, 1, 2, 3], [4, 5, 6, 7], [8, 9]]
    assert VS.request_seed(7, 5) == VS.request_seed(7, 5) != VS.request_seed(7, 6)
    assert VS.chunk_path("/o", 2, 13).name == "shard002-chunk00013.parquet"


def test_vllm_context_is_capped_at_the_models_positions(tmp_path):
    # the tiny default: 512 positions, a 1,024-token prompt budget + 384 new tokens asks for 1,408
    (tmp_path / "config.json").write_text(json.dumps({"max_position_embeddings": 512}))
    assert VS.context_length(tmp_path, 1408) == 512
    assert VS.context_length(tmp_path, 300) == 300
    assert VS.context_length(tmp_path, None) is None  # vLLM derives it from the model
    assert VS.context_length(tmp_path / "no-config", 1408) == 1408


class _Tok:
    def __init__(self, template):
        self.chat_template = template

    def apply_chat_template(self, messages, tokenize, add_generation_prompt):
        assert not tokenize and add_generation_prompt
        return "<s>" + "".join(f"[{m['role']}]{m['content']}" for m in messages) + "[assistant]"

    def __call__(self, texts, add_special_tokens=True):
        return {"input_ids": [([0] if add_special_tokens else []) + [ord(c) for c in t] for t in texts]}


def test_prompt_ids_use_the_chat_template_without_a_second_bos():
    msgs = [{"role": "user", "content": "hi"}]
    ids = VS.prompt_ids(_Tok("{{x}}"), msgs)
    assert "".join(map(chr, ids)) == "<s>[user]hi[assistant]"
    assert VS.prompt_ids(_Tok(None), msgs) == [0, ord("h"), ord("i")]


def test_hydra_values():
    assert C.hydra_value(["console", "file"]) == "[console,file]"
    assert C.hydra_value(True) == "true" and C.hydra_value(None) == "null" and C.hydra_value(1e-6) == "1e-06"
    assert C.hydra_value("123") == "'123'" and C.hydra_value("null") == "'null'"
    assert C.hydra_value("/a b/c") == "'/a b/c'" and C.hydra_value("/a/b.parquet") == "/a/b.parquet"


# ----------------------------------------------------------------------------- engine plumbing
def _rows(n=5):
    return string_rows(n)


def test_sample_runs_one_shard_per_gpu_group_and_assembles_the_contract(tmp_path, monkeypatch):
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "0,1,2,3")
    calls = []

    def fake_parallel(argvs, envs):
        for argv, env in zip(argvs, envs, strict=True):
            a = VS.parse_args(argv[3:])
            calls.append((a.shard, a.num_shards, env["CUDA_VISIBLE_DEVICES"]))
            assert str(ENV.SRC_DIR) in env["PYTHONPATH"].split(os.pathsep)
            rows = pd.read_parquet(a.data)
            recs = [{"row_index": i, "responses": [f"r{i}"] * a.n, "response_tokens": [3] * a.n,
                     "finish_reasons": ["stop"] * a.n, "scores": [1.0 if i % 2 else 0.0] * a.n,
                     "correct": [bool(i % 2)] * a.n} for i in VS.shard_indices(len(rows), a.shard, a.num_shards)]
            Path(a.out_dir).mkdir(parents=True, exist_ok=True)
            pd.DataFrame(recs).to_parquet(VS.chunk_path(a.out_dir, a.shard, 0))

    settings = {"engine": "verl", "device": "cuda", "n": 3, "temperature": 1.0, "max_new_tokens": 32, "seed": 1,
                "tensor_parallel_size": 2, "verl": verl_section()}
    out = tmp_path / "eval" / "test.parquet"
    work = tmp_path / "work" / "eval" / "test"
    E.VerlEngine(parallel_runner=fake_parallel).sample(str(tmp_path / "model"), _rows(), out, work, settings)
    assert sorted(calls) == [(0, 2, "0,1"), (1, 2, "2,3")]
    got = pd.read_parquet(out)
    assert list(got["level"]) == [1, 2, 1, 2, 1] and list(got["n_correct"]) == [0, 3, 0, 3, 0]
    assert got["responses"].map(len).eq(3).all() and all(list(x) == [3, 3, 3] for x in got["response_tokens"])
    assert {"data_source", "prompt", "reward_model", "extra_info", "scores", "correct"} <= set(got.columns)
    assert not work.exists()


def _fake_verl(tmp_path, steps=4):
    """Runner standing in for verl: writes file-logger metrics, a checkpoint, and a merged model."""
    seen = []

    def run(argv, env, cwd=None):
        seen.append(list(argv))
        if C.MERGE_MODULE in argv:
            target = Path(argv[argv.index("--target_dir") + 1])
            (target / "model.safetensors").write_bytes(b"weights")
            (target / "config.json").write_text("{}")
            return
        log_path = Path(env["VERL_FILE_LOGGER_PATH"])
        ov = dict(a.split("=", 1) for a in argv if "=" in a and not a.startswith("--"))
        ckpt = Path(ov.get("trainer.default_local_dir"))
        # verl runs with cwd = the work directory: every path it gets must be absolute
        assert cwd is not None and log_path.is_absolute() and ckpt.is_absolute()
        if C.PPO_MODULE in argv:  # RL: verl's tensorboard logger writes where the torch engine's does
            assert env["TENSORBOARD_DIR"] == str(Path(cwd) / "tensorboard") and Path(cwd).is_absolute()
        for key in ("actor_rollout_ref.model.path", "model.path", "data.train_files"):
            if key in ov:
                assert ov[key].strip("[]'").startswith("/"), (key, ov[key])
        with open(log_path, "w") as fh:
            fh.write(json.dumps({"step": 0, "data": {
                "val-core/codeio-forward-incomplete-depth1/acc/mean@1": 0.5,
                "val-core/codeio-forward-incomplete-depth2/acc/mean@1": 0.25}}) + "\n")
            for s in range(1, steps + 1):
                fh.write(json.dumps({"step": s, "data": {
                    "critic/score/mean": 0.1 * s, "actor/pg_loss": -0.01, "response_length/mean": 100.0,
                    "training/filter_groups/evicted_samples": 12, "training/filter_groups/num_gen_batches": 2,
                    "training/filter_groups/num_groups_trained": 16, "timing_s/step": 3.0,
                    "perf/throughput": 50.0, "train/loss": 1.0 / s, "train/grad_norm": 2.0, "train/lr": 1e-5}}) + "\n")
        dumps = ov.get("trainer.validation_data_dir")
        if dumps not in (None, "null"):  # verl's validation dumps: one line per sample, val_kwargs.n per prompt
            val = pd.read_parquet(ov["data.val_files"].strip("[]'"))
            n = int(ov["actor_rollout_ref.rollout.val_kwargs.n"])
            Path(dumps).mkdir(parents=True, exist_ok=True)
            for s in (0, steps):
                lines = [json.dumps({"input": "q", "output": "a", "gts": rm["ground_truth"], "score": 1.0,
                                     "step": s, "acc": float(j < i % (n + 1) or s > 0)})
                         for i, rm in enumerate(val["reward_model"]) for j in range(n)]
                (Path(dumps) / f"{s}.jsonl").write_text("\n".join(lines) + "\n")
        (ckpt / f"global_step_{steps}" / "actor").mkdir(parents=True, exist_ok=True)
        (ckpt / "latest_checkpointed_iteration.txt").write_text(str(steps))

    return run, seen


def test_rl_writes_metrics_and_a_merged_model_and_resumes(tmp_path, monkeypatch):
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "0,1")
    monkeypatch.delenv("SLURM_JOB_NUM_NODES", raising=False)
    monkeypatch.delenv("SLURM_JOB_ID", raising=False)
    monkeypatch.chdir(tmp_path)  # the rule passes relative paths
    init = tmp_path / "stage1"
    init.mkdir()
    (init / "generation_config.json").write_text("{}")
    (init / "tokenizer.json").write_text("{}")
    for name in ("train.parquet", "val.parquet"):
        _rows().to_parquet(tmp_path / name)
    run, seen = _fake_verl(tmp_path)
    _, settings = rl_jobs(PAPER)[0]
    settings = {**settings, "steps": 4}  # the fake trainer's steps
    engine = E.VerlEngine(runner=run)
    out, metrics, work = Path("models/rl_level1"), Path("rl/metrics.parquet"), Path("rl/work")
    engine.rl(init, tmp_path / "train.parquet", tmp_path / "val.parquet", out, metrics, work, settings,
              validation_path=Path("rl/validation.parquet"))
    ppo = seen[0]
    assert f"trainer.validation_data_dir={(tmp_path / work / 'validation').resolve()}" in ppo
    assert ppo[1:3] == ["-m", C.PPO_MODULE] and "trainer.n_gpus_per_node=2" in ppo and "trainer.nnodes=1" in ppo
    assert seen[1][1:3] == ["-m", C.MERGE_MODULE] and seen[1][seen[1].index("--local_dir") + 1].endswith(
        "global_step_4/actor")
    m = pd.read_parquet(metrics)
    assert list(m.columns) == ["step", "metric", "level", "value"]
    val = m[m.metric == "val_accuracy"].set_index("level")["value"].to_dict()
    # per level, and over every prompt as the torch engine logs it (level -1): 3 of the 5 prompts are Level 1
    assert val == {1: 0.5, 2: 0.25, -1: 0.4}
    assert m[m.metric == "reward"]["value"].round(3).tolist() == [0.1, 0.2, 0.3, 0.4]
    assert m[m.metric == "filtered_group_share"]["value"].tolist() == [0.5] * 4  # 1 - 16 / (2 x 16)
    assert m[m.metric == "num_gen_batches"]["value"].tolist() == [2.0] * 4
    assert m[m.metric == "step_time_s"]["value"].tolist() == [3.0] * 4  # verl's timing_s/step, torch's name
    assert m[m.metric == "pg_loss"]["value"].tolist() == [-0.01] * 4
    assert "verl:perf/throughput" in set(m.metric)  # a metric only verl logs keeps its tag
    # the validation table from verl's dumps: val_kwargs.n samples per prompt, matched by the ground truth
    n = settings["val_n"]
    v = pd.read_parquet("rl/validation.parquet")
    assert list(v.columns) == ["step", "level", "prompt_row", "n_samples", "n_correct"]
    assert v["step"].tolist() == [0] * 5 + [4] * 5 and v["prompt_row"].tolist() == list(range(5)) * 2
    assert v["level"].tolist() == [1, 2, 1, 2, 1] * 2 and (v["n_samples"] == n).all()
    assert v["n_correct"].tolist() == [min(i % (n + 1), n) for i in range(5)] + [n] * 5
    for name in ("model.safetensors", "generation_config.json", "tokenizer.json", "resolved_config.json"):
        assert (out / name).exists(), name
    assert json.loads((out / "resolved_config.json").read_text())["engine"] == "verl"
    # a rerun with the same inputs finds the finished training and only merges again
    seen.clear()
    engine.rl(init, tmp_path / "train.parquet", tmp_path / "val.parquet", out, metrics, work, settings)
    assert len(seen) == 1 and C.MERGE_MODULE in seen[0]
    # changed settings start the work directory afresh
    seen.clear()
    engine.rl(init, tmp_path / "train.parquet", tmp_path / "val.parquet", out, metrics, work,
              {**settings, "lr": 2e-6})
    assert len(seen) == 2 and C.PPO_MODULE in seen[0]


def test_rl_on_several_nodes_goes_through_ray_slurm(tmp_path, monkeypatch):
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "0,1,2,3,4,5,6,7")
    monkeypatch.setenv("SLURM_JOB_NUM_NODES", "2")
    monkeypatch.delenv("SLURM_JOB_ID", raising=False)
    init = tmp_path / "stage1"
    init.mkdir()
    for name in ("train.parquet", "val.parquet"):
        _rows().to_parquet(tmp_path / name)
    run, seen = _fake_verl(tmp_path)
    _, settings = rl_jobs(PAPER)[0]
    settings = {**settings, "steps": 4}
    E.VerlEngine(runner=run).rl(init, tmp_path / "train.parquet", tmp_path / "val.parquet", tmp_path / "out",
                                tmp_path / "m.parquet", tmp_path / "work", settings)
    argv = seen[0]
    assert argv[:3] == ["bash", str(E.RAY_SLURM), "--"] and E.RAY_SLURM.exists()
    assert "trainer.nnodes=2" in argv and "trainer.n_gpus_per_node=8" in argv
    assert not any(a.startswith("ray_kwargs.ray_init.num_cpus") for a in argv)


def test_sft_builds_messages_and_merges(tmp_path, monkeypatch):
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "0")
    init = tmp_path / "base"
    init.mkdir()
    data = _rows(3).assign(response=["a", "b", "c"])
    data.to_parquet(tmp_path / "rft.parquet")
    run, seen = _fake_verl(tmp_path, steps=2)
    _, settings = sft_jobs(PAPER)[0]
    settings = {**settings, "epochs": 2, "batch_size": 3}  # 3 examples: one step per epoch
    out = tmp_path / "models" / "stage1"
    E.VerlEngine(runner=run).sft(init, tmp_path / "rft.parquet", out, tmp_path / "work", settings)
    assert "torch.distributed.run" in seen[0] and "--nproc_per_node=1" in seen[0]
    msgs = pd.read_parquet(tmp_path / "work" / "sft.parquet")["messages"]
    assert [m["role"] for m in msgs[0]] == ["user", "assistant"] and msgs[2][1]["content"] == "c"
    assert seen[1][seen[1].index("--local_dir") + 1].endswith("global_step_2")
    assert (out / "model.safetensors").exists()
    # verl's SFT log as the torch engine's train_log.parquet
    log = pd.read_parquet(out / "train_log.parquet")
    assert list(log.columns) == ["step", "loss", "grad_norm", "lr"] and log["step"].tolist() == [1, 2]
    assert log["loss"].tolist() == [1.0, 0.5] and str(log["step"].dtype) == "int64"
    with pytest.raises(ValueError, match="response"):
        FMT.sft_messages(_rows(2))


def test_a_resumed_sft_logs_each_step_once_the_later_attempts_value(tmp_path):
    """Steps logged by a killed attempt and again by the rerun appear once in train_log, with the rerun's
    values; a torn last line and steps without a loss (verl's validation) are left out."""
    first, second = tmp_path / "attempt-1.jsonl", tmp_path / "attempt-2.jsonl"
    rec = lambda step, loss: json.dumps({"step": step, "data": {"train/loss": loss, "train/grad_norm": 1.0,  # noqa: E731
                                                                "train/lr": 0.1}})
    first.write_text("\n".join([rec(1, 3.0), rec(2, 2.0), rec(3, 9.9)]) + '\n{"step": 4, "da')
    second.write_text("\n".join([rec(3, 1.5), rec(4, 1.0), json.dumps({"step": 5, "data": {"val/loss": 0.5}})]))
    log = M.sft_train_log(M.read_verl_jsonl([second, first]))
    assert log["step"].tolist() == [1, 2, 3, 4] and log["loss"].tolist() == [3.0, 2.0, 1.5, 1.0]
    assert M.sft_train_log({}).columns.tolist() == ["step", "loss", "grad_norm", "lr"]


def test_validation_accuracy_over_every_prompt_is_weighted_by_the_prompts_per_level():
    """The torch engine's level -1 row of val_accuracy, from verl's per-level means; a data source without a
    level is that row already, so none is added beside it."""
    acc = "val-core/codeio-forward-incomplete-depth{}/acc/mean@1"
    steps = {0: {acc.format(1): 1.0, acc.format(3): 0.0}}
    frame = M.metrics_frame(steps, 4, False, val_prompts={1: 3, 3: 1})
    val = frame[frame.metric == "val_accuracy"].set_index("level")["value"].to_dict()
    assert val == {1: 1.0, 3: 0.0, -1: 0.75}
    assert M.metrics_frame(steps, 4, False)["value"].tolist()[-1] == 0.5  # no counts: levels weigh the same
    odd = M.metrics_frame({0: {"val-core/some-other-task/acc/mean@1": 0.3}}, 4, False)
    assert odd[odd.metric == "val_accuracy"][["level", "value"]].values.tolist() == [[-1, 0.3]]


def test_get_engine_returns_the_verl_engine():
    from fgx.engines import get_engine

    engine = get_engine("verl")
    assert isinstance(engine, E.VerlEngine) and all(callable(getattr(engine, m)) for m in ("sample", "sft", "rl"))


def test_resume_fingerprint_holds_what_changes_the_result_and_not_how_it_runs(tmp_path):
    """An out-of-memory fix (token budgets, memory share, micro-batches, offloading) resumes the same
    checkpoints; the world size, a science knob or a knob that changes what is sampled starts afresh."""
    run, settings = rl_jobs(PAPER)[0]
    base = E.fingerprint(settings, False, model="/m", world_size=8)
    machine = {"ppo_max_token_len_per_gpu": 4096, "log_prob_max_token_len_per_gpu": 8192, "gpu_memory_utilization": 0.6,
               "param_offload": False, "optimizer_offload": False, "max_actor_ckpt_to_keep": 3,
               "sft": {"micro_batch_size_per_gpu": 4, "max_token_len_per_gpu": 4096},
               "sample": {"gpu_memory_utilization": 0.5}}
    for key, value in machine.items():
        if isinstance(value, dict):
            value = {**settings["verl"].get(key, {}), **value}
        changed = {**settings, "verl": {**settings["verl"], key: value}}
        assert E.fingerprint(changed, False, model="/m", world_size=8) == base, key
    assert E.fingerprint(settings, False, model="/m", world_size=16) != base
    assert E.fingerprint({**settings, "lr": settings["lr"] * 2}, False, model="/m", world_size=8) != base
    for key, value in {"filter_groups_metric": "score", "max_prompt_length": 512}.items():
        changed = {**settings, "verl": {**settings["verl"], key: value}}
        assert E.fingerprint(changed, False, model="/m", world_size=8) != base, key
    for key, value in {"val_temperature": 0.6, "val_n": 3}.items():  # validation sampling: rl: keys
        assert E.fingerprint({**settings, key: value}, False, model="/m", world_size=8) != base, key
    assert len(machine) == 8


def test_a_damaged_checkpoint_tracker_stops_with_the_file_and_both_fixes(tmp_path):
    """A damaged latest_checkpointed_iteration.txt (torn, or naming a step that is not there) is named with
    the checkpoints found, before verl starts; a good one, or none, lets the trainer run."""
    from fgx.io import InputError

    ran = []
    engine = E.VerlEngine(runner=lambda argv, env, cwd: ran.append(argv))
    ckpt = tmp_path / "work" / "checkpoints"
    (ckpt / "global_step_20").mkdir(parents=True)
    (ckpt / "global_step_40").mkdir()
    engine._train(tmp_path / "work", ["trainer"], {})  # no tracker: a fresh start
    (tmp_path / "work" / E.TRAINED_MARKER).unlink()
    tracker = ckpt / "latest_checkpointed_iteration.txt"
    damaged = ["", "4\x00", "60", "forty"]
    for text in damaged:
        tracker.write_text(text)
        with pytest.raises(InputError, match=r"latest_checkpointed_iteration.txt.*global_step_20, global_step_40.*40"):
            engine._train(tmp_path / "work", ["trainer"], {})
    tracker.write_text("40\n")
    engine._train(tmp_path / "work", ["trainer"], {})
    assert ran == [["trainer"], ["trainer"]] and len(damaged) == 4


def test_a_trainer_that_stops_short_of_its_steps_is_not_marked_finished(tmp_path):
    """verl exiting cleanly before its last step (as its SFT trainer did after an epoch-boundary resume)
    raises naming the step reached, and leaves no finished marker, so a rerun continues."""
    ckpt = tmp_path / "work" / "checkpoints"

    def stops_at(step):
        def run(argv, env, cwd):
            (ckpt / f"global_step_{step}").mkdir(parents=True, exist_ok=True)
            (ckpt / "latest_checkpointed_iteration.txt").write_text(str(step))
        return run

    with pytest.raises(RuntimeError, match=r"after step 2 of 4 .*not marked finished"):
        E.VerlEngine(runner=stops_at(2))._train(tmp_path / "work", ["sft"], {}, steps=4, trainer="SFT trainer")
    assert not (tmp_path / "work" / E.TRAINED_MARKER).exists()
    E.VerlEngine(runner=stops_at(4))._train(tmp_path / "work", ["sft"], {}, steps=4, trainer="SFT trainer")
    assert (tmp_path / "work" / E.TRAINED_MARKER).exists()


def test_sft_data_smaller_than_one_batch_stops_before_verl_starts(tmp_path, monkeypatch):
    from fgx.io import InputError

    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "0")
    init = tmp_path / "base"
    init.mkdir()
    _rows(3).assign(response=["a", "b", "c"]).to_parquet(tmp_path / "rft.parquet")
    run, seen = _fake_verl(tmp_path)
    _, settings = sft_jobs(PAPER)[0]
    with pytest.raises(InputError, match=r"rft.parquet: 3 SFT example\(s\), fewer than one batch of 64.*batch_size"):
        E.VerlEngine(runner=run).sft(init, tmp_path / "rft.parquet", tmp_path / "out", tmp_path / "work",
                                     {**settings, "batch_size": 64})
    assert seen == [] and not (tmp_path / "out").exists()


def test_verl_rl_jobs_on_one_host_take_turns(tmp_path):
    """Two verl RL jobs on one host would bind the same weight-sync socket (both are Ray job 01000000 of
    their own cluster): the host lock lets the second start only once the first has ended."""
    import multiprocessing as mp
    import time

    lock = tmp_path / "weight-sync.lock"
    order = mp.Queue()

    def job(name):
        with ENV.host_lock(lock):
            order.put((name, "start", time.time()))
            time.sleep(0.5)
            order.put((name, "end", time.time()))

    procs = [mp.get_context("fork").Process(target=job, args=(n,)) for n in ("a", "b")]
    for p in procs:
        p.start()
    for p in procs:
        p.join(10)
    events = sorted((order.get(timeout=5) for _ in range(4)), key=lambda e: e[2])
    assert [e[1] for e in events] == ["start", "end", "start", "end"], events
    assert events[0][0] == events[1][0] != events[2][0] == events[3][0]


def test_sft_on_no_examples_returns_the_starting_model_as_the_torch_engine_does(tmp_path, monkeypatch):
    """An iterative-RFT round that keeps no correct answer: no trainer runs, the output is the input model."""
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "0")
    init = tmp_path / "base"
    init.mkdir()
    (init / "model.safetensors").write_bytes(b"weights")
    (init / "tokenizer.json").write_text("{}")
    _rows(0).assign(response=[]).to_parquet(tmp_path / "rft.parquet")
    run, seen = _fake_verl(tmp_path)
    _, settings = sft_jobs(PAPER)[0]
    out = tmp_path / "out"
    E.VerlEngine(runner=run).sft(init, tmp_path / "rft.parquet", out, tmp_path / "work", settings)
    assert seen == [] and (out / "model.safetensors").read_bytes() == b"weights"
    assert json.loads((out / "resolved_config.json").read_text())["engine"] == "verl"


def test_validation_dumps_become_the_torch_engines_validation_table(tmp_path):
    """verl's validation dumps (one line per sample) read back per step and prompt by the ground truth; a
    torn line is skipped, a sample of a prompt the validation file does not hold is refused, and so is a
    validation file with two rows of one ground truth (before any training)."""
    from fgx.engines import validation
    from fgx.io import InputError

    rows = _rows(3)
    truths = validation.ground_truths(rows, "val.parquet")
    dumps = tmp_path / "validation"
    dumps.mkdir()
    line = lambda i, acc: json.dumps({"gts": truths[i], "acc": acc, "score": acc})  # noqa: E731
    (dumps / "0.jsonl").write_text("\n".join([line(0, 1.0), line(0, 0.0), line(2, 1.0), line(2, 1.0)]) + "\n")
    (dumps / "10.jsonl").write_text("\n".join([line(1, 1.0), line(1, 0.0), '{"gts": "torn']))
    (dumps / "not-a-step.jsonl").write_text("ignored\n")
    table = validation.from_verl_dumps(dumps, truths, [1, 2, 1])
    assert table.values.tolist() == [[0, 1, 0, 2, 1], [0, 1, 2, 2, 2], [10, 2, 1, 2, 1]]
    (dumps / "20.jsonl").write_text(json.dumps({"gts": "another file", "acc": 1.0}) + "\n")
    with pytest.raises(ValueError, match="no row of the validation file"):
        validation.from_verl_dumps(dumps, truths, [1, 2, 1])
    twice = pd.concat([rows, rows.head(1)], ignore_index=True)
    with pytest.raises(InputError, match="val.parquet: rows 0 and 3 have the same reward_model.ground_truth"):
        validation.ground_truths(twice, "val.parquet")
