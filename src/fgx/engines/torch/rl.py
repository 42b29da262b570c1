"""RL of the torch engine: the algorithm ``rl.algorithm`` names (:mod:`fgx.algos.rl`) with outcome
reward and dynamic sampling (:mod:`fgx.algos.objective`), held-out accuracy per level every
``eval_every`` steps (``val_n`` samples per prompt at ``val_temperature``: :mod:`fgx.engines.validation`),
and resumable checkpoints every ``save_every`` steps in a work directory outside the output.

One step is three functions: :func:`rollout` samples groups until the batch is full (dynamic
sampling drops groups whose rewards are all equal), :func:`build_batch` turns the kept groups into
sequences and advantages, and :func:`update` makes one on-policy optimizer step on them.
"""

from __future__ import annotations

import dataclasses
import functools
import time
from dataclasses import dataclass
from typing import Any, Mapping

import numpy as np
import pandas as pd
import torch

from fgx.algos import objective
from fgx.algos import rl as algorithms
from fgx.algos.optimizer import GRAD_CLIP, RL_BETAS, RL_WEIGHT_DECAY
from fgx.engines import validation
from fgx.engines.prompts import encode_prompts, prompt_texts
from fgx.engines.torch import tensorboard
from fgx.engines.torch.batches import forward_logprobs, loss_mask, pad_right
from fgx.engines.torch.checkpoint import Checkpointer
from fgx.engines.torch.model import load_model, load_tokenizer, n_params, resolve_device, save_checkpoint
from fgx.engines.torch.optim import adamw, constant
from fgx.engines.torch.sampler import decode_completions, generate_ids
from fgx.io import check_replaceable_dir, read_rows, run_fingerprint, write_json, write_parquet
from fgx.progress import Bar
from fgx.seeds import derive_seed
from fgx.settings import RL, Runtime
from fgx.tasks import compute_score, reward, score_rows
from fgx.tasks.contract import row_levels

MICRO_BATCH = 64             # sequences per forward/backward (a step's gradient is their sum)
SAMPLER_BATCH = 256          # sequences decoded together on the CPU (a GPU's: compute.gpu_slots)
# settings that do not change a step's result: a checkpoint made under other values resumes. Under
# the constant learning rate the run length does not change the steps before it either, so a
# longer run resumes a shorter one's last checkpoint.
RESUME_NEUTRAL = ("threads", "device", "steps", "save_every")


def effective_settings(s: RL) -> dict:
    """What this engine's RL optimises, in engine-neutral names (tests/test_rl_contract.py holds it
    beside the verl engine's :func:`fgx.engines.verl.commands.effective_settings`)."""
    return {
        "steps": s.steps, "prompts_per_step": s.batch_size, "prompts_per_update": s.batch_size,
        "updates_per_batch": 1, "group_size": s.group_size, "lr": float(s.lr), "lr_schedule": "constant",
        "warmup": 0.0, "weight_decay": RL_WEIGHT_DECAY, "betas": RL_BETAS, "grad_clip": GRAD_CLIP,
        "algorithm": s.algorithm,
        "clip_low": objective.CLIP_RATIO, "clip_high": objective.CLIP_RATIO, "clip_ratio_c": objective.CLIP_RATIO_C,
        "loss_agg_mode": s.loss_agg_mode, "entropy_coef": float(s.entropy_coef), "kl_coef": float(s.kl_coef),
        "kl_kind": objective.KL_KIND, "kl_reference": "starting model", "reward": s.reward,
        "overlong_buffer": s.overlong_buffer, "overlong_penalty_factor": 1.0,
        "dynamic_sampling": bool(s.dynamic_sampling), "filter_metric": "reward",
        "generation_batch": s.batch_size if s.dynamic_sampling else None,
        "max_generation_batches": s.max_generation_batches if s.dynamic_sampling else None,
        "temperature": float(s.temperature), "top_p": 1.0, "max_new_tokens": s.max_new_tokens,
        "eval_every": s.eval_every, "save_every": s.save_every,
        "val_n": s.val_n, "val_temperature": float(s.val_temperature),
    }


class PromptStream:
    """Endless seeded stream of prompt indices, reshuffled every epoch; its position is resumable."""

    def __init__(self, n: int, seed: int, epoch: int = 0, pos: int = 0):
        self.n, self.seed, self.epoch, self.pos = n, seed, epoch, pos
        self._perm()

    def _perm(self):
        self.order = np.random.default_rng([self.seed, self.epoch]).permutation(self.n).tolist()

    def take(self, k: int) -> list[int]:
        out = []
        while len(out) < k:
            if self.pos >= self.n:
                self.epoch, self.pos = self.epoch + 1, 0
                self._perm()
            j = min(self.n - self.pos, k - len(out))
            out += self.order[self.pos: self.pos + j]
            self.pos += j
        return out

    def state(self) -> dict:
        return {"epoch": self.epoch, "pos": self.pos}


@dataclass
class Rollout:
    """What one step sampled: the kept groups (prompt index, rewards, completions) and the counts
    its metrics report over every group sampled."""

    groups: list
    rewards: list
    correct: list
    lengths: list
    n_gen: int
    seen: int


def rollout(model, tok, s: RL, seed: int, step: int, stream: PromptStream, train: pd.DataFrame, prompts,
            source: str, score_fn, slots: int = SAMPLER_BATCH) -> Rollout:
    """Sample groups of ``group_size`` responses until ``batch_size`` groups have rewards that differ
    (every group when dynamic sampling is off), at most ``max_generation_batches`` batches."""
    out = Rollout([], [], [], [], 0, 0)
    while True:
        idx = stream.take(s.batch_size)
        comps = generate_ids(model, tok, [prompts[i] for i in idx], n=s.group_size, temperature=s.temperature,
                             max_new_tokens=s.max_new_tokens, seed=seed * 1_000_003 + step * 1009 + out.n_gen,
                             batch_size=slots)
        texts = decode_completions(tok, comps)
        n = s.group_size
        scores, correct = score_rows(train.iloc[idx], [texts[j * n:(j + 1) * n] for j in range(len(idx))],
                                     source, score_fn)
        out.n_gen += 1
        for j, i in enumerate(idx):
            cs = comps[j * n:(j + 1) * n]
            r = [reward({"score": sc, "acc": co}, s.reward) for sc, co in zip(scores[j], correct[j])]
            if s.overlong_buffer:
                pen = objective.overlong_penalty(torch.tensor([len(c.token_ids) for c in cs]), s.max_new_tokens,
                                                 s.overlong_buffer)
                r = [a + float(b) for a, b in zip(r, pen)]
            out.rewards += r
            out.correct += correct[j]
            out.lengths += [len(c.token_ids) for c in cs]
            out.seen += 1
            if s.dynamic_sampling and not objective.informative_group(r):
                continue
            out.groups.append((i, r, cs))
        if not objective.another_generation_batch(len(out.groups), out.n_gen, batch_size=s.batch_size,
                                                  max_batches=s.max_generation_batches,
                                                  dynamic_sampling=s.dynamic_sampling):
            break
    out.groups = out.groups[: s.batch_size]
    return out


@dataclass
class Batch:
    """The sequences of one update: prompt + response ids, where each response starts, its group's
    id and its advantage."""

    seqs: list
    starts: list
    groups: list
    advantages: torch.Tensor

    @property
    def lengths(self) -> list[int]:
        return [len(x) for x in self.seqs]


def build_batch(groups, prompts, algorithm: str, device) -> Batch:
    seqs, starts, rewards, gid = [], [], [], []
    for g, (i, r, cs) in enumerate(groups):
        for rr, c in zip(r, cs):
            seqs.append(prompts[i] + c.token_ids)
            starts.append(len(prompts[i]))
            rewards.append(rr)
            gid.append(g)
    adv = algorithms.algorithm(algorithm).advantages(torch.tensor(rewards), torch.tensor(gid)).to(device)
    return Batch(seqs, starts, gid, adv)


def micro_batch_loss(s: RL, logprobs, entropy, mask, advantages, ref_logprobs, denom):
    """The policy loss of one micro-batch and its statistics (the algorithm's ``policy_loss``, see
    :mod:`fgx.algos.rl`, on the model's log-probs and entropies): :func:`update`'s, and the captured GPU step's."""
    mb = {"logprobs": logprobs, "mask": mask, "advantages": advantages,
          "entropy": entropy.detach() if s.entropy_coef == 0 else entropy, "old_logprobs": logprobs.detach()}
    if ref_logprobs is not None:
        mb["ref_logprobs"] = ref_logprobs
    return algorithms.algorithm(s.algorithm).policy_loss(mb, kl_coef=s.kl_coef, entropy_coef=s.entropy_coef,
                                                         loss_agg_mode=s.loss_agg_mode, denom=denom)


def update(model, ref, opt, batch: Batch, s: RL, pad: int, device, graphed=None) -> dict[str, float]:
    """One on-policy optimizer step on ``batch``; returns the step's loss statistics. ``graphed``: the
    run's :class:`fgx.engines.torch.graphed_training.PolicyUpdateStep` (a GPU), which takes the batch in one
    pass instead of micro-batches."""
    lens = batch.lengths

    def micro_batches(ix):
        ix = sorted(ix, key=lambda k: lens[k])
        return [ix[m: m + MICRO_BATCH] for m in range(0, len(ix), MICRO_BATCH)]

    def tensors(sub):
        ids = pad_right([batch.seqs[k] for k in sub], pad, device)
        return ids, loss_mask([batch.starts[k] for k in sub], [lens[k] for k in sub], ids.shape[1] - 1, device)

    ix = list(range(len(batch.seqs)))
    n_tok = sum(lens[k] - batch.starts[k] for k in ix)
    denom = n_tok if s.loss_agg_mode == "token-mean" else len(ix)
    if ref is None and s.entropy_coef == 0:
        # exact: with no KL or entropy term a zero-advantage sequence has zero loss and zero gradient;
        # it still counts in the token-mean denominator
        adv = batch.advantages.tolist()
        ix = [k for k in ix if adv[k] != 0.0]
    if graphed is not None:  # the whole batch in one captured pass (a GPU)
        model.train()
        out = graphed(batch.seqs, batch.starts, batch.advantages, ix, denom, [g["lr"] for g in opt.param_groups])
        model.eval()
        return {k: float(v) for k, v in out.items() if ix or k == "grad_norm"}
    ref_lp = {}
    if ref is not None:
        with torch.no_grad():
            for sub in micro_batches(ix):
                lp, _ = forward_logprobs(ref, tensors(sub)[0])
                for r_, k in enumerate(sub):
                    ref_lp[k] = lp[r_, : lens[k] - 1]
    n_tok_tr = max(1, sum(lens[k] - batch.starts[k] for k in ix))
    model.train()
    opt.zero_grad(set_to_none=False)
    stats: dict[str, float] = {}
    for sub in micro_batches(ix):
        ids, mask = tensors(sub)
        T = ids.shape[1] - 1
        lp, ent = forward_logprobs(model, ids, with_entropy=True)
        sub_ref = None
        if ref is not None:
            sub_ref = torch.zeros(len(sub), T, device=device)
            for r_, k in enumerate(sub):
                sub_ref[r_, : ref_lp[k][:T].shape[0]] = ref_lp[k][:T]
        loss, st = micro_batch_loss(s, lp, ent, mask, batch.advantages[sub], sub_ref, denom)
        loss.backward()
        # loss pieces already carry the batch's denominator: sum them; masked means (clipfrac,
        # approx_kl, ratio) are weighted by the micro-batch's token share
        w = float(mask.sum()) / n_tok_tr
        stats["loss"] = stats.get("loss", 0.0) + float(loss.detach())
        for k, v in st.items():
            stats[k] = stats.get(k, 0.0) + float(v) * (1.0 if k in ("pg_loss", "kl", "entropy") else w)
    stats["grad_norm"] = float(torch.nn.utils.clip_grad_norm_(model.parameters(), GRAD_CLIP))
    opt.step()
    model.eval()
    return stats


def validate(model, tok, rows: pd.DataFrame, prompts, s: RL, seed: int, score_fn,
             slots: int = SAMPLER_BATCH) -> pd.DataFrame:
    """Per held-out prompt: its level, the correct flags of its ``val_n`` samples at ``val_temperature``
    (``correct``), their mean (``accuracy``) and their mean response length. ``seed`` is the validation's
    own: the training's sampling never draws from it."""
    n = s.val_n
    comps = generate_ids(model, tok, prompts, n=n, temperature=s.val_temperature, max_new_tokens=s.max_new_tokens,
                         seed=seed, batch_size=slots, desc="validation")
    texts = decode_completions(tok, comps)
    _, correct = score_rows(rows, [texts[i * n:(i + 1) * n] for i in range(len(rows))], "validation", score_fn)
    return pd.DataFrame({"level": row_levels(rows), "correct": correct,
                         "accuracy": [float(np.mean(c)) for c in correct],
                         "length": [float(np.mean([len(c.token_ids) for c in comps[i * n:(i + 1) * n]]))
                                    for i in range(len(rows))]})


def rl(model_dir, train_path, val_path, out_dir, metrics_path, work_dir, settings: Mapping[str, Any], *,
       validation_path=None, score_fn=compute_score, stop_after: int | None = None) -> dict:
    """RL from ``model_dir`` on the prompts of ``train_path``. Writes the final HF directory
    ``out_dir`` (with ``resolved_config.json``), the long-format metrics parquet (step, metric,
    level, value) ``metrics_path`` and (given ``validation_path``) the held-out samples' correct counts
    per step and prompt there (:mod:`fgx.engines.validation`); resumes from the newest checkpoint in
    ``work_dir``. Each step's
    metrics also go to TensorBoard event files in ``work_dir/tensorboard`` as they are produced
    (:mod:`fgx.engines.torch.tensorboard`).
    ``stop_after``: stop (KeyboardInterrupt) after this many steps of this call, for tests of resuming."""
    s, rt = RL.from_settings(settings), Runtime.from_settings(settings)
    if rt.threads:
        torch.set_num_threads(int(rt.threads))
    device = resolve_device(rt.device)
    slots = rt.gpu_slots if device.type == "cuda" and rt.gpu_slots else SAMPLER_BATCH
    import random

    random.seed(rt.seed)
    np.random.seed(rt.seed % (2**32))
    torch.manual_seed(rt.seed)
    train = read_rows(train_path, "RL train prompts", ("prompt", "reward_model", "data_source")).reset_index(drop=True)
    val = read_rows(val_path, "RL validation prompts", ("prompt", "reward_model", "data_source", "extra_info"))
    val = val.reset_index(drop=True)
    val_levels = row_levels(val, val_path)  # before any training: a row without a level stops the job here
    tok = load_tokenizer(model_dir)
    model = load_model(model_dir, device)
    ref = None
    if s.kl_coef > 0:
        ref = load_model(model_dir, device).eval()
        ref.requires_grad_(False)
    prompts = encode_prompts(tok, prompt_texts(tok, train, str(train_path)))
    val_prompts = encode_prompts(tok, prompt_texts(tok, val, str(val_path)))
    opt = adamw(model, s.lr, RL_WEIGHT_DECAY, RL_BETAS, capturable=device.type == "cuda")
    sched = torch.optim.lr_scheduler.LambdaLR(opt, constant)
    resolved = {"stage": "rl", "model_dir": str(model_dir), "train_path": str(train_path),
                "val_path": str(val_path), **dataclasses.asdict(s), "seed": rt.seed}
    fingerprint = run_fingerprint(resolved, RESUME_NEUTRAL, model=model_dir, train=train_path, val=val_path)
    check_replaceable_dir(out_dir)  # before the training, not after it
    files = [model_dir, train_path, val_path, out_dir, metrics_path, validation_path]
    ckpt = Checkpointer(work_dir, fingerprint, others=files)
    stream = PromptStream(len(train), rt.seed)
    metrics: list[dict] = []
    val_rows: list[dict] = []  # the validation table's rows (fgx.engines.validation)
    step = 0
    last = ckpt.latest()
    if last is not None and int(last.name.split("_")[-1]) > s.steps:
        print(f"rl: {last} is past the run's {s.steps} steps: starting clean", flush=True)
        ckpt.remove()
        ckpt, last = Checkpointer(work_dir, fingerprint, others=files), None
    if last is not None:
        st = ckpt.restore(last, model, opt, sched)
        step, metrics, val_rows = st["step"], st["metrics"], st["validation"]
        stream = PromptStream(len(train), rt.seed, **st["stream"])
        print(f"rl: resumed from {last} at step {step}/{s.steps}", flush=True)
    # rows restored from the checkpoint (steps <= step) were logged by an earlier attempt: a resumed
    # attempt logs from step + 1 on and hides the killed attempt's points from there (purge_step)
    tb = tensorboard.EventWriter(ckpt.root / tensorboard.SUBDIR, purge_step=step + 1 if last is not None else None)
    tb_sources = tensorboard.val_sources(val_levels, val["data_source"]) if len(val) else {}
    tb_done = len(metrics)

    def log_tb():
        nonlocal tb_done
        tensorboard.write_rows(tb, metrics[tb_done:], tb_sources, s.val_n)
        tb_done = len(metrics)

    def add(step_, metric, value, level=-1):
        metrics.append({"step": int(step_), "metric": metric, "level": int(level), "value": float(value)})

    # one seed for every validation, of its own: the same prompts meet the same random draws at every step
    # (a change between steps is the policy's, less the sampling's), and the training's stream is untouched
    val_seed = derive_seed(rt.seed, "validation")

    def run_val(step_):
        if len(val) == 0:
            return None
        ev = validate(model, tok, val, val_prompts, s, val_seed, score_fn, slots)
        val_rows.extend(validation.rows_of_step(step_, ev["level"], ev["correct"]))
        for level, g in ev.groupby("level"):
            add(step_, "val_accuracy", g["accuracy"].mean(), level)
            add(step_, "val_response_length", g["length"].mean(), level)
        add(step_, "val_accuracy", ev["accuracy"].mean())
        return ev["accuracy"].mean()

    if step == 0:
        run_val(0)
        log_tb()
    bar = Bar(True, s.steps, step, f"rl[{s.algorithm}]")
    pad = tok.pad_token_id if tok.pad_token_id is not None else tok.eos_token_id
    graphed = None
    if device.type == "cuda":  # after any restore: the graph holds the optimizer state it finds
        from fgx.engines.torch.graphed_training import PolicyUpdateStep

        graphed = PolicyUpdateStep(model, ref, opt, functools.partial(micro_batch_loss, s), s.batch_size * s.group_size,
                                   max(map(len, prompts)) + s.max_new_tokens, pad, device)
    run_steps = 0
    while step < s.steps:
        t_step = time.time()
        ro = rollout(model, tok, s, rt.seed, step, stream, train, prompts, str(train_path), score_fn, slots)
        gen_time = time.time() - t_step
        stats = update(model, ref, opt, build_batch(ro.groups, prompts, s.algorithm, device), s, pad, device,
                       graphed) if ro.groups else {}
        sched.step()
        step += 1
        run_steps += 1
        add(step, "reward", np.mean(ro.rewards) if ro.rewards else 0.0)
        add(step, "accuracy", np.mean(ro.correct) if ro.correct else 0.0)
        add(step, "response_length", np.mean(ro.lengths) if ro.lengths else 0.0)
        add(step, "filtered_group_share", 1 - len(ro.groups) / max(ro.seen, 1))
        add(step, "num_gen_batches", ro.n_gen)
        add(step, "num_groups_trained", len(ro.groups))
        add(step, "lr", sched.get_last_lr()[0])
        add(step, "step_time_s", time.time() - t_step)
        add(step, "gen_time_s", gen_time)
        for k, v in stats.items():
            add(step, k, v)
        vacc = run_val(step) if step % s.eval_every == 0 and step < s.steps else None
        log_tb()
        bar.update(1, reward=float(np.mean(ro.rewards)) if ro.rewards else 0.0, kept=f"{len(ro.groups)}/{ro.seen}",
                   **({"val": float(vacc)} if vacc is not None else {}))
        if step % s.save_every == 0 and step < s.steps:
            ckpt.save(step, model, tok, {"optimizer": opt.state_dict(), "scheduler": sched.state_dict(), "step": step,
                                         "metrics": metrics, "validation": val_rows, "stream": stream.state()})
        if stop_after is not None and run_steps >= stop_after and step < s.steps:
            bar.close()
            tb.close()
            raise KeyboardInterrupt(f"rl: stopped after {run_steps} steps (stop_after)")
    bar.close()
    if not any(m["step"] == step and m["metric"] == "val_accuracy" for m in metrics):
        run_val(step)
        log_tb()
    tb.close()
    final = dict(resolved, n_params=n_params(model), final_step=step)
    save_checkpoint(model, tok, out_dir, max_new_tokens=s.max_new_tokens,
                    extra_files={"resolved_config.json": lambda p: write_json(final, p)})
    mdf = pd.DataFrame(metrics, columns=["step", "metric", "level", "value"])
    # the run's resolved settings travel in the parquet metadata (figures' config_hash provenance)
    write_parquet(mdf, metrics_path, settings=final)
    vdf = validation.frame(val_rows)
    if validation_path is not None:
        write_parquet(vdf, validation_path, settings=final)
    return {"steps": step, "metrics": mdf, "validation": vdf}

