"""Torch engine: tokenizer, checkpoints, fast sampler vs HF generate, determinism, RL on a toy task,
resume after interruption, pretrain/SFT smoke. Everything is tiny (whole file < ~30 s on 2 CPUs)."""

from __future__ import annotations

import json

import pandas as pd
import pytest
import torch

from fgx.engines import get_engine
from fgx.engines.torch.model import build_model, fill_settings, save_checkpoint
from fgx.engines.torch.sampler import decode_completions, generate_ids
from fgx.engines.torch.tokenizer import build_char_tokenizer
from fgx.engines.torch.trainer import RLSettings

TINY = dict(hidden_size=32, num_layers=2, num_heads=4, num_kv_heads=2, intermediate_size=64, max_positions=128)
LETTERS = "abcdefghijklmnopqrstuvwxyz"


@pytest.fixture(scope="module")
def tok():
    return build_char_tokenizer()


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


# ----------------------------------------------------------------------------- tokenizer / model
def test_tokenizer_roundtrip(tok, tmp_path):
    from transformers import AutoTokenizer

    s = 'f17(f3("dcba"))\n  «x» {"output": "a b"}\t~'
    ids = tok(s)["input_ids"]
    assert ids[0] == tok.bos_token_id and len(ids) == len(s) + 1
    assert tok.decode(ids, skip_special_tokens=True) == s
    tok.save_pretrained(tmp_path)
    t2 = AutoTokenizer.from_pretrained(tmp_path)
    assert t2(s)["input_ids"] == ids and t2.decode(ids, skip_special_tokens=True) == s
    assert (t2.pad_token_id, t2.bos_token_id, t2.eos_token_id, t2.unk_token_id) == (0, 1, 2, 3)
    assert t2("é")["input_ids"] == [1, 3]
    assert not getattr(t2, "chat_template", None)


def test_name_tokens_only_before_a_paren(tok, tmp_path):
    from transformers import AutoTokenizer

    from fgx.tasks.strings import compact_call_names

    named = build_char_tokenizer(names=compact_call_names())
    s = 'f10(f2(upper("xf1upper")))\nf2("a")="a"'
    ids = named(s)["input_ids"]
    pieces = named.convert_ids_to_tokens(ids[1:])
    assert pieces[:5] == ["f10", "(", "f2", "(", "upper"]
    assert "".join(pieces[7:14]) == "xf1uppe" and all(len(p) == 1 for p in pieces[6:16])  # literal: chars
    assert pieces.count("f2") == 2 and len(ids) == len(s) + 1 - (2 + 1 + 4 + 1)  # f10, f2, upper, f2
    assert named.decode(ids, skip_special_tokens=True) == s
    # the character ids are those of the plain tokenizer; names come after them
    assert named("abc(")["input_ids"] == tok("abc(")["input_ids"]
    assert len(named) == len(tok) + len(compact_call_names())
    named.save_pretrained(tmp_path)
    assert AutoTokenizer.from_pretrained(tmp_path)(s)["input_ids"] == ids
    with pytest.raises(ValueError, match="already a token"):
        build_char_tokenizer(names=["x"])


def test_call_tokens_hold_their_paren(tok):
    from fgx.tasks.strings import compact_call_names

    calls = build_char_tokenizer(names=[n + "(" for n in compact_call_names()])
    s = '"hatj".f21().f2().f18(2)="xf2(" \nupper("a")'  # no value of the task holds "(": f2( is a call
    ids = calls(s)["input_ids"]
    pieces = calls.convert_ids_to_tokens(ids[1:])
    assert [p for p in pieces if len(p) > 1] == ["f21(", "f2(", "f18(", "f2(", "upper("]
    assert calls.decode(ids, skip_special_tokens=True) == s
    assert calls("abc")["input_ids"] == tok("abc")["input_ids"]


def test_checkpoint_roundtrip_auto_classes(tok, tmp_path):
    from transformers import AutoModelForCausalLM, AutoTokenizer

    m = build_model(TINY, tok, seed=3)
    save_checkpoint(m, tok, tmp_path / "ckpt")
    names = {p.name for p in (tmp_path / "ckpt").iterdir()}
    assert {"config.json", "model.safetensors", "generation_config.json", "tokenizer.json"} <= names
    m2 = AutoModelForCausalLM.from_pretrained(tmp_path / "ckpt")
    t2 = AutoTokenizer.from_pretrained(tmp_path / "ckpt")
    x = torch.tensor([t2("abc")["input_ids"]])
    assert torch.allclose(m(x).logits, m2(x).logits, atol=1e-6)
    assert not any(p.name.endswith(".tmp") for p in tmp_path.iterdir())


def test_settings_reject_unknown_keys(tok):
    with pytest.raises(ValueError, match="hidden_sise"):
        build_model({"hidden_sise": 3}, tok)
    with pytest.raises(ValueError, match="lrr"):
        fill_settings(RLSettings, {"lrr": 1}, "rl settings")


# ----------------------------------------------------------------------------- sampler
def _rand_model(tok, arch="llama", seed=1):
    """Random model with larger init so greedy argmaxes are well separated."""
    if arch == "llama":
        return build_model(dict(TINY, initializer_range=0.3), tok, seed=seed).eval()
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


PROMPTS = ['f1("ab")\n', "x", "hello world\n", 'f17(f3("dcba"))\n', "zz"]


@pytest.mark.parametrize("arch", ["llama", "qwen2"])
def test_fast_greedy_equals_hf_generate(tok, arch):
    m = _rand_model(tok, arch)
    ids = [tok(p)["input_ids"] for p in PROMPTS]
    # batch 2 < 5 prompts: exercises slot refill and dropping finished rows
    ours = generate_ids(m, tok, ids, temperature=0, max_new_tokens=12, batch_size=2, fast=True)
    generic = generate_ids(m, tok, ids, temperature=0, max_new_tokens=12, fast=False)
    enc = tok(PROMPTS, return_tensors="pt", padding=True)
    hf = m.generate(**enc, do_sample=False, max_new_tokens=12, pad_token_id=tok.pad_token_id,
                    eos_token_id=tok.eos_token_id)
    for i, c in enumerate(ours):
        ref = hf[i, enc["input_ids"].shape[1]:].tolist()
        assert c.token_ids == ref[: len(c.token_ids)], (i, c.token_ids, ref)
        assert c.token_ids == generic[i].token_ids
        if c.finish_reason == "length":
            assert len(c.token_ids) == 12


def test_sampling_seeded_and_top_p(tok):
    m = _rand_model(tok)
    ids = [tok(p)["input_ids"] for p in PROMPTS]
    kw = dict(n=3, temperature=1.0, max_new_tokens=10, batch_size=4)
    a = generate_ids(m, tok, ids, seed=5, **kw)
    b = generate_ids(m, tok, ids, seed=5, **kw)
    c = generate_ids(m, tok, ids, seed=6, **kw)
    assert len(a) == len(PROMPTS) * 3
    assert [x.token_ids for x in a] == [x.token_ids for x in b]
    assert [x.token_ids for x in a] != [x.token_ids for x in c]
    # a tiny top-p keeps only the most likely token: equals greedy
    g = generate_ids(m, tok, ids, temperature=0, max_new_tokens=10)
    tp = generate_ids(m, tok, ids, temperature=1.0, top_p=1e-6, max_new_tokens=10, seed=1)
    assert [x.token_ids for x in g] == [x.token_ids for x in tp]
    # generic path is seeded too
    d1 = generate_ids(m, tok, ids, seed=5, fast=False, **kw)
    d2 = generate_ids(m, tok, ids, seed=5, fast=False, **kw)
    assert [x.token_ids for x in d1] == [x.token_ids for x in d2]


def test_stop_strings(tok):
    m = _rand_model(tok)
    ids = [tok(p)["input_ids"] for p in PROMPTS]
    free = generate_ids(m, tok, ids, temperature=0, max_new_tokens=12)
    text0 = decode_completions(tok, free)[0]
    stop = text0[3:5]  # a string that greedy decoding produces
    for fast in (True, False):
        cut = generate_ids(m, tok, ids, temperature=0, max_new_tokens=12, stop=[stop], fast=fast)
        assert cut[0].finish_reason == "stop"
        assert decode_completions(tok, cut, [stop])[0] == text0[: text0.find(stop)]


# ----------------------------------------------------------------------------- engine stages
@pytest.fixture()
def base_dir(tok, tmp_path):
    m = build_model(dict(hidden_size=32, num_layers=1, num_heads=2, num_kv_heads=1, intermediate_size=64,
                         max_positions=64), tok, seed=0)
    save_checkpoint(m, tok, tmp_path / "base")
    toy_rows().to_parquet(tmp_path / "train.parquet")
    return tmp_path


def test_sample_writes_rollout_parquet(base_dir):
    eng = get_engine("torch")
    rows = toy_rows(4)
    out = eng.sample(base_dir / "base", rows, base_dir / "roll.parquet", n=3, max_new_tokens=4, seed=0,
                     score_fn=toy_score, progress=False)
    back = pd.read_parquet(base_dir / "roll.parquet")
    for col in ("responses", "scores", "correct", "response_tokens", "level", "n_correct"):
        assert col in back.columns
    assert len(back) == 4 and all(len(r) == 3 for r in back["responses"])
    assert back["level"].tolist() == [1, 2, 1, 2]
    assert back["n_correct"].tolist() == [sum(c) for c in out["correct"]]


def _rl_settings(**kw):
    s = dict(total_steps=10, train_batch_size=8, n=8, max_new_tokens=2, lr=2e-2, val_every=5, save_every=5,
             progress=False, micro_batch_size=64, seed=0)
    s.update(kw)
    return s


def test_grpo_raises_reward_on_toy_task(base_dir):
    eng = get_engine("torch")
    res = eng.rl(base_dir / "base", base_dir / "train.parquet", base_dir / "train.parquet", base_dir / "rl",
                 base_dir / "metrics.parquet", _rl_settings(), score_fn=toy_score)
    m = pd.read_parquet(base_dir / "metrics.parquet")
    assert list(m.columns) == ["step", "metric", "level", "value"]
    reward = m[m.metric == "reward"].sort_values("step")["value"].tolist()
    assert len(reward) == 10 and res["steps"] == 10
    assert sum(reward[-3:]) / 3 > sum(reward[:3]) / 3 + 0.2, reward
    val = m[(m.metric == "val_accuracy") & (m.level == -1)].sort_values("step")
    assert val["step"].tolist() == [0, 5, 10]
    assert set(m[m.metric == "val_accuracy"].level) == {-1, 1, 2}
    assert {"filtered_group_share", "loss", "entropy", "response_length"} <= set(m.metric)
    cfg = json.loads((base_dir / "rl" / "resolved_config.json").read_text())
    assert cfg["algorithm"] == "grpo" and cfg["total_steps"] == 10
    from transformers import AutoModelForCausalLM

    AutoModelForCausalLM.from_pretrained(base_dir / "rl")


def test_reinforce_runs_with_ref_refresh(base_dir):
    eng = get_engine("torch")
    eng.rl(base_dir / "base", base_dir / "train.parquet", None, base_dir / "rf", base_dir / "rf.parquet",
           _rl_settings(algorithm="reinforce", total_steps=3, ref_update_every=2, kl_coef=0.1, save_every=2,
                        lr=1e-2), score_fn=toy_score)
    m = pd.read_parquet(base_dir / "rf.parquet")
    assert "kl" in set(m.metric) and m[m.metric == "reward"].shape[0] == 3
    assert (base_dir / "rf" / "checkpoints" / "step_00000002" / "ref_model.safetensors").exists()


def test_rl_resume_reaches_same_result(base_dir):
    from safetensors.torch import load_file

    eng = get_engine("torch")
    s = _rl_settings(total_steps=4, save_every=2, val_every=2, on_policy=False, ppo_mini_batch_size=4)
    args = (base_dir / "base", base_dir / "train.parquet", base_dir / "train.parquet")
    eng.rl(*args, base_dir / "full", base_dir / "full.parquet", s, score_fn=toy_score)
    with pytest.raises(KeyboardInterrupt):
        eng.rl(*args, base_dir / "part", base_dir / "part.parquet", s, score_fn=toy_score, max_steps_this_run=3)
    assert not (base_dir / "part.parquet").exists()
    res = eng.rl(*args, base_dir / "part", base_dir / "part.parquet", s, score_fn=toy_score)
    assert res["steps"] == 4
    a = load_file(str(base_dir / "full" / "model.safetensors"))
    b = load_file(str(base_dir / "part" / "model.safetensors"))
    assert all(torch.equal(a[k], b[k]) for k in a)
    ma = pd.read_parquet(base_dir / "full.parquet").drop(columns="value")
    mb = pd.read_parquet(base_dir / "part.parquet").drop(columns="value")
    pd.testing.assert_frame_equal(ma, mb)
    fa = pd.read_parquet(base_dir / "full.parquet")
    fb = pd.read_parquet(base_dir / "part.parquet")
    sel = ~fa.metric.str.endswith("time_s")
    assert fa[sel]["value"].tolist() == fb[sel]["value"].tolist()


def _weights(d):
    from safetensors.torch import load_file

    return load_file(str(d / "model.safetensors"))


def _same_weights(a, b):
    wa, wb = _weights(a), _weights(b)
    return wa.keys() == wb.keys() and all(torch.equal(wa[k], wb[k]) for k in wa)


@pytest.mark.parametrize("frozen, fixed", [(["embeddings"], ("embed_tokens", "lm_head")),
                                            (["mlp", "norms"], ("mlp.", "norm."))])
def test_rl_frozen_groups_keep_their_weights(base_dir, frozen, fixed):
    eng = get_engine("torch")
    eng.rl(base_dir / "base", base_dir / "train.parquet", None, base_dir / "fz", base_dir / "fz.parquet",
           _rl_settings(total_steps=3, frozen=frozen), score_fn=toy_score)
    before, after = _weights(base_dir / "base"), _weights(base_dir / "fz")
    held = [k for k in before if any(p in k for p in fixed)]
    moved = [k for k in before if k not in held]
    assert held and moved
    assert all(torch.equal(before[k], after[k]) for k in held)
    assert not all(torch.equal(before[k], after[k]) for k in moved)


def test_freeze_parameters_rejects_unknown_group(tok):
    from fgx.engines.torch.model import freeze_parameters

    m = build_model(dict(hidden_size=32, num_layers=1, num_heads=2, num_kv_heads=1, intermediate_size=64,
                         max_positions=64), tok, seed=0)
    with pytest.raises(ValueError, match="frozen \\['heads'\\] unknown"):
        freeze_parameters(m, ["heads"])
    assert freeze_parameters(m, []) == 0 and all(p.requires_grad for p in m.parameters())


def test_rl_rerun_with_changed_settings_starts_clean(base_dir):
    """The DAG keeps RL checkpoints in a work directory outside the job's outputs, so a rerun after a
    knob change finds the previous run's checkpoint: it must not resume from it."""
    eng = get_engine("torch")
    args = (base_dir / "base", base_dir / "train.parquet", None)
    work = base_dir / "work"
    s = _rl_settings(total_steps=4, save_every=2, checkpoint_dir=str(work))
    eng.rl(*args, base_dir / "a", base_dir / "a.parquet", s, score_fn=toy_score)
    assert (work / "step_00000002").exists()
    changed = dict(s, lr=s["lr"] / 2)
    eng.rl(*args, base_dir / "b", base_dir / "b.parquet", changed, score_fn=toy_score)
    eng.rl(*args, base_dir / "fresh", base_dir / "fresh.parquet", dict(changed, checkpoint_dir=str(base_dir / "w2")),
           score_fn=toy_score)
    assert _same_weights(base_dir / "b", base_dir / "fresh")
    assert not _same_weights(base_dir / "a", base_dir / "b")
    # a changed starting model starts clean too
    m = build_model(dict(hidden_size=32, num_layers=1, num_heads=2, num_kv_heads=1, intermediate_size=64,
                         max_positions=64), build_char_tokenizer(), seed=1)
    save_checkpoint(m, build_char_tokenizer(), base_dir / "base2")
    args2 = (base_dir / "base2", *args[1:])
    eng.rl(*args2, base_dir / "c", base_dir / "c.parquet", changed, score_fn=toy_score)
    eng.rl(*args2, base_dir / "c_fresh", base_dir / "c_fresh.parquet", dict(changed, checkpoint_dir=str(base_dir / "w3")),
           score_fn=toy_score)
    assert _same_weights(base_dir / "c", base_dir / "c_fresh")


def test_rl_longer_run_resumes_a_shorter_one_under_a_constant_lr(base_dir):
    eng = get_engine("torch")
    args = (base_dir / "base", base_dir / "train.parquet", None)
    short = _rl_settings(total_steps=3, save_every=2, checkpoint_dir=str(base_dir / "work"))
    eng.rl(*args, base_dir / "short", base_dir / "short.parquet", short, score_fn=toy_score)
    longer = dict(short, total_steps=5)
    eng.rl(*args, base_dir / "long", base_dir / "long.parquet", longer, score_fn=toy_score)
    eng.rl(*args, base_dir / "long_fresh", base_dir / "long_fresh.parquet",
           dict(longer, checkpoint_dir=str(base_dir / "w2")), score_fn=toy_score)
    assert _same_weights(base_dir / "long", base_dir / "long_fresh")
    # the shorter run again: the longer run's step-4 checkpoint lies past its end, so it starts clean
    eng.rl(*args, base_dir / "short2", base_dir / "short2.parquet", short, score_fn=toy_score)
    assert _same_weights(base_dir / "short", base_dir / "short2")


def test_pretrain_and_sft(tmp_path):
    eng = get_engine("torch")
    rows = toy_rows(8, solution="ab\n")
    rows.to_parquet(tmp_path / "pre.parquet")
    res = eng.pretrain(tmp_path / "pre.parquet", tmp_path / "base",
                       {"model": dict(hidden_size=32, num_layers=1, num_heads=2, num_kv_heads=1,
                                      intermediate_size=64, max_positions=64),
                        "max_steps": 30, "batch_size": 8, "lr": 1e-2, "warmup_steps": 2, "progress": False})
    log = pd.read_parquet(tmp_path / "base" / "train_log.parquet")
    assert res["steps"] == 30 and log["loss"].iloc[-1] < log["loss"].iloc[0] / 2
    assert json.loads((tmp_path / "base" / "resolved_config.json").read_text())["model"]["hidden_size"] == 32
    # the base model learned the solution format
    out = eng.sample(tmp_path / "base", rows.head(2), None, n=1, temperature=0, max_new_tokens=6,
                     score_fn=toy_score, progress=False)
    assert out["responses"].tolist() == [["ab\n"], ["ab\n"]]
    sft_rows = rows.assign(response="xy\n")
    sft_rows.to_parquet(tmp_path / "sft.parquet")
    eng.sft(tmp_path / "base", tmp_path / "sft.parquet", tmp_path / "sft",
            {"max_steps": 40, "batch_size": 8, "lr": 1e-2, "progress": False})
    out = eng.sample(tmp_path / "sft", rows.head(2), None, n=1, temperature=0, max_new_tokens=6,
                     score_fn=toy_score, progress=False)
    assert out["responses"].tolist() == [["xy\n"], ["xy\n"]]
    with pytest.raises(ValueError, match="response"):
        eng.sft(tmp_path / "base", tmp_path / "pre.parquet", tmp_path / "sft2", {"progress": False})


def test_jittered_positions():
    import torch

    from fgx.engines.torch.trainer import jittered_positions

    plain = jittered_positions(3, 7, 0.0)
    assert plain.tolist() == [list(range(7))] * 3
    pos = jittered_positions(64, 50, 0.5, torch.Generator().manual_seed(0))
    steps = pos[:, 1:] - pos[:, :-1]
    assert (pos[:, 0] == 0).all() and set(steps.unique().tolist()) == {1, 2}
    assert 0.4 < (steps == 2).float().mean().item() < 0.6
    again = jittered_positions(64, 50, 0.5, torch.Generator().manual_seed(0))
    assert torch.equal(pos, again)  # seeded: a resumed run draws the same positions
    with pytest.raises(ValueError, match="position_jitter"):
        jittered_positions(1, 4, 1.0)


def test_answer_gap_offsets():
    import torch

    from fgx.engines.torch.trainer import answer_gap_offsets

    assert answer_gap_offsets([2, 4], 6, 0).tolist() == [[0] * 6, [0] * 6]
    off = answer_gap_offsets([2, 4, 1], 6, 5, torch.Generator().manual_seed(1))
    gaps = off[:, -1].tolist()
    assert all(0 <= g <= 5 for g in gaps)
    assert off.tolist() == [[0, 0] + [gaps[0]] * 4, [0] * 4 + [gaps[1]] * 2, [0] + [gaps[2]] * 5]
    many = answer_gap_offsets([0] * 600, 1, 3, torch.Generator().manual_seed(0))[:, 0]
    assert set(many.tolist()) == {0, 1, 2, 3}  # uniform over 0..max_gap, gap 0 (inference) included
    assert torch.equal(off, answer_gap_offsets([2, 4, 1], 6, 5, torch.Generator().manual_seed(1)))
    with pytest.raises(ValueError, match="answer_gap"):
        answer_gap_offsets([1], 3, -1)


def test_pretraining_with_position_jitter_learns_and_differs(tmp_path):
    eng = get_engine("torch")
    rows = toy_rows(8, solution="ab\n")
    rows.to_parquet(tmp_path / "pre.parquet")
    base = {"model": dict(hidden_size=32, num_layers=1, num_heads=2, num_kv_heads=1, intermediate_size=64,
                          max_positions=64),
            "max_steps": 30, "batch_size": 8, "lr": 1e-2, "warmup_steps": 2, "progress": False}
    eng.pretrain(tmp_path / "pre.parquet", tmp_path / "plain", base)
    eng.pretrain(tmp_path / "pre.parquet", tmp_path / "jit", dict(base, position_jitter=0.5))
    eng.pretrain(tmp_path / "pre.parquet", tmp_path / "gap", dict(base, answer_gap=3))
    assert json.loads((tmp_path / "jit" / "resolved_config.json").read_text())["position_jitter"] == 0.5
    assert json.loads((tmp_path / "gap" / "resolved_config.json").read_text())["answer_gap"] == 3
    for moved in ("jit", "gap"):
        assert not _same_weights(tmp_path / "plain", tmp_path / moved)
        # trained on moved positions, it still answers with plain ones
        out = eng.sample(tmp_path / moved, rows.head(2), None, n=1, temperature=0, max_new_tokens=6,
                         score_fn=toy_score, progress=False)
        assert out["responses"].tolist() == [["ab\n"], ["ab\n"]], moved


def test_get_engine_unknown():
    with pytest.raises(ValueError, match="engine"):
        get_engine("jax")
