"""The torch engine's training steps in fixed shapes, replayed from CUDA graphs on a GPU.

A step of the tiny model on a GPU is a few hundred kernel launches of microseconds each: the
launches, not the arithmetic, set its time. :class:`SupervisedStep` (pretraining, SFT) and
:class:`PolicyUpdateStep` (RL's update) hold every input of a step in buffers of one shape (the
longest sequence of the run, a fixed row count; rows and positions past the real ones carry a zero
loss mask), so the forward pass, the backward pass, the gradient clip and the optimizer step become
one function of fixed tensors that :func:`fgx.engines.torch.cuda_graphs.capture` records once. The
optimizer must be a capturable AdamW (its step count on the device) whose learning rate the graph
reads from a tensor: the loops' schedulers keep setting a float per group, and each call copies it
into that tensor before the replay.

Matrix products run in TF32 inside the graphs (float32 elsewhere); bf16 autocast is not used: at this
model's size a step's time is its launches, and casts would add kernels without saving any.
``tests/test_gpu.py`` holds a captured run against the eager float32 one: the first loss within 0.1 %,
its gradient norm within 1 %, twenty steps' losses within 1 %. On the CPU the training loops
do not use this module: their eager steps are unchanged, number for number. ``graph=False`` runs the
same fixed-shape function eagerly (the CPU tests of its arithmetic).
"""

from __future__ import annotations

import contextlib
import logging
from typing import Callable, Sequence

import torch

from fgx.algos.optimizer import GRAD_CLIP
from fgx.engines.torch.batches import forward_logprobs
from fgx.engines.torch.cuda_graphs import TrainingSnapshot, capture

log = logging.getLogger("fgx")


@contextlib.contextmanager
def _tf32():
    """TF32 matrix products while the graph is recorded (cuBLAS keeps the math mode it was captured with)."""
    before = torch.backends.cuda.matmul.allow_tf32
    torch.backends.cuda.matmul.allow_tf32 = True
    try:
        yield
    finally:
        torch.backends.cuda.matmul.allow_tf32 = before


def _label_mask(starts: torch.Tensor, lengths: torch.Tensor, T: int) -> torch.Tensor:
    """(rows, T) float mask: label position t (predicting token t + 1) counts when start <= t + 1 < length
    (:func:`fgx.engines.torch.batches.loss_mask` on tensors; a row of length 0 counts nowhere)."""
    t = torch.arange(T, device=starts.device)[None, :] + 1
    return ((t >= starts[:, None]) & (t < lengths[:, None])).float()


def _make_capturable(opt: torch.optim.Optimizer) -> None:
    """Let ``opt`` step inside a CUDA graph: its step counts on the parameters' device. An optimizer made with
    ``capturable=True`` is one already; one restored from a checkpoint of a CPU run becomes one here."""
    for group in opt.param_groups:
        group["capturable"] = True
        for p in group["params"]:
            state = opt.state.get(p, {})
            if torch.is_tensor(state.get("step")) and state["step"].device != p.device:
                state["step"] = state["step"].to(p.device, torch.float32)


class _GraphedStep:
    """A training step ``self._step`` (no arguments: it reads the static buffers and returns tensors)
    captured once on a GPU at its first call (``graph=True``), else run eagerly."""

    def __init__(self, model, opt: torch.optim.Optimizer, graph: bool):
        self.model, self.opt, self.graph = model, opt, graph
        device = next(model.parameters()).device
        self.lrs = [torch.tensor(float(g["lr"]), device=device) for g in opt.param_groups]
        self.graphed = False  # whether the step replays a CUDA graph
        self._replay: Callable[[], None] | None = None
        self._out: dict[str, torch.Tensor] = {}

    def _capture(self) -> None:
        """Record the step (the buffers hold a real batch by now) with every group's lr read from
        :attr:`lrs`; the model and the optimizer are put back as they were before capture's runs."""
        _make_capturable(self.opt)
        floats = [g["lr"] for g in self.opt.param_groups]
        snapshot = TrainingSnapshot(self.model, self.opt)
        for g, t in zip(self.opt.param_groups, self.lrs):
            g["lr"] = t
        try:
            with _tf32():
                self._replay, self._out = capture(self._step)
            self.graphed = True
        except Exception as err:  # a kernel that cannot be captured: the run goes on eagerly, said loudly
            log.warning("CUDA graph capture of the training step failed (%s: %s): it runs eagerly",
                        type(err).__name__, str(err)[:300])
            self.graph = False
        finally:
            for g, lr in zip(self.opt.param_groups, floats):
                g["lr"] = lr
            snapshot.restore()

    def _call(self, lrs: Sequence[float]) -> dict[str, torch.Tensor]:
        """Run the step at the groups' learning rates ``lrs``; its outputs, as tensors on the device."""
        if self.graph and self._replay is None:
            self._capture()
        if not self.graphed:
            for g, lr in zip(self.opt.param_groups, lrs):
                g["lr"] = lr
            return self._step()
        for t, lr in zip(self.lrs, lrs):
            t.fill_(lr)
        self._replay()
        # every replay writes its outputs into the same tensors: hand out copies
        return {k: v.detach().clone() for k, v in self._out.items()}

    def _step(self) -> dict[str, torch.Tensor]:
        raise NotImplementedError


class SupervisedStep(_GraphedStep):
    """One pretraining / SFT step on ``batch_size`` rows of ``examples`` ((ids, loss_start) pairs): the
    loss is the mean next-token loss over the rows' counted tokens, as the eager loop computes it."""

    def __init__(self, model, opt, examples, batch_size: int, pad: int, device, graph: bool = True):
        super().__init__(model, opt, graph)
        L = max(len(ids) for ids, _ in examples)
        table = torch.full((len(examples), L), pad, dtype=torch.int32)
        for r, (ids, _) in enumerate(examples):
            table[r, : len(ids)] = torch.as_tensor(ids, dtype=torch.int32)
        self.table = table.to(device)
        self.starts = torch.tensor([s for _, s in examples], device=device)
        self.lengths = torch.tensor([len(ids) for ids, _ in examples], device=device)
        self.rows = torch.zeros(batch_size, dtype=torch.long, device=device)  # example index per row
        self.real = torch.zeros(batch_size, dtype=torch.bool, device=device)  # False: a padding row
        self.batch_size = batch_size

    def _step(self) -> dict[str, torch.Tensor]:
        self.opt.zero_grad(set_to_none=True)
        ids = self.table[self.rows].long()
        lengths = torch.where(self.real, self.lengths[self.rows], 0)
        mask = _label_mask(self.starts[self.rows], lengths, ids.shape[1] - 1)
        lp, _ = forward_logprobs(self.model, ids)
        loss = -(lp * mask).sum() / mask.sum().clamp_min(1.0)
        loss.backward()
        gn = torch.nn.utils.clip_grad_norm_(self.model.parameters(), GRAD_CLIP)
        self.opt.step()
        return {"loss": loss.detach(), "grad_norm": gn}

    def __call__(self, batch: Sequence[int], lrs: Sequence[float]) -> dict[str, torch.Tensor]:
        """Train on the examples ``batch`` (at most batch_size) at the groups' learning rates ``lrs``."""
        if not 0 < len(batch) <= self.batch_size:
            raise ValueError(f"a batch of {len(batch)} examples for a step of {self.batch_size} rows")
        pad = self.batch_size - len(batch)
        self.rows.copy_(torch.tensor([*batch, *[batch[0]] * pad]), non_blocking=True)
        self.real.copy_(torch.tensor([True] * len(batch) + [False] * pad), non_blocking=True)
        return self._call(lrs)


class PolicyUpdateStep(_GraphedStep):
    """RL's on-policy update (:func:`fgx.engines.torch.rl.update`) as one pass over ``rows`` sequences of
    at most ``length`` tokens: ``loss_fn(logprobs, entropy, mask, advantages, ref_logprobs, denom)`` is the
    loss the eager update computes per micro-batch; over the whole batch at once, its pieces add up to
    the sum of the eager micro-batches' (every piece carries the batch's denominator)."""

    def __init__(self, model, ref, opt, loss_fn, rows: int, length: int, pad: int, device, graph: bool = True):
        super().__init__(model, opt, graph)
        self.ref, self.loss_fn, self.rows, self.length, self.pad = ref, loss_fn, rows, length, pad
        self.ids = torch.full((rows, length), pad, dtype=torch.long, device=device)
        self.starts = torch.zeros(rows, dtype=torch.long, device=device)
        self.lengths = torch.zeros(rows, dtype=torch.long, device=device)  # 0: a row that is not trained
        self.advantages = torch.zeros(rows, device=device)
        self.denom = torch.ones((), device=device)

    def _step(self) -> dict[str, torch.Tensor]:
        self.opt.zero_grad(set_to_none=True)
        mask = _label_mask(self.starts, self.lengths, self.length - 1)
        lp, ent = forward_logprobs(self.model, self.ids, with_entropy=True)
        ref_lp = None
        if self.ref is not None:
            with torch.no_grad():
                ref_lp, _ = forward_logprobs(self.ref, self.ids)
        loss, stats = self.loss_fn(lp, ent, mask, self.advantages, ref_lp, self.denom)
        loss.backward()
        gn = torch.nn.utils.clip_grad_norm_(self.model.parameters(), GRAD_CLIP)
        self.opt.step()
        return {"loss": loss.detach(), **{k: v.detach() for k, v in stats.items()}, "grad_norm": gn}

    def __call__(self, seqs: Sequence[Sequence[int]], starts: Sequence[int], advantages: torch.Tensor,
                 trained: Sequence[int], denom: float, lrs: Sequence[float]) -> dict[str, torch.Tensor]:
        """Update on sequences ``seqs`` (prompt + response ids, response from ``starts``), training the rows
        ``trained`` (the others count only in ``denom``, as in the eager update)."""
        if len(seqs) > self.rows or max(len(x) for x in seqs) > self.length:
            raise ValueError(f"{len(seqs)} sequences of up to {max(len(x) for x in seqs)} tokens for a step of "
                             f"{self.rows} rows of {self.length}")
        ids = torch.full((self.rows, self.length), self.pad, dtype=torch.long)
        lengths = torch.zeros(self.rows, dtype=torch.long)
        starts_ = torch.zeros(self.rows, dtype=torch.long)
        adv = torch.zeros(self.rows)
        for k in trained:
            ids[k, : len(seqs[k])] = torch.as_tensor(list(seqs[k]))
            lengths[k], starts_[k] = len(seqs[k]), starts[k]
        adv[: len(seqs)] = advantages.detach().float().cpu()
        self.ids.copy_(ids, non_blocking=True)
        self.lengths.copy_(lengths, non_blocking=True)
        self.starts.copy_(starts_, non_blocking=True)
        self.advantages.copy_(adv, non_blocking=True)
        self.denom.fill_(float(denom))
        return self._call(lrs)
