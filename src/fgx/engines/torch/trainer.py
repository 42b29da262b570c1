"""Training loops of the torch engine: ``pretrain`` (tiny base model), ``sft`` (response-only
loss) and ``rl`` (GRPO / REINFORCE with dynamic sampling, periodic per-level validation,
checkpoints and resume).

Settings arrive as plain dicts; defaults live in the dataclasses below and unknown keys raise.
"""

from __future__ import annotations

import dataclasses
import json
import math
import random
import shutil
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Mapping, Sequence

import numpy as np
import pandas as pd
import torch

from fgx.algos import core
from fgx.algos import get_algorithm
from fgx.engines.torch.model import (ModelSettings, build_model, fill_settings, freeze_parameters, load_model,
                                     load_tokenizer, n_params, publish_checkpoint, resolve_device, save_checkpoint)
from fgx.engines.torch.sampler import generate_ids, decode_completions
from fgx.engines.torch.tokenizer import build_char_tokenizer, encode_prompts, encode_texts, render_prompt
from fgx.io import prepare_work_dir, progress_interval, run_fingerprint, write_json, write_parquet


# ============================================================================ settings
@dataclass
class OptimSettings:
    lr: float = 1e-4
    lr_schedule: str = "cosine"  # cosine | constant
    warmup_steps: int = 0
    min_lr_ratio: float = 0.1  # cosine floor, as a fraction of lr
    weight_decay: float = 0.0
    betas: tuple = (0.9, 0.95)
    grad_clip: float = 1.0
    seed: int = 0
    threads: int | None = None  # torch.set_num_threads; None leaves torch's default
    device: str = "auto"  # auto | cpu | cuda | cuda:N
    bf16: bool = False  # bf16 autocast for forward passes (fast on GPUs / AMX CPUs, slow elsewhere)
    save_every: int = 0  # steps between resumable checkpoints (0: none)
    keep_checkpoints: int = 1
    checkpoint_dir: str | None = None  # default: <out_dir>/checkpoints
    progress: bool = True


@dataclass
class SFTSettings(OptimSettings):
    epochs: float = 1.0
    max_steps: int | None = None  # overrides epochs
    batch_size: int = 64  # sequences per optimizer step
    micro_batch_size: int | None = None  # sequences per forward (default: batch_size)
    max_length: int = 1024  # tokens per sequence (longer ones are truncated)
    loss_on_prompt: bool = False


@dataclass
class PretrainSettings(SFTSettings):
    model: dict = field(default_factory=dict)  # ModelSettings keys
    token_names: list = field(default_factory=list)  # names that get one token each before "("
    lr: float = 1e-3
    epochs: float = 10.0
    loss_on_prompt: bool = True
    weight_decay: float = 0.01
    warmup_steps: int = 100
    position_jitter: float = 0.0  # chance that a position id skips one (see jittered_positions); 0 = plain 0..L-1
    answer_gap: int = 0  # the answer's positions start 0..answer_gap after the prompt's end (see answer_gap_positions)


@dataclass
class RLSettings(OptimSettings):
    algorithm: str = "grpo"  # grpo | reinforce
    total_steps: int = 100
    train_batch_size: int = 64  # prompts (groups) per step
    gen_batch_size: int | None = None  # prompts per generation batch (default train_batch_size)
    n: int = 8  # samples per prompt (group size)
    temperature: float = 1.0
    top_p: float = 1.0
    max_new_tokens: int = 512
    stop: list = field(default_factory=list)
    reward: str = "acc"  # acc: 1.0 if correct else 0.0 | score: compute_score's score
    # GRPO
    clip_low: float = 0.2
    clip_high: float = 0.28
    clip_ratio_c: float | None = 3.0
    loss_agg_mode: str = "token-mean"
    adv_eps: float = 1e-6
    norm_adv_by_std: bool = True
    kl_coef: float | None = None  # None: the algorithm's default (grpo 0.0, reinforce 0.05)
    kl_kind: str = "low_var_kl"
    entropy_coef: float = 0.0
    frozen: list = field(default_factory=list)  # parameter groups held fixed (model.PARAMETER_GROUPS)
    on_policy: bool = True  # one update per batch with old log-probs = current (ratio 1)
    ppo_mini_batch_size: int | None = None  # prompts per optimizer step when not on-policy
    ppo_epochs: int = 1
    micro_batch_size: int = 64  # sequences per forward/backward
    dynamic_sampling: bool = True  # drop groups whose rewards are all equal
    max_num_gen_batches: int = 10  # generation batches per step when filling (0: unlimited)
    # REINFORCE
    baseline: str = "group"  # group | batch | none
    ref_update_every: int = 10  # reset the reference to the policy every K steps (0: never)
    # validation
    val_every: int = 10  # steps between held-out evaluations (0: only before and after)
    val_before_train: bool = True
    val_n: int = 1
    val_temperature: float = 0.0
    val_top_p: float = 1.0
    val_max_new_tokens: int | None = None  # default max_new_tokens
    val_max_prompts_per_level: int | None = None
    # sampling backend
    sampler_batch_size: int = 256
    sampler_dtype: str | None = None  # None: the model's dtype
    lr: float = 1e-5
    lr_schedule: str = "constant"
    weight_decay: float = 0.01
    betas: tuple = (0.9, 0.999)
    save_every: int = 10


def _settings(cls, settings, where):
    if isinstance(settings, cls):
        s = settings
    else:
        s = fill_settings(cls, settings, where)
    s.betas = tuple(s.betas)
    if s.lr_schedule not in ("cosine", "constant"):
        raise ValueError(f"{where}: lr_schedule {s.lr_schedule!r} must be cosine or constant")
    return s


# ============================================================================ shared helpers
def _setup(s: OptimSettings):
    if s.threads:
        torch.set_num_threads(int(s.threads))
    return resolve_device(s.device)


def _seed_all(seed: int):
    random.seed(seed)
    np.random.seed(seed % (2**32))
    torch.manual_seed(seed)


def _read_parquet(path, what: str) -> pd.DataFrame:
    path = Path(path)
    if not path.exists():
        raise FileNotFoundError(f"{path}: {what} parquet not found")
    return pd.read_parquet(path)


def _extra(row) -> dict:
    e = row.get("extra_info") if isinstance(row, Mapping) else row["extra_info"]
    return dict(e) if e is not None else {}


def _prompt_texts(tokenizer, df: pd.DataFrame, source: str) -> list[str]:
    if "prompt" not in df.columns:
        raise ValueError(f"{source}: missing column 'prompt' (list of {{role, content}} messages)")
    return [render_prompt(tokenizer, list(p) if not isinstance(p, str) else p) for p in df["prompt"]]


def _optimizer(model, s: OptimSettings):
    decay, no_decay = [], []
    for n_, p in model.named_parameters():
        if not p.requires_grad:
            continue
        (no_decay if p.dim() < 2 else decay).append(p)
    groups = [{"params": decay, "weight_decay": s.weight_decay}, {"params": no_decay, "weight_decay": 0.0}]
    return torch.optim.AdamW(groups, lr=s.lr, betas=s.betas, eps=1e-8)


def _lr_lambda(s: OptimSettings, total_steps: int) -> Callable[[int], float]:
    def f(step: int) -> float:
        if s.warmup_steps and step < s.warmup_steps:
            return (step + 1) / s.warmup_steps
        if s.lr_schedule == "constant":
            return 1.0
        span = max(1, total_steps - s.warmup_steps)
        prog = min(1.0, (step - s.warmup_steps) / span)
        return s.min_lr_ratio + (1 - s.min_lr_ratio) * 0.5 * (1 + math.cos(math.pi * prog))
    return f


def _pad_right(seqs: Sequence[Sequence[int]], pad_id: int, device) -> torch.Tensor:
    L = max(len(x) for x in seqs)
    out = torch.full((len(seqs), L), pad_id, dtype=torch.long)
    for i, x in enumerate(seqs):
        out[i, : len(x)] = torch.as_tensor(list(x), dtype=torch.long)
    return out.to(device)


def _loss_mask(starts: Sequence[int], lengths: Sequence[int], T: int, device) -> torch.Tensor:
    """Mask over label positions (B, T=L-1): label position t predicts token t+1; tokens
    [start, length) of each sequence count."""
    st = torch.as_tensor(list(starts), device=device)[:, None]
    ln = torch.as_tensor(list(lengths), device=device)[:, None]
    t = torch.arange(T, device=device)[None, :] + 1
    return ((t >= st) & (t < ln)).float()


def jittered_positions(batch: int, length: int, p: float, generator: torch.Generator | None = None,
                       device=None) -> torch.Tensor:
    """Position ids (batch, length) that start at 0 and step by 1, or by 2 with chance ``p``.

    Trained on such positions, a model cannot read a token at a fixed relative offset (the prompt's
    call a fixed distance before the answer's step in every Level-1 trace); it has to find it by
    content, which is what a step inside a longer prompt needs. Inference keeps plain positions,
    one of the sequences this draws (every step 1)."""
    if not 0.0 <= p < 1.0:
        raise ValueError(f"position_jitter {p} must be in [0, 1)")
    steps = 1 + (torch.rand(batch, max(length - 1, 0), generator=generator) < p).long()
    pos = torch.cat([torch.zeros(batch, 1, dtype=torch.long), steps.cumsum(-1)], dim=-1)[:, :length]
    return pos.to(device) if device is not None else pos


def answer_gap_offsets(starts: Sequence[int], length: int, max_gap: int,
                       generator: torch.Generator | None = None, device=None) -> torch.Tensor:
    """Offsets (batch, length) to add to position ids: 0 over the prompt, and over the answer (from
    ``starts[b]`` on) one gap drawn uniformly from 0..``max_gap`` per sequence.

    A Level-1 trace always starts its step a fixed distance after the prompt's call; inside a
    composition more prompt lies between them. Trained on random gaps, the model cannot read the
    prompt at a fixed offset from its answer, while offsets inside the prompt and inside the answer
    (what computing a value needs) stay exact. Inference keeps plain positions (gap 0)."""
    if max_gap < 0:
        raise ValueError(f"answer_gap {max_gap} must be >= 0")
    gaps = torch.randint(0, max_gap + 1, (len(starts),), generator=generator)
    in_answer = torch.arange(length).unsqueeze(0) >= torch.tensor(list(starts)).unsqueeze(1)
    off = in_answer.long() * gaps.unsqueeze(1)
    return off.to(device) if device is not None else off


def forward_logprobs(model, ids: torch.Tensor, *, bf16: bool = False, with_entropy: bool = False,
                     position_ids: torch.Tensor | None = None):
    """Right-padded ids (B, L) -> per-label log-probs (B, L-1) [and entropies]. No attention mask
    is needed: right padding never precedes a real token under causal attention. ``position_ids``
    (B, L): the ids' positions (default 0..L-1)."""
    dev = ids.device
    pos = None if position_ids is None else position_ids[:, :-1]
    with torch.autocast(dev.type, dtype=torch.bfloat16, enabled=bf16):
        logits = model(input_ids=ids[:, :-1], position_ids=pos, use_cache=False).logits
    lp = core.token_logprobs(logits, ids[:, 1:])
    ent = None
    if with_entropy:
        ent = core.entropy_from_logits(logits)
    return lp, ent


class _Bar:
    def __init__(self, enabled: bool, total: int, initial: int, desc: str):
        self.bar = None
        if enabled:
            from tqdm.auto import tqdm

            self.bar = tqdm(total=total, initial=initial, desc=desc, dynamic_ncols=True, mininterval=progress_interval())

    def update(self, n=1, **post):
        if self.bar is not None:
            self.bar.update(n)
            if post:
                self.bar.set_postfix({k: (f"{v:.4g}" if isinstance(v, float) else v) for k, v in post.items()},
                                    refresh=False)

    def close(self):
        if self.bar is not None:
            self.bar.close()


# ============================================================================ checkpoints
# settings that do not change what a run computes: a checkpoint made under other values resumes
RESUME_NEUTRAL = ("progress", "threads", "device", "save_every", "keep_checkpoints", "checkpoint_dir")


class Checkpointer:
    """``root/step_00000012/`` = HF checkpoint + trainer_state.pt (+ extra files), each written
    atomically; the newest complete one is resumed from.

    With a ``fingerprint`` (of the run's settings and inputs) the root is stamped with it, and a
    root stamped otherwise, or not at all, is emptied first: a rerun with a changed setting or input
    starts over instead of resuming a different run's checkpoint."""

    def __init__(self, root: Path, keep: int = 1, fingerprint: str | None = None, max_step: int | None = None):
        self.root = Path(root)
        self.keep = max(1, int(keep))
        if fingerprint is not None and (self.root.exists() or max_step is not None):
            prepare_work_dir(self.root, fingerprint)
            last = self.latest()
            if max_step is not None and last is not None and int(last.name.split("_")[-1]) > max_step:
                print(f"{last} is past the run's {max_step} steps: starting clean")
                shutil.rmtree(self.root)
                prepare_work_dir(self.root, fingerprint)

    def all(self) -> list[Path]:
        if not self.root.exists():
            return []
        return sorted(p for p in self.root.glob("step_*") if (p / "trainer_state.pt").exists()
                      and (p / "config.json").exists())

    def latest(self) -> Path | None:
        c = self.all()
        return c[-1] if c else None

    def save(self, step: int, model, tokenizer, state: dict, extra: Mapping[str, Callable[[Path], Any]] | None = None):
        files = {"trainer_state.pt": lambda p: torch.save(state, p)}
        files.update(extra or {})
        path = save_checkpoint(model, tokenizer, self.root / f"step_{step:08d}", extra_files=files)
        for old in self.all()[: -self.keep]:
            shutil.rmtree(old, ignore_errors=True)
        return path

    @staticmethod
    def restore(path: Path, model, opt, sched) -> dict:
        """Load checkpoint ``path`` into model, optimizer, scheduler and the global RNGs; return
        its trainer state (step and the loop's own fields)."""
        st = torch.load(path / "trainer_state.pt", weights_only=False)
        _load_weights_into(model, path)
        opt.load_state_dict(st["optimizer"])
        sched.load_state_dict(st["scheduler"])
        _set_rng_state(st["rng"])
        return st


def _rng_state() -> dict:
    st = {"python": random.getstate(), "numpy": np.random.get_state(), "torch": torch.get_rng_state()}
    if torch.cuda.is_available():
        st["cuda"] = torch.cuda.get_rng_state_all()
    return st


def _set_rng_state(st: dict):
    random.setstate(st["python"])
    np.random.set_state(st["numpy"])
    torch.set_rng_state(st["torch"])
    if "cuda" in st and torch.cuda.is_available():
        torch.cuda.set_rng_state_all(st["cuda"])


def _load_weights_into(model, ckpt_dir: Path):
    from safetensors.torch import load_file

    files = sorted(Path(ckpt_dir).glob("model*.safetensors"))
    sd = {}
    for f in files:
        sd.update(load_file(str(f)))
    missing, unexpected = model.load_state_dict(sd, strict=False)
    # tied lm_head is not stored
    missing = [m for m in missing if not (m == "lm_head.weight" and model.config.tie_word_embeddings)]
    if missing or unexpected:
        raise RuntimeError(f"{ckpt_dir}: checkpoint does not match the model (missing {missing[:5]}, "
                           f"unexpected {unexpected[:5]}); delete the checkpoint directory to start over")


# ============================================================================ supervised loops
def _tokenize_supervised(tokenizer, prompts: list[str], targets: list[str], max_length: int,
                         loss_on_prompt: bool) -> list[tuple[list[int], int, int]]:
    """(ids, loss_start, answer_start) per example: ids = prompt + target + eos; loss from
    loss_start; the target from answer_start (the prompt's length)."""
    p_ids = encode_prompts(tokenizer, prompts)
    t_ids = encode_texts(tokenizer, targets)
    eos = tokenizer.eos_token_id
    out = []
    for p, t in zip(p_ids, t_ids):
        ids = (p + t + [eos])[:max_length]
        start = 1 if loss_on_prompt else len(p)
        out.append((ids, start, len(p)))
    return out


def _length_grouped_batches(lengths: list[int], batch_size: int, rng: np.random.Generator) -> list[list[int]]:
    """Shuffle, then sort within mega-batches of 50 batches so a batch has similar lengths."""
    idx = rng.permutation(len(lengths)).tolist()
    mega = batch_size * 50
    batches = []
    for m0 in range(0, len(idx), mega):
        chunk = sorted(idx[m0:m0 + mega], key=lambda i: lengths[i])
        batches += [chunk[b: b + batch_size] for b in range(0, len(chunk), batch_size)]
    order = rng.permutation(len(batches)).tolist()
    return [batches[i] for i in order]


def _supervised_train(model, tokenizer, examples, s: SFTSettings, out_dir: Path, device, desc: str,
                      resolved: dict, max_steps_this_run: int | None = None) -> dict:
    n = len(examples)
    if n == 0:
        raise ValueError(f"{desc}: no training examples")
    steps_per_epoch = math.ceil(n / s.batch_size)
    total = int(s.max_steps) if s.max_steps else max(1, int(math.ceil(s.epochs * steps_per_epoch)))
    mb = s.micro_batch_size or s.batch_size
    opt = _optimizer(model, s)
    sched = torch.optim.lr_scheduler.LambdaLR(opt, _lr_lambda(s, total))
    fp = run_fingerprint(resolved, RESUME_NEUTRAL, data=resolved.get("data_path"), model=resolved.get("model_dir"))
    ckpt = Checkpointer(Path(s.checkpoint_dir) if s.checkpoint_dir else out_dir / "checkpoints", s.keep_checkpoints,
                        fingerprint=fp, max_step=total if s.save_every else None)
    step, log = 0, []
    last = ckpt.latest() if s.save_every else None
    if last is not None:
        st = ckpt.restore(last, model, opt, sched)
        step, log = st["step"], st["log"]
        print(f"{desc}: resumed from {last} at step {step}/{total}")
    lengths = [len(x[0]) for x in examples]
    jitter = float(getattr(s, "position_jitter", 0.0))
    gap = int(getattr(s, "answer_gap", 0))
    model.train()
    bar = _Bar(s.progress, total, step, desc)
    t0, ntok = time.time(), 0
    run_steps = 0
    while step < total:
        epoch, k = divmod(step, steps_per_epoch)
        batches = _length_grouped_batches(lengths, s.batch_size, np.random.default_rng([s.seed, epoch]))
        batch = batches[k]
        tokens = sum(lengths[i] - examples[i][1] for i in batch)
        opt.zero_grad(set_to_none=True)
        tot_loss = 0.0
        for m0 in range(0, len(batch), mb):
            sub = batch[m0:m0 + mb]
            ids = _pad_right([examples[i][0] for i in sub], tokenizer.pad_token_id or 0, device)
            mask = _loss_mask([examples[i][1] for i in sub], [lengths[i] for i in sub], ids.shape[1] - 1, device)
            pos = None
            if jitter > 0 or gap > 0:  # seeded per step and micro-batch: a resumed run draws the same positions
                gen = torch.Generator().manual_seed((s.seed * 1_000_003 + step * 1009 + m0) % 2**63)
                pos = (jittered_positions(ids.shape[0], ids.shape[1], jitter, gen, device) if jitter > 0
                       else torch.arange(ids.shape[1], device=device).expand(ids.shape[0], -1))
                if gap > 0:
                    pos = pos + answer_gap_offsets([examples[i][2] for i in sub], ids.shape[1], gap, gen, device)
            lp, _ = forward_logprobs(model, ids, bf16=s.bf16, position_ids=pos)
            loss = -(lp * mask).sum() / max(tokens, 1)
            loss.backward()
            tot_loss += float(loss.detach())
        gn = torch.nn.utils.clip_grad_norm_(model.parameters(), s.grad_clip if s.grad_clip else float("inf"))
        opt.step()
        sched.step()
        step += 1
        run_steps += 1
        ntok += sum(lengths[i] for i in batch)
        log.append({"step": step, "loss": tot_loss, "grad_norm": float(gn), "lr": sched.get_last_lr()[0]})
        bar.update(1, loss=tot_loss, tok_s=int(ntok / max(time.time() - t0, 1e-9)))
        if s.save_every and step % s.save_every == 0 and step < total:
            ckpt.save(step, model, tokenizer, {"optimizer": opt.state_dict(), "scheduler": sched.state_dict(),
                                               "step": step, "log": log, "rng": _rng_state()})
        if max_steps_this_run is not None and run_steps >= max_steps_this_run and step < total:
            bar.close()
            raise KeyboardInterrupt(f"{desc}: stopped after {run_steps} steps (max_steps_this_run)")
    bar.close()
    model.eval()
    resolved = dict(resolved, n_params=n_params(model), total_steps=total, n_examples=n)

    def write_log(p):
        pd.DataFrame(log).to_parquet(p, index=False)

    def write_cfg(p):
        p.write_text(json.dumps(resolved, indent=2, sort_keys=True, default=str) + "\n")

    save_checkpoint(model, tokenizer, out_dir, extra_files={"train_log.parquet": write_log,
                                                            "resolved_config.json": write_cfg})
    return {"steps": total, "final_loss": log[-1]["loss"] if log else None}


def pretrain(data_path, out_dir, settings: Mapping[str, Any] | None = None, *,
             max_steps_this_run: int | None = None) -> dict:
    """Train the tiny base model from scratch: next-token loss on prompt + extra_info.solution + eos."""
    s = _settings(PretrainSettings, settings, "pretrain settings")
    ms = fill_settings(ModelSettings, s.model, "pretrain settings: model")
    device = _setup(s)
    _seed_all(s.seed)
    df = _read_parquet(data_path, "pretraining data")
    tok = build_char_tokenizer(model_max_length=ms.max_positions, names=s.token_names)
    prompts = _prompt_texts(tok, df, str(data_path))
    sols = []
    for i, (_, row) in enumerate(df.iterrows()):
        sol = _extra(row).get("solution")
        if not isinstance(sol, str) or not sol:
            raise ValueError(f"{data_path}: row {i} has no extra_info.solution; pretraining needs the reference "
                             "solution (generate the data with style='compact')")
        sols.append(sol)
    examples = _tokenize_supervised(tok, prompts, sols, min(s.max_length, ms.max_positions), s.loss_on_prompt)
    model = build_model(ms, tok, seed=s.seed).to(device)
    resolved = {"stage": "pretrain", "data_path": str(data_path), **dataclasses.asdict(s),
                "model": dataclasses.asdict(ms)}
    return _supervised_train(model, tok, examples, s, Path(out_dir), device, "pretrain", resolved,
                             max_steps_this_run)


def sft(model_dir, data_path, out_dir, settings: Mapping[str, Any] | None = None, *,
        max_steps_this_run: int | None = None) -> dict:
    """Supervised fine-tuning on prompt rows + ``response``: loss on response tokens (+ eos) only."""
    s = _settings(SFTSettings, settings, "sft settings")
    device = _setup(s)
    _seed_all(s.seed)
    df = _read_parquet(data_path, "SFT data")
    if "response" not in df.columns:
        raise ValueError(f"{data_path}: missing column 'response'; build it with fgx.algos.rft.filter_rollouts")
    tok = load_tokenizer(model_dir)
    model = load_model(model_dir, device)
    examples = _tokenize_supervised(tok, _prompt_texts(tok, df, str(data_path)), [str(r) for r in df["response"]],
                                    s.max_length, s.loss_on_prompt)
    resolved = {"stage": "sft", "model_dir": str(model_dir), "data_path": str(data_path), **dataclasses.asdict(s)}
    return _supervised_train(model, tok, examples, s, Path(out_dir), device, "sft", resolved, max_steps_this_run)


# ============================================================================ scoring
def default_score_fn():
    from fgx.tasks import compute_score  # lazy: tasks is an independent module

    return compute_score


def score_responses(rows: pd.DataFrame, responses: list[list[str]], score_fn=None, source: str = "rows"):
    """(scores, correct) per row, lists aligned with ``responses``."""
    score_fn = score_fn or default_score_fn()
    scores, correct = [], []
    for i, (resp, (_, row)) in enumerate(zip(responses, rows.iterrows())):
        rm = row.get("reward_model")
        if rm is None or "ground_truth" not in rm:
            raise ValueError(f"{source}: row {i} has no reward_model.ground_truth")
        sc, co = [], []
        for r in resp:
            out = score_fn(row["data_source"], r, rm["ground_truth"], _extra(row))
            if isinstance(out, Mapping):
                sc.append(float(out.get("score", 0.0)))
                co.append(bool(out.get("acc", False)))
            else:
                sc.append(float(out))
                co.append(float(out) > 0)
        scores.append(sc)
        correct.append(co)
    return scores, correct


def _levels(df: pd.DataFrame) -> list[int]:
    return [int(_extra(r).get("depth", -1)) for _, r in df.iterrows()]


# ============================================================================ RL
class _PromptStream:
    """Endless seeded stream of prompt indices, reshuffled every epoch; position is resumable."""

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

    def state(self):
        return {"epoch": self.epoch, "pos": self.pos}


def evaluate(model, tokenizer, rows: pd.DataFrame, *, n: int, temperature: float, top_p: float,
             max_new_tokens: int, seed: int, batch_size: int, dtype=None, stop=(), score_fn=None,
             progress: bool = False) -> pd.DataFrame:
    """Sample + score ``rows``; returns a frame with level, accuracy (mean over samples), length."""
    prompts = encode_prompts(tokenizer, _prompt_texts(tokenizer, rows, "validation"))
    comps = generate_ids(model, tokenizer, prompts, n=n, temperature=temperature, top_p=top_p,
                         max_new_tokens=max_new_tokens, stop=stop, seed=seed, batch_size=batch_size,
                         dtype=dtype, progress=progress, desc="validation")
    texts = decode_completions(tokenizer, comps, stop)
    by_row = [texts[i * n:(i + 1) * n] for i in range(len(rows))]
    _, correct = score_responses(rows, by_row, score_fn, "validation")
    lens = [float(np.mean([len(c.token_ids) for c in comps[i * n:(i + 1) * n]])) for i in range(len(rows))]
    return pd.DataFrame({"level": _levels(rows), "accuracy": [float(np.mean(c)) for c in correct],
                         "length": lens})


def _val_rows(df: pd.DataFrame, cap: int | None, seed: int) -> pd.DataFrame:
    if not cap:
        return df.reset_index(drop=True)
    lv = pd.Series(_levels(df), index=df.index)
    parts = []
    for level in sorted(lv.unique()):
        idx = lv.index[lv == level]
        if len(idx) > cap:
            idx = np.random.default_rng([seed, int(level) + 1000]).choice(idx, size=cap, replace=False)
            idx = sorted(idx)
        parts.append(df.loc[idx])
    return pd.concat(parts).reset_index(drop=True)


def rl(model_dir, train_path, val_path, out_dir, metrics_path, settings: Mapping[str, Any] | None = None, *,
       score_fn=None, max_steps_this_run: int | None = None) -> dict:
    """RL from ``model_dir`` on ``train_path`` prompts. Writes the final HF checkpoint into
    ``out_dir`` (beside ``checkpoints/``), ``out_dir/resolved_config.json`` and the long-format
    metrics parquet (step, metric, level, value) to ``metrics_path``. Resumes from the newest
    checkpoint in the checkpoint directory."""
    s = _settings(RLSettings, settings, "rl settings")
    if s.loss_agg_mode not in core.LOSS_AGG_MODES:
        raise ValueError(f"rl settings: loss_agg_mode {s.loss_agg_mode!r} not in {core.LOSS_AGG_MODES}")
    if s.reward not in ("acc", "score"):
        raise ValueError(f"rl settings: reward {s.reward!r} must be acc or score")
    algo = get_algorithm(s.algorithm, s)
    device = _setup(s)
    _seed_all(s.seed)
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    train = _read_parquet(train_path, "RL train").reset_index(drop=True)
    val = _val_rows(_read_parquet(val_path, "RL validation"), s.val_max_prompts_per_level, s.seed) \
        if val_path is not None else None
    tok = load_tokenizer(model_dir)
    model = load_model(model_dir, device)
    if s.frozen:
        n_frozen = freeze_parameters(model, s.frozen)
        print(f"rl: {n_frozen} of {n_params(model)} parameters frozen ({', '.join(s.frozen)})", flush=True)
    ref = None
    if algo.needs_ref:
        ref = load_model(model_dir, device).eval()
        ref.requires_grad_(False)
    train_prompts = encode_prompts(tok, _prompt_texts(tok, train, str(train_path)))
    opt = _optimizer(model, s)
    sched = torch.optim.lr_scheduler.LambdaLR(opt, _lr_lambda(s, s.total_steps))
    # under a constant learning rate the run length does not change the steps before it, so a longer
    # run may resume a shorter one's checkpoint; any other change of settings or inputs starts clean
    length_neutral = ("total_steps",) if s.lr_schedule == "constant" else ()
    fp = run_fingerprint(dataclasses.asdict(s), RESUME_NEUTRAL + length_neutral, model=model_dir, train=train_path,
                         val=val_path)
    ckpt = Checkpointer(Path(s.checkpoint_dir) if s.checkpoint_dir else out_dir / "checkpoints", s.keep_checkpoints,
                        fingerprint=fp, max_step=s.total_steps if s.save_every else None)
    stream = _PromptStream(len(train), s.seed)
    metrics: list[dict] = []
    step = 0
    resolved = {"stage": "rl", "model_dir": str(model_dir), "train_path": str(train_path),
                "val_path": str(val_path), **dataclasses.asdict(s), "kl_coef_effective": algo.kl_coef}
    last = ckpt.latest()
    if last is not None:
        st = ckpt.restore(last, model, opt, sched)
        step, metrics = st["step"], st["metrics"]
        stream = _PromptStream(len(train), s.seed, **st["stream"])
        if ref is not None and (last / "ref_model.safetensors").exists():
            from safetensors.torch import load_file

            ref.load_state_dict(load_file(str(last / "ref_model.safetensors")), strict=False)
        print(f"rl: resumed from {last} at step {step}/{s.total_steps}")

    val_new = s.val_max_new_tokens or s.max_new_tokens
    vdt = s.sampler_dtype

    def add(step_, metric, value, level=-1):
        metrics.append({"step": int(step_), "metric": metric, "level": int(level), "value": float(value)})

    def run_val(step_):
        if val is None or len(val) == 0:
            return
        ev = evaluate(model, tok, val, n=s.val_n, temperature=s.val_temperature, top_p=s.val_top_p,
                      max_new_tokens=val_new, seed=s.seed + 7919 * step_, batch_size=s.sampler_batch_size,
                      dtype=vdt, stop=s.stop, score_fn=score_fn)
        for level, g in ev.groupby("level"):
            add(step_, "val_accuracy", g["accuracy"].mean(), level)
            add(step_, "val_response_length", g["length"].mean(), level)
        add(step_, "val_accuracy", ev["accuracy"].mean())
        return ev["accuracy"].mean()

    if step == 0 and s.val_before_train:
        run_val(0)
    gen_bs = s.gen_batch_size or s.train_batch_size
    mini = s.train_batch_size if (s.on_policy or not s.ppo_mini_batch_size) else s.ppo_mini_batch_size
    epochs = 1 if s.on_policy else s.ppo_epochs
    bar = _Bar(s.progress, s.total_steps, step, f"rl[{s.algorithm}]")
    run_steps = 0
    pad = tok.pad_token_id if tok.pad_token_id is not None else tok.eos_token_id
    while step < s.total_steps:
        t_step = time.time()
        # ------------------------------------------------ generate (dynamic sampling)
        groups, n_gen, n_groups_seen, n_groups_kept = [], 0, 0, 0
        all_rewards, all_correct, all_lens = [], [], []
        while len(groups) < s.train_batch_size:
            idx = stream.take(gen_bs)
            comps = generate_ids(model, tok, [train_prompts[i] for i in idx], n=s.n, temperature=s.temperature,
                                 top_p=s.top_p, max_new_tokens=s.max_new_tokens, stop=s.stop,
                                 seed=s.seed * 1_000_003 + step * 1009 + n_gen, batch_size=s.sampler_batch_size,
                                 dtype=s.sampler_dtype)
            texts = decode_completions(tok, comps, s.stop)
            rows = train.iloc[idx]
            scores, correct = score_responses(rows, [texts[j * s.n:(j + 1) * s.n] for j in range(len(idx))],
                                              score_fn, str(train_path))
            n_gen += 1
            for j, i in enumerate(idx):
                r = [float(c) for c in correct[j]] if s.reward == "acc" else scores[j]
                cs = comps[j * s.n:(j + 1) * s.n]
                all_rewards += r
                all_correct += correct[j]
                all_lens += [len(c.token_ids) for c in cs]
                n_groups_seen += 1
                if s.dynamic_sampling and len(set(r)) <= 1:
                    continue
                n_groups_kept += 1
                groups.append((i, r, cs))
            if not s.dynamic_sampling:
                break
            if s.max_num_gen_batches and n_gen >= s.max_num_gen_batches:
                break
        groups = groups[: s.train_batch_size]
        gen_time = time.time() - t_step
        # ------------------------------------------------ update
        stats_acc: dict[str, list[float]] = {}
        if groups:
            seqs, starts, rewards, gid = [], [], [], []
            for g, (i, r, cs) in enumerate(groups):
                for rr, c in zip(r, cs):
                    seqs.append(train_prompts[i] + c.token_ids)
                    starts.append(len(train_prompts[i]))
                    rewards.append(rr)
                    gid.append(g)
            adv = algo.advantages(torch.tensor(rewards), torch.tensor(gid)).to(device)
            seq_lens = [len(x) for x in seqs]
            n_seq = len(seqs)
            old_lp = ref_lp = None
            need_old = not s.on_policy

            def micro_batches(ix):
                ix = sorted(ix, key=lambda k: seq_lens[k])
                return [ix[m: m + s.micro_batch_size] for m in range(0, len(ix), s.micro_batch_size)]

            def tensors(sub):
                ids = _pad_right([seqs[k] for k in sub], pad, device)
                mask = _loss_mask([starts[k] for k in sub], [seq_lens[k] for k in sub], ids.shape[1] - 1, device)
                return ids, mask

            def stack(d, sub, T):
                out = torch.zeros(len(sub), T, device=device)
                for r_, k in enumerate(sub):
                    v = d[k][:T]
                    out[r_, : v.shape[0]] = v
                return out

            if need_old or ref is not None:
                old_lp, ref_lp = {}, {}
                with torch.no_grad():
                    for sub in micro_batches(range(n_seq)):
                        ids, _ = tensors(sub)
                        for want, net, store in ((need_old, model, old_lp), (ref is not None, ref, ref_lp)):
                            if want:
                                lp, _ = forward_logprobs(net, ids, bf16=s.bf16)
                                for r_, k in enumerate(sub):
                                    store[k] = lp[r_, : seq_lens[k] - 1]
            model.train()
            seq_group = np.asarray(gid)
            adv_list = adv.tolist()
            skip_zero_adv = ref is None and s.entropy_coef == 0 and s.algorithm == "grpo"
            for _ in range(epochs):
                for m0 in range(0, len(groups), mini):
                    ix = np.nonzero((seq_group >= m0) & (seq_group < m0 + mini))[0].tolist()
                    n_tok = sum(seq_lens[k] - starts[k] for k in ix)
                    denom = n_tok if s.loss_agg_mode == "token-mean" else len(ix)
                    if skip_zero_adv:
                        # exact: with no KL / entropy term a zero-advantage sequence has zero loss and
                        # zero gradient; it still counts in the token-mean denominator
                        ix = [k for k in ix if adv_list[k] != 0.0]
                    n_tok_tr = max(1, sum(seq_lens[k] - starts[k] for k in ix))
                    opt.zero_grad(set_to_none=False)
                    mb_stats: dict[str, float] = {}
                    for sub in micro_batches(ix):
                        ids, mask = tensors(sub)
                        T = ids.shape[1] - 1
                        lp, ent = forward_logprobs(model, ids, bf16=s.bf16, with_entropy=True)
                        if s.entropy_coef == 0:
                            ent = ent.detach()
                        batch = {"logprobs": lp, "mask": mask, "advantages": adv[sub], "entropy": ent,
                                 "old_logprobs": stack(old_lp, sub, T) if need_old else lp.detach()}
                        if ref is not None:
                            batch["ref_logprobs"] = stack(ref_lp, sub, T)
                        loss, st_ = algo.loss(batch, denom=denom)
                        loss.backward()
                        # loss pieces already carry the mini-batch denominator: sum them; masked means
                        # (clipfrac, approx_kl, ratio) are weighted by the micro-batch's token share
                        w = float(mask.sum()) / n_tok_tr
                        mb_stats["loss"] = mb_stats.get("loss", 0.0) + float(loss.detach())
                        for k_, v_ in st_.items():
                            add_w = 1.0 if k_ in ("pg_loss", "kl", "entropy") else w
                            mb_stats[k_] = mb_stats.get(k_, 0.0) + float(v_) * add_w
                    gn = torch.nn.utils.clip_grad_norm_(model.parameters(),
                                                        s.grad_clip if s.grad_clip else float("inf"))
                    mb_stats["grad_norm"] = float(gn)
                    opt.step()
                    for k_, v_ in mb_stats.items():
                        stats_acc.setdefault(k_, []).append(v_)
            model.eval()
        sched.step()
        step += 1
        run_steps += 1
        if ref is not None and algo.refresh_ref(step):
            ref.load_state_dict(model.state_dict())
        # ------------------------------------------------ metrics
        add(step, "reward", np.mean(all_rewards) if all_rewards else 0.0)
        add(step, "accuracy", np.mean(all_correct) if all_correct else 0.0)
        add(step, "response_length", np.mean(all_lens) if all_lens else 0.0)
        add(step, "filtered_group_share", 1 - n_groups_kept / max(n_groups_seen, 1))
        add(step, "num_gen_batches", n_gen)
        add(step, "num_groups_trained", len(groups))
        add(step, "lr", sched.get_last_lr()[0])
        add(step, "step_time_s", time.time() - t_step)
        add(step, "gen_time_s", gen_time)
        for k_, v_ in stats_acc.items():
            add(step, k_, float(np.mean(v_)))
        vacc = None
        if s.val_every and step % s.val_every == 0 and step < s.total_steps:
            vacc = run_val(step)
        bar.update(1, reward=float(np.mean(all_rewards)) if all_rewards else 0.0,
                   kept=f"{n_groups_kept}/{n_groups_seen}", **({"val": float(vacc)} if vacc is not None else {}))
        if s.save_every and step % s.save_every == 0 and step < s.total_steps:
            state = {"optimizer": opt.state_dict(), "scheduler": sched.state_dict(), "step": step,
                     "metrics": metrics, "stream": stream.state(), "rng": _rng_state(),
                     "settings": dataclasses.asdict(s)}
            extra = {}
            if ref is not None:
                from safetensors.torch import save_file

                ref_sd = {k: v.contiguous() for k, v in ref.state_dict().items()
                          if not (k == "lm_head.weight" and ref.config.tie_word_embeddings)}
                extra["ref_model.safetensors"] = lambda p: save_file(ref_sd, str(p))
            ckpt.save(step, model, tok, state, extra)
        if max_steps_this_run is not None and run_steps >= max_steps_this_run and step < s.total_steps:
            bar.close()
            raise KeyboardInterrupt(f"rl: stopped after {run_steps} steps (max_steps_this_run)")
    bar.close()
    if not any(m["step"] == step and m["metric"] == "val_accuracy" for m in metrics):
        run_val(step)
    publish_checkpoint(model, tok, out_dir, max_new_tokens=s.max_new_tokens)
    write_json(dict(resolved, n_params=n_params(model), final_step=step), out_dir / "resolved_config.json")
    mdf = pd.DataFrame(metrics, columns=["step", "metric", "level", "value"])
    # the run's resolved settings travel in the parquet metadata (figures' config_hash provenance)
    write_parquet(mdf, metrics_path, settings=dict(resolved, final_step=step))
    return {"steps": step, "metrics": mdf}
