"""One held-out validation during RL: what it costs and how narrow an interval it gives.

Cost: ``fgx.engines.torch.rl.validate``, as an RL job calls it (the job's one thread, ``rl.max_new_tokens``),
on a model (the Stage-1 model is step 0's; an RL model's answers may be longer) for the validation asked
for (``--per-level`` prompts per level, ``--val-n`` samples each at ``--temperature``) beside a former one
(``--former-per-level`` prompts per level, one greedy answer), each the best of ``--repeats`` runs; times
the validations an RL run of ``--steps`` steps makes at each cadence (step 0, every ``--eval-every`` /
``--former-every`` steps and the last step).

Interval: from an evaluation with many samples per prompt (``--eval``, e.g. results/eval/stage1/test.parquet,
256 prompts x 16 samples per level), the half-width of a point's 95 % bootstrap interval over prompts
(fgx.metrics.bootstrap_mean_ci) when each level has ``--per-level`` of those prompts and ``--val-n`` of their
samples, averaged over ``--draws`` random subsets (the largest draw's half-width beside it).

The prompts are the first ones of each level of ``--prompts`` (the test set stands in for the validation
set: both are drawn alike); with ``--eval``, the same file's rows.

    flock ~/.fgx-bench.lock .venv/bin/python benchmarks/validation.py --model results/models/stage1 \\
        --prompts results/eval/stage1/test.parquet --eval results/eval/stage1/test.parquet \\
        --per-level 32 128 128 128 32 32 --val-n 4 --steps 160 --eval-every 20

Last line: ``validation_s_per_rl_run: N`` (the asked-for validations of one RL run minus the former ones).
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def per_level(counts: list[int], levels: list[int]) -> dict[int, int]:
    if len(counts) == 1:
        return {lv: counts[0] for lv in levels}
    if len(counts) != len(levels):
        raise SystemExit(f"--per-level: give one count, or one per level {levels}")
    return dict(zip(levels, counts))


def first_rows(df, counts: dict[int, int]):
    import pandas as pd

    return pd.concat([df[df["level"] == lv].head(n) for lv, n in counts.items() if n], ignore_index=True)


def validations(steps: int, every: int) -> int:
    """Step 0, every ``every`` steps, and the last step."""
    return len({0, steps, *range(every, steps, every)})


def interval_half_widths(ev, counts: dict[int, int], n: int, draws: int, seed: int) -> dict[int, tuple]:
    """Per level: mean and largest half-width (points) of the bootstrap interval of a point made of
    ``counts[level]`` prompts x ``n`` samples drawn from the evaluation ``ev``, and the level's accuracy."""
    import numpy as np

    from fgx.metrics import bootstrap_mean_ci

    rng = np.random.default_rng(seed)
    out = {}
    for lv, m in counts.items():
        flags = [np.asarray(c, dtype=float) for c in ev[ev["level"] == lv]["correct"]]
        if not m or not flags or m > len(flags) or n > min(len(f) for f in flags):
            continue
        widths = []
        for _ in range(draws):
            rows = rng.choice(len(flags), size=m, replace=False)
            acc = np.array([rng.choice(flags[r], size=n, replace=False).mean() for r in rows])
            lo, hi = bootstrap_mean_ci(acc, resamples=1000, ci=0.95, rng=rng)
            widths.append(100 * (hi - lo) / 2)
        out[lv] = (float(np.mean(widths)), float(np.max(widths)), 100 * float(np.mean([f.mean() for f in flags])))
    return out


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--model", required=True, help="a Hugging Face model directory (the Stage-1 model: step 0)")
    ap.add_argument("--prompts", required=True, help="a parquet of held-out prompts with levels (test or eval file)")
    ap.add_argument("--eval", help="an evaluation parquet with many samples per prompt: the intervals")
    ap.add_argument("--per-level", type=int, nargs="+", default=[128], help="prompts per level (one, or one per level)")
    ap.add_argument("--val-n", type=int, default=4, help="samples per prompt")
    ap.add_argument("--temperature", type=float, default=1.0)
    ap.add_argument("--max-new-tokens", type=int, default=192, help="rl.max_new_tokens")
    ap.add_argument("--former-per-level", type=int, default=16, help="the former validation's prompts per level")
    ap.add_argument("--steps", type=int, default=160, help="RL steps")
    ap.add_argument("--eval-every", type=int, default=20)
    ap.add_argument("--former-every", type=int, default=10)
    ap.add_argument("--threads", type=int, default=1, help="an RL job's threads (compute.torch_threads)")
    ap.add_argument("--repeats", type=int, default=2, help="timed runs of each validation (best is kept)")
    ap.add_argument("--draws", type=int, default=40, help="random subsets per level for the intervals")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)

    import pandas as pd
    import torch
    import yaml

    from fgx.engines.prompts import encode_prompts, prompt_texts
    from fgx.engines.torch.model import load_model, load_tokenizer
    from fgx.engines.torch.rl import validate
    from fgx.plan import params
    from fgx.settings import RL
    from fgx.tasks import compute_score
    from fgx.tasks.contract import row_levels

    torch.set_num_threads(args.threads)
    df = pd.read_parquet(args.prompts)
    df["level"] = row_levels(df, args.prompts)
    levels = sorted(df["level"].unique().tolist())
    counts = per_level(args.per_level, levels)
    tok, model = load_tokenizer(args.model), load_model(args.model, "cpu")
    # the default's RL settings (config.yaml) with the validation asked for: as an RL job receives them
    config = yaml.safe_load((ROOT / "config.yaml").read_text())
    base = RL.from_settings(json.loads(params.rl_settings(config, "level2")))
    base = dataclasses.replace(base, max_new_tokens=args.max_new_tokens)
    layouts = {"former": (per_level([args.former_per_level], levels), 1, 0.0, args.former_every),
               "asked": (counts, args.val_n, args.temperature, args.eval_every)}
    print(f"model: {args.model}; threads {args.threads}; max_new_tokens {args.max_new_tokens}")
    seconds = {}
    for name, (cnt, n, temp, every) in layouts.items():
        rows = first_rows(df, cnt)
        ids = encode_prompts(tok, prompt_texts(tok, rows, args.prompts))
        s = dataclasses.replace(base, val_n=n, val_temperature=temp)
        best, ev = float("inf"), None
        for _ in range(args.repeats):
            t = time.perf_counter()
            ev = validate(model, tok, rows, ids, s, args.seed, compute_score)
            best = min(best, time.perf_counter() - t)
        per = ev.groupby("level").agg(prompts=("accuracy", "size"), accuracy=("accuracy", "mean"),
                                      length=("length", "mean"))
        runs = validations(args.steps, every)
        seconds[name] = best * runs
        print(f"{name}: {sum(cnt.values())} prompts x {n} samples at T = {temp:g}: {best:.1f} s per validation, "
              f"{runs} per RL run of {args.steps} steps = {best * runs:.0f} s")
        print("  " + json.dumps({int(lv): {"prompts": int(r.prompts), "accuracy": round(100 * r.accuracy, 1),
                                           "tokens": round(r.length, 1)} for lv, r in per.iterrows()}))
    if args.eval:
        ev = pd.read_parquet(args.eval)
        ev["level"] = row_levels(ev, args.eval)
        for lv, (mean, worst, acc) in interval_half_widths(ev, counts, args.val_n, args.draws, args.seed).items():
            print(f"interval: Level {lv} ({acc:.1f} % in the evaluation), {counts[lv]} prompts x {args.val_n} "
                  f"samples: +-{mean:.1f} points on average, +-{worst:.1f} at most of {args.draws} draws")
    print(f"validation_s_per_rl_run: {seconds['asked'] - seconds['former']:.0f}")


if __name__ == "__main__":
    main()
