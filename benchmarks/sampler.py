"""Sampler throughput: fgx's fast sampler vs HF ``model.generate`` on the same tiny Llama.

Same model (random init, the default tiny size unless overridden), same prompts (2 x batch by
default, as in a rollout), same batch (HF: consecutive chunks of --batch prompts; fgx: --batch
slots refilled as sequences finish), same max_new_tokens, temperature 1, no top-k. Tokens counted =
generated tokens up to and including eos, for both. fgx runs the path ``generate_ids`` takes on the
device (continuous batching with dynamic shapes on the CPU, the fixed-shape step in a CUDA graph on
a GPU); ``--static`` also times the other one (``fgx_dynamic`` / ``fgx_static``) side by side. Last
line: ``sampler_vs_hf_generate: N.NNx`` (the device's path).

``--breakdown`` also times one decode step of fgx's sampler (the cache half full) against the weight
matmuls of that step alone, the floor no saving on other ops can go below, and prints the ratio to HF
``generate`` that fgx would reach if every other op cost nothing.

    flock ~/.fgx-bench.lock python benchmarks/sampler.py [--batch 256] [--max-new-tokens 128] [--device cuda]
        [--static]
"""

from __future__ import annotations

import argparse
import json
import random
import time

# a 2.4 M-parameter Llama (six layers of 192): three times the tiny default, so matrix products carry weight
BENCH_SHAPE = dict(hidden_size=192, num_hidden_layers=6, num_attention_heads=6, num_key_value_heads=2,
                   intermediate_size=512, max_position_embeddings=1024)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--batch", type=int, default=256, help="rows decoded together (both samplers)")
    ap.add_argument("--prompts", type=int, default=None,
                    help="number of prompts (default: 2 x --batch: a rollout holds more sequences than one batch)")
    ap.add_argument("--max-new-tokens", type=int, default=128)
    ap.add_argument("--model", default=None, help='JSON base.model keys over BENCH_SHAPE, e.g. \'{"hidden_size":128}\'')
    ap.add_argument("--dtype", default="float32", choices=["float32", "bfloat16"])
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--device", default="cpu", help="cpu | cuda (both samplers run there)")
    ap.add_argument("--repeats", type=int, default=3, help="timed runs per sampler (best is kept)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--static", action="store_true",
                    help="time both fgx decode loops: continuous batching (dynamic shapes) and the fixed-shape step")
    ap.add_argument("--breakdown", action="store_true",
                    help="time a decode step against its weight matmuls alone (the sampler's floor)")
    args = ap.parse_args(argv)

    import torch

    from fgx.engines.torch.model import build_model, n_params
    from fgx.engines.torch.sampler import generate_ids
    from fgx.engines.torch.tokenizer import build_char_tokenizer
    from fgx.settings import ModelShape

    torch.set_num_threads(args.threads)
    tok = build_char_tokenizer()
    shape = ModelShape(**{**BENCH_SHAPE, **(json.loads(args.model) if args.model else {})})
    dev = torch.device(args.device)
    model = build_model(shape, tok, seed=args.seed).eval().to(dev)

    def sync():  # CUDA runs asynchronously: a timer must wait for the kernels
        if dev.type == "cuda":
            torch.cuda.synchronize()
    print(f"model: {shape} params={n_params(model):,}")
    rng = random.Random(args.seed)
    alphabet = "abcdefghij0123456789()\"+,f"
    n_prompts = args.prompts or 2 * args.batch
    prompts = ["".join(rng.choice(alphabet) for _ in range(rng.randint(8, 30))) + "\n" for _ in range(n_prompts)]
    ids = [tok(p)["input_ids"] for p in prompts]
    eos = tok.eos_token_id

    def run_fgx(static=None):
        t = time.perf_counter()
        comps = generate_ids(model, tok, ids, n=1, temperature=1.0, top_p=1.0, max_new_tokens=args.max_new_tokens,
                             seed=args.seed, batch_size=args.batch, dtype=args.dtype, static=static)
        sync()
        return sum(len(c.token_ids) for c in comps), time.perf_counter() - t

    def run_hf():
        torch.manual_seed(args.seed)
        total, t = 0, time.perf_counter()
        for c0 in range(0, len(prompts), args.batch):
            enc = tok(prompts[c0:c0 + args.batch], return_tensors="pt", padding=True).to(dev)
            with torch.no_grad(), torch.autocast(dev.type, dtype=torch.bfloat16, enabled=args.dtype == "bfloat16"):
                out = model.generate(**enc, do_sample=True, temperature=1.0, top_p=1.0, top_k=0,
                                     max_new_tokens=args.max_new_tokens, eos_token_id=eos,
                                     pad_token_id=tok.pad_token_id)
            gen = out[:, enc["input_ids"].shape[1]:]
            is_eos = (gen == eos).int()
            # tokens up to and including the first eos
            before = (is_eos.cumsum(1) - is_eos) == 0
            total += int(before.sum())
        sync()
        return total, time.perf_counter() - t

    # warm-up (small)
    generate_ids(model, tok, ids[:8], n=1, max_new_tokens=8, seed=0, batch_size=8)
    with torch.no_grad():
        model.generate(**tok(prompts[:8], return_tensors="pt", padding=True).to(dev), max_new_tokens=8, do_sample=True,
                       pad_token_id=tok.pad_token_id)
    samplers = {"hf_generate": run_hf, "fgx": run_fgx}
    if args.static:  # the other loop too, named by its shapes
        default_static = dev.type == "cuda"
        samplers["fgx_dynamic" if default_static else "fgx_static"] = lambda: run_fgx(static=not default_static)
    # alternate the samplers and keep each one's best run: the machine is shared and noisy
    best = dict.fromkeys(samplers, 0.0)
    for _ in range(args.repeats):
        for name, fn in samplers.items():
            ntok, dt = fn()
            best[name] = max(best[name], ntok / dt)
            print(f"{name}: {ntok} tokens in {dt:.2f}s = {ntok / dt:,.0f} tok/s", flush=True)
    for name in samplers:
        if name.startswith("fgx_"):
            print(f"{name}_vs_fgx: {best[name] / best['fgx']:.2f}x")
    ratio = best["fgx"] / best["hf_generate"]
    if args.breakdown:
        step_ms, mm_ms, gflops = decode_breakdown(model, args.batch, args.max_new_tokens, getattr(torch, args.dtype),
                                                  sync)
        print(f"decode_step_ms: {step_ms:.2f} (batch {args.batch})")
        print(f"weight_matmuls_ms: {mm_ms:.2f} ({gflops:.0f} GFLOP/s; {mm_ms / step_ms:.0%} of a decode step)")
        print(f"sampler_vs_hf_generate_bound: {ratio * step_ms / mm_ms:.2f}x (every op but the weight matmuls free)")
    print(f"sampler_vs_hf_generate: {ratio:.2f}x")


def decode_breakdown(model, batch: int, max_new_tokens: int, dtype, sync, repeats: int = 30):
    """Milliseconds of one decode step of fgx's sampler at ``batch`` rows with the cache half full, of the
    same step's weight matmuls alone, and those matmuls' GFLOP/s."""
    import torch
    import torch.nn.functional as F

    from fgx.engines.torch.sampler import FastLlamaDecoder

    dec = FastLlamaDecoder(model, dtype=dtype)
    prompt = 32
    K, V = dec.new_cache(batch, prompt + max_new_tokens)
    S = prompt + max_new_tokens // 2
    tok = torch.randint(1, dec.embed.shape[0], (batch,), device=dec.device)
    pos = torch.full((batch,), S - 1, dtype=torch.long, device=dec.device)
    x = torch.randn(batch, dec.embed.shape[1], device=dec.device, dtype=dec.embed.dtype)

    def matmuls():
        for L in dec.layers:
            F.linear(x, L["qkv"])
            F.linear(x, L["o"])
            up = F.linear(x, L["gu"])
            F.linear(up[:, : L["down"].shape[1]], L["down"])
        F.linear(x, dec.lm_head)

    def ms(fn):
        for _ in range(3):
            fn()
        sync()
        t = time.perf_counter()
        for _ in range(repeats):
            fn()
        sync()
        return (time.perf_counter() - t) / repeats * 1e3

    with torch.no_grad():
        step_ms = ms(lambda: dec.decode(tok, pos, K, V, S))
        mm_ms = ms(matmuls)
    weights = sum(L[k].numel() for L in dec.layers for k in ("qkv", "o", "gu", "down")) + dec.lm_head.numel()
    return step_ms, mm_ms, 2 * batch * weights / (mm_ms * 1e6)


if __name__ == "__main__":
    main()
