"""The optimizer and learning-rate schedules of the torch engine's training loops."""

from __future__ import annotations

import math
from typing import Callable

import torch


def adamw(model, lr: float, weight_decay: float, betas: tuple[float, float],
          capturable: bool = False) -> torch.optim.AdamW:
    """AdamW with weight decay on matrices only (not on norms and biases). ``capturable``: its step
    count lives on the device and its step may be recorded in a CUDA graph (the GPU's training steps,
    :mod:`fgx.engines.torch.graphed_training`)."""
    decay, no_decay = [], []
    for _, p in model.named_parameters():
        if p.requires_grad:
            (no_decay if p.dim() < 2 else decay).append(p)
    groups = [{"params": decay, "weight_decay": weight_decay}, {"params": no_decay, "weight_decay": 0.0}]
    return torch.optim.AdamW(groups, lr=lr, betas=betas, eps=1e-8, **({"capturable": True} if capturable else {}))


def warmup_cosine(warmup_steps: int, total_steps: int, min_ratio: float = 0.1) -> Callable[[int], float]:
    """LambdaLR factor: linear warm-up over ``warmup_steps``, then cosine decay to ``min_ratio``."""
    def f(step: int) -> float:
        if warmup_steps and step < warmup_steps:
            return (step + 1) / warmup_steps
        span = max(1, total_steps - warmup_steps)
        prog = min(1.0, (step - warmup_steps) / span)
        return min_ratio + (1 - min_ratio) * 0.5 * (1 + math.cos(math.pi * prog))
    return f


def constant(step: int) -> float:
    """LambdaLR factor of a constant learning rate (RL, as the paper's verl runs)."""
    return 1.0
