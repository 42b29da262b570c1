"""How to spend a small CPU: one heavy job with every thread, or several one-thread jobs side by side?

Runs the same fixed workload (tiny-Llama training steps, or sampling with fgx's sampler) as
``--jobs`` worker processes, first one after another with ``--jobs`` threads each, then all at
once with one thread each, and prints the throughput of both layouts. The DAG's default
(``compute.torch_threads: 1``, profiles/default) follows from the ratio: above 1, independent heavy
jobs should run side by side, one thread each. Last line: ``side_by_side_vs_one_at_a_time: N.NNx``.

    flock ~/.fgx-bench.lock python benchmarks/threads.py [--jobs 2] [--work train|sample|both]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def worker(work: str, threads: int, steps: int) -> float:
    """Run ``steps`` units of ``work`` with ``threads`` torch threads; returns units per second."""
    import random

    import torch

    from fgx.engines.torch.batches import forward_logprobs
    from fgx.engines.torch.model import build_model
    from fgx.engines.torch.sampler import generate_ids
    from fgx.engines.torch.tokenizer import build_char_tokenizer
    from fgx.settings import ModelShape

    torch.set_num_threads(threads)
    tok = build_char_tokenizer()
    # the tiny default's architecture (config.yaml base.model)
    model = build_model(ModelShape(hidden_size=128, num_hidden_layers=4, num_attention_heads=4, num_key_value_heads=2,
                                   intermediate_size=384, max_position_embeddings=512), tok, seed=0)
    if work == "train":  # one pretraining step: 32 sequences x 82 tokens (the default's mean length)
        opt = torch.optim.AdamW(model.parameters(), 1e-3)
        ids = torch.randint(5, 60, (32, 82), generator=torch.Generator().manual_seed(0))

        def unit():
            lp, _ = forward_logprobs(model, ids)
            opt.zero_grad()
            (-lp.mean()).backward()
            opt.step()
    else:  # one rollout batch: 128 prompts, up to 96 new tokens each
        model.eval()
        rng = random.Random(0)
        prompts = [tok("".join(rng.choice("abcdefgh().f0123") for _ in range(20)) + "\n")["input_ids"]
                   for _ in range(128)]

        def unit():
            generate_ids(model, tok, prompts, n=1, temperature=1.0, max_new_tokens=96, seed=0, batch_size=128)
    unit()  # warm-up
    t = time.perf_counter()
    for _ in range(steps):
        unit()
    return steps / (time.perf_counter() - t)


def _spawn(work: str, threads: int, steps: int) -> subprocess.Popen:
    code = (f"import sys; sys.path.insert(0, {str(ROOT / 'src')!r}); sys.path.insert(0, {str(ROOT / 'benchmarks')!r}); "
            f"import threads as b; print(b.worker({work!r}, {threads}, {steps}))")
    return subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)


def measure(work: str, jobs: int, steps: int) -> tuple[float, float]:
    """(units/s one job at a time with ``jobs`` threads, units/s of ``jobs`` one-thread jobs at once)."""
    t = time.perf_counter()
    for _ in range(jobs):
        p = _spawn(work, jobs, steps)
        p.communicate()
    serial = jobs * steps / (time.perf_counter() - t)
    t = time.perf_counter()
    procs = [_spawn(work, 1, steps) for _ in range(jobs)]
    for p in procs:
        p.communicate()
    parallel = jobs * steps / (time.perf_counter() - t)
    return serial, parallel


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--jobs", type=int, default=2, help="jobs (= cores to share)")
    ap.add_argument("--work", default="both", choices=["train", "sample", "both"])
    ap.add_argument("--steps", type=int, default=None, help="units per job (default: 120 train steps / 6 batches)")
    args = ap.parse_args(argv)
    ratios = {}
    for work in (["train", "sample"] if args.work == "both" else [args.work]):
        steps = args.steps or (120 if work == "train" else 6)
        serial, parallel = measure(work, args.jobs, steps)
        ratios[work] = parallel / serial
        unit = "steps/s" if work == "train" else "batches/s"
        print(json.dumps({"work": work, "jobs": args.jobs, "one_at_a_time": round(serial, 3),
                          "side_by_side": round(parallel, 3), "unit": unit}), flush=True)
    # process start-up and imports are inside both timings, as they are for Snakemake jobs
    worst = min(ratios.values())
    print(f"side_by_side_vs_one_at_a_time: {worst:.2f}x")


if __name__ == "__main__":
    main()
