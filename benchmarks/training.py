"""Training steps per second at the default's shape, side by side in one run.

Pretraining: the tiny default (``config.yaml``'s ``base.model``), batches of ``base.train.batch_size``
sequences of pretraining-like lengths (uniform in 40..130 tokens, the loss from token 20), AdamW.
RL update: ``rl.batch_size`` x ``rl.group_size`` sequences of up to 30 + ``rl.max_new_tokens`` tokens.
Both steps are timed eagerly as the loops run them on the CPU (``fgx.engines.torch.supervised.eager_step``,
``fgx.engines.torch.rl.update``), and on a GPU also as the fixed-shape steps replayed from CUDA graphs
(``fgx.engines.torch.graphed_training``); ``--compile`` also times the eager pretraining step with the
model under ``torch.compile`` (inductor; the CPU's option) and prints how far its loss moved. Capture and
compilation are timed apart from the steps. Last line: ``pretrain_steps_per_s: N`` (the loop's step on the
device: captured on a GPU, eager on the CPU).

    flock ~/.fgx-bench.lock python benchmarks/training.py [--device cuda] [--steps 300] [--compile]
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))  # run from a checkout


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--steps", type=int, default=40, help="timed steps per variant (after 5 warm-up steps)")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--compile", action="store_true", help="also time the eager step under torch.compile")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)

    import torch
    import yaml

    from fgx.algos.optimizer import RL_BETAS, RL_WEIGHT_DECAY, SUPERVISED_BETAS
    from fgx.engines.torch import rl as torch_rl
    from fgx.engines.torch.graphed_training import PolicyUpdateStep, SupervisedStep
    from fgx.engines.torch.model import build_model
    from fgx.engines.torch.optim import adamw
    from fgx.engines.torch.sampler import Completion
    from fgx.engines.torch.supervised import eager_step
    from fgx.engines.torch.tokenizer import build_char_tokenizer
    from fgx.settings import RL, ModelShape

    torch.set_num_threads(args.threads)
    cfg = yaml.safe_load((ROOT / "config.yaml").read_text())
    dev = torch.device(args.device)
    cuda = dev.type == "cuda"
    tok = build_char_tokenizer()
    shape, train = ModelShape(**cfg["base"]["model"]), cfg["base"]["train"]
    rng = random.Random(args.seed)
    vocab = len(tok)
    examples = [([rng.randrange(4, vocab) for _ in range(rng.randint(40, 130))], 20) for _ in range(4096)]
    batches = [rng.sample(range(len(examples)), train["batch_size"]) for _ in range(args.steps + 5)]

    def sync():
        if cuda:
            torch.cuda.synchronize()

    def fresh(lr, wd, betas):
        model = build_model(shape, tok, seed=args.seed).to(dev).train()
        return model, adamw(model, lr, wd, betas, capturable=cuda)

    def timed(step_fn, label) -> tuple[float, float]:
        """(steps per second, last loss) of ``step_fn(batch)`` over the timed batches."""
        for b in batches[:5]:
            step_fn(b)
        sync()
        t = time.perf_counter()
        for b in batches[5:]:
            loss = step_fn(b)
        sync()
        rate = args.steps / (time.perf_counter() - t)
        print(f"{label}: {rate:,.1f} steps/s", flush=True)
        return rate, float(loss.detach())

    print(f"model: {shape}, batch {train['batch_size']}, device {dev}")
    pad = tok.pad_token_id
    results = {}
    model, opt = fresh(train["lr"], train["weight_decay"], SUPERVISED_BETAS)
    results["eager"] = timed(lambda b: eager_step(model, opt, examples, b, pad, dev)[0], "pretrain_eager")
    if cuda:
        model, opt = fresh(train["lr"], train["weight_decay"], SUPERVISED_BETAS)
        step = SupervisedStep(model, opt, examples, train["batch_size"], pad, dev)
        t = time.perf_counter()
        step(batches[0], [g["lr"] for g in opt.param_groups])
        sync()
        print(f"pretrain_capture_s: {time.perf_counter() - t:.2f} (graphed: {step.graphed})")
        results["captured"] = timed(lambda b: step(b, [g["lr"] for g in opt.param_groups])["loss"],
                                    "pretrain_captured")
        print(f"captured_vs_eager: {results['captured'][0] / results['eager'][0]:.2f}x")
    if args.compile:
        model, opt = fresh(train["lr"], train["weight_decay"], SUPERVISED_BETAS)
        compiled = torch.compile(model, dynamic=True)
        t = time.perf_counter()
        for b in batches[:5]:
            eager_step(compiled, opt, examples, b, pad, dev)
        sync()
        print(f"compile_s: {time.perf_counter() - t:.1f} (5 steps)")
        results["compiled"] = timed(lambda b: eager_step(compiled, opt, examples, b, pad, dev)[0], "pretrain_compiled")
        print(f"compiled_vs_eager: {results['compiled'][0] / results['eager'][0]:.2f}x; loss after "
              f"{args.steps + 10} steps {results['compiled'][1]:.6f} against eager's {results['eager'][1]:.6f}")

    # RL's update at the default's RL shape
    rl = RL.from_settings({**{k: v for k, v in cfg["rl"].items() if k != "runs"}, "engine": "torch",
                           "device": str(dev), "seed": 0, "verl": {}, "tensor_parallel_size": 1})
    rows = rl.batch_size * rl.group_size
    prompts = [[rng.randrange(4, vocab) for _ in range(rng.randint(15, 30))] for _ in range(rl.batch_size)]
    groups = [(g, [float(rng.random() < 0.5) for _ in range(rl.group_size)],
               [Completion([rng.randrange(4, vocab) for _ in range(rng.randint(20, rl.max_new_tokens))], "length")
                for _ in range(rl.group_size)]) for g in range(rl.batch_size)]
    batch = torch_rl.build_batch(groups, prompts, rl.algorithm, dev)
    for label in ("rl_update_eager", *(["rl_update_captured"] if cuda else [])):
        model, opt = fresh(rl.lr, RL_WEIGHT_DECAY, RL_BETAS)
        graphed = None
        if label.endswith("captured"):
            graphed = PolicyUpdateStep(model, None, opt, lambda *a: torch_rl.micro_batch_loss(rl, *a), rows,
                                       30 + rl.max_new_tokens, pad, dev)
        for _ in range(3):
            torch_rl.update(model, None, opt, batch, rl, pad, dev, graphed)
        sync()
        t = time.perf_counter()
        n = max(3, args.steps // 10)
        for _ in range(n):
            torch_rl.update(model, None, opt, batch, rl, pad, dev, graphed)
        sync()
        print(f"{label}_s: {(time.perf_counter() - t) / n:.4f} ({rows} sequences)", flush=True)
    print(f"pretrain_steps_per_s: {results['captured' if cuda else 'eager'][0]:.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
