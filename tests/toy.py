"""A toy task and tiny models for the torch engine's tests (CPU and GPU tiers share them)."""

from __future__ import annotations

import pandas as pd
import torch

from fgx.engines.torch.model import build_model
from fgx.settings import ModelShape

LETTERS = "abcdefghijklmnopqrstuvwxyz"
TINY = ModelShape(hidden_size=32, num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2,
                  intermediate_size=64, max_position_embeddings=128)
SMALLEST = ModelShape(hidden_size=32, num_hidden_layers=1, num_attention_heads=2, num_key_value_heads=1,
                      intermediate_size=64, max_position_embeddings=64)
PROMPTS = ['f1("ab")\n', "x", "hello world\n", 'f17(f3("dcba"))\n', "zz"]
RUNTIME = {"engine": "torch", "device": "cpu", "seed": 0, "verl": {}, "tensor_parallel_size": 1}


def hf_continuation(ref: list[int], eos_id: int) -> list[int]:
    """What Hugging Face ``generate`` generated for one row: through its first eos (the rest is padding), else all."""
    return ref[: ref.index(eos_id) + 1] if eos_id in ref else ref


def toy_score(data_source, solution_str, ground_truth, extra_info=None):
    """Toy task: correct iff the response starts with one of the characters in ground_truth."""
    ok = len(solution_str) > 0 and solution_str[0] in ground_truth
    return {"score": 1.0 if ok else 0.0, "acc": ok, "pred": solution_str[:1]}


def toy_rows(n=16, solution="abc\n"):
    return pd.DataFrame({
        "data_source": ["toy"] * n,
        "prompt": [[{"role": "user", "content": f"q{i}\n"}] for i in range(n)],
        "ability": ["toy"] * n,
        "reward_model": [{"style": "rule", "ground_truth": LETTERS}] * n,
        "extra_info": [{"depth": 1 + i % 2, "index": i, "split": "train", "solution": solution} for i in range(n)],
    })


def string_rows(n: int) -> pd.DataFrame:
    """``n`` prompt rows of the string task's data sources (Levels 1 and 2 in turn), for engine plumbing tests."""
    import json

    return pd.DataFrame({
        "data_source": [f"codeio-forward-incomplete-depth{1 + i % 2}" for i in range(n)],
        "prompt": [[{"role": "user", "content": f"q{i}"}] for i in range(n)],
        "ability": ["reasoning"] * n,
        "reward_model": [{"style": "rule", "ground_truth": json.dumps({"ref_output": f"x{i}"})} for i in range(n)],
        "extra_info": [{"depth": 1 + i % 2, "index": i, "split": "test"} for i in range(n)],
    })


def rand_model(tok, arch="llama", seed=1):
    """Random model with larger init so greedy argmaxes are well separated."""
    if arch == "llama":
        return build_model(TINY, tok, seed=seed, initializer_range=0.3).eval()
    from transformers import Qwen2Config, Qwen2ForCausalLM

    cfg = Qwen2Config(vocab_size=len(tok), hidden_size=32, intermediate_size=64, num_hidden_layers=2,
                      num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=128,
                      initializer_range=0.3, tie_word_embeddings=False, eos_token_id=tok.eos_token_id,
                      bos_token_id=tok.bos_token_id, pad_token_id=tok.pad_token_id)
    torch.manual_seed(seed)
    m = Qwen2ForCausalLM(cfg).eval()
    with torch.no_grad():  # non-zero q/k/v biases exercise the bias path
        for layer in m.model.layers:
            for lin in (layer.self_attn.q_proj, layer.self_attn.k_proj, layer.self_attn.v_proj):
                lin.bias.normal_(0, 0.3)
    return m


def rl_settings(**kw) -> dict:
    """Job settings of a toy RL run (config ``rl`` keys plus the runtime keys)."""
    s = dict(RUNTIME, algorithm="grpo", reward="acc", steps=10, batch_size=8, group_size=8, lr=2e-2, kl_coef=0.0,
             entropy_coef=0.0, loss_agg_mode="token-mean", dynamic_sampling=True, max_generation_batches=10,
             temperature=1.0, max_new_tokens=2, overlong_buffer=0, eval_every=5, save_every=5, val_n=2,
             val_temperature=1.0)
    s.update(kw)
    return s


def sampling_settings(**kw) -> dict:
    return {**RUNTIME, "n": 1, "temperature": 1.0, "max_new_tokens": 6, **kw}


def pretrain_settings(steps=30, **train) -> dict:
    return {**RUNTIME, "model": dict(SMALLEST.__dict__),
            "train": {"steps": steps, "batch_size": 8, "lr": 1e-2, "warmup_steps": 2, "weight_decay": 0.0, **train}}


def sft_settings(**kw) -> dict:
    return {**RUNTIME, "epochs": 40, "batch_size": 8, "lr": 1e-2, "max_length": 64, **kw}
