"""Supervised training of the torch engine: ``pretrain`` (the tiny base model from scratch, on
prompts and their reference traces) and ``sft`` (fine-tuning on responses, loss on the response).

Both run one loop (:func:`train`): length-grouped batches reshuffled each epoch, AdamW with a
warm-up and cosine decay, and a time-based checkpoint in a work directory outside the output, so
a killed job resumes where it stopped and ends with the same weights as an uninterrupted one. On a
GPU each step replays a CUDA graph of the fixed-shape step
(:class:`fgx.engines.torch.graphed_training.SupervisedStep`) and the log reads the losses back every
:data:`LOG_EVERY` steps rather than waiting for each one; on the CPU the step is the eager one.
"""

from __future__ import annotations

import dataclasses
import json
import math
import time
from pathlib import Path
from typing import Any, Mapping

import numpy as np
import pandas as pd
import torch

from fgx.algos.optimizer import GRAD_CLIP, MIN_LR_RATIO, SFT_WEIGHT_DECAY, SUPERVISED_BETAS
from fgx.engines.torch.batches import forward_logprobs, loss_mask, pad_right
from fgx.engines.torch.checkpoint import Checkpointer
from fgx.engines.torch.model import build_model, load_model, load_tokenizer, n_params, resolve_device, save_checkpoint
from fgx.engines.torch.optim import adamw, warmup_cosine
from fgx.engines.prompts import encode_prompts, encode_texts, prompt_texts
from fgx.engines.torch.tokenizer import build_char_tokenizer
from fgx.io import InputError, check_replaceable_dir, read_rows, run_fingerprint
from fgx.progress import Bar
from fgx.settings import SFT, Pretrain, Runtime

LOG_EVERY = 100  # GPU: steps between two reads of the losses (each read waits for the device)


@dataclasses.dataclass(frozen=True)
class Schedule:
    """What one supervised run optimises: steps, batch size, peak lr, warm-up, weight decay."""

    steps: int
    batch_size: int
    lr: float
    warmup_steps: int
    weight_decay: float


def tokenize(tokenizer, prompts: list[str], targets: list[str], max_length: int,
             loss_on_prompt: bool) -> list[tuple[list[int], int]]:
    """(ids, loss_start) per example: ids = prompt + target + eos, cut at ``max_length``; the loss
    counts from loss_start (1 with ``loss_on_prompt``, else the prompt's length)."""
    eos = tokenizer.eos_token_id
    out = []
    for p, t in zip(encode_prompts(tokenizer, prompts), encode_texts(tokenizer, targets)):
        out.append(((p + t + [eos])[:max_length], 1 if loss_on_prompt else len(p)))
    return out


def length_grouped_batches(lengths: list[int], batch_size: int, rng: np.random.Generator) -> list[list[int]]:
    """Shuffle, then sort within mega-batches of 50 batches so a batch has similar lengths."""
    idx = rng.permutation(len(lengths)).tolist()
    mega = batch_size * 50
    batches = []
    for m0 in range(0, len(idx), mega):
        chunk = sorted(idx[m0:m0 + mega], key=lambda i: lengths[i])
        batches += [chunk[b: b + batch_size] for b in range(0, len(chunk), batch_size)]
    order = rng.permutation(len(batches)).tolist()
    return [batches[i] for i in order]


def eager_step(model, opt, examples, batch: list[int], pad: int, device) -> tuple[torch.Tensor, torch.Tensor]:
    """One optimizer step on the examples ``batch`` (right-padded to the longest): the mean next-token
    loss over their counted tokens; returns the loss and the gradient norm before clipping."""
    tokens = sum(len(examples[i][0]) - examples[i][1] for i in batch)
    opt.zero_grad(set_to_none=True)
    ids = pad_right([examples[i][0] for i in batch], pad, device)
    mask = loss_mask([examples[i][1] for i in batch], [len(examples[i][0]) for i in batch], ids.shape[1] - 1, device)
    lp, _ = forward_logprobs(model, ids)
    loss = -(lp * mask).sum() / max(tokens, 1)
    loss.backward()
    gn = torch.nn.utils.clip_grad_norm_(model.parameters(), GRAD_CLIP)
    opt.step()
    return loss, gn


def train(model, tokenizer, examples, sched_: Schedule, *, seed: int, device, out_dir: Path, work_dir: Path,
          desc: str, resolved: dict, inputs: Mapping[str, Any], stop_after: int | None = None) -> dict:
    """Train ``model`` on ``examples`` (see :func:`tokenize`), write the HF directory ``out_dir``
    with ``train_log.parquet`` and ``resolved_config.json``. Checkpoints go to ``work_dir`` (stamped
    with the run's fingerprint: ``resolved`` and ``inputs``) and are removed once ``out_dir`` is written.
    ``stop_after``: stop (KeyboardInterrupt) after this many steps of this call, for tests of resuming."""
    n = len(examples)
    if n == 0:
        raise ValueError(f"{desc}: no training examples")
    steps_per_epoch = math.ceil(n / sched_.batch_size)
    total = sched_.steps
    cuda = torch.device(device).type == "cuda"
    opt = adamw(model, sched_.lr, sched_.weight_decay, SUPERVISED_BETAS, capturable=cuda)
    sched = torch.optim.lr_scheduler.LambdaLR(opt, warmup_cosine(sched_.warmup_steps, total, MIN_LR_RATIO))
    check_replaceable_dir(out_dir)  # before the training, not after it
    ckpt = Checkpointer(work_dir, run_fingerprint(resolved, ("threads", "device"), **inputs),
                        others=[out_dir, *inputs.values()])
    step, log = 0, []
    last = ckpt.latest()
    if last is not None:
        st = ckpt.restore(last, model, opt, sched)
        step, log = st["step"], st["log"]
        print(f"{desc}: resumed from {last} at step {step}/{total}", flush=True)
    lengths = [len(x[0]) for x in examples]
    pad = tokenizer.pad_token_id or 0
    model.train()
    graphed = None
    if cuda:  # after any restore: the graph holds the optimizer state it finds
        from fgx.engines.torch.graphed_training import SupervisedStep

        graphed = SupervisedStep(model, opt, examples, sched_.batch_size, pad, device)
    settled = len(log)

    def settle():
        """Read the logged losses that are still tensors on the device."""
        nonlocal settled
        for row in log[settled:]:
            row["loss"], row["grad_norm"] = float(row["loss"]), float(row["grad_norm"])
        settled = len(log)
    bar = Bar(True, total, step, desc)
    t0, ntok, run_steps = time.time(), 0, 0
    epoch_batches: dict[int, list[list[int]]] = {}  # one epoch's batch order, drawn once
    while step < total:
        epoch, k = divmod(step, steps_per_epoch)
        if epoch not in epoch_batches:
            epoch_batches = {epoch: length_grouped_batches(lengths, sched_.batch_size,
                                                           np.random.default_rng([seed, epoch]))}
        batch = epoch_batches[epoch][k]
        if graphed is None:
            loss, gn = eager_step(model, opt, examples, batch, pad, device)
        else:
            out = graphed(batch, [g["lr"] for g in opt.param_groups])
            loss, gn = out["loss"], out["grad_norm"]
        sched.step()
        step += 1
        run_steps += 1
        ntok += sum(lengths[i] for i in batch)
        log.append({"step": step, "loss": loss.detach(), "grad_norm": gn, "lr": sched.get_last_lr()[0]})
        if graphed is None or step % LOG_EVERY == 0 or step == total:
            settle()
        bar.update(1, loss=log[settled - 1]["loss"] if settled else float("nan"),
                   tok_s=int(ntok / max(time.time() - t0, 1e-9)))
        if step < total and ckpt.due():
            settle()
            ckpt.save(step, model, tokenizer, {"optimizer": opt.state_dict(), "scheduler": sched.state_dict(),
                                               "step": step, "log": log})
        if stop_after is not None and run_steps >= stop_after and step < total:
            bar.close()
            raise KeyboardInterrupt(f"{desc}: stopped after {run_steps} steps (stop_after)")
    bar.close()
    settle()
    model.eval()
    resolved = dict(resolved, n_params=n_params(model), total_steps=total, n_examples=n)

    def write_log(p):
        pd.DataFrame(log).to_parquet(p, index=False)

    def write_cfg(p):
        p.write_text(json.dumps(resolved, indent=2, sort_keys=True, default=str) + "\n")

    save_checkpoint(model, tokenizer, out_dir, extra_files={"train_log.parquet": write_log,
                                                            "resolved_config.json": write_cfg})
    ckpt.remove()
    return {"steps": total, "final_loss": log[-1]["loss"] if log else None}


def _setup(rt: Runtime) -> torch.device:
    if rt.threads:
        torch.set_num_threads(int(rt.threads))
    import random

    random.seed(rt.seed)
    np.random.seed(rt.seed % (2**32))
    torch.manual_seed(rt.seed)
    return resolve_device(rt.device)


def pretrain(data_paths, out_dir, work_dir, settings: Mapping[str, Any], *, stop_after: int | None = None) -> dict:
    """Train the tiny base model from scratch: next-token loss on each row's reference trace
    (``extra_info.solution``) after its prompt, over the rows of every file in ``data_paths``."""
    s, rt = Pretrain.from_settings(settings), Runtime.from_settings(settings)
    device = _setup(rt)
    paths = [str(p) for p in ([data_paths] if isinstance(data_paths, (str, Path)) else data_paths)]
    df = pd.concat([read_rows(p, "pretraining data", ("data_source", "prompt", "ability", "reward_model", "extra_info"))
                    for p in paths], ignore_index=True)
    if len(df) == 0:
        raise InputError(f"{', '.join(paths)}: the pretraining data has no rows; regenerate it (delete it and "
                         "rerun the rule that writes it) or raise data.pretrain_problems")
    from fgx.tasks.strings import compact_call_names

    shape = s.model
    tok = build_char_tokenizer(model_max_length=shape.max_position_embeddings, names=compact_call_names())
    from fgx.algos.rft import sft_rows

    sols = list(sft_rows(df, ", ".join(paths))["response"])  # each row's reference trace, extra_info.solution
    examples = tokenize(tok, prompt_texts(tok, df, ", ".join(paths)), sols, shape.max_position_embeddings,
                        loss_on_prompt=False)
    model = build_model(shape, tok, seed=rt.seed).to(device)
    resolved = {"stage": "pretrain", "data_paths": paths, "model": dataclasses.asdict(shape),
                "train": dataclasses.asdict(s.train), "seed": rt.seed}
    t = s.train
    return train(model, tok, examples, Schedule(t.steps, t.batch_size, t.lr, t.warmup_steps, t.weight_decay),
                 seed=rt.seed, device=device, out_dir=Path(out_dir), work_dir=Path(work_dir), desc="pretrain",
                 resolved=resolved, inputs={f"data{i}": p for i, p in enumerate(paths)}, stop_after=stop_after)


def sft(model_dir, data_path, out_dir, work_dir, settings: Mapping[str, Any], *, stop_after: int | None = None) -> dict:
    """Fine-tune ``model_dir`` on prompt rows + ``response``: loss on the response tokens (+ eos) only,
    for ``epochs`` passes over the data."""
    s, rt = SFT.from_settings(settings), Runtime.from_settings(settings)
    device = _setup(rt)
    df = read_rows(data_path, "SFT data", ("prompt", "response"))
    tok = load_tokenizer(model_dir)
    model = load_model(model_dir, device)
    examples = tokenize(tok, prompt_texts(tok, df, str(data_path)), [str(r) for r in df["response"]],
                        s.max_length, loss_on_prompt=False)
    steps = max(1, s.epochs * math.ceil(len(examples) / s.batch_size)) if examples else 0
    resolved = {"stage": "sft", "model_dir": str(model_dir), "data_path": str(data_path),
                **dataclasses.asdict(s), "seed": rt.seed}
    return train(model, tok, examples, Schedule(steps, s.batch_size, s.lr, 0, SFT_WEIGHT_DECAY), seed=rt.seed,
                 device=device, out_dir=Path(out_dir), work_dir=Path(work_dir), desc="sft", resolved=resolved,
                 inputs={"model": model_dir, "data": data_path}, stop_after=stop_after)
