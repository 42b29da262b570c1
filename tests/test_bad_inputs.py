"""Feed it anything: every CLI in scripts/ given a missing, empty, truncated or wrong-schema input, a value
of fgx's own tables that is wrong in any row, an incomplete model directory, or an output inside its work
directory (under either engine), and the config given values of the wrong type or that no job can use (before
any job starts), exits non-zero with one line naming the file, the row and the field and saying what to do,
and leaves no output, not even a half-written one."""

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
      "save_every": 1, "val_n": 2, "val_temperature": 1.0}
PRETRAIN = {**RUNTIME, "model": dict(SMALLEST.__dict__),
            "train": {"steps": 1, "batch_size": 2, "lr": 1e-3, "warmup_steps": 0, "weight_decay": 0.0}}

# script -> (argv with {placeholders}, the input a case breaks, the output that must not appear)
CALLS = {
    "sample.py": (["--model", "{model}", "--data", "{problems}", "--settings", json.dumps(SAMPLING), "--out", "{out}",
                   "--work-dir", "{work}"], "problems", "out"),
    "sft.py": (["--model", "{model}", "--data", "{sft}", "--settings", json.dumps(SFT), "--out", "{out}",
                "--work-dir", "{work}"], "sft", "out"),
    "rl.py": (["--model", "{model}", "--train", "{problems}", "--val", "{problems}", "--settings", json.dumps(RL),
               "--out", "{out}", "--metrics", "{out2}", "--validation", "{out2}.validation.parquet", "--work-dir",
               "{work}"], "problems", "out2"),
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
    "plot.py": (["passk_level_curve", "--inputs", "{metrics}", "--settings",
                 json.dumps({"figure": "passk_level_curve"}), "--pdf", "{out}", "--csv", "{out2}"], "metrics", "out2"),
    "sample_browser.py": (["--inputs", "{eval}", "--settings", json.dumps({"per_cell": 1, "seed": 0}),
                           "--out", "{out}"], "eval", "out"),
    "select_prompts.py": (["--data", "{problems}", "--settings", json.dumps({"levels": [1, 2], "per_level": 1}),
                           "--out", "{out}"], "problems", "out"),
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
    column = {"pretrain.py": "extra_info", "mix_sft_data.py": "reward_model",
              "sample_browser.py": "responses"}.get(script, KEY_COLUMN[broken_key])
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


# values a JSON schema's types accept and a job cannot use, each with the words of its error line
UNUSABLE_VALUES = [
    # YAML reads these as numbers, which a JSON schema's integer and number accept
    (lambda c: c["rl"].update(steps=2.0), "key 'rl.steps': got 2.0; expected type integer (a whole number"),
    (lambda c: c["rl"].update(lr=float("nan")), "key 'rl.lr': got NaN; expected type number (a finite number"),
    (lambda c: c["figures"].update(passk_ks=[1.0, 4]), "key 'figures.passk_ks.0': got 1.0"),
    # a figure of a level no test has, verl without the metrics file, an override verl cannot parse
    (lambda c: c["figures"].update(passk_levels=[1, 9]), "key 'figures.passk_levels': got [1, 9]; the test set"),
    (lambda c: c.update(engine="verl") or c["verl"].update(logger=["console"]), "key 'verl.logger'"),
    (lambda c: c["verl"].update(ppo_overrides=["trainer.total_epochs 3"]), "key 'verl.ppo_overrides': got"),
]


def test_values_a_job_cannot_use_fail_before_any_job_each_named(tmp_path):
    """Every such value in one config: one run refuses it before any job, each key on a line of its own."""
    cfg = yaml.safe_load((ROOT / "config.yaml").read_text())
    for edit, _ in UNUSABLE_VALUES:
        edit(cfg)
    (tmp_path / "bad.yaml").write_text(yaml.safe_dump(cfg))
    proc = subprocess.run([sys.executable, "-m", "snakemake", "-n", "--configfile", str(tmp_path / "bad.yaml")],
                          cwd=ROOT, capture_output=True, text=True)
    out = proc.stdout + proc.stderr
    assert proc.returncode != 0 and "Building DAG" not in out, out[-3000:]
    for _, message in UNUSABLE_VALUES:
        assert len([line for line in out.splitlines() if message in line]) == 1, (message, out[-3000:])


@pytest.mark.parametrize("damage,words", [
    ("absent", "model.path directory not found"),
    ("no_model_type", "names no model_type"),
    ("no_weights", "no weights"),
    ("missing_shard", "model-00002-of-00002.safetensors"),
    ("no_tokenizer", "no tokenizer"),
])
def test_a_bad_model_path_fails_before_any_job(good, tmp_path, damage, words):
    """model.path (model.source: path) is a directory every sampling and training job reads: checked whole
    before any job starts, naming the file and the fix."""
    model = tmp_path / "llm"
    shutil.copytree(good["model"], model)
    if damage == "absent":
        shutil.rmtree(model)
    elif damage == "no_model_type":
        config = json.loads((model / "config.json").read_text())
        del config["model_type"]
        (model / "config.json").write_text(json.dumps(config))
    elif damage == "no_weights":
        (model / "model.safetensors").unlink()
    elif damage == "missing_shard":
        (model / "model.safetensors").rename(model / "model-00001-of-00002.safetensors")
        (model / "model.safetensors.index.json").write_text(json.dumps({"weight_map": {
            "a": "model-00001-of-00002.safetensors", "b": "model-00002-of-00002.safetensors"}}))
    else:
        for f in model.glob("tokenizer*"):
            f.unlink()
    config = {"model": {"source": "path", "path": str(model)}, "task": {"style": "paper"}}
    if damage != "absent":  # the check itself (what common.smk calls before any job), in this process
        from fgx.inputs import check_model_path
        from fgx.io import InputError

        with pytest.raises(InputError, match=re.escape(words)):
            check_model_path(config)
        return
    overlay = tmp_path / "llm.yaml"
    overlay.write_text(yaml.safe_dump(config))
    proc = subprocess.run([sys.executable, "-m", "snakemake", "-n", "--configfile", str(overlay)], cwd=ROOT,
                          capture_output=True, text=True)
    out = proc.stdout + proc.stderr
    assert proc.returncode != 0 and words in out and "Building DAG" not in out, out[-3000:]


def _verl(settings: dict) -> dict:
    from configs import verl_section

    return {**settings, "engine": "verl", "verl": verl_section()}


@pytest.mark.parametrize("engine", ["torch", "verl"])
@pytest.mark.parametrize("script", ["sample.py", "sft.py", "rl.py"])
def test_an_output_inside_the_work_dir_is_refused_before_any_work(good, tmp_path, script, engine):
    """``--out W/... --work-dir W`` (the job would delete its own output with its work directory) is refused
    by either engine before any work, and W keeps what it holds."""
    work = tmp_path / "w"
    work.mkdir()
    (work / "fingerprint.txt").write_text("0123456789abcdef\n")  # an fgx work directory of another run
    (work / "keep.parquet").write_bytes(b"PAR1")
    argv, _, out_key = CALLS[script]
    if engine == "verl":
        i = argv.index("--settings") + 1
        argv = [*argv[:i], json.dumps(_verl(json.loads(argv[i]))), *argv[i + 1:]]
    paths = {**_paths(good, tmp_path), "work": str(work), out_key: str(work / "result")}
    proc = subprocess.run([sys.executable, str(SCRIPTS / script), *_fill(argv, paths)], capture_output=True,
                          text=True, cwd=tmp_path)
    _one_error(proc, str(work), "work directory holds")
    assert sorted(p.name for p in work.iterdir()) == ["fingerprint.txt", "keep.parquet"]


@pytest.mark.parametrize("script", ["sft.py", "rl.py"])
def test_an_output_directory_fgx_may_not_replace_is_refused_by_verl_before_training(good, tmp_path, script):
    """A model ``--out`` naming a user's directory: the verl engine refuses it before verl starts, as the torch
    engine does (tests above), not after the training."""
    mine = tmp_path / "my files"
    (mine / "notes").mkdir(parents=True)
    argv, _, _ = CALLS[script]
    i = argv.index("--settings") + 1
    argv = [*argv[:i], json.dumps(_verl(json.loads(argv[i]))), *argv[i + 1:]]
    paths = {**_paths(good, tmp_path), "out": str(mine)}
    proc = subprocess.run([sys.executable, str(SCRIPTS / script), *_fill(argv, paths)], capture_output=True,
                          text=True, cwd=tmp_path)
    _one_error(proc, "my files", "not a model directory")
    assert sorted(p.name for p in mine.iterdir()) == ["notes"] and not (tmp_path / "work").exists()


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
def _edit_rows(src: Path, dst: Path, edit) -> Path:
    write_parquet(edit(pd.read_parquet(src)), dst)
    return dst


def _gt(edit):
    """An edit of every row's reward_model.ground_truth (its JSON text)."""
    return lambda df: df.assign(reward_model=[{**rm, "ground_truth": edit(rm["ground_truth"])}
                                              for rm in df["reward_model"]])


NOT_JSON = _gt(lambda gt: "{not json")
NO_REF_OUTPUT = _gt(lambda gt: json.dumps({k: v for k, v in json.loads(gt).items() if k != "ref_output"}))
UNKNOWN_SOURCE = lambda df: df.assign(data_source="mystery-task")  # noqa: E731
NO_DEPTH = lambda df: df.assign(extra_info=[{k: v for k, v in e.items() if k != "depth"}  # noqa: E731
                                            for e in df["extra_info"]])
ZERO_ROWS = lambda df: df.head(0)  # noqa: E731
UNEVEN = lambda df: df.assign(correct=[list(c)[:1] for c in df["correct"]])  # noqa: E731
# fgx's own tables with a value the jobs cannot read right: a type, a range, a count that disagrees
CORRECT_AS_TEXT = lambda df: df.assign(correct=[["yes", "no"] for _ in df["correct"]])  # noqa: E731
SCORE_OUT_OF_RANGE = lambda df: df.assign(scores=[[1.0, 5.0 if i == 2 else -1.0] for i in range(len(df))])  # noqa: E731
N_CORRECT_OFF = lambda df: df.assign(n_correct=[2 if i == 3 else 1 for i in range(len(df))])  # noqa: E731
LEVEL_MISSING = lambda df: df.assign(level=[None if i == 1 else lv for i, lv in enumerate(df["level"])])  # noqa: E731
PASS_AT_K_ABOVE_1 = lambda df: df.assign(pass_at_k=[1.5 if i == 0 else v for i, v in enumerate(df["pass_at_k"])])  # noqa: E731
K_ZERO = lambda df: df.assign(k=[0] * len(df))  # noqa: E731
RESPONSE_NOT_TEXT = lambda df: df.assign(response=list(range(len(df))))  # noqa: E731

# (script, the input broken, how, words the one error line must hold)
BAD_CONTENT = {
    "sample-gt-not-json": ("sample.py", "problems", NOT_JSON, ["reward_model.ground_truth", "JSON"]),
    "sample-gt-incomplete": ("sample.py", "problems", NO_REF_OUTPUT, ["ground_truth", "ref_output"]),
    "sample-unknown-source": ("sample.py", "problems", UNKNOWN_SOURCE, ["data_source", "mystery-task"]),
    "sample-no-depth": ("sample.py", "problems", NO_DEPTH, ["extra_info", "depth"]),
    "sample-zero-rows": ("sample.py", "problems", ZERO_ROWS, ["no rows"]),
    "rl-gt-not-json": ("rl.py", "problems", NOT_JSON, ["reward_model.ground_truth"]),
    "rl-unknown-source": ("rl.py", "problems", UNKNOWN_SOURCE, ["data_source", "mystery-task"]),
    "rl-no-depth": ("rl.py", "problems", NO_DEPTH, ["extra_info", "depth"]),
    "rl-zero-rows": ("rl.py", "problems", ZERO_ROWS, ["no rows"]),
    "select-no-depth": ("select_prompts.py", "problems", NO_DEPTH, ["extra_info", "depth"]),
    "leakage-gt-not-json": ("check_leakage.py", "problems", NOT_JSON, ["ground_truth"]),
    "generate-exclude-gt-not-json": ("generate_strings.py", "problems", NOT_JSON, ["ground_truth"]),
    "filter-uneven": ("filter_rollouts.py", "eval", UNEVEN, ["responses", "correct"]),
    "browser-gt-not-json": ("sample_browser.py", "eval", NOT_JSON, ["reward_model.ground_truth"]),
    "pretrain-zero-rows": ("pretrain.py", "problems", ZERO_ROWS, ["no rows"]),
    "plot-zero-rows": ("plot.py", "metrics", ZERO_ROWS, ["no rows"]),
    "metrics-correct-as-text": ("metrics.py", "eval", CORRECT_AS_TEXT, ["column 'correct'", "string", "true/false"]),
    "filter-score-out-of-range": ("filter_rollouts.py", "eval", SCORE_OUT_OF_RANGE, ["row 2", "'scores'", "5.0"]),
    "metrics-n-correct-off": ("metrics.py", "eval", N_CORRECT_OFF, ["row 3", "'n_correct'", "says 2"]),
    "metrics-level-missing": ("metrics.py", "eval", LEVEL_MISSING, ["row 1", "'level'", "no value"]),
    "plot-pass-at-k-above-1": ("plot.py", "metrics", PASS_AT_K_ABOVE_1, ["row 0", "'pass_at_k'", "1.5"]),
    "plot-k-zero": ("plot.py", "metrics", K_ZERO, ["row 0", "'k'", ">= 1"]),
    "sft-response-not-text": ("sft.py", "sft", RESPONSE_NOT_TEXT, ["column 'response'", "a string"]),
    "mix-response-not-text": ("mix_sft_data.py", "sft", RESPONSE_NOT_TEXT, ["column 'response'"]),
}


def _run_call(script, paths):
    argv, _, _ = CALLS[script]
    return subprocess.run([sys.executable, str(SCRIPTS / script), *_fill(argv, paths)], capture_output=True,
                          text=True, cwd=paths["dir"])


def _one_error(proc, *words) -> str:
    errors = [line for line in proc.stderr.splitlines() if line.startswith("error:")]
    code = 2 if str(proc.args[1]).endswith("check_leakage.py") else 1  # its 1 means "leaks found"
    assert proc.returncode == code and len(errors) == 1, (proc.returncode, proc.stderr[-3000:])
    assert "Traceback" not in proc.stderr, proc.stderr[-3000:]
    for w in words:
        assert w in errors[0], errors[0]
    return errors[0]


def _paths(good, tmp_path) -> dict:
    paths = {k: str(v) for k, v in good.items()}
    paths.update(out=str(tmp_path / "out" / "result.parquet"), out2=str(tmp_path / "out" / "second.parquet"),
                 work=str(tmp_path / "work"), dir=str(tmp_path))
    return paths


@pytest.mark.parametrize("case", sorted(BAD_CONTENT))
def test_valid_parquet_with_bad_content_is_named_and_leaves_nothing(good, tmp_path, case):
    script, key, edit, words = BAD_CONTENT[case]
    paths = _paths(good, tmp_path)
    bad = _edit_rows(good[key], tmp_path / f"bad_{case}.parquet", edit)
    paths[key] = str(bad)
    _one_error(_run_call(script, paths), bad.name, *words)
    assert _leftovers(tmp_path / "out") == []


# (script, a --settings value of the wrong type, words the one error line must hold)
BAD_SETTINGS = {
    "sample-n": ("sample.py", {"n": "four"}, ["n", "four"]),
    "sample-temperature": ("sample.py", {"temperature": [1]}, ["temperature"]),
    "sft-epochs": ("sft.py", {"epochs": 1.5}, ["epochs", "1.5"]),
    "rl-lr": ("rl.py", {"lr": "fast"}, ["lr", "fast"]),
    "rl-dynamic": ("rl.py", {"dynamic_sampling": "yes"}, ["dynamic_sampling"]),
    "pretrain-steps": ("pretrain.py", {"train": {**PRETRAIN["train"], "steps": "many"}}, ["steps", "many"]),
    "filter-max": ("filter_rollouts.py", {"max_per_prompt": "one"}, ["max_per_prompt", "one"]),
    "metrics-ks": ("metrics.py", {"ks": "1"}, ["ks"]),
    "metrics-bootstrap": ("metrics.py", {"bootstrap": "many"}, ["bootstrap", "many"]),
    "mix-repeats": ("mix_sft_data.py", {"repeats": "1"}, ["repeats"]),
    "browser-per-cell": ("sample_browser.py", {"per_cell": "x"}, ["per_cell"]),
    "select-levels": ("select_prompts.py", {"levels": 3}, ["levels"]),
    "runtime-seed": ("sample.py", {"seed": "zero"}, ["seed", "zero"]),
}


@pytest.mark.parametrize("case", sorted(BAD_SETTINGS))
def test_a_wrongly_typed_setting_is_named_and_leaves_nothing(good, tmp_path, case):
    script, change, words = BAD_SETTINGS[case]
    argv, _, _ = CALLS[script]
    i = argv.index("--settings") + 1
    argv = [*argv[:i], json.dumps({**json.loads(argv[i]), **change}), *argv[i + 1:]]
    paths = _paths(good, tmp_path)
    proc = subprocess.run([sys.executable, str(SCRIPTS / script), *_fill(argv, paths)], capture_output=True,
                          text=True, cwd=tmp_path)
    _one_error(proc, "--settings", *words)
    assert _leftovers(tmp_path / "out") == []


def _damage(model: Path, name: str, how: str) -> None:
    f = model / name
    f.write_bytes(f.read_bytes()[: f.stat().st_size // 2] if how == "truncated" else b"{not json")


@pytest.mark.parametrize("name", ["config.json", "tokenizer.json", "tokenizer_config.json"])
@pytest.mark.parametrize("script", ["sample.py", "sft.py", "rl.py"])
def test_a_damaged_model_directory_is_named(good, tmp_path, script, name):
    model = tmp_path / "damaged_model"
    shutil.copytree(good["model"], model)
    _damage(model, name, "truncated")
    paths = {**_paths(good, tmp_path), "model": str(model)}
    _one_error(_run_call(script, paths), "damaged_model")
    assert _leftovers(tmp_path / "out") == []


# the second and third inputs of each script (the tour above breaks the first)
LATER_INPUTS = {
    "rl-val": ("rl.py", ["--val"], "problems"),
    "leakage-train": ("check_leakage.py", ["--train"], "sft"),
    "browser-second": ("sample_browser.py", ["--inputs", "{eval}"], "eval"),
    "mix-second": ("mix_sft_data.py", ["--inputs", "{sft}"], "sft"),
    "plot-second": ("plot.py", ["--inputs", "{metrics}"], "metrics"),
}


@pytest.mark.parametrize("kind", ["missing", "truncated", "no_column"])
@pytest.mark.parametrize("case", sorted(LATER_INPUTS))
def test_a_broken_second_input_is_named_and_leaves_nothing(good, tmp_path, case, kind):
    script, flag, key = LATER_INPUTS[case]
    argv, _, _ = CALLS[script]
    column = {"mix_sft_data.py": "reward_model", "sample_browser.py": "responses",
              "check_leakage.py": "reward_model"}.get(script, KEY_COLUMN[key])
    bad = _breaks(kind, good[key], tmp_path / f"second_{Path(good[key]).name}", column)
    if len(flag) == 1:  # the flag's own value is replaced
        i = argv.index(flag[0]) + 1
        argv = [*argv[:i], str(bad), *argv[i + 1:]]
    else:  # a second file after the good first one
        i = argv.index(flag[0]) + 2
        argv = [*argv[:i], str(bad), *argv[i:]]
    paths = _paths(good, tmp_path)
    if script == "plot.py":
        paths.update(out=str(tmp_path / "out" / "f.pdf"), out2=str(tmp_path / "out" / "f.csv"))
    proc = subprocess.run([sys.executable, str(SCRIPTS / script), *_fill(argv, paths)], capture_output=True,
                          text=True, cwd=tmp_path)
    _one_error(proc, bad.name, *([column] if kind == "no_column" else []))
    assert _leftovers(tmp_path / "out") == []


def _script(name: str):
    import importlib.util

    spec = importlib.util.spec_from_file_location(f"fgx_script_{name[:-3]}", SCRIPTS / name)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("refusal", ["read-only", "full while writing"])
@pytest.mark.parametrize("script", ["metrics.py", "filter_rollouts.py", "plot.py", "sample_browser.py"])
def test_an_output_directory_that_cannot_be_written_is_named(good, tmp_path, monkeypatch, capsys, script, refusal):
    """A read-only or full disk: one line naming the output and the fix, no temporary left behind. The
    kernel's refusal is injected (as root, which these tests may run as, chmod 0555 refuses nothing)."""
    import errno
    import os
    import tempfile

    import pyarrow.parquet as pq

    out = tmp_path / "out"
    out.mkdir()
    if refusal == "read-only":
        out.chmod(0o555)
        real = tempfile.mkstemp

        def mkstemp(*a, dir=None, **kw):
            if dir is not None and Path(dir) == out:
                raise OSError(errno.EROFS, os.strerror(errno.EROFS), str(out / ".result.tmp"))
            return real(*a, dir=dir, **kw)

        monkeypatch.setattr(tempfile, "mkstemp", mkstemp)
    else:
        import matplotlib.figure

        def half_then_full(*a, **kw):
            target = Path(a[1] if len(a) > 1 else a[0] if isinstance(a[0], (str, Path)) else kw.get("fname", a[0]))
            target.write_bytes(b"PAR1 half")
            raise OSError("[errno 28] No space left on device")  # as pyarrow raises it: no errno attribute

        monkeypatch.setattr(pq, "write_table", half_then_full)
        monkeypatch.setattr(matplotlib.figure.Figure, "savefig", lambda self, fname, **kw: half_then_full(fname))
        monkeypatch.setattr(Path, "write_text", lambda self, *a, **kw: half_then_full(self))
    argv, _, _ = CALLS[script]
    paths = _paths(good, tmp_path)
    if script == "plot.py":
        paths.update(out=str(out / "f.pdf"), out2=str(out / "f.csv"))
    try:
        code = _script(script).main(_fill(argv, paths))
    finally:
        out.chmod(0o755)
    errors = [line for line in capsys.readouterr().err.splitlines() if line.startswith("error:")]
    assert code == 1 and len(errors) == 1 and str(out) in errors[0] and "cannot write" in errors[0], errors
    assert _leftovers(out) == []
