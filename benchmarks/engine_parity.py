"""Engine parity: one RL update and the first SFT steps through verl's own actor code and the torch engine.

Both engines are meant to optimise the same objective (:mod:`fgx.algos.objective`); this measures it on
the CPU, in fp32, seeded. One tiny random Llama, saved once, is the start of both sides.

RL, one update: the same prompts, responses and rewards go (a) through verl 0.9.1's actor as ``main_ppo``
builds it from fgx's overrides (:func:`fgx.engines.verl.commands.ppo_overrides` with ``cpu=True``):
``ActorRolloutRefWorker(role="actor")`` in this process (torch.distributed gloo, world size 1, fgx's CPU
platform), its FSDP2 engine, its ``compute_log_prob`` for the old log-probs, verl's ``compute_advantage`` with
the estimator the overrides name for the advantages and its ``update_actor`` (``ppo_loss``, gradient clip,
AdamW step), fed as verl's trainer feeds it (``left_right_2_no_padding`` and the trainer's meta keys); and
(b) through the torch engine's :func:`fgx.engines.torch.rl.update` with fgx's AdamW. Reported: the loss
difference, the gradient and updated-weight differences, split into matrices and vectors (norm weights:
verl's AdamW decays every parameter, fgx's only matrices). Once per RL algorithm (:mod:`fgx.algos.rl`,
``--algorithms``; the config's own, GRPO, first).

SFT, the first steps: the same batches (the torch engine's length-grouped order) through verl's
``TrainingWorker`` with ``sft_loss`` as ``verl.trainer.sft_trainer`` builds it from
:func:`fgx.engines.verl.commands.sft_overrides`, and through the torch engine's loss (``train``'s
per-token mean over the batch), each with its own optimizer.

    flock ~/.fgx-bench.lock python benchmarks/engine_parity.py [--precision fp32 bf16] [--algorithms grpo rloo]
        [--controls] [--json out.json]

verl's FSDP engine computes in bf16 unless ``mixed_precision`` says otherwise; fgx's CPU overrides set fp32
(:data:`fgx.engines.verl.commands.FP32_MIXED_PRECISION`), and ``bf16`` here takes that override out to show what
verl's default costs. ``--controls`` also runs objectives that must not match: the RL update with the advantages'
sign flipped and with another ``loss_agg_mode``, RLOO's verl update against the torch engine's with REINFORCE's
advantages (RLOO's are those scaled by n / (n - 1)), SFT with verl's own default optimizer.
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))  # run from a checkout

from main_job import machine  # noqa: E402  (the machine's name as every benchmark writes it)

from fgx.algos.rl import ALGORITHMS  # noqa: E402

# the tiny Llama of both sides: two layers, heads of 32 dimensions
SHAPE = dict(hidden_size=64, num_hidden_layers=2, num_attention_heads=2, num_key_value_heads=1,
             intermediate_size=128, max_position_embeddings=256)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def verl_process_env() -> None:
    """This process as one verl rank on the CPU: fgx's CPU platform (:func:`fgx.engines.verl.environment.cpu_env`)
    and a world of one. Must run before verl is imported."""
    from fgx.engines.verl.environment import cpu_env

    for key, value in cpu_env({"cpu_kv_cache_gb": 1}).items():
        if value is None:
            os.environ.pop(key, None)
        else:
            os.environ[key] = value
    for key, value in {"RANK": "0", "WORLD_SIZE": "1", "LOCAL_RANK": "0", "LOCAL_WORLD_SIZE": "1",
                       "MASTER_ADDR": "127.0.0.1"}.items():
        os.environ.setdefault(key, value)
    os.environ.setdefault("MASTER_PORT", str(_free_port()))
    os.environ.setdefault("WANDB_MODE", "disabled")


def tiny_model(work: Path, seed: int = 0) -> Path:
    """A random tiny Llama with fgx's character tokenizer, saved as a Hugging Face directory."""
    from fgx.engines.torch.model import build_model, save_checkpoint
    from fgx.engines.torch.tokenizer import build_char_tokenizer
    from fgx.settings import ModelShape

    tok = build_char_tokenizer(model_max_length=SHAPE["max_position_embeddings"])
    return save_checkpoint(build_model(ModelShape(**SHAPE), tok, seed=seed), tok, work / "model")


def settings(rl: dict | None = None, sft: dict | None = None) -> dict:
    """A job's settings as the DAG writes them (config.yaml + the smoke and verl overlays)."""
    import yaml
    from snakemake.utils import update_config

    from fgx.plan import params

    cfg = yaml.safe_load((ROOT / "config.yaml").read_text())
    for overlay in (".test/config.yaml", ".test/verl.yaml"):
        update_config(cfg, yaml.safe_load((ROOT / overlay).read_text()))
    update_config(cfg, {"rl": rl or {}, "rft_baseline": {"sft": sft or {}}})
    return {"rl": json.loads(params.rl_settings(cfg, "level1")), "sft": json.loads(params.sft_settings(cfg, "stage1"))}


def without_fp32(overrides: list[str]) -> list[str]:
    """fgx's overrides less its fp32 mixed-precision setting: verl's default (bf16) compute."""
    return [o for o in overrides if ".mixed_precision=" not in o]


def replacing(overrides: list[str], extra) -> list[str]:
    """``overrides`` with the keys ``extra`` sets replaced by ``extra``'s values."""
    keys = {e.split("=", 1)[0].lstrip("+") for e in extra}
    return [o for o in overrides if o.split("=", 1)[0].lstrip("+") not in keys] + list(extra)


def compose(config_name: str, overrides: list[str]):
    import verl
    from hydra import compose as hydra_compose
    from hydra import initialize_config_dir
    from hydra.core.global_hydra import GlobalHydra

    GlobalHydra.instance().clear()
    with initialize_config_dir(config_dir=str(Path(verl.__file__).parent / "trainer" / "config"), version_base=None):
        return hydra_compose(config_name=config_name, overrides=overrides)


def _full(t):
    """A full fp32 copy of ``t`` (FSDP2's DTensors gathered)."""
    return (t.full_tensor() if hasattr(t, "full_tensor") else t).detach().float().clone()


def _params(module) -> dict:
    """name -> full fp32 copy of a module's parameters."""
    return {name: _full(p) for name, p in module.named_parameters()}


def capture_grads(module, optimizer) -> dict:
    """Fill the returned dict with name -> gradient as ``optimizer.step`` sees it (after the clip); verl's
    engine zeroes the gradients after its step, so they are read in a step pre-hook."""
    import torch

    names = {id(p): n for n, p in module.named_parameters()}
    grads: dict = {}

    def hook(opt, args, kwargs):
        for group in opt.param_groups:
            for p in group["params"]:
                grads[names[id(p)]] = _full(p.grad) if p.grad is not None else torch.zeros_like(_full(p))

    optimizer.register_step_pre_hook(hook)
    return grads


# ----------------------------------------------------------------------------- RL
def rl_data(seed: int, n_prompts: int = 3, group: int = 4, vocab: int = 60):
    """Random prompts (5..12 tokens), responses (1..20 tokens) and 0/1 rewards that differ in each group."""
    import torch

    g = torch.Generator().manual_seed(seed)
    prompts, responses, rewards, uid = [], [], [], []
    for i in range(n_prompts):
        p = torch.randint(4, vocab, (int(torch.randint(5, 13, (1,), generator=g)),), generator=g).tolist()
        r = [1.0, 0.0] + torch.randint(0, 2, (group - 2,), generator=g).float().tolist()
        for j in range(group):
            n = int(torch.randint(1, 21, (1,), generator=g))
            prompts.append(p)
            responses.append(torch.randint(4, vocab, (n,), generator=g).tolist())
            rewards.append(r[j])
            uid.append(i)
    return prompts, responses, rewards, uid


def rl_overrides(s: dict, model_dir: Path, work: Path, precision: str) -> list[str]:
    from fgx.engines.verl import commands as C
    from fgx.engines.verl.engine import REWARD_PATH

    o = C.ppo_overrides(s, model_dir=str(model_dir), train_files=[str(work / "train.parquet")],
                        val_files=[str(work / "val.parquet")], checkpoint_dir=str(work / "ckpt"),
                        experiment_name="parity", reward_path=str(REWARD_PATH), n_gpus_per_node=1, cpu=True)
    return o if precision == "fp32" else without_fp32(o)


def verl_rl_update(model_dir: Path, s: dict, data, work: Path, precision: str = "fp32", flip: bool = False):
    """One actor update through verl's worker: returns (metrics, old log-probs, advantages, weights, grads)."""
    import numpy as np
    import torch
    from tensordict import TensorDict

    from verl import DataProto
    from verl.trainer.ppo.ray_trainer import compute_advantage
    from verl.utils import tensordict_utils as tu
    from verl.workers.engine_workers import ActorRolloutRefWorker
    from verl.workers.utils.padding import left_right_2_no_padding, no_padding_2_padding

    cfg = compose("ppo_trainer", rl_overrides(s, model_dir, work, precision))
    worker = ActorRolloutRefWorker(cfg.actor_rollout_ref, role="actor")
    worker.init_model()

    prompts, responses, rewards, uid = data
    B, P, R = len(prompts), max(map(len, prompts)), max(map(len, responses))
    pad = 0
    input_ids = torch.full((B, P + R), pad, dtype=torch.long)
    attn = torch.zeros(B, P + R, dtype=torch.long)
    for i, (p, r) in enumerate(zip(prompts, responses)):
        input_ids[i, P - len(p): P] = torch.tensor(p)            # prompts left-padded
        input_ids[i, P: P + len(r)] = torch.tensor(r)            # responses right-padded
        attn[i, P - len(p): P + len(r)] = 1
    response_mask = attn[:, P:].clone()
    position_ids = (attn.cumsum(-1) - 1).clamp_min(0)

    def batch(**extra):
        td = TensorDict({"input_ids": input_ids.clone(), "attention_mask": attn.clone(),
                         "position_ids": position_ids.clone(), "prompts": input_ids[:, :P].clone(),
                         "responses": input_ids[:, P:].clone(), "response_mask": response_mask.clone(), **extra},
                        batch_size=B)
        return left_right_2_no_padding(td)

    # old log-probs: the actor's compute_log_prob, as _compute_old_log_prob calls it
    td = batch()
    tu.assign_non_tensor(td, calculate_entropy=True, compute_loss=False, temperature=1.0)
    out = worker.compute_log_prob(td)
    old = no_padding_2_padding(tu.get(out, "log_probs"), td).float()

    # advantages: the estimator the config names, as verl's trainer calls it, on outcome rewards placed at
    # each response's last token
    scores = torch.zeros(B, R)
    for i, r in enumerate(responses):
        scores[i, len(r) - 1] = rewards[i]
    scored = DataProto.from_dict(tensors={"token_level_rewards": scores, "response_mask": response_mask.float()},
                                 non_tensors={"uid": np.array(uid, dtype=object)})
    adv = compute_advantage(scored, adv_estimator=cfg.algorithm.adv_estimator,
                            norm_adv_by_std_in_grpo=cfg.algorithm.norm_adv_by_std_in_grpo,
                            config=cfg.algorithm).batch["advantages"]
    if flip:
        adv = -adv

    actor = cfg.actor_rollout_ref.actor
    n = cfg.actor_rollout_ref.rollout.n
    td = batch(old_log_probs=old, advantages=adv)
    tu.assign_non_tensor(td, calculate_entropy=actor.entropy_coeff != 0.0, distillation_use_topk=False,
                         distillation_only=False, global_batch_size=actor.ppo_mini_batch_size * n,
                         mini_batch_size=actor.ppo_mini_batch_size * n, epochs=actor.ppo_epochs,
                         seed=actor.data_loader_seed, dataloader_kwargs={"shuffle": actor.shuffle},
                         compute_loss=True, temperature=1.0)
    engine = worker.actor.engine
    grads = capture_grads(engine.module, engine.optimizer)
    out = worker.update_actor(td)
    metrics = tu.get(out, "metrics")
    return metrics, old, adv, _params(engine.module), grads


def torch_rl_update(model_dir: Path, s: dict, data, flip: bool = False, loss_agg_mode: str | None = None,
                    advantages_of: str | None = None):
    """The torch engine's one update on the same data: returns (stats, advantages, weights, grads).
    ``advantages_of``: another algorithm's advantages (a control)."""
    import torch

    from fgx.algos.optimizer import RL_BETAS, RL_WEIGHT_DECAY
    from fgx.algos.rl import algorithm
    from fgx.engines.torch import rl as R
    from fgx.engines.torch.batches import forward_logprobs
    from fgx.engines.torch.model import load_model
    from fgx.engines.torch.optim import adamw
    from fgx.settings import RL

    rl = RL.from_settings({**s, **({"loss_agg_mode": loss_agg_mode} if loss_agg_mode else {})})
    prompts, responses, rewards, uid = data
    model = load_model(model_dir, torch.device("cpu"))
    opt = adamw(model, rl.lr, RL_WEIGHT_DECAY, RL_BETAS)
    adv = algorithm(advantages_of or rl.algorithm).advantages(torch.tensor(rewards), torch.tensor(uid))
    if flip:
        adv = -adv
    seqs = [p + r for p, r in zip(prompts, responses)]
    with torch.no_grad():  # the per-token log-probs of the responses before the update (verl's old log-probs)
        lp = [forward_logprobs(model, torch.tensor([x]))[0][0, len(p) - 1:] for x, p in zip(seqs, prompts)]
    batch = R.Batch(seqs, [len(p) for p in prompts], list(uid), adv)
    grads = capture_grads(model, opt)
    stats = R.update(model, None, opt, batch, rl, pad=0, device=torch.device("cpu"))
    return stats, adv, lp, _params(model), grads


def compare(a: dict, b: dict) -> dict:
    """Max abs difference of two name -> tensor maps, overall, over matrices and over vectors (norms), and
    how many of each. Both maps name the same parameters and both groups hold some, or this raises: a
    parameter one side lacks, or an empty group, would be a difference left unmeasured."""
    if set(a) != set(b):
        raise ValueError(f"parameters on one side only: {sorted(set(a) - set(b))} / {sorted(set(b) - set(a))}")
    names = sorted(a)
    mats = [n for n in names if a[n].dim() >= 2]
    vecs = [n for n in names if a[n].dim() < 2]
    if not mats or not vecs:
        raise ValueError(f"an empty group: {len(mats)} matrices, {len(vecs)} vectors among {names}")

    def mx(ns):
        return max(float((a[n] - b[n]).abs().max()) for n in ns)

    scale = max(float(a[n].abs().max()) for n in names)
    return {"max_abs": mx(names), "max_abs_matrices": mx(mats), "max_abs_vectors": mx(vecs),
            "max_abs_ref": scale, "matrices": len(mats), "vectors": len(vecs)}


def rl_report(v: tuple, t: tuple, start: dict, data, s: dict) -> dict:
    """The numbers of one verl update ``v`` against one torch-engine update ``t`` from the same ``start``."""
    import torch

    from fgx.algos.optimizer import RL_WEIGHT_DECAY

    vm, old, vadv, vw, vg = v
    ts, tadv, tlp, tw, tg = t
    mask = torch.zeros_like(vadv)
    for i, r in enumerate(data[1]):
        mask[i, : len(r)] = 1
    verl_loss = float(sum(vm["loss"]) if isinstance(vm["loss"], list) else vm["loss"])
    # AdamW's decoupled decay, p <- p (1 - lr wd): verl decays every parameter, fgx's AdamW only matrices
    tw_decayed = {k: x - s["lr"] * RL_WEIGHT_DECAY * start[k] if x.dim() < 2 else x for k, x in tw.items()}
    grads, weights = compare(vg, tg), compare(vw, tw)
    return {
        "verl_loss": verl_loss, "torch_loss": ts["loss"], "loss_abs_diff": abs(verl_loss - ts["loss"]),
        "verl_grad_norm": float(vm["grad_norm"][0] if isinstance(vm["grad_norm"], list) else vm["grad_norm"]),
        "torch_grad_norm": ts["grad_norm"],
        "advantage_max_abs_diff": float(((vadv - tadv[:, None]) * mask).abs().max()),
        "old_logprob_max_abs_diff": max(float((old[i, : len(x)] - x).abs().max()) for i, x in enumerate(tlp)),
        "grad_max_abs_diff": grads["max_abs"], "grad_max_abs": grads["max_abs_ref"],
        "grad_rel_diff": grads["max_abs"] / grads["max_abs_ref"],
        "weight_max_abs_diff": weights["max_abs"], "weight_max_abs_diff_matrices": weights["max_abs_matrices"],
        "weight_max_abs_diff_vectors": weights["max_abs_vectors"],
        "weight_max_abs_diff_vectors_decayed_as_verl": compare(vw, tw_decayed)["max_abs_vectors"],
        "weight_rel_diff_matrices_of_lr": weights["max_abs_matrices"] / s["lr"],
        "compared": {"gradients": [grads["matrices"], grads["vectors"]],
                     "weights": [weights["matrices"], weights["vectors"]]},
    }


def rl_parity(work: Path, precision: str = "fp32", seed: int = 0, controls: bool = False,
              algorithm: str | None = None) -> dict:
    """One update both ways on the same model and data, with the config's RL algorithm or ``algorithm``; with
    ``controls`` also deliberately different objectives (verl with the advantages' sign flipped; the torch
    engine with another loss_agg_mode; for RLOO, the torch engine with REINFORCE's advantages)."""
    import torch

    from fgx.engines.torch.model import load_model

    model_dir = work / "model" if (work / "model").exists() else tiny_model(work, seed)
    s = settings(rl={"algorithm": algorithm} if algorithm else None)["rl"]
    data = rl_data(seed, s["batch_size"], s["group_size"])
    start = _params(load_model(model_dir, torch.device("cpu")))
    v = verl_rl_update(model_dir, s, data, work, precision)
    t = torch_rl_update(model_dir, s, data)
    out = {"algorithm": s["algorithm"], "precision": precision, "lr": s["lr"], "loss_agg_mode": s["loss_agg_mode"],
           "sequences": len(data[0]), "response_tokens": sum(map(len, data[1])), "model_parameters": [
               sum(x.dim() >= 2 for x in start.values()), sum(x.dim() < 2 for x in start.values())],
           **rl_report(v, t, start, data, s)}
    if controls and s["algorithm"] == "rloo":
        reinforce = torch_rl_update(model_dir, s, data, advantages_of="reinforce")
        out["control_torch_reinforce_advantages"] = rl_report(v, reinforce, start, data, s)
    elif controls:
        flipped = verl_rl_update(model_dir, s, data, work, precision, flip=True)
        out["control_flipped_advantage"] = rl_report(flipped, t, start, data, s)
        other = torch_rl_update(model_dir, s, data, loss_agg_mode="seq-mean-token-sum")
        out["control_torch_seq_mean_token_sum"] = rl_report(v, other, start, data, s)
    return out


# ----------------------------------------------------------------------------- SFT
# verl 0.9.1's SFT optimizer defaults (sft_trainer_engine.yaml): what fgx's overrides replace
VERL_DEFAULT_SFT_OPTIM = ("optim.betas=[0.9,0.999]", "optim.weight_decay=0.01", "optim.lr_scheduler_type=constant")


def sft_examples(model_dir: Path, n: int, seed: int, max_length: int):
    """(ids, loss_start) of ``n`` random prompt / response pairs, tokenised as the torch engine's SFT does."""
    import random

    from fgx.engines.torch.model import load_tokenizer
    from fgx.engines.torch.supervised import tokenize

    rng = random.Random(seed)
    letters = "abcdefghijklmnopqrstuvwxyz0123456789+-*() "
    text = lambda lo, hi: "".join(rng.choice(letters) for _ in range(rng.randint(lo, hi)))  # noqa: E731
    tok = load_tokenizer(model_dir)
    return tok, tokenize(tok, [text(5, 30) for _ in range(n)], [text(1, 40) for _ in range(n)], max_length,
                         loss_on_prompt=False)


def torch_sft_losses(model_dir: Path, s: dict, tok, examples, steps: int, work: Path) -> list[float]:
    """The torch engine's SFT loop (:func:`fgx.engines.torch.supervised.train`), ``steps`` steps: its logged losses."""
    import pandas as pd
    import torch

    from fgx.engines.torch.model import load_model
    from fgx.engines.torch.supervised import Schedule, train

    model = load_model(model_dir, torch.device("cpu"))
    out = work / "torch_sft"
    train(model, tok, examples, Schedule(steps, s["batch_size"], s["lr"], 0, 0.0), seed=s["seed"],
          device=torch.device("cpu"), out_dir=out, work_dir=work / "torch_sft_work", desc="sft", resolved={},
          inputs={})
    return pd.read_parquet(out / "train_log.parquet")["loss"].tolist()


def sft_batches(examples, s: dict, steps: int) -> list[list[int]]:
    """The torch engine's batch order (epoch 0: its length-grouped, seeded batches), the first ``steps``."""
    import numpy as np

    from fgx.engines.torch.supervised import length_grouped_batches

    rng = np.random.default_rng([s["seed"], 0])
    order = length_grouped_batches([len(x[0]) for x in examples], s["batch_size"], rng)
    return order[:steps]


def verl_sft_losses(model_dir: Path, s: dict, examples, batches, work: Path, precision: str = "fp32",
                    extra: tuple[str, ...] = ()) -> list[float]:
    """verl's SFT path on ``batches``: ``TrainingWorker`` + ``sft_loss`` built as ``verl.trainer.sft_trainer``
    builds them from fgx's overrides, fed no-padding batches with the trainer's meta keys."""
    from functools import partial

    import torch
    from tensordict import NonTensorData

    from fgx.engines.verl import commands as C
    from verl.utils import tensordict_utils as tu
    from verl.utils.config import omega_conf_to_dataclass
    from verl.workers.engine_workers import TrainingWorker, TrainingWorkerConfig
    from verl.workers.utils.losses import sft_loss

    o = C.sft_overrides(s, model_dir=str(model_dir), train_file=str(work / "sft.parquet"),
                        checkpoint_dir=str(work / "sft_ckpt"), experiment_name="parity", n_gpus_per_node=1, cpu=True)
    o = replacing(o if precision == "fp32" else without_fp32(o),
                  [*extra, f"trainer.total_training_steps={len(batches)}"])
    cfg = compose("sft_trainer_engine", o)
    optim = omega_conf_to_dataclass(cfg.optim)
    optim.total_training_steps = len(batches)
    worker = TrainingWorker(TrainingWorkerConfig(
        model_type="language_model", model_config=omega_conf_to_dataclass(cfg.model),
        engine_config=omega_conf_to_dataclass(cfg.engine), optimizer_config=optim,
        checkpoint_config=omega_conf_to_dataclass(cfg.checkpoint),
        profiler_config=omega_conf_to_dataclass(cfg.profiler)))
    worker.set_loss_fn(partial(sft_loss, config=None))
    worker.reset()
    meta = {"use_remove_padding": cfg.model.use_remove_padding, "use_dynamic_bsz": cfg.data.use_dynamic_bsz,
            "max_token_len_per_gpu": cfg.data.max_token_len_per_gpu,
            "micro_batch_size_per_gpu": cfg.data.micro_batch_size_per_gpu, "temperature": 1.0,
            "global_batch_size": cfg.data.train_batch_size, "pad_mode": cfg.data.pad_mode,
            "pad_token_id": worker.model_config.tokenizer.pad_token_id}
    losses = []
    for b in batches:
        ids = [torch.tensor(examples[i][0]) for i in b]
        mask = [(torch.arange(len(x)) >= examples[i][1]).long() for x, i in zip(ids, b)]
        nested = {"input_ids": torch.nested.as_nested_tensor(ids, layout=torch.jagged),
                  "position_ids": torch.nested.as_nested_tensor([torch.arange(len(x)) for x in ids],
                                                                layout=torch.jagged),
                  "loss_mask": torch.nested.as_nested_tensor(mask, layout=torch.jagged)}
        data = tu.get_tensordict(tensor_dict=nested, non_tensor_dict=meta)
        tu.assign_non_tensor(data, update_lr_scheduler=True, global_token_num=NonTensorData([len(x) for x in ids]))
        out = worker.train_batch(data=data)
        losses.append(float(tu.get(out, "metrics")["loss"]))
    return losses


def step1_normalisations(model_dir: Path, examples, batch) -> dict:
    """The first batch's loss under the start model, normalised per token over the batch (both engines' SFT
    loss) and per sequence (the mean of each sequence's token mean), to show that the two differ."""
    import torch

    from fgx.engines.torch.batches import forward_logprobs
    from fgx.engines.torch.model import load_model

    model = load_model(model_dir, torch.device("cpu"))
    per_seq = []
    nll = tokens = 0.0
    with torch.no_grad():
        for i in batch:
            ids, start = examples[i]
            lp = forward_logprobs(model, torch.tensor([ids]))[0][0, start - 1:]
            nll, tokens = nll - float(lp.sum()), tokens + lp.numel()
            per_seq.append(-float(lp.mean()))
    return {"per_token_over_batch": nll / tokens, "per_sequence_mean": sum(per_seq) / len(per_seq)}


def sft_parity(work: Path, precision: str = "fp32", seed: int = 0, steps: int = 4,
                controls: bool = False) -> dict:
    """The first ``steps`` SFT steps: torch engine vs verl (fgx's overrides; with ``controls``, also verl's own
    default optimizer), on the same batches from the same model."""
    model_dir = work / "model" if (work / "model").exists() else tiny_model(work, seed)
    s = settings()["sft"]
    tok, examples = sft_examples(model_dir, s["batch_size"] * steps, seed, s["max_length"])
    batches = sft_batches(examples, s, steps)
    torch_losses = torch_sft_losses(model_dir, s, tok, examples, steps, work / precision)
    verl = verl_sft_losses(model_dir, s, examples, batches, work, precision)
    out = {"precision": precision, "lr": s["lr"], "batch_size": s["batch_size"],
           "step1_normalisations": step1_normalisations(model_dir, examples, batches[0]), "torch": torch_losses,
           "verl": verl, "abs_diff": [abs(a - b) for a, b in zip(torch_losses, verl)]}
    if controls:
        default = verl_sft_losses(model_dir, s, examples, batches, work, precision, VERL_DEFAULT_SFT_OPTIM)
        out["control_verl_default_optimizer"] = {"verl": default,
                                                 "abs_diff": [abs(a - b) for a, b in zip(torch_losses, default)]}
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--precision", nargs="+", default=["fp32"], choices=["fp32", "bf16"])
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--algorithms", nargs="+", default=None, choices=list(ALGORITHMS),
                    help="the RL algorithms of the one-update parity (default: every registered one)")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--controls", action="store_true",
                    help="also run deliberately different objectives (they must not match)")
    ap.add_argument("--sft-steps", type=int, default=4)
    ap.add_argument("--json", default=None, help="also write every number to this JSON file")
    args = ap.parse_args(argv)
    verl_process_env()
    import torch

    torch.set_num_threads(args.threads)
    torch.manual_seed(args.seed)
    print(f"cpu: {machine()}  torch {torch.__version__}")
    report = {"cpu": machine(), "torch": torch.__version__, "verl": __import__("verl").__version__, "runs": []}
    with tempfile.TemporaryDirectory(prefix="fgx-parity-") as tmp:
        work = Path(tmp)
        tiny_model(work, args.seed)
        own = settings()["rl"]["algorithm"]
        algorithms = sorted(args.algorithms or ALGORITHMS, key=lambda name: name != own)  # the config's first
        for precision in args.precision:
            rls = {name: rl_parity(work, precision, args.seed, controls=args.controls, algorithm=name)
                   for name in algorithms}
            sft = sft_parity(work, precision, args.seed, args.sft_steps, controls=args.controls)
            report["runs"].append({"precision": precision, "rl": rls[algorithms[0]], "rl_algorithms": rls, "sft": sft})
            for rl in rls.values():
                print_rl(rl)
            print_sft(sft, precision)
    if args.json:
        Path(args.json).write_text(json.dumps(report, indent=1) + "\n")
    print(f"engine_parity cpu: {report['cpu']}")
    return 0


def print_rl(rl: dict) -> None:
    print(f"\n== {rl['precision']}: RL ({rl['algorithm']}), one update ({rl['sequences']} sequences, "
          f"{rl['response_tokens']} response tokens, lr {rl['lr']}, {rl['loss_agg_mode']})")
    rows = [("loss verl / torch", f"{rl['verl_loss']:.9g} / {rl['torch_loss']:.9g}"),
            ("loss abs diff", f"{rl['loss_abs_diff']:.3g}"),
            ("grad norm verl / torch", f"{rl['verl_grad_norm']:.9g} / {rl['torch_grad_norm']:.9g}"),
            ("old log-prob max abs diff", f"{rl['old_logprob_max_abs_diff']:.3g}"),
            ("advantage max abs diff", f"{rl['advantage_max_abs_diff']:.3g}"),
            ("grad max abs diff (rel to max |g|)", f"{rl['grad_max_abs_diff']:.3g} ({rl['grad_rel_diff']:.3g})"),
            ("weight max abs diff, matrices (/ lr)",
             f"{rl['weight_max_abs_diff_matrices']:.3g} ({rl['weight_rel_diff_matrices_of_lr']:.3g})"),
            ("weight max abs diff, vectors", f"{rl['weight_max_abs_diff_vectors']:.3g}"),
            ("  vectors, fgx decayed as verl", f"{rl['weight_max_abs_diff_vectors_decayed_as_verl']:.3g}")]
    controls = ("control_flipped_advantage", "control_torch_seq_mean_token_sum", "control_torch_reinforce_advantages")
    for name in controls:
        if name in rl:
            c = rl[name]
            rows.append((name, f"loss diff {c['loss_abs_diff']:.3g}, grad diff {c['grad_max_abs_diff']:.3g}, "
                               f"weight diff matrices {c['weight_max_abs_diff_matrices']:.3g}"))
    for k, v in rows:
        print(f"  {k:<40} {v}")


def print_sft(sft: dict, p: str) -> None:
    n = sft["step1_normalisations"]
    print(f"== {p}: SFT, first {len(sft['torch'])} steps (batch {sft['batch_size']}, lr {sft['lr']}); step-1 loss "
          f"per token over the batch {n['per_token_over_batch']:.7f}, per sequence {n['per_sequence_mean']:.7f}")
    control = sft.get("control_verl_default_optimizer", {}).get("verl")
    print(f"  {'step':<5} {'torch':>11} {'verl':>11} {'diff':>9}" + (f" {'control: verl default optim':>28} {'diff':>9}"
                                                                     if control else ""))
    for i, (a, b) in enumerate(zip(sft["torch"], sft["verl"])):
        extra = f" {control[i]:>28.7f} {abs(a - control[i]):>9.2g}" if control else ""
        print(f"  {i + 1:<5} {a:>11.7f} {b:>11.7f} {abs(a - b):>9.2g}" + extra)


if __name__ == "__main__":
    sys.exit(main())
