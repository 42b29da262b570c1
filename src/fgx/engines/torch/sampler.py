"""Batched sampling with a KV cache.

Three paths, one results contract:

* :class:`FastLlamaDecoder` -- Llama-architecture models (LlamaForCausalLM, Qwen2ForCausalLM
  without sliding windows). Its own decoder over the HF module's weights: fused QKV and gate/up
  projections, RoPE as one complex multiply, a preallocated KV cache, one SDPA call per layer,
  unique prompts prefilled once and copied into their ``n`` sample slots, and inverse-CDF sampling
  (one uniform per row). Two decode loops drive it:

  - *continuous batching with dynamic shapes* (:func:`_generate_fast`, the CPU's): a finished row's
    slot is refilled with the next pending sequence, attention reads only the cache positions in
    use, and when nothing is pending finished rows are dropped, so every step computes only live
    rows;
  - *the fixed-shape step* (:class:`StaticDecodeLoop`, the GPU's): a fixed slot count and cache
    length, and one step (decode, sample, stop checks, bookkeeping) that reads and writes only
    device tensors in place, with no host sync, so a CUDA graph replays it. The host looks at the
    slots every :data:`SYNC_EVERY` steps to collect finished rows and refill their slots.

  The CUDA path captures the step in a CUDA graph by hand (:mod:`fgx.engines.torch.cuda_graphs`)
  rather than through ``torch.compile(mode="reduce-overhead")``: the step already has static shapes
  and no host sync, so capture needs no compiler, costs milliseconds where inductor costs tens of
  seconds in every fresh job (each rollout and evaluation is one), and replays the same kernels the
  eager step runs, so the CPU tests of the eager step vouch for what the graph computes. On the
  CPU the dynamic loop is the faster one (``benchmarks/sampler.py --static`` measures both).
* :func:`_generate_generic` -- any HF causal LM: the HF forward with its cache, left padding.

Every path draws sequence ``k``'s token at response position ``t`` from the uniform
:func:`fgx.engines.torch.counter_rng.uniforms` gives (seed, k, t): a seed gives the same samples
whatever the slot count, the chunking of the prompts, the order sequences run in, the path or the
device (up to the float rounding of the logits).
"""

from __future__ import annotations

import logging
import time
import weakref
from dataclasses import dataclass
from typing import Sequence

import torch
import torch.nn.functional as F

from fgx.engines.torch import counter_rng
from fgx.progress import progress_interval

SYNC_EVERY = 8  # fixed-shape steps between two looks of the host at the slots


@dataclass
class Completion:
    token_ids: list[int]  # generated ids, eos included when the sequence ended with it
    finish_reason: str  # "stop" (eos / stop string) or "length"


# ----------------------------------------------------------------------------- sampling helpers
def _sample_next(logits: torch.Tensor, temperature: float, top_p: float, u: torch.Tensor | None):
    """Next token ids (B,) from float logits (B, V): greedy when temperature <= 0, else inverse-CDF
    sampling with the uniforms ``u`` (B,) (one per row + a sorted search; cheaper on CPU than
    torch.multinomial, and no generator state: the draw is whatever ``u`` holds)."""
    if temperature <= 0:
        return logits.argmax(-1)
    logits = logits.float()
    if temperature != 1.0:
        logits = logits / temperature
    probs = torch.softmax(logits, -1)
    si = None
    if top_p < 1.0:
        probs, si = probs.sort(-1, descending=True)
        cum = probs.cumsum(-1)
        probs = probs.masked_fill(cum - probs > top_p, 0.0)  # smallest prefix with mass >= top_p
    cum = probs.cumsum(-1)
    target = u[:, None] * cum[:, -1:]
    # first index whose cumulative mass exceeds the target: never a zero-probability token
    idx = torch.searchsorted(cum, target, right=True).clamp_(max=probs.shape[-1] - 1)
    if si is not None:
        idx = si.gather(-1, idx)
    return idx.squeeze(-1)


def _eos_ids(model, tokenizer) -> list[int]:
    ids: set[int] = set()
    for src in (getattr(model, "generation_config", None), model.config):
        e = getattr(src, "eos_token_id", None) if src is not None else None
        if e is None:
            continue
        ids.update(e if isinstance(e, (list, tuple)) else [e])
    if tokenizer.eos_token_id is not None:
        ids.add(tokenizer.eos_token_id)
    return sorted(int(i) for i in ids)


def _stop_ids(tokenizer, stop: Sequence[str]) -> list[list[int]]:
    out = []
    for s in stop or ():
        ids = tokenizer(s, add_special_tokens=False)["input_ids"]
        if ids:
            out.append(list(ids))
    return out


def _model_dtype(model) -> torch.dtype:
    return next(model.parameters()).dtype


def _as_dtype(dtype) -> torch.dtype | None:
    if dtype is None or isinstance(dtype, torch.dtype):
        return dtype
    return {"float32": torch.float32, "fp32": torch.float32, "bfloat16": torch.bfloat16,
            "bf16": torch.bfloat16, "float16": torch.float16, "fp16": torch.float16}[str(dtype)]


# ----------------------------------------------------------------------------- fast Llama path
def supports_fast_path(model) -> bool:
    name = type(model).__name__
    if name not in ("LlamaForCausalLM", "Qwen2ForCausalLM"):
        return False
    cfg = model.config
    if getattr(cfg, "hidden_act", "silu") != "silu":
        return False
    if "sliding_attention" in (getattr(cfg, "layer_types", None) or []):
        return False
    rot = getattr(model.model, "rotary_emb", None)
    if rot is None or getattr(rot, "rope_type", "default") in ("dynamic", "longrope"):
        return False
    return True


class FastLlamaDecoder:
    """Inference-only view of a Llama-like HF model's weights (the module itself is not copied
    when dtype matches, fused matrices are small concatenations)."""

    def __init__(self, model, dtype: torch.dtype | None = None, max_positions: int | None = None):
        cfg = model.config
        self.device = next(model.parameters()).device
        self.dtype = dtype or _model_dtype(model)
        self.H = cfg.num_attention_heads
        self.Hkv = getattr(cfg, "num_key_value_heads", None) or self.H
        self.d = getattr(cfg, "head_dim", None) or cfg.hidden_size // self.H
        self.G = self.H // self.Hkv
        self.eps = cfg.rms_norm_eps
        self.max_positions = max_positions or cfg.max_position_embeddings
        self.layers, self.embed, self.lm_head, self.lm_head_b = self._fused(model)
        with torch.no_grad():
            # RoPE table from the model's own rotary module (handles its scaling variants)
            pos = torch.arange(self.max_positions, device=self.device)[None]
            cos, sin = model.model.rotary_emb(torch.zeros(1, device=self.device, dtype=torch.float32), pos)
            half = self.d // 2
            self.freqs = torch.complex(cos[0, :, :half].float(), sin[0, :, :half].float())  # (T, d/2)
        self.hidden = model.config.hidden_size
        self.inter = self.layers[0]["down"].shape[1]

    def _fused(self, model):
        """The decoder's weights from ``model``'s: per layer, fused and permuted matrices; the
        embedding; the LM head with the final norm folded in, and its bias."""
        dt, dev = self.dtype, self.device

        def w(t):
            return None if t is None else t.detach().to(dev, dt)

        # per head, reorder q/k output rows from HF's half-split RoPE layout to interleaved pairs,
        # so RoPE becomes one complex multiply; q.k products are unchanged (same permutation).
        half = self.d // 2
        perm_head = torch.stack([torch.arange(half), torch.arange(half) + half], 1).reshape(-1)

        def perm_rows(t, heads):
            if t is None:
                return None
            idx = (torch.arange(heads)[:, None] * self.d + perm_head[None, :]).reshape(-1).to(t.device)
            return t.index_select(0, idx)

        # RMSNorm weights are folded into the following projection (x*s*w) @ W.T == s * (x @ (W*w).T)
        layers = []
        with torch.no_grad():
            for layer in model.model.layers:
                a, m = layer.self_attn, layer.mlp
                ln1 = layer.input_layernorm.weight.float()[None, :]
                ln2 = layer.post_attention_layernorm.weight.float()[None, :]
                qkv = torch.cat([perm_rows(a.q_proj.weight, self.H), perm_rows(a.k_proj.weight, self.Hkv),
                                 a.v_proj.weight], 0).float() * ln1
                qkv_b = None
                if a.q_proj.bias is not None:
                    qkv_b = torch.cat([perm_rows(a.q_proj.bias, self.H), perm_rows(a.k_proj.bias, self.Hkv),
                                       a.v_proj.bias], 0)
                gu_b = None
                if m.gate_proj.bias is not None:
                    gu_b = torch.cat([m.gate_proj.bias, m.up_proj.bias], 0)
                layers.append(dict(
                    qkv=w(qkv), qkv_b=w(qkv_b), o=w(a.o_proj.weight), o_b=w(a.o_proj.bias),
                    gu=w(torch.cat([m.gate_proj.weight, m.up_proj.weight], 0).float() * ln2), gu_b=w(gu_b),
                    down=w(m.down_proj.weight), down_b=w(m.down_proj.bias),
                ))
            embed = w(model.model.embed_tokens.weight)
            lm_head = w(model.lm_head.weight.float() * model.model.norm.weight.float()[None, :])
            lm_head_b = w(getattr(model.lm_head, "bias", None))
        return layers, embed, lm_head, lm_head_b

    @torch.no_grad()
    def refresh(self, model) -> None:
        """Copy ``model``'s current weights into this decoder's tensors, in place: a captured CUDA
        graph reads them where they are (RL samples from weights that change every step)."""
        layers, embed, lm_head, lm_head_b = self._fused(model)
        pairs = [(self.embed, embed), (self.lm_head, lm_head), (self.lm_head_b, lm_head_b)]
        pairs += [(old[k], new[k]) for old, new in zip(self.layers, layers) for k in old]
        for old, new in pairs:
            if old is not None and old is not new:
                old.copy_(new)

    # -- building blocks
    def _normed_linear(self, h, W, b):
        """RMSNorm(h) @ W.T + b with the norm weight already folded into W."""
        s = torch.linalg.vector_norm(h, dim=-1, keepdim=True).square_().div_(self.hidden).add_(self.eps).rsqrt_()
        y = F.linear(h, W).mul_(s)
        return y if b is None else y.add_(b)

    def _rope(self, qk: torch.Tensor, freqs: torch.Tensor) -> torch.Tensor:
        # qk: (..., heads, d) in interleaved layout; freqs broadcastable to (..., heads, d/2)
        shape = qk.shape
        x = torch.view_as_complex(qk.float().reshape(*shape[:-1], -1, 2))
        return torch.view_as_real(x * freqs).reshape(shape).to(qk.dtype)

    def _mlp(self, L, h):
        gu = self._normed_linear(h, L["gu"], L["gu_b"])
        g, u = gu.split(self.inter, -1)
        return h + F.linear(F.silu(g).mul_(u), L["down"], L["down_b"])

    def new_cache(self, B: int, T: int):
        shape = (len(self.layers), B, self.Hkv, T, self.d)
        return (torch.zeros(shape, device=self.device, dtype=self.dtype),
                torch.zeros(shape, device=self.device, dtype=self.dtype))

    @torch.no_grad()
    def prefill(self, ids: torch.Tensor, lens: torch.Tensor):
        """Right-padded prompts (P, Lp) -> last-token logits (P, V) and their K/V (layers, P, Hkv, Lp, d)."""
        P, Lp = ids.shape
        H, Hkv, d = self.H, self.Hkv, self.d
        h = F.embedding(ids, self.embed)
        freqs = self.freqs[:Lp][None, :, None, :]  # (1, Lp, 1, d/2)
        Ks, Vs = [], []
        for L in self.layers:
            qkv = self._normed_linear(h, L["qkv"], L["qkv_b"])
            qk = self._rope(qkv[..., : (H + Hkv) * d].reshape(P, Lp, H + Hkv, d), freqs)
            q = qk[:, :, :H].transpose(1, 2)  # (P, H, Lp, d)
            k = qk[:, :, H:].transpose(1, 2).contiguous()  # (P, Hkv, Lp, d)
            v = qkv[..., (H + Hkv) * d:].reshape(P, Lp, Hkv, d).transpose(1, 2).contiguous()
            o = F.scaled_dot_product_attention(q, k, v, is_causal=True, enable_gqa=self.G > 1)
            h = h + F.linear(o.transpose(1, 2).reshape(P, Lp, H * d), L["o"], L["o_b"])
            h = self._mlp(L, h)
            Ks.append(k)
            Vs.append(v)
        last = h[torch.arange(P, device=h.device), lens - 1]
        logits = self._normed_linear(last, self.lm_head, self.lm_head_b)
        return logits.float(), torch.stack(Ks), torch.stack(Vs)

    @torch.no_grad()
    def decode(self, tok: torch.Tensor, pos: torch.Tensor, K: torch.Tensor, V: torch.Tensor, S: int):
        """One step for B rows: token (B,) at position pos (B,) -> logits (B, V).

        Writes K/V at ``pos`` and attends to positions 0..pos of each row (cache length S)."""
        B = tok.shape[0]
        H, Hkv, d, G = self.H, self.Hkv, self.d, self.G
        T = K.shape[3]
        dev = tok.device
        h = F.embedding(tok, self.embed)
        freqs = self.freqs[pos][:, None, :]  # (B, 1, d/2)
        bias = torch.zeros((B, 1, 1, S), device=dev, dtype=self.dtype).masked_fill_(
            (torch.arange(S, device=dev)[None, :] > pos[:, None])[:, None, None, :], float("-inf"))
        # flat row index of (row, kv head, pos) in a layer's (B*Hkv*T, d) cache view
        flat = ((torch.arange(B, device=dev)[:, None] * Hkv + torch.arange(Hkv, device=dev)[None, :]) * T
                + pos[:, None]).reshape(-1)
        scale = d ** -0.5
        for li, L in enumerate(self.layers):
            qkv = self._normed_linear(h, L["qkv"], L["qkv_b"])
            qk = self._rope(qkv[:, : (H + Hkv) * d].view(B, H + Hkv, d), freqs)
            Kl, Vl = K[li], V[li]
            Kl.view(-1, d).index_copy_(0, flat, qk[:, H:].reshape(B * Hkv, d))
            Vl.view(-1, d).index_copy_(0, flat, qkv[:, (H + Hkv) * d:].reshape(B * Hkv, d))
            q = qk[:, :H].reshape(B, Hkv, G, d)  # the G query heads of a kv head as a query "sequence"
            att = torch.matmul(q, Kl[:, :, :S].transpose(-1, -2)).mul_(scale).add_(bias).softmax(-1)
            o = torch.matmul(att, Vl[:, :, :S])
            h = h + F.linear(o.reshape(B, H * d), L["o"], L["o_b"])
            h = self._mlp(L, h)
        return self._normed_linear(h, self.lm_head, self.lm_head_b).float()


def _generate_fast(model, prompt_ids, *, n, temperature, top_p, max_new_tokens, eos_ids, stop_ids,
                   key, seq_offset, batch_size, dtype, progress, desc):
    dec = FastLlamaDecoder(model, dtype=dtype)
    dev = dec.device
    Tmax_pos = dec.max_positions
    n_prompts = len(prompt_ids)
    total = n_prompts * n
    results: list[Completion | None] = [None] * total
    for i, p in enumerate(prompt_ids):
        if len(p) >= Tmax_pos:
            raise ValueError(f"prompt {i} has {len(p)} tokens, the model allows {Tmax_pos} positions")
    # pending sequences, prompt-major, longest prompts first (similar lengths prefill together)
    order = sorted(range(n_prompts), key=lambda i: -len(prompt_ids[i]))
    pending = [(i, j) for i in order for j in range(n)]
    pending.reverse()  # pop() from the end
    B = max(1, min(batch_size, total))
    Tcap = min(Tmax_pos, max(len(p) for p in prompt_ids) + max_new_tokens)
    K, V = dec.new_cache(B, Tcap)
    eos_t = torch.tensor(eos_ids or [-1], device=dev)
    stop_t = [torch.tensor(s, device=dev) for s in stop_ids]
    stop_w = max((len(s) for s in stop_ids), default=0)
    # per-slot state
    seq = torch.full((B,), -1, dtype=torch.long)  # sequence index, -1 = free
    sid = torch.zeros(B, dtype=torch.long, device=dev)  # the RNG's sequence index (seq_offset + seq)
    pos = torch.zeros(B, dtype=torch.long, device=dev)  # position of the token to feed next
    plen = torch.zeros(B, dtype=torch.long, device=dev)
    glen = torch.zeros(B, dtype=torch.long, device=dev)
    tok = torch.zeros(B, dtype=torch.long, device=dev)
    out = torch.zeros(B, max_new_tokens, dtype=torch.long, device=dev)
    active = torch.zeros(B, dtype=torch.bool, device=dev)
    tail = torch.full((B, max(stop_w, 1)), -1, dtype=torch.long, device=dev)
    bar = None
    if progress:
        from tqdm.auto import tqdm

        bar = tqdm(total=total, desc=desc, unit="seq", dynamic_ncols=True, mininterval=progress_interval())
    n_tokens, t0 = 0, time.time()
    refill_min = max(1, B // 8)

    def draw(slots: torch.Tensor):
        """The uniforms of the next token of ``slots`` (None: greedy)."""
        return None if temperature <= 0 else counter_rng.uniforms(key, sid[slots], glen[slots])

    def finish(slots: torch.Tensor, reasons: torch.Tensor):
        nonlocal n_tokens
        sl = slots.tolist()
        gl = glen[slots].tolist()
        rs = reasons.tolist()
        outs = out[slots].tolist()
        for s, g, r, o in zip(sl, gl, rs, outs):
            results[int(seq[s])] = Completion(o[:g], "stop" if r else "length")
            seq[s] = -1
            n_tokens += g
        active[slots] = False
        if bar is not None:
            bar.update(len(sl))
            bar.set_postfix(tok_s=f"{n_tokens / max(time.time() - t0, 1e-9):.0f}", refresh=False)

    def step_bookkeeping(slots: torch.Tensor, new_tok: torch.Tensor):
        """Record sampled tokens for ``slots``; finish rows that stopped."""
        out[slots, glen[slots]] = new_tok
        glen[slots] += 1
        tok[slots] = new_tok
        stopped = torch.isin(new_tok, eos_t)
        if stop_t:
            tl = torch.cat([tail[slots, 1:], new_tok[:, None]], 1)
            tail[slots] = tl
            for s in stop_t:
                stopped |= (tl[:, -len(s):] == s).all(-1)
        limit = torch.clamp(Tmax_pos - plen[slots], max=max_new_tokens)
        done = stopped | (glen[slots] >= limit)
        if bool(done.any()):
            finish(slots[done], stopped[done])

    def refill(free: torch.Tensor):
        items = [pending.pop() for _ in range(min(len(free), len(pending)))]
        free = free[: len(items)]
        uniq: dict[int, int] = {}
        for i, _ in items:
            uniq.setdefault(i, len(uniq))
        plist = list(uniq)
        lens = torch.tensor([len(prompt_ids[i]) for i in plist], device=dev)
        Lp = int(lens.max())
        ids = torch.zeros(len(plist), Lp, dtype=torch.long, device=dev)
        for r, i in enumerate(plist):
            ids[r, : len(prompt_ids[i])] = torch.tensor(prompt_ids[i], device=dev)
        logits, pk, pv = dec.prefill(ids, lens)
        src = torch.tensor([uniq[i] for i, _ in items], device=dev)
        K[:, free, :, :Lp] = pk[:, src]
        V[:, free, :, :Lp] = pv[:, src]
        seq[free.cpu()] = torch.tensor([i * n + j for i, j in items])
        sid[free] = torch.tensor([seq_offset + i * n + j for i, j in items], device=dev)
        plen[free] = lens[src]
        pos[free] = lens[src]
        glen[free] = 0
        tail[free] = -1
        active[free] = True
        first = _sample_next(logits[src], temperature, top_p, draw(free))
        step_bookkeeping(free, first)

    while True:
        free = (~active).nonzero().flatten()
        if pending and (len(free) >= min(refill_min, len(pending)) or not bool(active.any())):
            refill(free)
            continue
        if not bool(active.any()):
            break
        if not pending:
            n_act = int(active.sum())
            if n_act <= K.shape[1] // 2 and K.shape[1] > 8:
                # nothing left to refill with: drop finished rows from the batch
                keep = active.nonzero().flatten()
                K, V = K[:, keep].contiguous(), V[:, keep].contiguous()
                seq = seq[keep.cpu()]
                pos, plen, glen, tok, out, active, tail, sid = (
                    x[keep] for x in (pos, plen, glen, tok, out, active, tail, sid))
        S = int(pos.max()) + 1
        logits = dec.decode(tok, pos, K, V, S)
        pos += active.long()
        act = active.nonzero().flatten()
        nxt = _sample_next(logits[act] if len(act) < len(active) else logits, temperature, top_p, draw(act))
        step_bookkeeping(act, nxt)
    if bar is not None:
        bar.close()
    return results


# ----------------------------------------------------------------------------- fixed-shape path
class StaticDecodeLoop:
    """The fixed-shape decode step: ``slots`` rows over a cache of ``T`` positions. Every tensor it
    reads or writes is allocated here once and updated in place, and :meth:`step` (decode, sample,
    stop checks, bookkeeping for every slot at once) never waits for the host, so on a GPU a CUDA
    graph captures it once and :meth:`run` replays it. A slot holds one sequence from :meth:`fill`
    until the host collects it; a finished row keeps stepping with its results frozen (``active``
    off) until its slot is filled again."""

    def __init__(self, dec: FastLlamaDecoder, slots: int, T: int, *, max_new_tokens: int, eos_ids, stop_ids,
                 temperature: float, top_p: float, graph: bool):
        dev = dec.device
        self.dec, self.slots, self.T, self.max_new_tokens = dec, slots, T, max_new_tokens
        self.temperature, self.top_p = temperature, top_p
        self.K, self.V = dec.new_cache(slots, T)

        def longs():
            return torch.zeros(slots, dtype=torch.long, device=dev)

        self.tok, self.pos, self.glen, self.limit, self.sid = longs(), longs(), longs(), longs(), longs()
        self.active = torch.zeros(slots, dtype=torch.bool, device=dev)
        self.stopped = torch.zeros(slots, dtype=torch.bool, device=dev)
        # one column more than a response holds: where rows that take no token write theirs
        self.out = torch.zeros(slots, max_new_tokens + 1, dtype=torch.long, device=dev)
        self.eos = torch.tensor(eos_ids or [-1], device=dev)
        self.stops = [torch.tensor(s, device=dev) for s in stop_ids]
        width = max((len(s) for s in stop_ids), default=1)
        self.tail = torch.full((slots, width), -1, dtype=torch.long, device=dev)
        self.key = torch.zeros((), dtype=torch.long, device=dev)  # the seed's key: one graph serves every seed
        self.run, self.graphed = self.step, False
        if graph:
            from fgx.engines.torch.cuda_graphs import capture

            try:  # every slot is idle here, so capture's warm-up steps change nothing
                self.run, self.graphed = capture(self.step)[0], True
            except Exception as err:  # a kernel that cannot be captured: sample eagerly, said loudly
                logging.getLogger("fgx").warning("CUDA graph capture of the decode step failed (%s: %s): it "
                                                 "runs eagerly", type(err).__name__, str(err)[:300])

    def _record(self, nxt: torch.Tensor, rows: torch.Tensor) -> None:
        """Append ``nxt`` (slots,) to the rows ``rows`` (bool, slots) marks; end the rows that stop."""
        col = torch.where(rows, self.glen, self.max_new_tokens)
        self.out.scatter_(1, col[:, None], nxt[:, None])
        self.glen += rows.long()
        self.tok.copy_(torch.where(rows, nxt, self.tok))
        hit = (nxt[:, None] == self.eos[None, :]).any(-1)
        if self.stops:
            self.tail.copy_(torch.where(rows[:, None], torch.cat([self.tail[:, 1:], nxt[:, None]], 1), self.tail))
            for s in self.stops:
                hit |= (self.tail[:, -len(s):] == s).all(-1)
        hit &= rows
        self.stopped |= hit
        self.active &= ~(hit | (rows & (self.glen >= self.limit)))

    @torch.no_grad()
    def step(self) -> None:
        logits = self.dec.decode(self.tok, self.pos, self.K, self.V, self.T)
        rows = self.active.clone()
        self.pos += rows.long()
        u = None if self.temperature <= 0 else counter_rng.uniforms(self.key, self.sid, self.glen)
        self._record(_sample_next(logits, self.temperature, self.top_p, u), rows)

    @torch.no_grad()
    def fill(self, slots: list[int], prompts: list[list[int]], sids: list[int]) -> None:
        """Start sequence ``sids[r]`` (its RNG index) on prompt ``prompts[r]`` in slot ``slots[r]``:
        prefill each distinct prompt once, copy its K/V into the slots and sample the first token."""
        dev = self.dec.device
        uniq: dict[tuple, int] = {}
        for p in prompts:
            uniq.setdefault(tuple(p), len(uniq))
        plist = list(uniq)
        lens = torch.tensor([len(p) for p in plist], device=dev)
        Lp = int(max(len(p) for p in plist))
        ids = torch.zeros(len(plist), Lp, dtype=torch.long, device=dev)
        for r, p in enumerate(plist):
            ids[r, : len(p)] = torch.tensor(p, device=dev)
        logits, pk, pv = self.dec.prefill(ids, lens)
        src = torch.tensor([uniq[tuple(p)] for p in prompts], device=dev)
        free = torch.tensor(slots, device=dev)
        self.K[:, free, :, :Lp] = pk[:, src]
        self.V[:, free, :, :Lp] = pv[:, src]
        plen = lens[src]
        self.pos[free] = plen
        self.limit[free] = torch.clamp(self.dec.max_positions - plen, max=self.max_new_tokens)
        self.glen[free] = 0
        self.tail[free] = -1
        self.stopped[free] = False
        self.sid[free] = torch.tensor(sids, device=dev)
        self.active[free] = True
        u = None if self.temperature <= 0 else counter_rng.uniforms(self.key, self.sid[free], self.glen[free])
        nxt = torch.zeros_like(self.tok)
        nxt[free] = _sample_next(logits[src], self.temperature, self.top_p, u)
        rows = torch.zeros_like(self.active)
        rows[free] = True
        self._record(nxt, rows)

    def collect(self, owner: list[int]) -> dict[int, Completion]:
        """The finished sequences of the slots ``owner`` marks busy (owner[slot] = their index, -1
        free), by index; their slots are marked free."""
        busy = [s for s, o in enumerate(owner) if o >= 0]
        if not busy:
            return {}
        active = self.active.tolist()
        done = [s for s in busy if not active[s]]
        if not done:
            return {}
        idx = torch.tensor(done, device=self.dec.device)
        glen, stopped, out = self.glen[idx].tolist(), self.stopped[idx].tolist(), self.out[idx].tolist()
        finished = {}
        for s, g, st, o in zip(done, glen, stopped, out):
            finished[owner[s]] = Completion(o[:g], "stop" if st else "length")
            owner[s] = -1
        return finished


# the fixed-shape loops (and their captured graphs) of each model, kept across calls: RL samples
# every step, and capturing once per run is what makes replaying pay
_STATIC: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()
_STATIC_KEEP = 4  # loops kept per model (each holds its KV cache)


def _static_loop(model, dtype, *, slots, T, max_new_tokens, eos_ids, stop_ids, temperature, top_p,
                 graph) -> StaticDecodeLoop:
    """A fixed-shape loop for these shapes and settings over ``model``'s current weights: a cached
    one (its decoder's weights refreshed in place) or a new one."""
    held = _STATIC.setdefault(model, {"decoders": {}, "loops": {}})
    dev = next(model.parameters()).device
    dkey = (str(dev), dtype)
    dec = held["decoders"].get(dkey)
    if dec is None:
        dec = held["decoders"][dkey] = FastLlamaDecoder(model, dtype=dtype)
    else:
        dec.refresh(model)
    key = (dkey, slots, T, max_new_tokens, tuple(eos_ids), tuple(map(tuple, stop_ids)), float(temperature),
           float(top_p), graph)
    loops = held["loops"]
    if key not in loops:
        while len(loops) >= _STATIC_KEEP:
            loops.pop(next(iter(loops)))
        loops[key] = StaticDecodeLoop(dec, slots, T, max_new_tokens=max_new_tokens, eos_ids=eos_ids,
                                      stop_ids=stop_ids, temperature=temperature, top_p=top_p, graph=graph)
    return loops[key]


def _generate_static(model, prompt_ids, *, n, temperature, top_p, max_new_tokens, eos_ids, stop_ids,
                     key, seq_offset, batch_size, dtype, progress, desc, graph):
    dtype = dtype or _model_dtype(model)
    Tmax_pos = model.config.max_position_embeddings
    n_prompts = len(prompt_ids)
    total = n_prompts * n
    for i, p in enumerate(prompt_ids):
        if len(p) >= Tmax_pos:
            raise ValueError(f"prompt {i} has {len(p)} tokens, the model allows {Tmax_pos} positions")
    # a few shapes serve every call (each new one is a new cache and graph): slots a power of two up to
    # batch_size, the cache length a multiple of 64 up to the model's positions
    slots = min(batch_size, 1 << max(0, total - 1).bit_length())
    T = min(Tmax_pos, -(-(max(len(p) for p in prompt_ids) + max_new_tokens) // 64) * 64)
    loop = _static_loop(model, dtype, slots=slots, T=T, max_new_tokens=max_new_tokens, eos_ids=eos_ids,
                        stop_ids=stop_ids, temperature=temperature, top_p=top_p, graph=graph)
    loop.key.fill_(key)
    results: list[Completion | None] = [None] * total
    order = sorted(range(n_prompts), key=lambda i: -len(prompt_ids[i]))  # as the dynamic loop
    pending = [(i, j) for i in order for j in range(n)]
    pending.reverse()
    owner = [-1] * slots
    refill_min = max(1, slots // 8)
    bar = None
    if progress:
        from tqdm.auto import tqdm

        bar = tqdm(total=total, desc=desc, unit="seq", dynamic_ncols=True, mininterval=progress_interval())
    n_tokens, t0 = 0, time.time()
    while True:
        finished = loop.collect(owner)
        for k, c in finished.items():
            results[k] = c
            n_tokens += len(c.token_ids)
        if bar is not None and finished:
            bar.update(len(finished))
            bar.set_postfix(tok_s=f"{n_tokens / max(time.time() - t0, 1e-9):.0f}", refresh=False)
        free = [s for s, o in enumerate(owner) if o < 0]
        busy = slots - len(free)
        if pending and (len(free) >= min(refill_min, len(pending)) or busy == 0):
            items = [pending.pop() for _ in range(min(len(free), len(pending)))]
            used = free[: len(items)]
            loop.fill(used, [prompt_ids[i] for i, _ in items], [seq_offset + i * n + j for i, j in items])
            for s, (i, j) in zip(used, items):
                owner[s] = i * n + j
            continue
        if busy == 0:
            break
        for _ in range(SYNC_EVERY):
            loop.run()
    if bar is not None:
        bar.close()
    return results


# ----------------------------------------------------------------------------- generic HF path
@torch.no_grad()
def _generate_generic(model, prompt_ids, *, n, temperature, top_p, max_new_tokens, eos_ids, stop_ids,
                      key, seq_offset, batch_size, dtype, progress, desc, pad_id):
    dev = next(model.parameters()).device
    seqs = [(i, j) for i in range(len(prompt_ids)) for j in range(n)]
    results: list[Completion | None] = [None] * len(seqs)
    eos_t = torch.tensor(eos_ids or [-1], device=dev)
    bar = None
    if progress:
        from tqdm.auto import tqdm

        bar = tqdm(total=len(seqs), desc=desc, unit="seq", dynamic_ncols=True, mininterval=progress_interval())
    use_autocast = dtype is not None and dtype != _model_dtype(model)
    for c0 in range(0, len(seqs), batch_size):
        chunk = seqs[c0: c0 + batch_size]
        B = len(chunk)
        Lp = max(len(prompt_ids[i]) for i, _ in chunk)
        ids = torch.full((B, Lp), pad_id, dtype=torch.long, device=dev)
        am = torch.zeros((B, Lp), dtype=torch.long, device=dev)
        for r, (i, _) in enumerate(chunk):
            p = prompt_ids[i]
            ids[r, Lp - len(p):] = torch.tensor(p, device=dev)
            am[r, Lp - len(p):] = 1
        posid = (am.cumsum(-1) - 1).clamp(min=0)
        sid = torch.tensor([seq_offset + i * n + j for i, j in chunk], device=dev)
        out = torch.zeros(B, max_new_tokens, dtype=torch.long, device=dev)
        done = torch.zeros(B, dtype=torch.bool, device=dev)
        stopped = torch.zeros(B, dtype=torch.bool, device=dev)
        glen = torch.zeros(B, dtype=torch.long, device=dev)
        past = None
        inp = ids
        with torch.autocast(dev.type, dtype=dtype, enabled=use_autocast):
            for t in range(max_new_tokens):
                o = model(input_ids=inp, attention_mask=am, position_ids=posid, past_key_values=past, use_cache=True)
                past = o.past_key_values
                u = None if temperature <= 0 else counter_rng.uniforms(key, sid, torch.full_like(sid, t))
                nxt = _sample_next(o.logits[:, -1].float(), temperature, top_p, u)
                nxt = torch.where(done, torch.full_like(nxt, pad_id), nxt)
                out[:, t] = nxt
                glen += (~done).long()
                hit = torch.isin(nxt, eos_t) & ~done
                for s in stop_ids:
                    if t + 1 >= len(s):
                        st = torch.tensor(s, device=dev)
                        hit |= (out[:, t + 1 - len(s): t + 1] == st).all(-1) & ~done
                stopped |= hit
                done |= hit
                if bool(done.all()):
                    break
                inp = nxt[:, None]
                am = torch.cat([am, torch.ones((B, 1), dtype=am.dtype, device=dev)], 1)
                posid = posid[:, -1:] + 1
        for r, (i, j) in enumerate(chunk):
            g = int(glen[r])
            results[i * n + j] = Completion(out[r, :g].tolist(), "stop" if bool(stopped[r]) else "length")
        if bar is not None:
            bar.update(B)
    if bar is not None:
        bar.close()
    return results


# ----------------------------------------------------------------------------- public API
def generate_ids(model, tokenizer, prompt_ids: Sequence[Sequence[int]], *, n: int = 1,
                 temperature: float = 1.0, top_p: float = 1.0, max_new_tokens: int = 256,
                 stop: Sequence[str] = (), seed: int = 0, batch_size: int = 256, dtype=None,
                 fast: bool | None = None, progress: bool = False, desc: str = "sampling",
                 seq_offset: int = 0, static: bool | None = None) -> list[Completion]:
    """Sample ``n`` continuations per prompt; returns ``len(prompt_ids) * n`` completions, prompt-major
    (prompt i, sample j at index ``i * n + j``). Sequence ``i * n + j`` draws from the counter-based
    RNG as sequence ``seq_offset + i * n + j`` of ``seed``: a caller that samples a job's prompts in
    chunks passes each chunk's first sequence index and gets the samples of one call over every prompt.
    ``batch_size``: slots decoded together. ``fast=None`` picks the fast Llama decoder when supported;
    ``static=None`` runs its fixed-shape loop (captured in a CUDA graph) on a GPU and continuous
    batching with dynamic shapes on the CPU."""
    if n < 1 or max_new_tokens < 1:
        raise ValueError(f"n ({n}) and max_new_tokens ({max_new_tokens}) must be >= 1")
    if not 0 < top_p <= 1:
        raise ValueError(f"top_p must be in (0, 1], got {top_p}")
    if seq_offset < 0:
        raise ValueError(f"seq_offset must be >= 0, got {seq_offset}")
    dtype = _as_dtype(dtype)
    dev = next(model.parameters()).device
    prompt_ids = [list(p) for p in prompt_ids]
    if not prompt_ids:
        return []
    if any(len(p) == 0 for p in prompt_ids):
        raise ValueError("empty prompt: every prompt needs at least one token")
    kw = dict(n=n, temperature=temperature, top_p=top_p, max_new_tokens=max_new_tokens,
              eos_ids=_eos_ids(model, tokenizer), stop_ids=_stop_ids(tokenizer, stop),
              key=counter_rng.seed_key(seed), seq_offset=int(seq_offset), batch_size=batch_size, dtype=dtype,
              progress=progress, desc=desc)
    use_fast = supports_fast_path(model) if fast is None else fast
    use_static = dev.type == "cuda" if static is None else static
    if use_static and not use_fast:
        if static:
            raise ValueError("static=True needs the fast Llama decoder (a Llama or Qwen2 model, fast not False)")
        use_static = False
    was_training = model.training
    model.eval()
    try:
        if use_static:
            return _generate_static(model, prompt_ids, graph=dev.type == "cuda", **kw)
        if use_fast:
            return _generate_fast(model, prompt_ids, **kw)
        pad = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else kw["eos_ids"][0]
        return _generate_generic(model, prompt_ids, pad_id=pad, **kw)
    finally:
        model.train(was_training)


def decode_completions(tokenizer, completions: Sequence[Completion], stop: Sequence[str] = ()) -> list[str]:
    """Response texts: special tokens dropped, cut before the first stop string."""
    texts = tokenizer.batch_decode([c.token_ids for c in completions], skip_special_tokens=True)
    if stop:
        cut = []
        for t in texts:
            k = min((t.find(s) for s in stop if s and s in t), default=-1)
            cut.append(t[:k] if k >= 0 else t)
        texts = cut
    return texts
