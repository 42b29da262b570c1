"""Feed it anything: every CLI in scripts/ given a missing, empty, truncated or wrong-schema input (and
the config given bad values) exits non-zero with one line naming the file and the field and saying
what to do, and leaves no output, not even a half-written one."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest
import yaml

from fgx.engines.torch.model import build_model, save_checkpoint
from fgx.engines.torch.tokenizer import build_char_tokenizer
from fgx.io import write_parquet
from fgx.tasks import strings as S
from toy import RUNTIME, SMALLEST

ROOT = Path(__file__).resolve().parents[1]
SCRIPTS = ROOT / "scripts"


@pytest.fixture(scope="module")
def good(tmp_path_factory) -> dict[str, Path]:
    """One valid input of every kind the scripts read."""
    d = tmp_path_factory.mktemp("inputs")
    problems = S.generate(stage=2, split="test", min_level=1, max_level=2, num=6, seed=0, style="compact")
    write_parquet(problems, d / "problems.parquet")
    rollouts = problems.assign(
        responses=[[r["solution"], "x"] for r in problems.extra_info], scores=[[1.0, -1.0]] * 6,
        correct=[[True, False]] * 6, response_tokens=[[3, 1]] * 6, level=[r["depth"] for r in problems.extra_info],
        n_correct=[1] * 6)
    write_parquet(rollouts, d / "eval.parquet")
    write_parquet(problems.assign(response=[r["solution"] for r in problems.extra_info]), d / "sft.parquet")
    tok = build_char_tokenizer(model_max_length=64)
    save_checkpoint(build_model(SMALLEST, tok, seed=0), tok, d / "model")
    metrics = d / "metrics" / "stage1"
    metrics.mkdir(parents=True)
    subprocess.run([sys.executable, str(SCRIPTS / "metrics.py"), "--samples", str(d / "eval.parquet"),
                    "--model", "stage1", "--settings", json.dumps({"ks": [1, 2], "bootstrap": 10, "ci": 0.9,
                                                                   "seed": 0}),
                    "--out", str(metrics / "test.parquet")], check=True, capture_output=True)
    return {"problems": d / "problems.parquet", "eval": d / "eval.parquet", "sft": d / "sft.parquet",
            "model": d / "model", "metrics": metrics / "test.parquet", "dir": d}


SAMPLING = {**RUNTIME, "n": 1, "temperature": 1.0, "max_new_tokens": 4}
SFT = {**RUNTIME, "epochs": 1, "batch_size": 4, "lr": 1e-3, "max_length": 64}
RL = {**RUNTIME, "algorithm": "grpo", "reward": "acc", "steps": 1, "batch_size": 2, "group_size": 2, "lr": 1e-3,
      "kl_coef": 0.0, "entropy_coef": 0.0, "loss_agg_mode": "token-mean", "dynamic_sampling": False,
      "max_generation_batches": 1, "temperature": 1.0, "max_new_tokens": 4, "overlong_buffer": 0, "eval_every": 1,
      "save_every": 1}
PRETRAIN = {**RUNTIME, "model": dict(SMALLEST.__dict__),
            "train": {"steps": 1, "batch_size": 2, "lr": 1e-3, "warmup_steps": 0, "weight_decay": 0.0}}

# script -> (argv with {placeholders}, the input a case breaks, the output that must not appear)
CALLS = {
    "sample.py": (["--model", "{model}", "--data", "{problems}", "--settings", json.dumps(SAMPLING), "--out", "{out}",
                   "--work-dir", "{work}"], "problems", "out"),
    "sft.py": (["--model", "{model}", "--data", "{sft}", "--settings", json.dumps(SFT), "--out", "{out}",
                "--work-dir", "{work}"], "sft", "out"),
    "rl.py": (["--model", "{model}", "--train", "{problems}", "--val", "{problems}", "--settings", json.dumps(RL),
               "--out", "{out}", "--metrics", "{out2}", "--work-dir", "{work}"], "problems", "out2"),
    "pretrain.py": (["--data", "{problems}", "--settings", json.dumps(PRETRAIN), "--out", "{out}",
                     "--work-dir", "{work}"], "problems", "out"),
    "filter_rollouts.py": (["--rollouts", "{eval}", "--settings", json.dumps({"drop_all_solved": False,
                                                                             "max_per_prompt": 1}),
                            "--out", "{out}"], "eval", "out"),
    "metrics.py": (["--samples", "{eval}", "--model", "m", "--settings", json.dumps({"ks": [1], "bootstrap": 5,
                                                                                     "ci": 0.9, "seed": 0}),
                    "--out", "{out}"], "eval", "out"),
    "mix_sft_data.py": (["--inputs", "{sft}", "--settings", json.dumps({"repeats": [1]}), "--out", "{out}"], "sft",
                        "out"),
    "plot.py": (["passk_level_curve", "--inputs", "{metrics}", "--settings", json.dumps({"figure": "passk_level_curve"}),
                 "--pdf", "{out}", "--csv", "{out2}"], "metrics", "out2"),
    "sample_browser.py": (["--inputs", "{eval}", "--settings", json.dumps({"per_cell": 1, "seed": 0}), "--out", "{out}"],
                          "eval", "out"),
    "check_leakage.py": (["--test", "{problems}", "--train", "{sft}", "--out", "{out}"], "problems", "out"),
    "generate_strings.py": (["--stage", "2", "--split", "test", "--min-level", "1", "--max-level", "1", "--num", "2",
                             "--seed", "0", "--exclude", "{problems}", "--out", "{out}"], "problems", "out"),
}


def _fill(argv: list[str], paths: dict[str, str]) -> list[str]:
    """``argv`` with each ``{name}`` placeholder replaced (JSON settings keep their braces)."""
    return [re.sub(r"\{(\w+)\}", lambda m: paths[m[1]], a) for a in argv]


def _breaks(kind: str, src: Path, dst: Path, column_of: str) -> Path:
    """A copy of the input ``src`` broken the way ``kind`` says."""
    if kind == "missing":
        return dst.with_name("does-not-exist.parquet")
    if kind == "empty":
        dst.write_bytes(b"")
    elif kind == "truncated":
        dst.write_bytes(src.read_bytes()[: src.stat().st_size // 2])
    elif kind == "no_column":
        df = pd.read_parquet(src)
        write_parquet(df.drop(columns=[column_of]), dst)
    return dst


# the column each input cannot do without
KEY_COLUMN = {"problems": "reward_model", "eval": "correct", "sft": "response", "metrics": "pass_at_k"}


@pytest.mark.parametrize("kind", ["missing", "empty", "truncated", "no_column"])
@pytest.mark.parametrize("script", sorted(CALLS))
def test_a_broken_input_is_named_and_leaves_no_output(good, tmp_path, script, kind):
    argv, broken_key, out_key = CALLS[script]
    # the column that script cannot do without (mix_sft_data reads a solution where no response is;
    # the sample browser rescores responses rather than reading 'correct')
    column = {"pretrain.py": "extra_info", "mix_sft_data.py": "reward_model", "sample_browser.py": "responses"}.get(script, KEY_COLUMN[broken_key])
    paths = {k: str(v) for k, v in good.items()}
    bad = _breaks(kind, good[broken_key], tmp_path / f"broken_{Path(good[broken_key]).name}", column)
    paths[broken_key] = str(bad)
    paths.update(out=str(tmp_path / "out" / "result.parquet"), out2=str(tmp_path / "out" / "second.parquet"),
                 work=str(tmp_path / "work"))
    if script == "plot.py":
        paths.update(out=str(tmp_path / "out" / "f.pdf"), out2=str(tmp_path / "out" / "f.csv"))
    proc = subprocess.run([sys.executable, str(SCRIPTS / script), *_fill(argv, paths)],
                          capture_output=True, text=True, cwd=tmp_path)
    assert proc.returncode != 0, proc.stdout[-2000:]
    errors = [line for line in proc.stderr.splitlines() if line.startswith("error:")]
    assert len(errors) == 1, proc.stderr[-3000:]
    assert bad.name in errors[0], errors[0]
    if kind == "no_column":
        assert column in errors[0], errors[0]
    assert "Traceback" not in proc.stderr, proc.stderr[-3000:]
    assert _leftovers(Path(paths[out_key]).parent) == []  # neither the output nor a temporary of it


@pytest.mark.parametrize("script", ["sample.py", "sft.py", "rl.py"])
def test_a_model_directory_without_weights_is_named(good, tmp_path, script):
    model = tmp_path / "no_weights"
    shutil.copytree(good["model"], model)
    (model / "model.safetensors").unlink()
    argv, _, out_key = CALLS[script]
    paths = {k: str(v) for k, v in good.items()}
    paths.update(model=str(model), out=str(tmp_path / "out"), out2=str(tmp_path / "m.parquet"),
                 work=str(tmp_path / "work"))
    proc = subprocess.run([sys.executable, str(SCRIPTS / script), *_fill(argv, paths)],
                          capture_output=True, text=True)
    errors = [line for line in proc.stderr.splitlines() if line.startswith("error:")]
    assert proc.returncode != 0 and len(errors) == 1 and "no_weights" in errors[0] and "weights" in errors[0], \
        proc.stderr[-3000:]
    assert not Path(paths[out_key]).exists()


@pytest.mark.parametrize("edit,message", [
    (lambda c: c["rl"].update(lr="fast"), "key 'rl.lr': got \"fast\"; expected type number"),
    (lambda c: c["rl"].update(group_size=1), "key 'rl.group_size': got 1; minimum is 2"),
    (lambda c: c["evaluate"].update(ci=1.5), "key 'evaluate.ci'"),
    (lambda c: c["data"].update(test_levels=[4, 2]), "key 'data.test_levels': got [4, 2]"),
    (lambda c: c.update(engine="jax"), "key 'engine': got \"jax\""),
])
def test_a_bad_config_value_fails_before_any_job_naming_the_key(tmp_path, edit, message):
    cfg = yaml.safe_load((ROOT / "config.yaml").read_text())
    edit(cfg)
    (tmp_path / "bad.yaml").write_text(yaml.safe_dump(cfg))
    proc = subprocess.run([sys.executable, "-m", "snakemake", "-n", "--configfile", str(tmp_path / "bad.yaml")],
                          cwd=ROOT, capture_output=True, text=True)
    out = proc.stdout + proc.stderr
    assert proc.returncode != 0 and message in out and "Building DAG" not in out, out[-3000:]


@pytest.mark.parametrize("script", ["sample.py", "sft.py", "rl.py", "pretrain.py"])
def test_a_work_dir_fgx_did_not_make_is_named_and_left_alone(good, tmp_path, script):
    """A mistyped --work-dir (here a user's directory) is an error naming it; nothing in it is deleted."""
    user = tmp_path / "my files"
    user.mkdir()
    (user / "keep.txt").write_text("mine")
    argv, _, out_key = CALLS[script]
    paths = {k: str(v) for k, v in good.items()}
    paths.update(out=str(tmp_path / "out" / "result"), out2=str(tmp_path / "out" / "m.parquet"), work=str(user))
    proc = subprocess.run([sys.executable, str(SCRIPTS / script), *_fill(argv, paths)], capture_output=True, text=True)
    errors = [line for line in proc.stderr.splitlines() if line.startswith("error:")]
    assert proc.returncode == 1 and len(errors) == 1 and "my files" in errors[0], proc.stderr[-3000:]
    assert "Traceback" not in proc.stderr
    assert (user / "keep.txt").read_text() == "mine" and sorted(p.name for p in user.iterdir()) == ["keep.txt"]
    assert not Path(paths[out_key]).exists()


def _leftovers(directory: Path) -> list[str]:
    """What a failed job left in its output directory: anything at all (an output, or a temporary such as
    parquet's ``.result.parquet.XXXX.parquet``, which a ``*.tmp*`` glob never matched)."""
    return sorted(p.name for p in directory.iterdir()) if directory.exists() else []


def test_the_leftover_check_sees_a_parquet_temporary(tmp_path):
    """The tour's check must be able to fail: a temporary as write_parquet names it is seen."""
    assert _leftovers(tmp_path / "absent") == []
    (tmp_path / ".result.parquet.k3j4h5.parquet").write_bytes(b"PAR1")
    assert _leftovers(tmp_path) == [".result.parquet.k3j4h5.parquet"]
    assert not list(tmp_path.glob("*.tmp*"))  # what the old check looked for
