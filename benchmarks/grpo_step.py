"""GRPO step time: fgx's torch engine vs TRL's GRPOTrainer on the same work.

Same tiny Llama (random init), same prompts, group size, prompts per step, max completion
length, temperature, clip range, token-mean loss, no KL, one optimizer step per batch; reward =
"the completion starts with a lowercase letter". fgx runs its RL loop's step functions
(``rollout``, ``build_batch``, ``update``) without dynamic sampling, so both do exactly one
generation batch + one update per step. The first step of each
is a warm-up and is not timed; each side's best step time is compared (the machine is shared, and
noise only ever adds time). Last line: ``grpo_step_vs_trl: N.NNx`` (TRL s/step / fgx s/step).

    flock ~/.fgx-bench.lock python benchmarks/grpo_step.py [--steps 3]
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path

LETTERS = "abcdefghijklmnopqrstuvwxyz"


def toy_score(data_source, solution_str, ground_truth, extra_info=None):
    ok = len(solution_str) > 0 and solution_str[0] in ground_truth
    return {"score": float(ok), "acc": ok, "pred": solution_str[:1]}


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--steps", type=int, default=4, help="timed steps (after one warm-up step)")
    ap.add_argument("--prompts-per-step", type=int, default=16)
    ap.add_argument("--group-size", type=int, default=8)
    ap.add_argument("--max-new-tokens", type=int, default=64)
    ap.add_argument("--model", default=None, help="JSON base.model keys over the tiny default's")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--skip-trl", action="store_true")
    args = ap.parse_args(argv)

    import numpy as np
    import pandas as pd
    import torch

    from fgx.algos.optimizer import RL_BETAS, RL_WEIGHT_DECAY
    from fgx.engines.prompts import encode_prompts, prompt_texts
    from fgx.engines.torch import rl as R
    from fgx.engines.torch.model import build_model, n_params, save_checkpoint
    from fgx.engines.torch.optim import adamw
    from fgx.engines.torch.tokenizer import build_char_tokenizer
    from fgx.settings import RL, ModelShape

    torch.set_num_threads(args.threads)
    work = Path(tempfile.mkdtemp(prefix="fgx-grpo-bench-"))
    tok = build_char_tokenizer()
    default = dict(hidden_size=128, num_hidden_layers=4, num_attention_heads=4, num_key_value_heads=2,
                   intermediate_size=384, max_position_embeddings=512)
    shape = ModelShape(**{**default, **(json.loads(args.model) if args.model else {})})
    model = build_model(shape, tok, seed=0)
    save_checkpoint(model, tok, work / "base")
    print(f"model {shape} params={n_params(model):,}  work dir {work}")
    n_prompts = args.prompts_per_step * (args.steps + 1)
    prompts = [f"q{i:04d}\n" for i in range(n_prompts)]
    rows = pd.DataFrame({
        "data_source": ["toy"] * n_prompts,
        "prompt": [[{"role": "user", "content": p}] for p in prompts],
        "ability": ["toy"] * n_prompts,
        "reward_model": [{"style": "rule", "ground_truth": LETTERS}] * n_prompts,
        "extra_info": [{"depth": 1, "index": i, "split": "train"} for i in range(n_prompts)],
    })
    B = args.prompts_per_step * args.group_size
    lr = 1e-5

    # ------------------------------------------------------------------ fgx: the RL loop's own step functions
    s = RL(algorithm="grpo", reward="acc", steps=args.steps + 1, batch_size=args.prompts_per_step,
           group_size=args.group_size, lr=lr, kl_coef=0.0, entropy_coef=0.0, loss_agg_mode="token-mean",
           dynamic_sampling=False, max_generation_batches=1, temperature=1.0, max_new_tokens=args.max_new_tokens,
           overlong_buffer=0, eval_every=1, save_every=1)
    ids = encode_prompts(tok, prompt_texts(tok, rows, "toy"))
    opt = adamw(model, lr, RL_WEIGHT_DECAY, RL_BETAS)
    stream = R.PromptStream(len(rows), 0)
    pad = tok.pad_token_id
    times, gens, fgx_len = [], [], []
    for step in range(args.steps + 1):
        t0 = time.perf_counter()
        ro = R.rollout(model, tok, s, 0, step, stream, rows, ids, "toy", toy_score)
        t1 = time.perf_counter()
        if ro.groups:
            R.update(model, None, opt, R.build_batch(ro.groups, ids, s.algorithm, "cpu"), s, pad, "cpu")
        t2 = time.perf_counter()
        if step:  # the first step is a warm-up
            times.append(t2 - t0)
            gens.append(t1 - t0)
            fgx_len.append(float(np.mean(ro.lengths)))
    best = min(range(len(times)), key=times.__getitem__)
    fgx_s, fgx_gen = times[best], gens[best]
    print(f"fgx: best {fgx_s:.2f} s/step, median {sorted(times)[len(times) // 2]:.2f} over {len(times)} steps "
          f"({[round(x, 2) for x in times]}); best step = generation {fgx_gen:.2f} s + update "
          f"{fgx_s - fgx_gen:.2f} s", flush=True)
    if args.skip_trl:
        return

    # ------------------------------------------------------------------ TRL
    from datasets import Dataset
    from transformers import AutoModelForCausalLM, AutoTokenizer, TrainerCallback
    from trl import GRPOConfig, GRPOTrainer

    def reward_fn(prompts, completions, **kw):
        return [float(len(c) > 0 and c[0] in LETTERS) for c in completions]

    class Timer(TrainerCallback):
        def __init__(self):
            self.t = [time.perf_counter()]
            self.gen = []  # seconds in TRL's generate-and-score phase, one entry per step
            self.lens = []  # mean completion length (tokens), one entry per step

        def on_step_end(self, *a, **k):
            self.t.append(time.perf_counter())

        def on_log(self, args, state, control, logs=None, **k):
            if logs and "completions/mean_length" in logs:
                self.lens.append(float(logs["completions/mean_length"]))

    cfg = GRPOConfig(
        output_dir=str(work / "trl"), per_device_train_batch_size=B, gradient_accumulation_steps=1,
        num_generations=args.group_size, generation_batch_size=B, max_completion_length=args.max_new_tokens,
        temperature=1.0, top_p=1.0, top_k=0, learning_rate=lr, beta=0.0, epsilon=0.2, epsilon_high=0.28,
        loss_type="dapo", scale_rewards="group", max_steps=args.steps + 1, num_iterations=1, use_cpu=True,
        bf16=False, logging_steps=1, report_to="none", save_strategy="no", disable_dropout=True, seed=0,
        shuffle_dataset=False, max_grad_norm=1.0, dataloader_num_workers=0,
    )
    trl_model = AutoModelForCausalLM.from_pretrained(work / "base")
    trl_tok = AutoTokenizer.from_pretrained(work / "base")
    timer = Timer()
    trainer = GRPOTrainer(model=trl_model, reward_funcs=[reward_fn], args=cfg,
                          train_dataset=Dataset.from_dict({"prompt": prompts}), processing_class=trl_tok,
                          callbacks=[timer])
    generate_and_score = trainer._generate_and_score_completions

    def timed_generate_and_score(*a, **k):  # splits TRL's step into generation and update
        t0 = time.perf_counter()
        out = generate_and_score(*a, **k)
        timer.gen.append(time.perf_counter() - t0)
        return out

    trainer._generate_and_score_completions = timed_generate_and_score
    torch.set_num_threads(args.threads)
    trainer.train()
    steps = [b - a for a, b in zip(timer.t[:-1], timer.t[1:])][1:]
    gens = timer.gen[1:len(steps) + 1]
    best = min(range(len(steps)), key=steps.__getitem__)
    trl_s = steps[best]
    trl_gen = gens[best] if len(gens) == len(steps) else float("nan")
    print(f"trl: best {trl_s:.2f} s/step, median {sorted(steps)[len(steps) // 2]:.2f} over {len(steps)} steps "
          f"({[round(x, 2) for x in steps]}); best step = generation {trl_gen:.2f} s + update "
          f"{trl_s - trl_gen:.2f} s")
    # different sampling RNGs give different completion lengths, i.e. different amounts of work
    trl_len = timer.lens[1:len(steps) + 1]
    print(f"mean completion length over the timed steps: fgx {sum(fgx_len) / len(fgx_len):.1f}, "
          f"trl {sum(trl_len) / max(len(trl_len), 1):.1f} tokens (max {args.max_new_tokens})")
    # The update is the same math on both sides (forward + backward over the same tokens), so it
    # bounds the ratio: even a sampler that took no time could not beat trl_s / fgx_update.
    print(f"generation fgx vs trl: {trl_gen / fgx_gen:.2f}x; update fgx vs trl: "
          f"{(trl_s - trl_gen) / (fgx_s - fgx_gen):.2f}x; ceiling with free generation: "
          f"{trl_s / (fgx_s - fgx_gen):.2f}x")
    print(f"grpo_step_vs_trl: {trl_s / fgx_s:.2f}x")


if __name__ == "__main__":
    main()
