"""The torch engine's jobs on a toy task: sampling, pretraining, SFT and RL, and resuming each."""

import json
from pathlib import Path

import pandas as pd
import pytest
import torch

from fgx.engines import get_engine
from fgx.engines.torch.model import build_model, save_checkpoint
from fgx.engines.torch.tokenizer import build_char_tokenizer
from fgx.settings import SettingsError
from toy import SMALLEST, TINY, pretrain_settings, rl_settings, sampling_settings, sft_settings, toy_rows, toy_score


def _weights(d):
    from safetensors.torch import load_file

    return load_file(str(d / "model.safetensors"))


def _same_weights(a, b):
    wa, wb = _weights(a), _weights(b)
    return wa.keys() == wb.keys() and all(torch.equal(wa[k], wb[k]) for k in wa)


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


def test_settings_name_missing_and_unknown_keys(base_dir):
    eng = get_engine("torch")
    with pytest.raises(SettingsError, match="missing group_size.*unknown group_sise"):
        s = rl_settings(group_sise=4)
        del s["group_size"]
        eng.rl(base_dir / "base", base_dir / "train.parquet", base_dir / "train.parquet", base_dir / "rl",
               base_dir / "m.parquet", base_dir / "work", s)
    with pytest.raises(ValueError, match="engine 'jax' unknown"):
        get_engine("jax")


def test_sample_writes_rollout_parquet(base_dir):
    eng = get_engine("torch")
    rows = toy_rows(4)
    out = eng.sample(base_dir / "base", rows, base_dir / "roll.parquet", base_dir / "work",
                     sampling_settings(n=3, max_new_tokens=4), score_fn=toy_score, progress=False)
    back = pd.read_parquet(base_dir / "roll.parquet")
    for col in ("responses", "scores", "correct", "response_tokens", "level", "n_correct"):
        assert col in back.columns
    assert len(back) == 4 and all(len(r) == 3 for r in back["responses"])
    assert back["level"].tolist() == [1, 2, 1, 2]
    assert back["n_correct"].tolist() == [sum(c) for c in out["correct"]]


def test_pretrain_and_sft(tmp_path):
    eng = get_engine("torch")
    rows = toy_rows(8, solution="ab\n")
    rows.to_parquet(tmp_path / "pre.parquet")
    res = eng.pretrain([tmp_path / "pre.parquet"], tmp_path / "base", tmp_path / "work", pretrain_settings(30))
    log = pd.read_parquet(tmp_path / "base" / "train_log.parquet")
    assert res["steps"] == 30 and log["loss"].iloc[-1] < log["loss"].iloc[0] / 2
    assert json.loads((tmp_path / "base" / "resolved_config.json").read_text())["model"]["hidden_size"] == 32
    assert not (tmp_path / "work").exists()  # the checkpoints go once the model is written
    greedy = sampling_settings(temperature=0)
    # the base model learned the solution format
    out = eng.sample(tmp_path / "base", rows.head(2), None, None, greedy, score_fn=toy_score, progress=False)
    assert out["responses"].tolist() == [["ab\n"], ["ab\n"]]
    rows.assign(response="xy\n").to_parquet(tmp_path / "sft.parquet")
    eng.sft(tmp_path / "base", tmp_path / "sft.parquet", tmp_path / "sft", tmp_path / "work", sft_settings())
    out = eng.sample(tmp_path / "sft", rows.head(2), None, None, greedy, score_fn=toy_score, progress=False)
    assert out["responses"].tolist() == [["xy\n"], ["xy\n"]]
    from fgx.io import InputError

    with pytest.raises(InputError, match="pre.parquet: column.s. response missing"):
        eng.sft(tmp_path / "base", tmp_path / "pre.parquet", tmp_path / "sft2", tmp_path / "w2", sft_settings())


def test_sft_on_no_responses_copies_the_model(tmp_path, tok):
    save_checkpoint(build_model(SMALLEST, tok, seed=0), tok, tmp_path / "base")
    toy_rows(2).assign(response="x").head(0).to_parquet(tmp_path / "empty.parquet")
    get_engine("torch").sft(tmp_path / "base", tmp_path / "empty.parquet", tmp_path / "out", tmp_path / "w",
                            sft_settings())
    assert _same_weights(tmp_path / "base", tmp_path / "out")


@pytest.mark.parametrize("job", ["pretrain", "sft"])
def test_supervised_training_resumes_to_the_same_weights(tmp_path, tok, monkeypatch, job):
    """A time-based checkpoint (every step here), a stop, a rerun: the weights equal an uninterrupted run's."""
    from fgx.engines.torch import checkpoint, supervised

    monkeypatch.setattr(checkpoint, "CHECKPOINT_SECONDS", 0.0)
    rows = toy_rows(8, solution="ab\n")
    rows.to_parquet(tmp_path / "pre.parquet")
    rows.assign(response="xy\n").to_parquet(tmp_path / "sft.parquet")
    save_checkpoint(build_model(SMALLEST, tok, seed=0), tok, tmp_path / "base")

    def run(out, work, stop_after=None):
        if job == "pretrain":
            return supervised.pretrain([tmp_path / "pre.parquet"], tmp_path / out, tmp_path / work,
                                       pretrain_settings(12), stop_after=stop_after)
        return supervised.sft(tmp_path / "base", tmp_path / "sft.parquet", tmp_path / out, tmp_path / work,
                              sft_settings(epochs=12), stop_after=stop_after)

    run("full", "w_full")
    with pytest.raises(KeyboardInterrupt):
        run("part", "w_part", stop_after=5)
    assert not (tmp_path / "part").exists() and (tmp_path / "w_part").exists()
    run("part", "w_part")
    assert _same_weights(tmp_path / "full", tmp_path / "part")
    full = pd.read_parquet(tmp_path / "full" / "train_log.parquet")
    part = pd.read_parquet(tmp_path / "part" / "train_log.parquet")
    pd.testing.assert_frame_equal(full, part)


def test_grpo_raises_reward_on_toy_task(base_dir):
    eng = get_engine("torch")
    res = eng.rl(base_dir / "base", base_dir / "train.parquet", base_dir / "train.parquet", base_dir / "rl",
                 base_dir / "metrics.parquet", base_dir / "work", rl_settings(), score_fn=toy_score)
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
    assert cfg["algorithm"] == "grpo" and cfg["steps"] == 10
    from transformers import AutoModelForCausalLM

    AutoModelForCausalLM.from_pretrained(base_dir / "rl")


def test_reinforce_with_a_kl_to_the_starting_model(base_dir):
    eng = get_engine("torch")
    eng.rl(base_dir / "base", base_dir / "train.parquet", base_dir / "train.parquet", base_dir / "rf",
           base_dir / "rf.parquet", base_dir / "work", rl_settings(algorithm="reinforce", steps=3, kl_coef=0.1,
                                                                   lr=1e-2, reward="score", overlong_buffer=1),
           score_fn=toy_score)
    m = pd.read_parquet(base_dir / "rf.parquet")
    assert "kl" in set(m.metric) and m[m.metric == "reward"].shape[0] == 3
    # a one-token overlong buffer on two-token answers: a full-length answer loses one point
    assert m[m.metric == "reward"]["value"].min() < 0


def test_validation_samples_val_n_answers_per_prompt_and_never_moves_the_training(base_dir):
    """Held-out accuracy per prompt (the validation table): ``val_n`` samples of every validation prompt at
    step 0, every ``eval_every`` steps and the last step, whose level means are the metrics' val_accuracy.
    Validation draws from a seed of its own: how often it runs, how many samples and at what temperature
    change no trained weight and no training metric."""
    eng = get_engine("torch")
    args = (base_dir / "base", base_dir / "train.parquet", base_dir / "train.parquet")
    runs = {"greedy": rl_settings(steps=4, eval_every=4, val_n=1, val_temperature=0.0),
            "sampled": rl_settings(steps=4, eval_every=1, val_n=3, val_temperature=1.0)}
    for name, s in runs.items():
        eng.rl(*args, base_dir / name, base_dir / f"{name}.parquet", base_dir / f"w_{name}", s,
               validation_path=base_dir / f"{name}_val.parquet", score_fn=toy_score)
    assert _same_weights(base_dir / "greedy", base_dir / "sampled")
    m = {name: pd.read_parquet(base_dir / f"{name}.parquet") for name in runs}
    training = [x[~x.metric.str.startswith("val_") & ~x.metric.str.endswith("time_s")].reset_index(drop=True)
                for x in m.values()]
    pd.testing.assert_frame_equal(*training)
    val = pd.read_parquet(base_dir / "sampled_val.parquet")
    n_val = len(pd.read_parquet(base_dir / "train.parquet"))
    assert list(val.columns) == ["step", "level", "prompt_row", "n_samples", "n_correct"]
    assert val.groupby("step")["prompt_row"].apply(list).to_dict() == {s: list(range(n_val)) for s in range(5)}
    assert (val["n_samples"] == 3).all() and val["n_correct"].between(0, 3).all()
    assert set(pd.read_parquet(base_dir / "greedy_val.parquet")["step"]) == {0, 4}
    means = val.assign(acc=val.n_correct / val.n_samples).groupby(["step", "level"])["acc"].mean()
    logged = m["sampled"].query("metric == 'val_accuracy' and level >= 1").set_index(["step", "level"])["value"]
    assert means.to_dict() == pytest.approx(logged.to_dict())


def _rl_full_and_stopped(base_dir, work):
    """A 4-step RL run to its end (``full``) and the same run stopped after step 3 (``part``, its
    checkpoints in ``work``); returns the call that reruns the stopped one."""
    eng = get_engine("torch")
    s = rl_settings(steps=4, save_every=2, eval_every=2)
    args = (base_dir / "base", base_dir / "train.parquet", base_dir / "train.parquet")
    eng.rl(*args, base_dir / "full", base_dir / "full.parquet", base_dir / "w_full", s,
           validation_path=base_dir / "full_val.parquet", score_fn=toy_score)
    with pytest.raises(KeyboardInterrupt):
        eng.rl(*args, base_dir / "part", base_dir / "part.parquet", work, s,
               validation_path=base_dir / "part_val.parquet", score_fn=toy_score, stop_after=3)
    assert not (base_dir / "part.parquet").exists() and not (base_dir / "part_val.parquet").exists()
    return lambda: eng.rl(*args, base_dir / "part", base_dir / "part.parquet", work, s,
                          validation_path=base_dir / "part_val.parquet", score_fn=toy_score)


def test_rl_resume_reaches_same_result(base_dir):
    res = _rl_full_and_stopped(base_dir, base_dir / "w_part")()
    assert res["steps"] == 4
    assert _same_weights(base_dir / "full", base_dir / "part")
    fa = pd.read_parquet(base_dir / "full.parquet")
    fb = pd.read_parquet(base_dir / "part.parquet")
    pd.testing.assert_frame_equal(fa.drop(columns="value"), fb.drop(columns="value"))
    sel = ~fa.metric.str.endswith("time_s")
    assert fa[sel]["value"].tolist() == fb[sel]["value"].tolist()
    # the validation rows of the steps before the checkpoint come back with it
    pd.testing.assert_frame_equal(pd.read_parquet(base_dir / "full_val.parquet"),
                                  pd.read_parquet(base_dir / "part_val.parquet"))


def test_rl_rerun_with_changed_settings_starts_clean(base_dir, tok):
    """The DAG keeps RL checkpoints in a work directory outside the job's outputs, so a rerun after a
    knob change finds the previous run's checkpoint: it must not resume from it."""
    eng = get_engine("torch")
    args = (base_dir / "base", base_dir / "train.parquet", base_dir / "train.parquet")
    work = base_dir / "work"
    s = rl_settings(steps=4, save_every=2)
    eng.rl(*args, base_dir / "a", base_dir / "a.parquet", work, s, score_fn=toy_score)
    assert (work / "step_00000002").exists()
    changed = dict(s, lr=s["lr"] / 2)
    eng.rl(*args, base_dir / "b", base_dir / "b.parquet", work, changed, score_fn=toy_score)
    eng.rl(*args, base_dir / "fresh", base_dir / "fresh.parquet", base_dir / "w2", changed, score_fn=toy_score)
    assert _same_weights(base_dir / "b", base_dir / "fresh")
    assert not _same_weights(base_dir / "a", base_dir / "b")
    # a changed starting model starts clean too
    save_checkpoint(build_model(SMALLEST, build_char_tokenizer(), seed=1), tok, base_dir / "base2")
    args2 = (base_dir / "base2", *args[1:])
    eng.rl(*args2, base_dir / "c", base_dir / "c.parquet", work, changed, score_fn=toy_score)
    eng.rl(*args2, base_dir / "c_fresh", base_dir / "c_fresh.parquet", base_dir / "w3", changed, score_fn=toy_score)
    assert _same_weights(base_dir / "c", base_dir / "c_fresh")


def test_rl_longer_run_resumes_a_shorter_one_under_a_constant_lr(base_dir):
    eng = get_engine("torch")
    args = (base_dir / "base", base_dir / "train.parquet", base_dir / "train.parquet")
    short = rl_settings(steps=3, save_every=2)
    eng.rl(*args, base_dir / "short", base_dir / "short.parquet", base_dir / "work", short, score_fn=toy_score)
    longer = dict(short, steps=5)
    eng.rl(*args, base_dir / "long", base_dir / "long.parquet", base_dir / "work", longer, score_fn=toy_score)
    eng.rl(*args, base_dir / "long_fresh", base_dir / "long_fresh.parquet", base_dir / "w2", longer,
           score_fn=toy_score)
    assert _same_weights(base_dir / "long", base_dir / "long_fresh")
    # the shorter run again: the longer run's step-4 checkpoint lies past its end, so it starts clean
    eng.rl(*args, base_dir / "short2", base_dir / "short2.parquet", base_dir / "work", short, score_fn=toy_score)
    assert _same_weights(base_dir / "short", base_dir / "short2")


def test_sampling_resumes_from_finished_chunks_to_the_same_samples(base_dir, monkeypatch):
    from fgx.engines.torch import sampling

    monkeypatch.setattr(sampling, "CHUNK_PROMPTS", 3)
    rows = toy_rows(8)
    s = sampling_settings(n=2, max_new_tokens=4)
    full = sampling.sample(base_dir / "base", rows, base_dir / "full.parquet", base_dir / "w_full", s,
                           score_fn=toy_score, progress=False)
    with pytest.raises(KeyboardInterrupt):
        sampling.sample(base_dir / "base", rows, base_dir / "part.parquet", base_dir / "w_part", s,
                        score_fn=toy_score, progress=False, stop_after_chunks=2)
    assert not (base_dir / "part.parquet").exists() and len(list((base_dir / "w_part").glob("chunk*"))) == 2
    part = sampling.sample(base_dir / "base", rows, base_dir / "part.parquet", base_dir / "w_part", s,
                           score_fn=toy_score, progress=False)
    pd.testing.assert_frame_equal(full, part)
    assert not (base_dir / "w_part").exists()  # the chunks go once the output is written
    # other settings: the finished chunks of a stopped run are not reused
    with pytest.raises(KeyboardInterrupt):
        sampling.sample(base_dir / "base", rows, base_dir / "x.parquet", base_dir / "w_x", s, score_fn=toy_score,
                        progress=False, stop_after_chunks=1)
    other = sampling.sample(base_dir / "base", rows, base_dir / "x.parquet", base_dir / "w_x", dict(s, seed=5),
                            score_fn=toy_score, progress=False)
    fresh = sampling.sample(base_dir / "base", rows, None, None, dict(s, seed=5), score_fn=toy_score, progress=False)
    pd.testing.assert_frame_equal(other, fresh)


def test_chunk_size_and_slot_count_do_not_change_the_samples(base_dir, monkeypatch):
    """Machine settings (compute.gpu_chunk_prompts, compute.gpu_slots; the CPU's constants here) change
    how a sampling job runs, never its samples."""
    from fgx.engines.torch import sampling

    rows, s = toy_rows(8), sampling_settings(n=3, max_new_tokens=5)
    ref = sampling.sample(base_dir / "base", rows, None, None, s, score_fn=toy_score, progress=False)
    monkeypatch.setattr(sampling, "CHUNK_PROMPTS", 3)
    monkeypatch.setattr(sampling, "SAMPLER_BATCH", 2)
    other = sampling.sample(base_dir / "base", rows, None, None, s, score_fn=toy_score, progress=False)
    pd.testing.assert_frame_equal(ref, other)
    assert len({tuple(r) for r in ref["responses"]}) > 1  # sampled, not one answer everywhere


def _truncate(path: Path) -> None:
    path.write_bytes(path.read_bytes()[: path.stat().st_size // 2])


def test_a_truncated_checkpoint_is_set_aside_and_the_run_starts_clean(base_dir, caplog):
    """A trainer_state.pt cut short (a power loss) is moved aside, named in the log, and the run
    recomputes: it ends where an uninterrupted run ends instead of crashing on every retry."""
    resume = _rl_full_and_stopped(base_dir, base_dir / "w")
    _truncate(base_dir / "w" / "step_00000002" / "trainer_state.pt")
    with caplog.at_level("WARNING", logger="fgx"):
        resume()
    assert "step_00000002 does not load" in caplog.text and "moved aside to corrupt-" in caplog.text
    assert _same_weights(base_dir / "full", base_dir / "part")


def test_the_newest_checkpoint_that_loads_is_resumed(tmp_path, tok):
    from fgx.engines.torch.checkpoint import Checkpointer

    model = build_model(SMALLEST, tok, seed=0)
    opt = torch.optim.AdamW(model.parameters())
    sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda _: 1.0)
    ckpt = Checkpointer(tmp_path / "w", "0123456789abcdef", keep=2)
    for step in (1, 2):
        ckpt.save(step, model, tok, {"optimizer": opt.state_dict(), "scheduler": sched.state_dict(), "step": step})
    (tmp_path / "w" / "step_00000002" / "model.safetensors").write_bytes(b"")  # a power loss's zero-length file
    assert ckpt.latest() == tmp_path / "w" / "step_00000001"
    assert ckpt.restore(ckpt.latest(), model, opt, sched)["step"] == 1
    assert [p.name.endswith("-step_00000002") for p in (tmp_path / "w").glob("corrupt-*")] == [True]


def test_a_truncated_sampling_chunk_is_set_aside_and_sampled_again(base_dir, monkeypatch, caplog):
    from fgx.engines.torch import sampling

    monkeypatch.setattr(sampling, "CHUNK_PROMPTS", 3)
    rows = toy_rows(8)
    s = sampling_settings(n=2, max_new_tokens=4)
    full = sampling.sample(base_dir / "base", rows, None, None, s, score_fn=toy_score, progress=False)
    with pytest.raises(KeyboardInterrupt):
        sampling.sample(base_dir / "base", rows, base_dir / "part.parquet", base_dir / "w", s,
                        score_fn=toy_score, progress=False, stop_after_chunks=2)
    _truncate(base_dir / "w" / "chunk00001.parquet")
    with caplog.at_level("WARNING", logger="fgx"):
        part = sampling.sample(base_dir / "base", rows, base_dir / "part.parquet", base_dir / "w", s,
                               score_fn=toy_score, progress=False)
    assert "chunk00001.parquet does not load" in caplog.text
    pd.testing.assert_frame_equal(full, part)
