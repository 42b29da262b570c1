"""The verl engine for real, on the CPU (tier "verl", slow): the whole smoke DAG (``rule all``) under
``engine: verl`` (.test/config.yaml + .test/verl.yaml). vLLM samples the Stage-1 rollouts, the iterative-RFT
rollouts and every evaluation; verl's SFT trainer fine-tunes Stage 1, the Multi-Base and every iterative-RFT
round; verl's GRPO trains every RL run with dynamic sampling and syncs its weights to vLLM after every step;
the torch engine pretrains the base; then metrics, every figure, the sample browser and the findings. The run
is killed twice on the way (SIGKILL to every process it started, as a machine that dies, whatever else runs
beside): once right after verl's SFT checkpoints the first of its two epochs, once right after verl's GRPO
checkpoints step 2 of 4 of RL Level 1; each rerun continues from that checkpoint. Then the two engines'
samplers on the same model and prompts, greedy and at T = 1, and the verl run's files against the torch
engine's smoke run. Needs ``FGX_EXTRAS=verl bash envs/install.sh`` (verl and vLLM's CPU build).
"""

import importlib.util
import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import pytest
import torch

from smoke import SNAKEMAKE, fresh_copy, snakemake

pytestmark = [pytest.mark.verl, pytest.mark.slow,
              pytest.mark.skipif(importlib.util.find_spec("verl") is None or importlib.util.find_spec("vllm") is None,
                                 reason="needs verl and vLLM (FGX_EXTRAS=verl bash envs/install.sh)")]

OVERLAYS = ("--configfile", ".test/config.yaml", ".test/verl.yaml")
SAMPLE_COLUMNS = ("responses", "scores", "correct", "response_tokens", "level", "n_correct")


SFT_CHECKPOINTS = "results/work/rft_sft/stage1/checkpoints"
RL_CHECKPOINTS = "results/rl/level1/work/checkpoints"
SFT_MODEL, RL_MODEL = "results/models/stage1", "results/models/rl_level1"


def run_until_checkpoint(work: Path, checkpoints: str, first: str, timeout: float = 1200) -> int:
    """Run the whole DAG, the jobs ``first`` needs ahead of the others (``--prioritize``); SIGKILL everything it
    started as soon as verl's tracker in ``checkpoints`` names a step whose metrics line is written (before the
    trainer saves another). verl's GRPO trainer writes a step's metrics after its checkpoint: a kill between
    the two loses that step's line, not its training."""
    tracker = work / checkpoints / "latest_checkpointed_iteration.txt"
    logs = (work / checkpoints).parent / "logs"
    env = {**os.environ, "PYTHONHASHSEED": "0"}
    subprocess.run([*SNAKEMAKE, "--unlock", *OVERLAYS], cwd=work, env=env, capture_output=True, check=True)
    proc = subprocess.Popen([*SNAKEMAKE, "--cores", "2", *OVERLAYS, "--prioritize", first], cwd=work, env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    t0 = time.time()
    while proc.poll() is None and time.time() - t0 < timeout:
        step = tracker.read_text().strip() if tracker.exists() else ""
        if step.isdigit() and f'"step":{step},' in "".join(f.read_text() for f in logs.glob("attempt-*.jsonl")):
            time.sleep(0.5)  # the metrics line whole (a torn one is skipped), long before another checkpoint
            kill_session(proc.pid)
            proc.wait()
            return int(step)
        time.sleep(0.05)
    proc.kill()
    raise AssertionError(f"no checkpoint under {checkpoints} within {time.time() - t0:.0f} s (exit {proc.poll()})")


def kill_session(sid: int) -> None:
    """SIGKILL every process of session ``sid`` and every descendant of its leader at once, as a machine
    that dies: Ray's workers and torchrun's ranks run in process groups of their own."""
    import psutil

    try:
        procs = {psutil.Process(sid), *psutil.Process(sid).children(recursive=True)}
    except psutil.NoSuchProcess:
        procs = set()
    for p in psutil.process_iter():
        try:
            if os.getsid(p.pid) == sid:
                procs.add(p)
        except (ProcessLookupError, PermissionError):
            continue
    for p in procs:
        try:
            p.send_signal(signal.SIGKILL)
        except psutil.NoSuchProcess:
            pass
    psutil.wait_procs(list(procs), timeout=30)


def attempt_steps(work_dir: Path, metric: str) -> list[list[int]]:
    """Per attempt (verl file-logger file, oldest first), the steps that logged ``metric``."""
    return [[json.loads(line)["step"] for line in f.read_text().splitlines()
             if line.strip() and metric in json.loads(line).get("data", {})]
            for f in sorted((work_dir / "logs").glob("attempt-*.jsonl"))]


@pytest.fixture(scope="module")
def verl_run(tmp_path_factory):
    work = fresh_copy(tmp_path_factory.mktemp("verl") / "fgx")
    killed = {"sft": run_until_checkpoint(work, SFT_CHECKPOINTS, SFT_MODEL),
              "rl": run_until_checkpoint(work, RL_CHECKPOINTS, RL_MODEL)}
    (work / "killed_at.json").write_text(json.dumps(killed))
    snakemake(work, "--unlock", *OVERLAYS)  # a killed Snakemake leaves its lock
    snakemake(work, "--cores", "2", *OVERLAYS)
    return work


def test_a_killed_verl_sft_resumes_from_its_epoch_end_checkpoint_and_trains_the_next_epoch(verl_run, tmp_path):
    """Killed after epoch 1 of 2 (a checkpoint at an epoch boundary, verl issue #7401), the rerun loads
    that checkpoint and trains every step of epoch 2, and the model equals one trained without a kill."""
    from safetensors.torch import load_file

    from fgx.engines.verl.checkpoints import sft_steps_per_epoch
    from fgx.engines.verl.engine import VerlEngine

    work_dir = verl_run / "results/work/rft_sft/stage1"
    resolved = json.loads((verl_run / "results/models/stage1/resolved_config.json").read_text())
    settings = resolved["settings"]
    examples = len(pd.read_parquet(work_dir / "sft.parquet"))
    per_epoch = sft_steps_per_epoch(examples, settings["batch_size"], 1)
    assert settings["epochs"] == 2 and per_epoch >= 2
    assert json.loads((verl_run / "killed_at.json").read_text())["sft"] == per_epoch
    attempts = attempt_steps(work_dir, "train/global_tokens")
    assert len(attempts) == 2 and attempts[1] == list(range(per_epoch + 1, 2 * per_epoch + 1)), attempts
    assert set(attempts[0]) >= set(range(1, per_epoch + 1))
    log = (verl_run / "logs/rft_sft/stage1.log").read_text()
    assert f"resuming SFT trainer from its checkpoint at step {per_epoch}" in log
    assert "data loader state set aside" in log
    clean = tmp_path / "clean"
    VerlEngine().sft(verl_run / resolved["init_model"], verl_run / "results/rft/base/stage1.parquet", clean,
                     tmp_path / "clean_work", settings)
    a, b = load_file(verl_run / "results/models/stage1/model.safetensors"), load_file(clean / "model.safetensors")
    diff = max(float((a[k].double() - b[k].double()).abs().max()) for k in a)
    print(f"\nverl SFT killed at step {per_epoch} of {2 * per_epoch} and resumed vs uninterrupted: "
          f"max abs weight difference {diff:.3g}")
    assert a.keys() == b.keys() and diff == 0.0


def test_a_killed_verl_grpo_run_resumes_from_its_last_checkpoint(verl_run):
    """Killed right after the checkpoint of step 2, the rerun continues at step 3 (not step 0): steps 1-2
    were trained by the first attempt, 3-4 by the second, and the metrics hold each step once."""
    assert json.loads((verl_run / "killed_at.json").read_text())["rl"] == 2
    attempts = attempt_steps(verl_run / "results/rl/level1/work", "actor/pg_loss")
    assert len(attempts) == 2 and attempts[0][:2] == [1, 2] and attempts[1] == [3, 4], attempts
    rl = pd.read_parquet(verl_run / "results/rl/level1/metrics.parquet")
    assert sorted(rl[rl["metric"] == "loss"]["step"]) == [1, 2, 3, 4]
    assert "resuming GRPO trainer from its checkpoint at step 2" in (verl_run / "logs/rl/level1.log").read_text()


# the backend each rule's jobs run under engine: verl (the torch engine pretrains the base: verl has no pretraining)
BACKENDS = {"rollout": "fgx.engines.verl.vllm_sample", "evaluate": "fgx.engines.verl.vllm_sample",
            "rft_sft": "verl.trainer.sft_trainer", "rl": "verl.trainer.main_ppo", "rl_multi": "verl.trainer.main_ppo"}


def test_every_verl_job_ran_and_wrote_what_the_torch_engine_writes(verl_run):
    """Every sampling, SFT and RL job of the DAG ran verl or vLLM, every sample table has the contract's
    columns and the samples per prompt its job asked for, every model is a Hugging Face directory."""
    import pyarrow.parquet as pq

    from fgx.io import PROVENANCE_KEY

    ran = {}
    for log in sorted((verl_run / "logs").glob("*/**/*.log")):
        rule = log.relative_to(verl_run / "logs").parts[0]
        if rule in BACKENDS:
            text = log.read_text(errors="replace")
            # an iterative-RFT round that kept no correct answer trains nothing, as under the torch engine
            assert BACKENDS[rule] in text or (rule == "rft_sft" and "holds no SFT example" in text), log
            ran[rule] = ran.get(rule, 0) + 1
    assert set(ran) == set(BACKENDS) and ran["rl"] == 3 and ran["rft_sft"] == 4, ran
    tables = sorted(p for d in ("eval", "rollouts") for p in (verl_run / "results" / d).rglob("*.parquet"))
    assert len(tables) == ran["evaluate"] + ran["rollout"]
    for path in tables:
        df = pd.read_parquet(path)
        n = int(json.loads(pq.read_schema(path).metadata[PROVENANCE_KEY])["n"])
        assert len(df) > 0 and set(SAMPLE_COLUMNS) <= set(df.columns), path
        assert (df["responses"].map(len) == n).all() and (df["scores"].map(len) == n).all(), path
        assert (df["n_correct"] == df["correct"].map(sum)).all(), path
        assert (df["level"] == [e["depth"] for e in df["extra_info"]]).all(), path
    models = sorted(p for p in (verl_run / "results/models").iterdir() if not p.name.startswith("."))
    assert {p.name for p in models} >= {"base", "stage1", "rl_level1"}
    models = [p for p in models if p.name != "base"]  # the torch engine's pretraining writes its own record
    assert len(models) == ran["rft_sft"] + ran["rl"] + ran["rl_multi"]
    for model in models:
        files = {p.name for p in model.iterdir()}
        assert {"config.json", "model.safetensors", "tokenizer.json", "tokenizer_config.json",
                "generation_config.json", "resolved_config.json"} <= files, model
        assert "chat_template.jinja" not in files  # the starting model's tokenizer, not verl's view of it
        assert json.loads((model / "resolved_config.json").read_text())["engine"] == "verl"


def test_the_whole_dag_under_verl_writes_the_files_the_torch_engine_writes(verl_run, smoke_run):
    """Nothing is left to run; every table and figure of the verl run is one the torch engine's smoke run
    writes, with the same columns and types, the same problem sets, the same prompts in every evaluation, the
    same rows (models, levels, k, pairs) in every figure table, and the same RL metric names; the findings
    table has the same rows."""
    from dagtools import planned_jobs

    from fgx.engines.metric_names import TORCH_ONLY

    assert planned_jobs(verl_run, *OVERLAYS) == {}, "the verl run left work undone"
    verl, torch_ = artifact_tables(verl_run), artifact_tables(smoke_run)
    assert len(verl) > 60 and set(verl) <= set(torch_), sorted(set(verl) - set(torch_))
    # .test/verl.yaml thins the Countdown lineage's instances (one RL run from the Multi-Base, one number count)
    assert all(THINNED.search(name) for name in set(torch_) - set(verl)), sorted(set(torch_) - set(verl))
    for name, got in verl.items():
        want = torch_[name]
        assert list(got.columns) == list(want.columns), name
        if len(got) and len(want):  # an empty column has no values to type
            assert got.dtypes.astype(str).to_dict() == want.dtypes.astype(str).to_dict(), name
        if name.startswith("results/data/strings/") and "pretrain" not in name:  # the overlay sets pretraining's only
            pd.testing.assert_frame_equal(got, want, obj=name)
        elif name.startswith(("results/eval/", "results/rollouts/")):
            assert got["prompt"].astype(str).tolist() == want["prompt"].astype(str).tolist(), name
        elif name.startswith("figures/"):
            keys = [c for c in FIGURE_KEYS if c in want.columns]
            rows = lambda df: set(map(tuple, df[keys].astype(str).values))  # noqa: E731
            assert rows(got) <= rows(want) if THINNED_FIGURE.search(name) else rows(got) == rows(want), name
        elif name.endswith("/metrics.parquet"):  # RL curves: the torch engine's metrics (but its own), verl's beside
            missing = set(want["metric"]) - TORCH_ONLY - set(got["metric"])
            assert not missing, (name, missing)
    def finding_rows(run):
        return [line.split("|")[1].strip() for line in (run / "results/analysis/findings.md").read_text().splitlines()
                if line.startswith("| ")]
    assert finding_rows(verl_run) == finding_rows(smoke_run)


THINNED = re.compile(r"countdown[45]|multi_level1to2")
THINNED_FIGURE = re.compile(r"figures/countdown_transfer")
FIGURE_KEYS = ("model", "level", "k", "prompts", "a", "b", "functions", "numbers", "step", "metric")


def artifact_tables(root: Path) -> dict[str, pd.DataFrame]:
    """Every parquet under results/ (work directories and benchmarks left out) and every figure table."""
    files = [p for p in (root / "results").rglob("*.parquet") if "/work/" not in p.as_posix()]
    out = {p.relative_to(root).as_posix(): pd.read_parquet(p) for p in files if not p.name.startswith(".")}
    out.update({p.relative_to(root).as_posix(): pd.read_csv(p) for p in (root / "figures").glob("*.csv")})
    return out


def test_grpo_takes_real_steps_and_syncs_weights_to_vllm(verl_run):
    """Four optimizer steps change the weights, and vLLM samples from the updated ones: its token
    probabilities stay within a hundredth of the actor's at every step (a sampler left on the
    starting weights drifts away from the actor as lr 1e-3 moves it)."""
    from safetensors.torch import load_file

    rl = pd.read_parquet(verl_run / "results/rl/level1/metrics.parquet")
    assert list(rl.columns) == ["step", "metric", "level", "value"]
    loss = rl[rl["metric"] == "loss"]
    assert sorted(loss["step"]) == [1, 2, 3, 4] and (loss["value"] != 0).any()
    assert set(rl[rl["metric"] == "val_accuracy"]["step"]) >= {0, 2, 4}
    diff = rl[rl["metric"] == "verl:training/rollout_probs_diff_mean"]
    assert sorted(diff["step"]) == [1, 2, 3, 4] and (diff["value"] < 0.01).all(), diff
    a = load_file(verl_run / "results/models/stage1/model.safetensors")
    b = load_file(verl_run / "results/models/rl_level1/model.safetensors")
    assert a.keys() == b.keys() and any(not torch.equal(a[k], b[k].to(a[k].dtype)) for k in a)


def test_dynamic_sampling_keeps_the_generation_budget(verl_run):
    """RL on Level 2 from a Stage-1 model that solves (almost) no Level-2 prompt: few groups have rewards
    that differ, so dynamic sampling spends rl.max_generation_batches (2 in the smoke) at most per step
    and the run still takes its 4 steps (verl's own V1 buffer would sample until it found 4 such groups)."""
    rl = pd.read_parquet(verl_run / "results/rl/level2/metrics.parquet")
    gen = rl[rl["metric"] == "num_gen_batches"].set_index("step")["value"]
    kept = rl[rl["metric"] == "num_groups_trained"].set_index("step")["value"]
    assert sorted(gen.index) == [1, 2, 3, 4] and gen.between(1, 2).all(), gen
    assert ((kept == 4) | (gen == 2)).all() and kept.between(0, 4).all(), (gen, kept)  # a full batch or the budget
    share = rl[rl["metric"] == "filtered_group_share"].set_index("step")["value"]
    assert (share - (1 - kept / (gen * 4))).abs().max() < 1e-9


def greedy_with_vllm(model_dir: Path, rows_path: Path, out_dir: Path, max_tokens: int) -> list[str]:
    from configs import verl_section

    from fgx.engines.verl import commands as C
    from fgx.engines.verl.environment import job_env, sampler_cpu_env

    argv = [sys.executable, "-m", C.SAMPLE_MODULE, "--model", str(model_dir), "--data", str(rows_path),
            "--out-dir", str(out_dir), "--n", "1", "--temperature", "0", "--max-tokens", str(max_tokens),
            "--max-model-len", "256", "--gpu-memory-utilization", "0.5", "--enforce-eager", "--dtype", "float32"]
    env = job_env(sampler_cpu_env(C.verl_settings({"verl": verl_section()})))
    proc = subprocess.run(argv, env=env, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr[-4000:]
    got = pd.concat([pd.read_parquet(f) for f in sorted(out_dir.glob("*.parquet"))]).sort_values("row_index")
    return [r[0] for r in got["responses"]]


def test_greedy_sampling_agrees_token_for_token(verl_run, tmp_path):
    """The same model directory and >= 64 prompts through the torch sampler and through vLLM (fp32,
    greedy): whole continuations equal on >= 95 % of prompts, and where they differ, the two top
    logits at the first differing token are within a near-tie of each other."""
    from fgx.engines.prompts import encode_prompts, encode_texts, prompt_texts
    from fgx.engines.torch.model import load_model, load_tokenizer
    from fgx.engines.torch.sampler import decode_completions, generate_ids

    model_dir = verl_run / "results/models/stage1"
    rows = pd.concat([pd.read_parquet(verl_run / f"results/data/strings/{s}.parquet") for s in ("level1", "test")],
                     ignore_index=True)
    assert len(rows) >= 64
    rows_path = tmp_path / "rows.parquet"
    rows.to_parquet(rows_path)
    max_tokens = 64
    tok, model = load_tokenizer(model_dir), load_model(model_dir, "cpu").eval()
    prompts = encode_prompts(tok, prompt_texts(tok, rows, str(rows_path)))
    torch_texts = decode_completions(tok, generate_ids(model, tok, prompts, n=1, temperature=0.0,
                                                       max_new_tokens=max_tokens))
    vllm_texts = greedy_with_vllm(model_dir, rows_path, tmp_path / "chunks", max_tokens)
    assert len(torch_texts) == len(vllm_texts) == len(rows)
    same = [a == b for a, b in zip(torch_texts, vllm_texts)]
    gaps = []
    for p, a, b in zip(prompts, torch_texts, vllm_texts):
        if a == b:
            continue
        ia, ib = encode_texts(tok, [a, b])
        k = next(i for i in range(min(len(ia), len(ib)) + 1) if i == min(len(ia), len(ib)) or ia[i] != ib[i])
        with torch.no_grad():
            logits = model(torch.tensor([p + ia[:k]])).logits[0, -1]
        top2 = logits.topk(2).values
        gaps.append(float(top2[0] - top2[1]))
    share = sum(same) / len(same)
    print(f"\ngreedy agreement: {sum(same)} of {len(same)} prompts ({share:.1%}); top-2 logit gaps at the "
          f"divergences: {[round(g, 4) for g in gaps]}")
    assert share >= 0.95
    assert all(g < 1e-3 for g in gaps), gaps


def test_sampling_at_temperature_1_gives_the_torch_samplers_accuracy_per_level(verl_run):
    """vLLM's Stage-1 evaluation (T = 1, the job's seeds) against the torch sampler on the same model, prompts
    and settings: at every level each engine's accuracy lies inside the other's 95 % bootstrap interval."""
    import json as _json

    import numpy as np
    import pyarrow.parquet as pq

    from fgx.engines.torch import TorchEngine
    from fgx.metrics import bootstrap_mean_ci

    path = verl_run / "results/eval/stage1/test.parquet"
    settings = _json.loads(pq.read_schema(path).metadata[b"fgx.settings"])
    assert settings["temperature"] == 1.0
    vllm = pd.read_parquet(path)
    rows = vllm.drop(columns=list(SAMPLE_COLUMNS))
    torch_ = TorchEngine().sample(verl_run / "results/models/stage1", rows, None, None,
                                  {**settings, "engine": "torch"}, progress=False)
    report = []
    for level in sorted(vllm["level"].unique()):
        acc = {}
        for name, df in (("vllm", vllm), ("torch", torch_)):
            per_prompt = df[df["level"] == level]["correct"].map(np.mean).to_numpy()
            acc[name] = (per_prompt.mean(), *bootstrap_mean_ci(per_prompt, resamples=2000, ci=0.95,
                                                                rng=np.random.default_rng(0)))
        report.append((int(level), acc))
        (a, a_lo, a_hi), (b, b_lo, b_hi) = acc["vllm"], acc["torch"]
        assert a_lo <= b <= a_hi and b_lo <= a <= b_hi, (level, acc)
    print("\nT = 1 accuracy per level, vLLM vs torch [95 % intervals]: " + "; ".join(
        f"L{lv} {a['vllm'][0]:.3f} [{a['vllm'][1]:.3f}, {a['vllm'][2]:.3f}] vs {a['torch'][0]:.3f} "
        f"[{a['torch'][1]:.3f}, {a['torch'][2]:.3f}]" for lv, a in report))
    assert len(report) == 3 and len(vllm) == len(torch_) >= 24
