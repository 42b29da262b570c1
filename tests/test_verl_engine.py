"""The verl engine for real, on the CPU (tier "verl", slow): the whole smoke DAG (``rule all``) under
``engine: verl`` (.test/config.yaml + .test/verl.yaml). vLLM samples the Stage-1 rollouts, the iterative-RFT
rollouts and every evaluation; verl's SFT trainer fine-tunes Stage 1, the Multi-Base and every iterative-RFT
round; verl's GRPO trains every RL run with dynamic sampling and syncs its weights to vLLM after every step;
the torch engine pretrains the base; then metrics, every figure, the sample browser and the findings. The run
is killed twice on the way (SIGKILL to every process it started, as a machine that dies, whatever else runs
beside): once right after verl's SFT checkpoints the first of its two epochs, once right after verl's GRPO
checkpoints step 2 of 4 of RL Level 1; each rerun continues from that checkpoint (verl's own load lines; the
SFT model equal to an uninterrupted run's, the GRPO state two AdamW steps from the step-2 checkpoint). Then:
verl's SFT dataset of fgx's messages against the torch engine's tokenisation; vLLM's token probabilities
against the actor's at every RL step, with a never-synced sampler as the control; verl's record of each
step's trained groups under dynamic sampling; the two engines' samplers on the same model and prompts, greedy
(continuations) and at T = 1 (per-token log-probs and calibration); and the verl run's files against the
torch engine's smoke run (by value where the engine plays no part). Needs ``FGX_EXTRAS=verl bash
envs/install.sh`` (verl and vLLM's CPU build).
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
    that checkpoint (verl's own log lines: model, optimizer, schedule) and trains every step of epoch 2, and
    the model equals one trained without a kill."""
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
    ckpt = (verl_run / SFT_CHECKPOINTS / f"global_step_{per_epoch}").resolve()
    for what, name in (("model", "model"), ("optimizer", "optim"), ("lr_scheduler", "extra_state")):
        assert f"Loaded {what} from {ckpt / name}_world_size_1_rank_0.pt" in log, what  # verl's own line
    clean = tmp_path / "clean"
    VerlEngine().sft(verl_run / resolved["init_model"], verl_run / "results/rft/base/stage1.parquet", clean,
                     tmp_path / "clean_work", settings)
    a, b = load_file(verl_run / "results/models/stage1/model.safetensors"), load_file(clean / "model.safetensors")
    diff = max(float((a[k].double() - b[k].double()).abs().max()) for k in a)
    print(f"\nverl SFT killed at step {per_epoch} of {2 * per_epoch} and resumed vs uninterrupted: "
          f"max abs weight difference {diff:.3g}")
    assert a.keys() == b.keys() and diff == 0.0


def test_verls_sft_dataset_of_fgx_messages_gives_the_torch_engines_ids_and_loss_mask(verl_run, tmp_path):
    """verl's SFT dataset as verl.trainer.sft_trainer builds it (fgx's overrides, the tokenizer of the model
    view verl was shown) on the messages file verl fine-tuned Stage 1 on: every example's token ids and loss
    mask equal the torch engine's tokenisation of the same SFT rows (prompt + response + eos, the loss on the
    response and eos). Controls: the torch engine's mask with the prompt in the loss, and verl's dataset
    through another chat template, each differ."""
    from hydra import compose, initialize_config_dir

    import verl
    from verl.trainer.sft_trainer import create_sft_dataset
    from verl.utils import hf_tokenizer

    from fgx.engines.prompts import prompt_texts
    from fgx.engines.torch.model import load_tokenizer
    from fgx.engines.torch.supervised import tokenize
    from fgx.engines.verl import commands as C

    work = verl_run / "results/work/rft_sft/stage1"
    resolved = json.loads((verl_run / "results/models/stage1/resolved_config.json").read_text())
    settings = resolved["settings"]

    def verl_examples(view: Path) -> list[tuple[list[int], list[int]]]:
        overrides = C.sft_overrides(settings, model_dir=str(view), train_file=str(work / "sft.parquet"),
                                    checkpoint_dir=str(tmp_path / "checkpoints"), experiment_name="stage1",
                                    n_gpus_per_node=1, cpu=True)
        with initialize_config_dir(config_dir=str(Path(verl.__file__).parent / "trainer/config"), version_base=None):
            data = compose(config_name="sft_trainer_engine", overrides=overrides).data
        ds = create_sft_dataset([str(work / "sft.parquet")], data, hf_tokenizer(str(view)), None)
        return [(ds[i]["input_ids"].tolist(), ds[i]["loss_mask"].tolist()) for i in range(len(ds))]

    def torch_examples(loss_on_prompt: bool) -> list[tuple[list[int], list[int]]]:
        rows = pd.read_parquet(verl_run / "results/rft/base/stage1.parquet")
        tok = load_tokenizer(verl_run / resolved["init_model"])
        examples = tokenize(tok, prompt_texts(tok, rows, "stage1"), [str(r) for r in rows["response"]],
                            settings["max_length"], loss_on_prompt=loss_on_prompt)
        return [(ids, [int(t >= start) for t in range(len(ids))]) for ids, start in examples]

    got, want = verl_examples(work / "model"), torch_examples(loss_on_prompt=False)
    assert len(got) == len(want) >= 8 and got == want
    assert torch_examples(loss_on_prompt=True) != want
    other = tmp_path / "other_view"
    other.mkdir()
    for f in (work / "model").iterdir():
        (other / f.name).symlink_to(f.resolve())
    (other / "chat_template.jinja").unlink()
    (other / "chat_template.jinja").write_text("{% for m in messages %}<|{{ m.role }}|>{{ m.content }}{% endfor %}")
    assert [ids for ids, _ in verl_examples(other)] != [ids for ids, _ in want]


def test_a_killed_verl_grpo_run_resumes_from_its_last_checkpoint(verl_run):
    """Killed right after the checkpoint of step 2, the rerun continues at step 3 (not step 0): steps 1-2
    were trained by the first attempt, 3-4 by the second, and the metrics hold each step once. verl's own
    log says it loaded the step-2 checkpoint's model, optimizer and learning-rate schedule, and the step-4
    checkpoint holds two AdamW steps more: replayed from the step-2 weights and moments (the two gradients
    solved from the step-4 moments), the step-4 weights come out within a tenth of the learning rate (mostly
    1e-4 of it; an embedding row whose token had no gradient before step 3, moments ~0 at step 2, solves
    worse: 0.022 seen); from the Stage-1 weights (a rerun that loaded no model) or from zero moments (one that
    loaded no optimizer) the replay misses by about the learning rate.

    The resumed weights are not compared with an uninterrupted run's: verl's vLLM draws the rollouts
    without a per-request seed (verl's full_determinism would give every sample of a group the same seed),
    so a restarted vLLM draws other responses for steps 3-4 and two such runs differ as two seeds do."""
    assert json.loads((verl_run / "killed_at.json").read_text())["rl"] == 2
    attempts = attempt_steps(verl_run / "results/rl/level1/work", "actor/pg_loss")
    assert len(attempts) == 2 and attempts[0][:2] == [1, 2] and attempts[1] == [3, 4], attempts
    rl = pd.read_parquet(verl_run / "results/rl/level1/metrics.parquet")
    assert sorted(rl[rl["metric"] == "loss"]["step"]) == [1, 2, 3, 4]
    log = (verl_run / "logs/rl/level1.log").read_text()
    rerun = log[log.index("resuming GRPO trainer from its checkpoint at step 2"):]
    ckpt = (verl_run / RL_CHECKPOINTS).resolve()
    assert f"Resuming from {ckpt / 'global_step_2'}, setting global step to 2" in rerun
    for what, name in (("model", "model"), ("optimizer", "optim"), ("lr_scheduler", "extra_state")):
        assert f"Loaded {what} from {ckpt / 'global_step_2/actor' / name}_world_size_1_rank_0.pt" in rerun, what

    (w2, opt2, extra2), (w4, opt4, extra4) = (fsdp_checkpoint(ckpt / f"global_step_{k}/actor") for k in (2, 4))
    assert {x["step"] for x in opt2["state"].values()} == {2} and {x["step"] for x in opt4["state"].values()} == {4}
    assert extra2["lr_scheduler"]["last_epoch"] == 2 and extra4["lr_scheduler"]["last_epoch"] == 4
    (group,) = opt2["param_groups"]
    resumed = adamw_replay_error(w2, opt2["state"], w4, opt4["state"], group)
    w0 = fsdp_names_like(w2, verl_run / "results/models/stage1")
    no_model = adamw_replay_error(w0, opt2["state"], w4, opt4["state"], group)
    zeros = {i: {"step": 0, "exp_avg": 0 * x["exp_avg"], "exp_avg_sq": 0 * x["exp_avg_sq"]}
             for i, x in opt2["state"].items()}
    no_optimizer = adamw_replay_error(w2, zeros, w4, opt4["state"], group)
    print(f"\nverl GRPO killed after step 2 and resumed: step-4 weights replayed from the step-2 checkpoint to "
          f"{resumed:.2g} lr; from the Stage-1 weights {no_model:.2g} lr, from zero moments {no_optimizer:.2g} lr")
    assert resumed < 0.1 and no_model > 0.5 and no_optimizer > 0.5


def fsdp_checkpoint(actor_dir: Path) -> tuple[dict, dict, dict]:
    """(weights name -> float64 tensor, optimizer state dict, extra state) of a world-size-1 verl FSDP checkpoint;
    the optimizer's moments as float64 tensors, keyed as verl saves them (parameter index)."""
    def local(x):
        return (x.to_local() if hasattr(x, "to_local") else x).double()

    def load(name):
        return torch.load(actor_dir / f"{name}_world_size_1_rank_0.pt", weights_only=False)

    weights = {k: local(v) for k, v in load("model").items()}
    optim = load("optim")
    optim["state"] = {i: {k: (float(v) if k == "step" else local(v)) for k, v in x.items()}
                      for i, x in optim["state"].items()}
    return weights, optim, load("extra_state")


def fsdp_names_like(weights: dict, model_dir: Path) -> dict:
    """A Hugging Face directory's weights under the names (and order) of a verl checkpoint's ``weights``."""
    from safetensors.torch import load_file

    hf = load_file(model_dir / "model.safetensors")  # a tied lm_head is saved as the embedding only
    return {k: hf[k if k in hf or k != "lm_head.weight" else "model.embed_tokens.weight"].double() for k in weights}


def adamw_replay_error(w: dict, state: dict, w_end: dict, state_end: dict, group: dict) -> float:
    """Largest difference, in units of the learning rate, between ``w_end`` and two AdamW steps (torch's
    decoupled decay, bias correction, as ``group`` sets it) from weights ``w`` and moments ``state``, with
    the two gradients that take the moments from ``state`` to ``state_end`` (per element the root of a
    quadratic; the closer of its two). Optimizer entries are the parameters in order, tied ones once."""
    b1, b2 = group["betas"]
    lr, wd, eps = group["lr"], group["weight_decay"], group["eps"]
    names = [n for n in w if n != "lm_head.weight" or len(w) == len(state)]
    assert len(names) == len(state), (len(names), len(state))
    worst = 0.0
    for i, name in enumerate(names):
        m, v, t = state[i]["exp_avg"], state[i]["exp_avg_sq"], state[i]["step"]
        # m_end = b1^2 m + b1 (1-b1) g1 + (1-b1) g2 and v_end likewise in g^2: g2 = c - b1 g1, a quadratic in g1
        c = (state_end[i]["exp_avg"] - b1 * b1 * m) / (1 - b1)
        d = (state_end[i]["exp_avg_sq"] - b2 * b2 * v) / (1 - b2)
        a, b = b2 + b1 * b1, -2 * b1 * c
        root = (b * b - 4 * a * (c * c - d)).clamp_min(0).sqrt()
        best = None
        for g1 in ((-b + root) / (2 * a), (-b - root) / (2 * a)):
            p, mk, vk = w[name].clone(), m.clone(), v.clone()
            for k, g in ((t + 1, g1), (t + 2, c - b1 * g1)):
                mk, vk = b1 * mk + (1 - b1) * g, b2 * vk + (1 - b2) * g * g
                p = p * (1 - lr * wd) - lr / (1 - b1 ** k) * mk / ((vk / (1 - b2 ** k)).sqrt() + eps)
            err = (p - w_end[name]).abs()
            best = err if best is None else torch.minimum(best, err)
        worst = max(worst, float(best.max()))
    return worst / lr


# the backend each rule's jobs run under engine: verl (the torch engine pretrains the base: verl has no pretraining)
BACKENDS = {"rollout": "fgx.engines.verl.vllm_sample", "evaluate": "fgx.engines.verl.vllm_sample",
            "rft_sft": "verl.trainer.sft_trainer", "rl": "verl.trainer.main_ppo", "rl_multi": "verl.trainer.main_ppo"}


def test_every_verl_job_ran_and_wrote_what_the_torch_engine_writes(verl_run):
    """Every sampling, SFT and RL job of the DAG ran verl or vLLM, every sample table has the contract's
    columns and the samples per prompt its job asked for, every model is a Hugging Face directory."""
    import pyarrow.parquet as pq

    from fgx.engines.verl.engine import TRAINED_MARKER
    from fgx.io import PROVENANCE_KEY

    ran = {}
    for log in sorted((verl_run / "logs").glob("*/**/*.log")):
        rule = log.relative_to(verl_run / "logs").parts[0]
        if rule in BACKENDS:
            text = log.read_text(errors="replace")
            # a job killed after its trainer finished (the second kill lands wherever the other jobs are) only
            # merges when rerun: the earlier attempt's command is in its work directory's marker
            done = re.search(r"training already finished in (\S+) \(an earlier attempt\): merging only", text)
            if done:
                text += (Path(done[1]) / TRAINED_MARKER).read_text()
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
    writes, with the same columns and types, and with rows wherever the torch engine's has rows. Each table
    is compared by the rule for its kind (``TABLE_KINDS``; a table of no kind fails): by value but for the
    columns the engine's sampling makes in every problem set (the pretraining corpus aside, which
    .test/verl.yaml enlarges), sample table (the rows sampled), RL validation table (steps, prompts, samples
    a prompt) and metrics table (models, levels, k, prompts, samples); every figure table has the same rows
    (models, levels, k, pairs), every RL run the torch engine's metrics at the same steps and levels, the
    findings table the same rows. The SFT sets (the correct answers sampled) and training logs (the engine's
    own steps) are compared by structure only. Control: one changed value in a table of each kind, an
    emptied table, a table of no kind, each fail the comparison."""
    from dagtools import planned_jobs

    assert planned_jobs(verl_run, *OVERLAYS) == {}, "the verl run left work undone"
    verl, torch_ = artifact_tables(verl_run), artifact_tables(smoke_run)
    assert len(verl) > 60 and set(verl) <= set(torch_), sorted(set(verl) - set(torch_))
    # .test/verl.yaml thins the Countdown lineage's instances (one RL run from the Multi-Base, one number count)
    assert all(THINNED.search(name) for name in set(torch_) - set(verl)), sorted(set(torch_) - set(verl))
    compared = compare_artifact_tables(verl, torch_)
    print(f"\n{len(verl)} tables of the verl run against the torch engine's, by kind: {compared}")
    assert compared["problem set"] >= 15 and compared["sample table"] >= 20 and compared["metrics table"] >= 8
    assert compared["RL validation"] == compared["RL metrics"] == len(RL_RUNS), compared

    def finding_rows(run):
        return [line.split("|")[1].strip() for line in (run / "results/analysis/findings.md").read_text().splitlines()
                if line.startswith("| ")]
    assert finding_rows(verl_run) == finding_rows(smoke_run)

    def changed(name, column, value, row=-1):
        df = verl[name].copy()
        df.loc[df.index[row], column] = value
        return {**verl, name: df}
    rl_metrics = verl["results/rl/level2/metrics.parquet"]
    validation = "results/rl/level1/validation.parquet"
    controls = {"problem set": changed("results/data/countdown/countdown_train.parquet", "data_source", "countdown-x"),
                "sample table": changed("results/eval/stage1/test.parquet", "ability", "x"),
                "RL validation": changed(validation, "prompt_row", 99),
                "RL validation samples": changed(validation, "n_samples", 1),
                "RL validation emptied": {**verl, validation: verl[validation][:0]},
                "metrics table": changed("results/metrics/stage1/test.parquet", "n_samples", 99),
                "metrics emptied": {**verl, "results/metrics/stage1/test.parquet":
                                    verl["results/metrics/stage1/test.parquet"][:0]},
                "RL metrics": changed("results/rl/level2/metrics.parquet", "step", 99,
                                      row=int((rl_metrics["metric"] == "reward").to_numpy().argmax())),
                "figure": changed("figures/passk_level_curve.csv", "model", "x"),
                "no kind": {**verl, "results/other/table.parquet": verl[validation]}}
    for what, tables in controls.items():
        with pytest.raises(AssertionError):
            compare_artifact_tables(tables, {**torch_, "results/other/table.parquet": torch_[validation]})
            print(f"control {what!r} passed the comparison")


THINNED = re.compile(r"countdown[45]|multi_level1to2")
THINNED_FIGURE = re.compile(r"figures/countdown_transfer")
FIGURE_KEYS = ("model", "level", "k", "prompts", "a", "b", "functions", "numbers", "step", "metric")
SAMPLED = ("responses", "scores", "correct", "response_tokens", "n_correct")
# every table's kind, by its path, and the columns of it the engine makes (None: compared by a rule of its own, or
# by structure only); a table of no kind fails the comparison
TABLE_KINDS = (
    # no engine writes them (problem generation), but for the pretraining corpus .test/verl.yaml enlarges
    ("problem set", re.compile(r"^results/data/(?!strings/pretrain\.parquet$)"), ()),
    ("sample table", re.compile(r"^results/(eval|rollouts)/"), SAMPLED),
    ("RL validation", re.compile(r"^results/rl/[^/]+/validation\.parquet$"), ("n_correct",)),
    ("metrics table", re.compile(r"^results/metrics/"), ("pass_at_k", "ci_low", "ci_high")),
    ("figure", re.compile(r"^figures/"), None),
    ("RL metrics", re.compile(r"^results/rl/[^/]+/metrics\.parquet$"), None),
    # structure only: the correct answers the engine sampled, the engine's own training steps
    ("SFT set", re.compile(r"^results/rft/"), None),
    ("training log", re.compile(r"^results/models/[^/]+/train_log\.parquet$"), None),
    ("pretraining corpus", re.compile(r"^results/data/strings/pretrain\.parquet$"), None),
)


def compare_artifact_tables(verl: dict, torch_: dict) -> dict:
    """Hold each verl table to the torch engine's table of that name (see the test above); how many tables
    of each kind were compared."""
    from fgx.engines.metric_names import TORCH_ONLY

    counts = {kind: 0 for kind, _, _ in TABLE_KINDS}
    for name, got in verl.items():
        want = torch_[name]
        assert list(got.columns) == list(want.columns), name
        assert len(got) or not len(want), f"{name}: no rows under verl, {len(want)} under the torch engine"
        if len(got) and len(want):  # an empty column has no values to type
            assert got.dtypes.astype(str).to_dict() == want.dtypes.astype(str).to_dict(), name
        kind, engine_columns = next(((k, c) for k, pattern, c in TABLE_KINDS if pattern.match(name)), (None, None))
        assert kind is not None, f"{name}: a table of no kind in TABLE_KINDS, so compared by nothing"
        counts[kind] += 1
        if engine_columns is not None:
            drop = [c for c in engine_columns if c in want.columns]
            pd.testing.assert_frame_equal(got.drop(columns=drop), want.drop(columns=drop), obj=name)
        elif kind == "figure":
            keys = [c for c in FIGURE_KEYS if c in want.columns]
            rows = lambda df: set(map(tuple, df[keys].astype(str).values))  # noqa: E731
            assert rows(got) <= rows(want) if THINNED_FIGURE.search(name) else rows(got) == rows(want), name
        elif kind == "RL metrics":  # the torch engine's metrics (but its own) at its steps and levels, verl's beside
            names = set(want["metric"]) - TORCH_ONLY
            keys = lambda df: set(map(tuple, df[df["metric"].isin(names)][["step", "metric", "level"]].values))  # noqa: E731
            assert keys(got) == keys(want), (name, sorted(keys(got) ^ keys(want))[:10])
    return counts


def artifact_tables(root: Path) -> dict[str, pd.DataFrame]:
    """Every parquet under results/ (work directories and benchmarks left out) and every figure table."""
    files = [p for p in (root / "results").rglob("*.parquet") if "/work/" not in p.as_posix()]
    out = {p.relative_to(root).as_posix(): pd.read_parquet(p) for p in files if not p.name.startswith(".")}
    out.update({p.relative_to(root).as_posix(): pd.read_csv(p) for p in (root / "figures").glob("*.csv")})
    return out


# vLLM's and the actor's probabilities of the tokens vLLM sampled (verl's training/rollout_probs_diff_mean, fp32 on
# both sides) differ by at most 5.4e-7 at every step of the tier's RL runs: float32 rounding. A sampler left on the
# Stage-1 weights while the actor holds step 2's differs by 3e-2 to 5e-2 (the control in the test).
SYNC_BOUND = 1e-5
RL_RUNS = ("level1", "level2", "level1to2", "multi_level1")


def test_grpo_takes_real_steps_and_syncs_weights_to_vllm(verl_run):
    """Four optimizer steps change the weights, and vLLM samples from the updated ones: at every step of
    every RL run, its probabilities of the tokens it sampled are within 1e-5 (mean over the batch) of the
    actor's. Control, through verl's own metric function: vLLM's Stage-1 samples scored by the Stage-1
    weights (a sampler never synced) against the weights of RL Level 1's step-2 checkpoint (the actor at
    step 3) differ by more than a hundred times that."""
    from safetensors.torch import load_file

    rl = pd.read_parquet(verl_run / "results/rl/level1/metrics.parquet")
    assert list(rl.columns) == ["step", "metric", "level", "value"]
    loss = rl[rl["metric"] == "loss"]
    assert sorted(loss["step"]) == [1, 2, 3, 4] and (loss["value"] != 0).any()
    assert set(rl[rl["metric"] == "val_accuracy"]["step"]) >= {0, 2, 4}
    synced = []
    for run in RL_RUNS:
        m = pd.read_parquet(verl_run / f"results/rl/{run}/metrics.parquet")
        diff = m[m["metric"] == "verl:training/rollout_probs_diff_mean"].set_index("step")["value"]
        assert sorted(diff.index) == sorted(m[m["metric"] == "loss"]["step"]) and len(diff) >= 2, (run, diff)
        synced += diff.tolist()
    stale = stale_sampler_probs_diff(verl_run)
    print(f"\nvLLM vs actor token probabilities, mean |difference| per step: at most {max(synced):.2g} over "
          f"{len(synced)} steps of {len(RL_RUNS)} runs; a sampler on the Stage-1 weights at step 3: {stale:.2g}")
    assert max(synced) < SYNC_BOUND and stale > 100 * SYNC_BOUND
    a = load_file(verl_run / "results/models/stage1/model.safetensors")
    b = load_file(verl_run / "results/models/rl_level1/model.safetensors")
    assert a.keys() == b.keys() and any(not torch.equal(a[k], b[k].to(a[k].dtype)) for k in a)


def stale_sampler_probs_diff(verl_run: Path) -> float:
    """verl's ``training/rollout_probs_diff_mean`` (``verl.utils.debug.metrics``) of a sampler left on the
    Stage-1 weights at step 3 of RL Level 1: vLLM's Stage-1 evaluation samples, their tokens' log-probs
    under the Stage-1 model as the rollout's and under the step-2 checkpoint's weights as the actor's."""
    from verl import DataProto
    from verl.utils.debug.metrics import calculate_debug_metrics

    from fgx.engines.torch.model import load_model

    stage1 = verl_run / "results/models/stage1"
    sampler, actor = load_model(stage1, "cpu").eval(), load_model(stage1, "cpu").eval()
    step2, _, _ = fsdp_checkpoint(verl_run / RL_CHECKPOINTS / "global_step_2/actor")
    actor.load_state_dict({k: v.float() for k, v in step2.items()}, strict=True)
    prompts, samples = evaluation_samples(verl_run / "results/eval/stage1/test.parquet", stage1)
    width = max(len(ids) for ids in samples.values())
    rollout, old, mask = (torch.zeros(len(samples), width) for _ in range(3))
    for row, (key, ids) in enumerate(samples.items()):
        rollout[row, :len(ids)] = torch_logprobs(sampler, prompts[key[0]], ids)[0]
        old[row, :len(ids)] = torch_logprobs(actor, prompts[key[0]], ids)[0]
        mask[row, :len(ids)] = 1
    data = DataProto.from_dict(tensors={"rollout_log_probs": rollout, "old_log_probs": old,
                                        "response_mask": mask.long(), "responses": mask.long()})
    return calculate_debug_metrics(data)["training/rollout_probs_diff_mean"]


def evaluation_samples(path: Path, model_dir: Path) -> tuple[list[list[int]], dict[tuple[int, int], list[int]]]:
    """Prompt ids per row and the token ids of every sample of a sample table, (row, sample) -> ids: the
    response's tokens and the end-of-sequence token where the sampler stopped on it (``response_tokens``
    counts it)."""
    from fgx.engines.prompts import encode_prompts, encode_texts, prompt_texts
    from fgx.engines.torch.model import load_tokenizer

    tok = load_tokenizer(model_dir)
    df = pd.read_parquet(path)
    samples = {}
    for i, (texts, counts) in enumerate(zip(df["responses"], df["response_tokens"])):
        for j, (ids, n) in enumerate(zip(encode_texts(tok, list(texts)), counts)):
            assert n in (len(ids), len(ids) + 1), (path, i, j)
            samples[i, j] = ids + [tok.eos_token_id] * (n - len(ids))
    return encode_prompts(tok, prompt_texts(tok, df, str(path))), samples


def torch_logprobs(model, prompt: list[int], ids: list[int]) -> tuple[torch.Tensor, torch.Tensor]:
    """The model's log-probs (float64) of ``ids`` after ``prompt``, and its whole log-distributions there."""
    with torch.no_grad():
        logits = model(torch.tensor([prompt + ids])).logits[0, len(prompt) - 1:-1].double()
    dist = torch.log_softmax(logits, -1)
    return dist.gather(1, torch.tensor(ids)[:, None])[:, 0], dist


# verl's no-op samples that fill a batch to a multiple of its mini-batch (verl.trainer.ppo.padding_utils: rewards
# zeroed, no part in the loss), one group id "pad<uuid hex>" a batch
VERL_PADDING = re.compile(r"^pad[0-9a-f]{32}$")


def verl_trained_groups(work: Path) -> dict[int, dict[str, list[float]]]:
    """Step -> the groups verl trained on, group id -> its samples' rewards: verl's dump of each step's batch
    (trainer.rollout_data_dir, .test/verl.yaml; a sample's id is <group>_<sample>_<turn>, its score verl's
    reward), verl's padding left out."""
    out = {}
    for f in sorted((work / "rollouts").glob("*.jsonl")):
        groups: dict[str, list[float]] = {}
        for line in f.read_text().splitlines():
            rec = json.loads(line)
            group = rec["uid"].rsplit("_", 2)[0]
            if not VERL_PADDING.match(group):
                groups.setdefault(group, []).append(float(rec["score"]))
        out[int(f.stem)] = groups
    return out


def assert_trains_groups_that_differ(groups: dict[str, list[float]], group_size: int, batch_size: int) -> int:
    """One step's trained batch under dynamic sampling: groups of ``group_size`` rewards that differ, at most
    ``batch_size`` of them, or (none found within the budget) one group; returns how many differ."""
    differ = [g for g in groups.values() if len(set(g)) > 1]
    assert all(len(g) == group_size for g in groups.values()), groups
    assert len(differ) == len(groups) <= batch_size or (len(groups) == 1 and not differ), groups
    return len(differ)


def test_dynamic_sampling_trains_only_groups_whose_rewards_differ(verl_run):
    """The Stage-1 model's samples come in groups of equal rewards (vLLM's Stage-1 evaluation samples hold such
    groups at Levels 1 and 2, the control: four of their prompts as a trained batch fail the check), so
    dynamic sampling must filter. verl's own record of every step's trained batch (its dump,
    rewards as its reward manager gave them) holds only groups whose rewards differ, up to rl.batch_size (4);
    a step whose rl.max_generation_batches (2) batches held none trains on one group of equal rewards (zero
    advantages: no policy gradient; verl's trainer cannot step on no sample). Every run filtered: verl's
    classification evicted groups, and RL Level 1 also trained groups that differ. The torch engine's metric
    names beside agree with the record: num_groups_trained = its groups that differ, filtered_group_share =
    1 - those / groups generated, the budget never exceeded."""
    settings = json.loads((verl_run / "results/models/rl_level1/resolved_config.json").read_text())["settings"]
    group_size, batch_size, budget = settings["group_size"], settings["batch_size"], settings["max_generation_batches"]
    assert (group_size, batch_size, budget) == (4, 4, 2)
    kept = {}
    for run in RL_RUNS:
        work = verl_run / f"results/rl/{run}/work"
        trained = verl_trained_groups(work)
        rl = pd.read_parquet(verl_run / f"results/rl/{run}/metrics.parquet")
        metric = {name: rl[rl["metric"] == name].set_index("step")["value"]
                  for name in ("num_gen_batches", "num_groups_trained", "filtered_group_share",
                               "verl:training/filter_groups/evicted_samples")}
        assert sorted(trained) == sorted(metric["num_gen_batches"].index) and len(trained) >= 2, (run, trained)
        for step, groups in trained.items():
            differ = assert_trains_groups_that_differ(groups, group_size, batch_size)
            gen = metric["num_gen_batches"][step]
            assert 1 <= gen <= budget and (differ == batch_size or gen == budget), (run, step, gen, groups)
            assert metric["num_groups_trained"][step] == differ, (run, step)
            assert abs(metric["filtered_group_share"][step] - (1 - differ / (gen * batch_size))) < 1e-9
        kept[run] = [assert_trains_groups_that_differ(g, group_size, batch_size) for _, g in sorted(trained.items())]
        assert metric["verl:training/filter_groups/evicted_samples"].sum() > 0, run
    print(f"\ngroups trained per step (rewards that differ), verl's record: {kept}")
    assert sum(kept["level1"]) > 0 and len(kept["level2"]) == 4  # Level 2 takes its 4 steps on the budget
    evaluation = pd.read_parquet(verl_run / "results/eval/stage1/test.parquet")  # T = 1, 4 samples a prompt
    for level in (1, 2):  # the first 4 prompts of a level as one batch, unfiltered
        correct = evaluation[evaluation["level"] == level]["correct"][:batch_size]
        with pytest.raises(AssertionError):
            assert_trains_groups_that_differ({str(i): [float(c) for c in cs] for i, cs in enumerate(correct)},
                                             group_size, batch_size)


def sample_with_vllm(model_dir: Path, rows_path: Path, out_dir: Path, max_tokens: int, *, temperature: float = 0.0,
                     n: int = 1, flags: tuple[str, ...] = ()) -> pd.DataFrame:
    """fgx's vLLM sampler (fp32, the verl engine's CPU environment) on ``rows_path``: its chunks, row by row."""
    from configs import verl_section

    from fgx.engines.verl import commands as C
    from fgx.engines.verl.environment import job_env, sampler_cpu_env

    argv = [sys.executable, "-m", C.SAMPLE_MODULE, "--model", str(model_dir), "--data", str(rows_path),
            "--out-dir", str(out_dir), "--n", str(n), "--temperature", repr(temperature), "--max-tokens",
            str(max_tokens), "--max-model-len", "256", "--gpu-memory-utilization", "0.5", "--enforce-eager",
            "--dtype", "float32", *flags]
    env = job_env(sampler_cpu_env(C.verl_settings({"verl": verl_section()})))
    proc = subprocess.run(argv, env=env, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr[-4000:]
    return pd.concat([pd.read_parquet(f) for f in sorted(out_dir.glob("*.parquet"))]).sort_values("row_index")


def greedy_with_vllm(model_dir: Path, rows_path: Path, out_dir: Path, max_tokens: int) -> list[str]:
    return [r[0] for r in sample_with_vllm(model_dir, rows_path, out_dir, max_tokens)["responses"]]


def stage1_prompt_rows(verl_run: Path, tmp_path: Path) -> tuple[pd.DataFrame, Path]:
    """The Level-1 train split and the test set (>= 64 prompts), written where vLLM's sampler reads them."""
    rows = pd.concat([pd.read_parquet(verl_run / f"results/data/strings/{s}.parquet") for s in ("level1", "test")],
                     ignore_index=True)
    assert len(rows) >= 64
    rows.to_parquet(tmp_path / "rows.parquet")
    return rows, tmp_path / "rows.parquet"


def test_greedy_sampling_agrees_token_for_token(verl_run, tmp_path):
    """The same model directory and >= 64 prompts through the torch sampler and through vLLM (fp32,
    greedy): whole continuations equal on >= 95 % of prompts, and where they differ, the two top
    logits at the first differing token are within a near-tie of each other."""
    from fgx.engines.prompts import encode_prompts, encode_texts, prompt_texts
    from fgx.engines.torch.model import load_model, load_tokenizer
    from fgx.engines.torch.sampler import decode_completions, generate_ids

    model_dir = verl_run / "results/models/stage1"
    rows, rows_path = stage1_prompt_rows(verl_run, tmp_path)
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


# vLLM's log-prob of each token it sampled against the torch model's (both fp32): float32 rounding, which grows with
# a token's improbability (at most 5.7e-5 over 14,922 tokens in the tier), far below the change four RL steps make
# (the control, RL Level 1's weights: 17 to 21 at most, and more than 1e-2 required).
LOGPROB_TOLERANCE = 1e-3
# the calibration statistic of T = 1 draws is ~N(0, 1): |z| > 4 has probability 6e-5
CALIBRATION_Z = 4.0


def calibration(dist: torch.Tensor, ids: list[int]) -> tuple[float, float]:
    """(sum of log p(x_t) + H_t, sum of Var_t) over the tokens ``ids`` drawn from the log-distributions
    ``dist``: each term has mean 0 and variance Var_t = E[(log p)^2] - H_t^2 when x_t is a T = 1 draw from
    exp(dist[t]) (a martingale: the sum over N tokens, divided by the root of the variances, is ~N(0, 1)); a
    colder sampler draws likelier tokens and makes it positive, a hotter one negative."""
    p = dist.exp()
    entropy = -(p * dist).sum(-1)
    lp = dist.gather(1, torch.tensor(ids)[:, None])[:, 0]
    return float((lp + entropy).sum()), float(((p * dist * dist).sum(-1) - entropy ** 2).sum())


def calibration_z(terms: list[tuple[float, float]]) -> float:
    return sum(t for t, _ in terms) / sum(v for _, v in terms) ** 0.5


def test_vllm_samples_at_temperature_1_from_the_torch_models_distribution(verl_run, tmp_path):
    """fgx's vLLM sampler at T = 1 (seeded, fp32) on the Stage-1 model, 4 samples for each of >= 64 prompts,
    against the torch model: the log-prob vLLM reports for every token it sampled is the torch model's to
    1e-3, and the tokens are the model's T = 1 draws: their calibration statistic (``calibration``; over
    ~10^4 tokens) lies within +-4. Controls: RL Level 1's weights give log-probs more than 1e-2 away on the
    same tokens; the torch sampler's own draws at T = 1 pass the calibration bound and at T = 0.8 fail it."""
    from fgx.engines.prompts import encode_prompts, prompt_texts
    from fgx.engines.torch.model import load_model, load_tokenizer
    from fgx.engines.torch.sampler import generate_ids

    model_dir = verl_run / "results/models/stage1"
    rows, rows_path = stage1_prompt_rows(verl_run, tmp_path)
    got = sample_with_vllm(model_dir, rows_path, tmp_path / "chunks", 64, temperature=1.0, n=4,
                           flags=("--seed", "0", "--whole-prefills", "--logprobs"))
    assert got["row_index"].tolist() == list(range(len(rows)))
    tok, model = load_tokenizer(model_dir), load_model(model_dir, "cpu").eval()
    other = load_model(verl_run / "results/models/rl_level1", "cpu").eval()
    prompts = encode_prompts(tok, prompt_texts(tok, rows, str(rows_path)))
    worst, other_worst, terms = 0.0, 0.0, []
    for prompt, samples, vllm_lps in zip(prompts, got["token_ids"], got["logprobs"]):
        for ids, lps in zip(samples, vllm_lps):
            ids = [int(t) for t in ids]
            lp, dist = torch_logprobs(model, prompt, ids)
            worst = max(worst, float((lp - torch.tensor(list(lps), dtype=torch.float64)).abs().max()))
            other_worst = max(other_worst, float((torch_logprobs(other, prompt, ids)[0] - lp).abs().max()))
            terms.append(calibration(dist, ids))
    z = calibration_z(terms)
    torch_z = {}
    for temperature in (1.0, 0.8):
        terms_t = []
        for k, c in enumerate(generate_ids(model, tok, prompts, n=4, temperature=temperature, max_new_tokens=64)):
            terms_t.append(calibration(torch_logprobs(model, prompts[k // 4], c.token_ids)[1], c.token_ids))
        torch_z[temperature] = calibration_z(terms_t)
    tokens = sum(len(ids) for samples in got["token_ids"] for ids in samples)
    print(f"\nT = 1, vLLM vs torch on {len(rows)} prompts x 4 samples, {tokens} tokens: largest log-prob difference "
          f"{worst:.2g} (RL Level 1's weights: {other_worst:.2g}); calibration z {z:.2f} (torch sampler: T = 1 "
          f"{torch_z[1.0]:.2f}, T = 0.8 {torch_z[0.8]:.2f})")
    assert tokens >= 5000 and worst < LOGPROB_TOLERANCE and other_worst > 1e-2
    assert abs(z) < CALIBRATION_Z and abs(torch_z[1.0]) < CALIBRATION_Z < abs(torch_z[0.8])


def test_vllm_samples_and_verls_reward_scores_arithmetic_chain_rows(verl_run, tmp_path):
    """The second task family through the verl engine's seams: fgx's vLLM sampler on arithmetic-chain rows
    (Levels 1-3, compact prompts) writes one row of 4 samples per prompt, scored by the arithmetic family's
    compute_score (recomputed here from the responses); verl's reward function (fgx.engines.verl.reward, as
    verl's reward manager loads it) gives each row's reference answer 1 and an answer one off 0."""
    import json

    from fgx.engines.verl.reward import compute_score as verl_reward
    from fgx.tasks import compute_score, task_for
    from fgx.tasks.arithmetic.generate import generate

    rows = generate(stage=2, split="test", min_level=1, max_level=3, num=12, seed=0, style="compact")
    assert {task_for(ds).__name__ for ds in rows["data_source"]} == {"fgx.tasks.arithmetic"}
    rows.to_parquet(tmp_path / "arithmetic.parquet")
    got = sample_with_vllm(verl_run / "results/models/stage1", tmp_path / "arithmetic.parquet", tmp_path / "chunks",
                           64, temperature=1.0, n=4, flags=("--seed", "0"))
    assert got["row_index"].tolist() == list(range(len(rows)))
    for (_, row), responses, scores, correct in zip(rows.iterrows(), got["responses"], got["scores"], got["correct"]):
        assert len(responses) == 4
        results = [compute_score(row["data_source"], r, row["reward_model"]["ground_truth"], dict(row["extra_info"]))
                   for r in responses]
        assert list(scores) == [float(r["score"]) for r in results]
        assert list(correct) == [bool(r["acc"]) for r in results]
        answer = json.loads(row["reward_model"]["ground_truth"])
        reference = row["extra_info"]["solution"]
        assert verl_reward(row["data_source"], reference, row["reward_model"]["ground_truth"]) == {"score": 1.0,
                                                                                                    "acc": 1.0}
        wrong = reference.replace(f'"output": {answer["ref_output"]}', f'"output": {answer["ref_output"] + 1}')
        assert wrong != reference
        assert verl_reward(row["data_source"], wrong, row["reward_model"]["ground_truth"])["acc"] == 0.0


def test_sampling_at_temperature_1_gives_the_torch_samplers_accuracy_per_level(verl_run):
    """vLLM's Stage-1 evaluation (T = 1, the job's seeds) against the torch sampler on the same model, prompts
    and settings: at every level each engine's accuracy lies inside the other's 95 % bootstrap interval. With
    8 prompts x 4 samples a level these intervals are wide (a level both engines solve none of passes by
    construction): the T = 1 check with power is the per-token one above; this one holds the evaluation table
    the DAG wrote."""
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
