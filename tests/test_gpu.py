"""CUDA checks of the torch engine (marked ``gpu``; skipped without a CUDA device): the fixed-shape
sampler captured in a CUDA graph gives HF ``generate``'s greedy tokens and the eager loop's samples,
the counter RNG gives the CPU's bits, a captured training step equals the eager float32 one within a
stated tolerance, and a graph-captured GRPO run raises the reward."""

from __future__ import annotations

import logging

import pandas as pd
import pytest
import torch

from fgx.engines import get_engine
from fgx.engines.torch import counter_rng, sampler
from fgx.engines.torch.sampler import generate_ids

# the CPU tests' helpers (and conftest's fixtures), so both tiers run the same models and toy task
from toy import PROMPTS, SMALLEST, hf_continuation, pretrain_settings, rand_model, rl_settings, toy_rows, toy_score

pytestmark = [pytest.mark.gpu, pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")]


def test_fast_sampler_greedy_matches_hf_generate_on_cuda(tok):
    m = rand_model(tok, "llama").cuda()
    ids = [tok(p)["input_ids"] for p in PROMPTS]
    ours = generate_ids(m, tok, ids, temperature=0, max_new_tokens=12, batch_size=2, fast=True)
    assert all(loop.graphed for loop in sampler._STATIC[m]["loops"].values()), "the CUDA path captured no graph"
    enc = tok(PROMPTS, return_tensors="pt", padding=True).to("cuda")
    hf = m.generate(**enc, do_sample=False, max_new_tokens=12, pad_token_id=tok.pad_token_id,
                    eos_token_id=tok.eos_token_id)
    assert len(ours) == len(PROMPTS)
    for i, c in enumerate(ours):
        ref = hf_continuation(hf[i, enc["input_ids"].shape[1]:].tolist(), tok.eos_token_id)
        assert c.token_ids == ref, (i, c.token_ids, ref)  # the whole continuation: a sampler stopping early fails
        assert c.finish_reason == ("stop" if ref[-1] == tok.eos_token_id else "length"), (i, c.finish_reason, ref)


def test_counter_uniforms_are_the_cpus_bits_on_cuda():
    key = counter_rng.seed_key(123456789)
    seq, pos = torch.arange(4096).repeat(3), torch.arange(3).repeat_interleave(4096)
    cpu = counter_rng.uniforms(key, seq, pos)
    assert torch.equal(counter_rng.uniforms(key, seq.cuda(), pos.cuda()).cpu(), cpu)


@pytest.mark.parametrize("temperature", [0.0, 1.0])
def test_the_graph_replays_the_eager_fixed_shape_step(tok, temperature):
    """Slot refills between replays, stop checks and draws inside the graph: the captured loop gives the
    eager loop's tokens, sample for sample, at two slot counts."""
    m = rand_model(tok, "llama").cuda().eval()
    ids = [tok(p)["input_ids"] for p in PROMPTS] * 7
    kw = dict(n=3, temperature=temperature, top_p=1.0, max_new_tokens=20, eos_ids=[tok.eos_token_id], stop_ids=[],
              key=counter_rng.seed_key(5), seq_offset=0, dtype=torch.float32, progress=False, desc="")
    eager = sampler._generate_static(m, ids, batch_size=16, graph=False, **kw)
    for slots in (16, 64):
        graphed = sampler._generate_static(m, ids, batch_size=slots, graph=True, **kw)
        assert [(c.token_ids, c.finish_reason) for c in graphed] == [(c.token_ids, c.finish_reason) for c in eager]


def test_captured_training_step_equals_the_eager_float32_one(tok):
    """The captured step (TF32 matrix products) against the same step run eagerly in float32: the first
    loss within 0.1 % and its gradient norm within 1 %, the losses of 20 steps within 1 %."""
    from fgx.engines.torch.graphed_training import SupervisedStep
    from fgx.engines.torch.model import build_model
    from fgx.engines.torch.optim import adamw

    examples = [(tok(f"q{i}: " + "abcdef"[: 1 + i % 6])["input_ids"] + [tok.eos_token_id], 2) for i in range(40)]
    steps, losses = {}, {}
    for graph in (False, True):
        model = build_model(SMALLEST, tok, seed=3).cuda().train()
        opt = adamw(model, 1e-2, 0.0, (0.9, 0.95), capturable=True)
        steps[graph] = SupervisedStep(model, opt, examples, batch_size=8, pad=tok.pad_token_id, device="cuda",
                                      graph=graph)
        outs = [steps[graph]([(8 * k + j) % 40 for j in range(8 - k % 3)], [1e-2, 1e-2]) for k in range(20)]
        losses[graph] = [(float(o["loss"]), float(o["grad_norm"])) for o in outs]
    assert steps[True].graphed and not steps[False].graphed
    assert losses[True][0][0] == pytest.approx(losses[False][0][0], rel=1e-3)
    assert losses[True][0][1] == pytest.approx(losses[False][0][1], rel=1e-2)
    assert [a for a, _ in losses[True]] == pytest.approx([a for a, _ in losses[False]], rel=1e-2)
    assert losses[True][-1][0] < losses[True][0][0] / 2  # it trains


def test_pretraining_on_cuda_resumes_and_learns(tmp_path, monkeypatch):
    """The engine's loop on a GPU: graph-captured steps, losses read back in bulk, a checkpoint of the
    capturable optimizer, and a resumed run that captures again and ends where an uninterrupted one does."""
    from fgx.engines.torch import checkpoint, supervised

    monkeypatch.setattr(checkpoint, "CHECKPOINT_SECONDS", 0.0)
    toy_rows(8, solution="ab\n").to_parquet(tmp_path / "pre.parquet")
    s = {**pretrain_settings(40), "device": "cuda"}
    supervised.pretrain([tmp_path / "pre.parquet"], tmp_path / "full", tmp_path / "w1", s)
    with pytest.raises(KeyboardInterrupt):
        supervised.pretrain([tmp_path / "pre.parquet"], tmp_path / "part", tmp_path / "w2", s, stop_after=15)
    supervised.pretrain([tmp_path / "pre.parquet"], tmp_path / "part", tmp_path / "w2", s)
    full = pd.read_parquet(tmp_path / "full" / "train_log.parquet")
    part = pd.read_parquet(tmp_path / "part" / "train_log.parquet")
    assert len(full) == len(part) == 40 and full["loss"].iloc[-1] < full["loss"].iloc[0] / 2
    assert part["loss"].tolist() == pytest.approx(full["loss"].tolist(), rel=1e-3)


def test_graph_captured_grpo_raises_reward_on_cuda(base_dir, caplog):
    with caplog.at_level(logging.WARNING, logger="fgx"):
        get_engine("torch").rl(base_dir / "base", base_dir / "train.parquet", base_dir / "train.parquet",
                               base_dir / "rl", base_dir / "metrics.parquet", base_dir / "work",
                               rl_settings(device="cuda", gpu_slots=32), score_fn=toy_score)
    assert "capture" not in caplog.text, caplog.text  # the update ran from its graph
    reward = pd.read_parquet(base_dir / "metrics.parquet").query("metric == 'reward'").sort_values("step")["value"]
    assert reward.tail(3).mean() > reward.head(3).mean() + 0.2, reward.tolist()
