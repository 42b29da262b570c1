"""Training batches of token sequences: right padding, loss masks, per-token log-probs."""

from __future__ import annotations

from typing import Sequence

import torch

from fgx.algos import core


def pad_right(seqs: Sequence[Sequence[int]], pad_id: int, device) -> torch.Tensor:
    L = max(len(x) for x in seqs)
    out = torch.full((len(seqs), L), pad_id, dtype=torch.long)
    for i, x in enumerate(seqs):
        out[i, : len(x)] = torch.as_tensor(list(x), dtype=torch.long)
    return out.to(device)


def loss_mask(starts: Sequence[int], lengths: Sequence[int], T: int, device) -> torch.Tensor:
    """Mask over label positions (B, T=L-1): label position t predicts token t+1; tokens
    [start, length) of each sequence count."""
    st = torch.as_tensor(list(starts), device=device)[:, None]
    ln = torch.as_tensor(list(lengths), device=device)[:, None]
    t = torch.arange(T, device=device)[None, :] + 1
    return ((t >= st) & (t < ln)).float()


def forward_logprobs(model, ids: torch.Tensor, *, with_entropy: bool = False):
    """Right-padded ids (B, L) -> per-label log-probs (B, L-1) [and entropies]. No attention mask
    is needed: right padding never precedes a real token under causal attention."""
    logits = model(input_ids=ids[:, :-1], use_cache=False).logits
    lp = core.token_logprobs(logits, ids[:, 1:])
    return lp, (core.entropy_from_logits(logits) if with_entropy else None)
