"""CUDA graph capture for the torch engine's fixed-shape steps (decoding, training).

A tiny model's step on a GPU costs the launches of a few hundred small kernels, not arithmetic;
a CUDA graph records those launches once and replays them as one. What is captured must read and
write only tensors that live as long as the graph (static buffers, parameters, optimizer state),
updated in place, and must never wait for the host. :func:`capture` records such a function;
:class:`TrainingSnapshot` puts a model and its optimizer back as they were before the warm-up
iterations that capture needs ran real optimizer steps.
"""

from __future__ import annotations

from typing import Callable, TypeVar

import torch

T = TypeVar("T")
WARMUP = 3  # eager iterations on a side stream before capture (cuBLAS handles, autograd's buffers)


def capture(fn: Callable[[], T], warmup: int = WARMUP) -> tuple[Callable[[], None], T]:
    """Run ``fn`` ``warmup`` times, record it in a CUDA graph, and return the graph's replay and what
    ``fn`` returned at capture: tensors that every replay writes again."""
    stream = torch.cuda.Stream()
    stream.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(stream):
        for _ in range(warmup):
            fn()
    torch.cuda.current_stream().wait_stream(stream)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        out = fn()
    return graph.replay, out


class TrainingSnapshot:
    """A copy of ``model``'s parameters and ``opt``'s state, to restore after capture's warm-up
    steps: capture runs the step (forward, backward, optimizer step) for real ``WARMUP + 1`` times,
    and the run must go on from the weights it had. Optimizer state that does not exist yet (a
    fresh run) is restored as AdamW would create it: zero moments at step 0."""

    def __init__(self, model: torch.nn.Module, opt: torch.optim.Optimizer):
        self.model, self.opt = model, opt
        with torch.no_grad():
            self.params = [p.detach().clone() for p in model.parameters()]
            self.state = {p: {k: v.clone() if torch.is_tensor(v) else v for k, v in opt.state[p].items()}
                          for p in model.parameters() if p in opt.state}

    @torch.no_grad()
    def restore(self) -> None:
        for p, saved in zip(self.model.parameters(), self.params):
            p.copy_(saved)
        for p in self.model.parameters():
            if p not in self.opt.state:
                continue
            saved = self.state.get(p)
            for k, v in self.opt.state[p].items():
                if torch.is_tensor(v):
                    v.copy_(saved[k]) if saved is not None else v.zero_()
                elif saved is not None:
                    self.opt.state[p][k] = saved[k]
