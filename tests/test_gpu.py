"""CUDA checks of the torch engine (marked ``gpu``; skipped without a CUDA device): the fast
sampler and a GRPO run give on the GPU what they give on the CPU."""

from __future__ import annotations

import pandas as pd
import pytest
import torch

from fgx.engines import get_engine
from fgx.engines.torch.sampler import generate_ids

# the CPU tests' helpers (and conftest's fixtures), so both tiers run the same models and toy task
from toy import PROMPTS, hf_continuation, rand_model, rl_settings, toy_score

pytestmark = [pytest.mark.gpu, pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")]


def test_fast_sampler_greedy_matches_hf_generate_on_cuda(tok):
    m = rand_model(tok, "llama").cuda()
    ids = [tok(p)["input_ids"] for p in PROMPTS]
    ours = generate_ids(m, tok, ids, temperature=0, max_new_tokens=12, batch_size=2, fast=True)
    enc = tok(PROMPTS, return_tensors="pt", padding=True).to("cuda")
    hf = m.generate(**enc, do_sample=False, max_new_tokens=12, pad_token_id=tok.pad_token_id,
                    eos_token_id=tok.eos_token_id)
    assert len(ours) == len(PROMPTS)
    for i, c in enumerate(ours):
        ref = hf_continuation(hf[i, enc["input_ids"].shape[1]:].tolist(), tok.eos_token_id)
        assert c.token_ids == ref, (i, c.token_ids, ref)  # the whole continuation: a sampler stopping early fails
        assert c.finish_reason == ("stop" if ref[-1] == tok.eos_token_id else "length"), (i, c.finish_reason, ref)


def test_grpo_raises_reward_on_cuda(base_dir):
    get_engine("torch").rl(base_dir / "base", base_dir / "train.parquet", base_dir / "train.parquet", base_dir / "rl",
                           base_dir / "metrics.parquet", base_dir / "work", rl_settings(device="cuda"),
                           score_fn=toy_score)
    reward = pd.read_parquet(base_dir / "metrics.parquet").query("metric == 'reward'").sort_values("step")["value"]
    assert reward.tail(3).mean() > reward.head(3).mean() + 0.2, reward.tolist()
