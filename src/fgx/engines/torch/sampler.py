"""Batched sampling with a KV cache.

Two paths, same results contract:

* :class:`FastLlamaDecoder` -- Llama-architecture models (LlamaForCausalLM, Qwen2ForCausalLM
  without sliding windows). Its own decode loop over the HF module's weights: fused QKV and
  gate/up projections, RoPE as one complex multiply, a preallocated KV cache, one SDPA call per
  layer, *continuous batching* (a finished row's slot is refilled with the next pending sequence;
  when nothing is pending, finished rows are dropped), unique prompts prefilled once and copied
  into their ``n`` sample slots, and inverse-CDF sampling (one uniform draw per row).
* :func:`_generate_generic` -- any HF causal LM: the HF forward with its cache, left padding.

Both sample with a seeded ``torch.Generator``; same inputs + same seed => same outputs.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Sequence

import torch
import torch.nn.functional as F

from fgx.progress import progress_interval


@dataclass
class Completion:
    token_ids: list[int]  # generated ids, eos included when the sequence ended with it
    finish_reason: str  # "stop" (eos / stop string) or "length"


# ----------------------------------------------------------------------------- sampling helpers
def _sample_next(logits: torch.Tensor, temperature: float, top_p: float, gen: torch.Generator | None):
    """Next token ids (B,) from float logits (B, V): greedy when temperature <= 0, else inverse-CDF
    sampling (one uniform per row + a sorted search; cheaper on CPU than torch.multinomial)."""
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
    u = torch.rand((probs.shape[0], 1), generator=gen, device=probs.device) * cum[:, -1:]
    # first index whose cumulative mass exceeds u: never a zero-probability token
    idx = torch.searchsorted(cum, u, right=True).clamp_(max=probs.shape[-1] - 1)
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
        self.layers = []
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
                self.layers.append(dict(
                    qkv=w(qkv), qkv_b=w(qkv_b), o=w(a.o_proj.weight), o_b=w(a.o_proj.bias),
                    gu=w(torch.cat([m.gate_proj.weight, m.up_proj.weight], 0).float() * ln2), gu_b=w(gu_b),
                    down=w(m.down_proj.weight), down_b=w(m.down_proj.bias),
                ))
            self.embed = w(model.model.embed_tokens.weight)
            self.lm_head = w(model.lm_head.weight.float() * model.model.norm.weight.float()[None, :])
            self.lm_head_b = w(getattr(model.lm_head, "bias", None))
            # RoPE table from the model's own rotary module (handles its scaling variants)
            pos = torch.arange(self.max_positions, device=dev)[None]
            cos, sin = model.model.rotary_emb(torch.zeros(1, device=dev, dtype=torch.float32), pos)
            self.freqs = torch.complex(cos[0, :, :half].float(), sin[0, :, :half].float())  # (T, d/2)
        self.hidden = model.config.hidden_size
        self.inter = self.layers[0]["down"].shape[1]

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
                   gen, batch_size, dtype, progress, desc):
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
        plen[free] = lens[src]
        pos[free] = lens[src]
        glen[free] = 0
        tail[free] = -1
        active[free] = True
        first = _sample_next(logits[src], temperature, top_p, gen)
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
                pos, plen, glen, tok, out, active, tail = (
                    x[keep] for x in (pos, plen, glen, tok, out, active, tail))
        S = int(pos.max()) + 1
        logits = dec.decode(tok, pos, K, V, S)
        pos += active.long()
        act = active.nonzero().flatten()
        nxt = _sample_next(logits[act] if len(act) < len(active) else logits, temperature, top_p, gen)
        step_bookkeeping(act, nxt)
    if bar is not None:
        bar.close()
    return results


# ----------------------------------------------------------------------------- generic HF path
@torch.no_grad()
def _generate_generic(model, prompt_ids, *, n, temperature, top_p, max_new_tokens, eos_ids, stop_ids,
                      gen, batch_size, dtype, progress, desc, pad_id):
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
                nxt = _sample_next(o.logits[:, -1].float(), temperature, top_p, gen)
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
                 fast: bool | None = None, progress: bool = False, desc: str = "sampling") -> list[Completion]:
    """Sample ``n`` continuations per prompt; returns ``len(prompt_ids) * n`` completions, prompt-major
    (prompt i, sample j at index ``i * n + j``). ``fast=None`` picks the fast path when supported."""
    if n < 1 or max_new_tokens < 1:
        raise ValueError(f"n ({n}) and max_new_tokens ({max_new_tokens}) must be >= 1")
    if not 0 < top_p <= 1:
        raise ValueError(f"top_p must be in (0, 1], got {top_p}")
    dtype = _as_dtype(dtype)
    dev = next(model.parameters()).device
    gen = torch.Generator(device=dev)
    gen.manual_seed(int(seed))
    prompt_ids = [list(p) for p in prompt_ids]
    if not prompt_ids:
        return []
    if any(len(p) == 0 for p in prompt_ids):
        raise ValueError("empty prompt: every prompt needs at least one token")
    kw = dict(n=n, temperature=temperature, top_p=top_p, max_new_tokens=max_new_tokens,
              eos_ids=_eos_ids(model, tokenizer), stop_ids=_stop_ids(tokenizer, stop), gen=gen,
              batch_size=batch_size, dtype=dtype, progress=progress, desc=desc)
    use_fast = supports_fast_path(model) if fast is None else fast
    was_training = model.training
    model.eval()
    try:
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
