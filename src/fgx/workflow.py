"""What each DAG job needs, as pure functions of the config.

The .smk files only wire files; every decision about which model feeds which stage, which
generator arguments a data split uses and which settings a job receives lives here, where it
is unit-tested. Settings are passed to jobs as JSON ``params``, so Snakemake reruns a job (and
only that job and its descendants) when a setting it reads changes.
"""

from __future__ import annotations

import hashlib
import json
import re
import shlex
from typing import Any, Mapping

from fgx.names import FIGURES, FINDINGS_TABLES, RFT_ITER, RL_RUNS  # re-exported for the rules

# Countdown transfer (paper Section 4.3): the Multi-Base lineage. Model names; the RL lineages
# ("string": Stage-2 RL from stage1, "multi": the same string-task RL from the Multi-Base).
MULTI_BASE = "stage1_multi"
RL_LINEAGES = {"string": "", "multi": "multi_"}
RL_MODEL = re.compile(r"^rl_(multi_)?(" + "|".join(RL_RUNS) + r")$")
COUNTDOWN_TRAIN = "countdown_train"          # 2-number problems (the atomic skill), train partition
COUNTDOWN_TEST = re.compile(r"^countdown(\d+)$")  # countdown{n}: n-number test problems
COUNTDOWN_ATOMIC_CHECK = 2                   # held-out 2-number problems: does Multi-Base have the skill?
STRING_BASE_RUN = "level1to2"                # "String-Base + RL L1+2": the Section 4.1 model

# Stage-2 train splits: (min level, max level) over the train functions.
TRAIN_SPLIT_LEVELS = {"level1": (1, 1), "level2": (2, 2), "level1to2": (1, 2)}
# The first prompts of each test level, sampled many times for pass@k at large k (evaluate.many_samples)
TEST_MANY = "test_many"
# A second test set over the *train* functions (new expressions only): the function_transfer figure
# compares each RL gain there with the same gain on the held-out functions of the main test set.
TEST_TRAIN_FUNCS = "test_train_funcs"
# A test set of deep prompts that only a full trace solves (no one-step wrong trace reaches their
# answer), disjoint from the main test set: the model_contrasts figure's measure of composition at a
# depth where the main test set holds few such prompts.
TEST_FULL_TRACE = "test_full_trace"


def derive_seed(seed: int, *names: Any) -> int:
    """A per-job seed: stable across runs and machines, different for every job name."""
    blob = ":".join([str(seed), *map(str, names)]).encode()
    return int.from_bytes(hashlib.sha256(blob).digest()[:4], "little")


def dumps(obj: Any) -> str:
    """Canonical JSON for params (sorted keys: equal settings give equal strings)."""
    return json.dumps(obj, sort_keys=True, separators=(",", ":"))


# ---------------------------------------------------------------------------- data splits
def string_splits(config: Mapping) -> list[str]:
    """Every string-task split the config asks for."""
    splits = ["stage1", *eval_splits(config), *TRAIN_SPLIT_LEVELS]
    if config["model"]["source"] == "scratch":
        splits += pretrain_splits(config)
    splits += [f"level2_chunk{i}" for i in range(1, config["data"]["rft_chunks"] + 1)]
    return splits


def test_train_funcs_enabled(config: Mapping) -> bool:
    return config["data"]["test_train_funcs_per_level"] > 0


def test_full_trace_enabled(config: Mapping) -> bool:
    return config["data"]["test_full_trace_per_level"] > 0


def eval_splits(config: Mapping) -> list[str]:
    """The string-task splits no model learns from: the held-out test and validation sets, (if
    data.test_train_funcs_per_level > 0) the test set over the train functions and (if
    data.test_full_trace_per_level > 0) the full-trace test set."""
    return (["test", "val"] + ([TEST_TRAIN_FUNCS] if test_train_funcs_enabled(config) else [])
            + ([TEST_FULL_TRACE] if test_full_trace_enabled(config) else []))


def pretrain_splits(config: Mapping) -> list[str]:
    """The tiny base model's pretraining data: Level-1 traces of all 25 functions, plus (if
    data.pretrain_prior_problems > 0) the prior's nested traces, one of the 25 among builtin methods
    and helpers, and (if data.pretrain_step_problems > 0) first-step problems: compositions of the 25
    functions answered with their first reduction step only (a call computed inside a longer
    expression, never a composition evaluated)."""
    data = config["data"]
    return (["pretrain"] + (["pretrain_prior"] if data["pretrain_prior_problems"] else [])
            + (["pretrain_steps"] if data["pretrain_step_problems"] else []))


def string_split_spec(config: Mapping, split: str) -> dict:
    """Generator arguments of one split (the CLI of ``fgx.tasks.strings generate``)."""
    data, task = config["data"], config["task"]
    lo, hi = data["test_levels"]
    common = {"style": task["style"], "max_value_len": task["max_value_len"],
              "seed": derive_seed(config["seed"], "data", split)}
    if split == "pretrain":
        spec = dict(stage=1, split="train", min_level=1, max_level=1, num=data["pretrain_problems"], inputs="carried")
    elif split == "pretrain_prior":
        lo_p, hi_p = data["pretrain_prior_levels"]
        spec = dict(stage=1, split="train", min_level=lo_p, max_level=hi_p, num=data["pretrain_prior_problems"],
                    grammar="prior", level_shares=data["pretrain_prior_level_shares"])
    elif split == "pretrain_steps":
        lo_s, hi_s = data["pretrain_step_levels"]
        spec = dict(stage=1, split="train", min_level=lo_s, max_level=hi_s, num=data["pretrain_step_problems"],
                    first_step=True, first_step_unmarked=data["pretrain_step_unmarked"])
    elif split == "stage1":
        spec = dict(stage=1, split="train", min_level=1, max_level=1, num=data["stage1_problems"])
    elif split in TRAIN_SPLIT_LEVELS:
        a, b = TRAIN_SPLIT_LEVELS[split]
        spec = dict(stage=2, split="train", min_level=a, max_level=b, num=data["stage2_train_problems"])
    elif split == "test":
        spec = dict(stage=2, split="test", min_level=lo, max_level=hi,
                    num=data["test_per_level"] * (hi - lo + 1))
    elif split == "val":
        spec = dict(stage=2, split="test", min_level=lo, max_level=hi,
                    num=data["val_per_level"] * (hi - lo + 1))
    elif split == TEST_TRAIN_FUNCS and test_train_funcs_enabled(config):
        lo_t, hi_t = data["test_train_funcs_levels"]
        spec = dict(stage=2, split="train", min_level=lo_t, max_level=hi_t,
                    num=data["test_train_funcs_per_level"] * (hi_t - lo_t + 1))
    elif split == TEST_FULL_TRACE and test_full_trace_enabled(config):
        lo_f, hi_f = data["test_full_trace_levels"]
        spec = dict(stage=2, split="test", min_level=lo_f, max_level=hi_f,
                    num=data["test_full_trace_per_level"] * (hi_f - lo_f + 1), full_trace_only=True)
    elif (m := re.fullmatch(r"level2_chunk(\d+)", split)) and 1 <= int(m[1]) <= data["rft_chunks"]:
        # the iterative-RFT baseline trains on the same kind of Level-2 data as RL on Level 2
        spec = dict(stage=2, split="train", min_level=2, max_level=2, num=data["rft_chunk_problems"])
    else:
        raise ValueError(f"unknown string-task split {split!r}; known: {', '.join(string_splits(config))}")
    return {**spec, **common}


def generate_exclusions(config: Mapping, split: str) -> list[str]:
    """Files whose expressions a split must not contain: the test and validation sets leave out the
    pretraining prior's nested expressions and the first-step problems' compositions (drawn over all
    25 functions, they can hit an exact test expression, such as ``func_0((x + x))``, once values are
    short; the leakage check would then fail). The test set over the train functions also leaves out
    every Stage-2 training file (the hash partition keeps only function-free expressions apart; these
    share the train functions). The full-trace test set leaves out the main test set's expressions, so the
    two are independent samples. Only this direction: a test-set knob never reruns training."""
    if split not in eval_splits(config):
        return []
    out = []
    if config["model"]["source"] == "scratch":
        out += [data_path(config, s) for s in pretrain_splits(config) if s in ("pretrain_prior", "pretrain_steps")]
    if split == TEST_TRAIN_FUNCS:
        out += [data_path(config, s) for s in string_splits(config)
                if s in TRAIN_SPLIT_LEVELS or s.startswith("level2_chunk")]
    if split == TEST_FULL_TRACE:
        out.append(data_path(config, "test"))
    return out


def generate_args(config: Mapping, split: str) -> str:
    """``fgx.tasks.strings generate`` command-line arguments for one split (the excluded files'
    paths, which may come from the config, shell-quoted: the rule puts the arguments into its command)."""
    spec = string_split_spec(config, split)
    args = [f"--stage {spec['stage']}", f"--split {spec['split']}",
            f"--min-level {spec['min_level']}", f"--max-level {spec['max_level']}",
            f"--num {spec['num']}", f"--seed {spec['seed']}", f"--style {spec['style']}"]
    if spec["max_value_len"]:
        args.append(f"--max-value-len {spec['max_value_len']}")
    if split_partition(split) != "none":
        args.append(f"--partition {split_partition(split)}")
    if "grammar" in spec:
        args.append(f"--grammar {spec['grammar']}")
    if "inputs" in spec:
        args.append(f"--inputs {spec['inputs']}")
    if spec.get("full_trace_only"):
        args.append("--full-trace-only")
    if spec.get("first_step"):
        args.append("--first-step")
        args.append(f"--first-step-unmarked {spec['first_step_unmarked']}")
    # equal shares are the even split: the command (and so the split's file) stays that of no shares
    if spec.get("level_shares") and len(set(spec["level_shares"])) > 1:
        args.append("--level-shares " + " ".join(str(s) for s in spec["level_shares"]))
    if generate_exclusions(config, split):
        args.append("--exclude " + " ".join(map(shlex.quote, generate_exclusions(config, split))))
    return " ".join(args)


def split_partition(split: str) -> str:
    """Hash partition of a split (fgx.tasks.strings.generate.in_partition): test, val and the
    Stage-2 training splits never share an expression, and none of them reads another's file,
    so regenerating the test set does not invalidate training. Stage-1/pretraining data may
    share Level-1 expressions with the test set (atomic skills are taught on all 25 functions
    by design; the leakage check reports them as expected overlap)."""
    if split in ("test", "val"):
        return split
    if split in (TEST_TRAIN_FUNCS, TEST_FULL_TRACE):
        return "test"
    if split in TRAIN_SPLIT_LEVELS or split.startswith("level2_chunk"):
        return "train"
    return "none"


# ---------------------------------------------------------------------------- countdown data
def countdown_enabled(config: Mapping) -> bool:
    """Whether the Countdown transfer experiment (its figure and models) is a target."""
    return config["countdown"]["enabled"]


def countdown_test_splits(config: Mapping) -> list[str]:
    """countdown{n} for every evaluated number count (paper: 3, 4, 5)."""
    return [f"countdown{n}" for n in config["countdown"]["test_numbers"]]


def countdown_splits(config: Mapping) -> list[str]:
    """Every Countdown split: the 2-number training data, the 2-number held-out check, the tests."""
    check = f"countdown{COUNTDOWN_ATOMIC_CHECK}"
    return [COUNTDOWN_TRAIN, *dict.fromkeys([check, *countdown_test_splits(config)])]


def is_countdown_split(split: str) -> bool:
    return split == COUNTDOWN_TRAIN or bool(COUNTDOWN_TEST.match(split))


def countdown_split_spec(config: Mapping, split: str) -> dict:
    """Generator arguments of one Countdown split (the CLI of ``fgx.tasks.countdown generate``).

    Training data has 2 numbers only (one arithmetic step: the atomic skill); its problems and
    the 2-number check's come from disjoint hash partitions, so the check is held out. The
    3/4/5-number tests cannot share a problem with 2-number data. The style follows the string
    task's (compact: fgx's sampler with step-by-step reference solutions; paper: reasoning-gym
    problems with upstream's prompt)."""
    cd = config["countdown"]
    style = config["task"]["style"]
    seed = derive_seed(config["seed"], "countdown", split)
    if split == COUNTDOWN_TRAIN:
        return {"numbers": 2, "num": cd["train_problems"], "split": "train", "partition": "train",
                "style": style, "seed": seed, "max_value": cd["max_value"], "trace": cd["trace"]}
    m = COUNTDOWN_TEST.match(split)
    if m and split in countdown_splits(config):
        n = int(m[1])
        return {"numbers": n, "num": cd["test_problems"], "split": "test",
                "partition": "test" if n == 2 else "none", "style": style, "seed": seed,
                "max_value": cd["max_value"], "trace": "target"}  # a test set's trace is never trained on
    raise ValueError(f"unknown countdown split {split!r}; known: {', '.join(countdown_splits(config))}")


def countdown_generate_args(config: Mapping, split: str) -> str:
    """``fgx.tasks.countdown generate`` command-line arguments for one split."""
    s = countdown_split_spec(config, split)
    return (f"--numbers {s['numbers']} --num {s['num']} --seed {s['seed']} --split {s['split']} "
            f"--style {s['style']} --partition {s['partition']} --max-value {s['max_value']} --trace {s['trace']}")


# splits a user may point at an existing parquet file (e.g. upstream's released data) with data.external
EXTERNAL_SPLITS = ("stage1", "level1", "level2", "level1to2", "test", "val")


def many_samples_enabled(config: Mapping) -> bool:
    m = config["evaluate"]["many_samples"]
    return m["prompts_per_level"] > 0 and bool(m["models"])


def many_samples_settings(config: Mapping) -> str:
    """Which test prompts the large-k evaluation samples (rule select_prompts)."""
    m = config["evaluate"]["many_samples"]
    return dumps({"levels": m["levels"], "per_level": m["prompts_per_level"]})


def data_path(config: Mapping, split: str) -> str:
    """The problem file of a split (string task or Countdown), as rollout/evaluate read it: the file
    ``data.external`` names for it, or the one the DAG generates."""
    if is_countdown_split(split):
        return f"results/data/countdown/{split}.parquet"
    if split == TEST_MANY:
        return f"results/data/subsets/{TEST_MANY}.parquet"
    return config["data"]["external"].get(split) or f"results/data/strings/{split}.parquet"


def check_external_files(config: Mapping) -> None:
    """Check every file ``data.external`` names against the task contract before any job runs."""
    from fgx.tasks.contract import check_problem_file

    for split, path in config["data"]["external"].items():
        if path:
            check_problem_file(path, f"data.external.{split} problem set")


def training_splits(config: Mapping) -> list[str]:
    """Splits a model may learn from (the leakage check compares the test set against these)."""
    return [s for s in string_splits(config) if s not in eval_splits(config)]


# ---------------------------------------------------------------------------- models
def rft_iterations(config: Mapping) -> int:
    return config["data"]["rft_chunks"]


def model_dir(config: Mapping, name: str) -> str:
    """The directory holding model ``name`` (aliases resolved; external paths for path models)."""
    if name == "base" and config["model"]["source"] == "path":
        return config["model"]["path"]
    return f"results/models/{name}"


def sft_sources(config: Mapping, model: str) -> dict[str, str]:
    """Which model and which filtered-rollout file an SFT (RFT) model is trained from."""
    if model == "stage1":
        return {"init": model_dir(config, "base"), "data": "results/rft/base/stage1.parquet"}
    if model == MULTI_BASE:
        return {"init": model_dir(config, "base"), "data": f"results/rft/mix/{MULTI_BASE}.parquet"}
    m = RFT_ITER.match(model)
    if m and 1 <= int(m[1]) <= rft_iterations(config):
        i = int(m[1])
        prev = "stage1" if i == 1 else f"rft_level2_iter{i - 1}"
        return {"init": model_dir(config, prev), "data": f"results/rft/{prev}/level2_chunk{i}.parquet"}
    raise ValueError(f"no SFT recipe for model {model!r}")


def countdown_sft_source(config: Mapping) -> str:
    """Where the Multi-Base's Countdown 2-number SFT examples come from.

    compact style (the tiny default): the reference traces themselves (extra_info.solution).
    The tiny base has never seen Countdown (0 % on 2-number problems), so rejection sampling
    from it would keep nothing: its atomic skill must come from supervised data, as an LLM's
    comes from pretraining. Why an SFT of the shared string base rather than a second base
    pretrained on strings + Countdown (README "Countdown transfer", measured on 2 CPU cores):
    the SFT (8000 problems, 2 epochs) reaches ~41 % on held-out 2-number problems in ~90 s,
    while a second pretraining would cost as much again as the DAG's most expensive job.
    paper style (an LLM that can already do arithmetic): the paper's recipe, correct rollouts
    of the base on 2-number problems (RFT data), filtered like Stage 1's string rollouts."""
    if config["task"]["style"] == "compact":
        return data_path(config, COUNTDOWN_TRAIN)
    return f"results/rft/base/{COUNTDOWN_TRAIN}.parquet"


def sft_mix_sources(config: Mapping, model: str) -> list[str]:
    """The files whose rows are merged into one SFT data set (rule mix_sft_data).

    Multi-Base (paper Section 4.3): Stage-1's string Level-1 RFT data (the very file the
    String-Base's Stage 1 trains on) merged with Countdown 2-number data."""
    if model == MULTI_BASE:
        return ["results/rft/base/stage1.parquet", countdown_sft_source(config)]
    raise ValueError(f"no merged SFT data for model {model!r}; known: {MULTI_BASE}")


def sft_mix_settings(config: Mapping, model: str) -> str:
    """How the merge weights its sources: ``repeats`` per source (aligned with sft_mix_sources:
    countdown.string_repeats for the string RFT data, countdown.train_repeats for Countdown), so
    the string data are not swamped by the Countdown data (the tiny model forgets strings)."""
    if model != MULTI_BASE:
        raise ValueError(f"no merged SFT data for model {model!r}; known: {MULTI_BASE}")
    cd = config["countdown"]
    return dumps({"repeats": [cd["string_repeats"], cd["train_repeats"]]})


def rl_model(run: str, lineage: str = "string") -> str:
    """The RL model name of a lineage and train split: rl_level1 (string), rl_multi_level1 (multi)."""
    if lineage not in RL_LINEAGES or run not in RL_RUNS:
        raise ValueError(f"no RL model for lineage {lineage!r}, run {run!r}; lineages: "
                         f"{', '.join(RL_LINEAGES)}; runs: {', '.join(RL_RUNS)}")
    return f"rl_{RL_LINEAGES[lineage]}{run}"


def rl_sources(config: Mapping, model: str) -> dict[str, str]:
    """Init model, train split and held-out split of an RL model. Both lineages run the same
    string-task RL (same data and settings); only the starting checkpoint differs."""
    m = RL_MODEL.match(model)
    if not m:
        raise ValueError(f"{model!r} is not an RL model (rl_<run> or rl_multi_<run>)")
    init = MULTI_BASE if m[1] else "stage1"
    return {"init": model_dir(config, init), "train": data_path(config, m[2]), "val": data_path(config, "val")}


def rl_dir(model: str) -> str:
    """results/rl/<dir>/ of an RL model (metrics, resumable work directory): rl_level1 -> level1,
    rl_multi_level1 -> multi_level1."""
    if not RL_MODEL.match(model):
        raise ValueError(f"{model!r} is not an RL model (rl_<run> or rl_multi_<run>)")
    return f"results/rl/{model.removeprefix('rl_')}"


# ---------------------------------------------------------------------------- settings
def _runtime(config: Mapping) -> dict:
    # threads are not here: the rules pass Snakemake's {threads} (--threads), so a machine's thread
    # count is not a rerun trigger
    # the verl machine knobs reach (and rerun) only verl jobs
    verl = config["engine"] == "verl"
    return {"engine": config["engine"], "device": config["device"], "verl": config["verl"] if verl else {},
            "tensor_parallel_size": config["model"]["tensor_parallel_size"] if verl else 1}


def pretrain_settings(config: Mapping) -> str:
    base = config["base"]
    return dumps({**_runtime(config), "model": base["model"], "train": base["train"],
                  "seed": derive_seed(config["seed"], "pretrain")})


def sampling_settings(config: Mapping, purpose: str, model: str, split: str) -> str:
    """Sampling settings: ``purpose`` is 'rollout' (training data) or 'eval'."""
    if purpose == "eval":
        # Countdown tests: countdown.evaluate (Avg@32 at T=1.0); string tests: evaluate
        s = config["countdown"]["evaluate"] if is_countdown_split(split) else config["evaluate"]
        if split == TEST_MANY:
            s = {**config["evaluate"], "n": config["evaluate"]["many_samples"]["n"]}
    elif split in ("stage1", COUNTDOWN_TRAIN):  # Multi-Base's Countdown RFT data: Stage 1's sampling
        s = config["stage1"]["rollout"]
    elif split.startswith("level2_chunk"):
        s = config["rft_baseline"]["rollout"]
    else:
        raise ValueError(f"no rollout settings for split {split!r}")
    sampling = {k: s[k] for k in ("n", "temperature", "max_new_tokens")}
    return dumps({**_runtime(config), **sampling, "seed": derive_seed(config["seed"], purpose, model, split)})


def filter_settings(config: Mapping, split: str) -> str:
    stage1 = split in ("stage1", COUNTDOWN_TRAIN)
    return dumps(config["stage1"]["filter"] if stage1 else config["rft_baseline"]["filter"])


def sft_settings(config: Mapping, model: str) -> str:
    if model == MULTI_BASE:
        sft = config["countdown"]["sft"]
    else:
        sft = config["stage1"]["sft"] if model == "stage1" else config["rft_baseline"]["sft"]
    return dumps({**_runtime(config), **sft, "seed": derive_seed(config["seed"], "sft", model)})


def rl_settings(config: Mapping, run: str, lineage: str = "string") -> str:
    """Settings of RL run ``run`` (``rl:``, the run's own seed). The Countdown lineage (``multi``)
    runs the same string-task RL for ``countdown.rl_steps`` steps."""
    rl = {k: v for k, v in config["rl"].items() if k != "runs"}
    if lineage == "multi":
        rl["steps"] = config["countdown"]["rl_steps"]
    return dumps({**_runtime(config), **rl, "seed": derive_seed(config["seed"], "rl", run)})


def passk_grid(n: int) -> list[int]:
    """Every power of two up to n, and n: what metrics compute, whatever a figure shows."""
    ks = [1 << i for i in range(n.bit_length()) if (1 << i) <= n]
    return sorted({*ks, n})


def metrics_settings(config: Mapping, split: str = "test") -> str:
    e = config["evaluate"]
    n = e["many_samples"]["n"] if split == TEST_MANY else e["n"]
    return dumps({"ks": passk_grid(n), "bootstrap": e["bootstrap"], "ci": e["ci"],
                  "seed": derive_seed(config["seed"], "metrics")})


# which `figures:` keys each figure reads (so a plot knob reruns only its own figure)
FIGURE_KEYS = {"passk_level_curve": ("passk_ks", "passk_levels"), "rl_level_accuracy": (), "rft_vs_rl": (),
               "failure_modes": ("failure_level",), "training_dynamics": (),
               "countdown_transfer": (), "model_contrasts": (), "function_transfer": ()}


def figure_settings(config: Mapping, figure: str) -> str:
    keys = FIGURE_KEYS[figure]
    extra = {}
    if figure in ("countdown_transfer", "model_contrasts", "function_transfer"):  # bootstrap CIs over prompts
        e = config["evaluate"]
        extra = {"bootstrap": e["bootstrap"], "ci": e["ci"],
                 "bootstrap_seed": derive_seed(config["seed"], "figure", figure) % (2 ** 31)}
    if figure in ("model_contrasts", "function_transfer"):
        extra["pairs"] = contrast_pairs(config)
    if figure == "model_contrasts":  # the shortcut check evaluates wrong traces under the task's value cap
        extra["max_value_len"] = config["task"]["max_value_len"]
    return dumps({"figure": figure, **{k: config["figures"][k] for k in keys if k in config["figures"]}, **extra})


# ---------------------------------------------------------------------------- targets
def rft_eval_models(config: Mapping) -> list[str]:
    return [f"rft_level2_iter{i}" for i in range(1, rft_iterations(config) + 1)]


def passk_models(config: Mapping) -> list[str]:
    """Fig. 5's models (figures.passk_models), less the RL runs the config does not train."""
    return [m for m in config["figures"]["passk_models"]
            if not m.startswith("rl_") or m.removeprefix("rl_") in config["rl"]["runs"]]


def rft_vs_rl_models(config: Mapping) -> list[str]:
    """Fig. 3: the Stage-1 base, every iterative-RFT iteration, and RL on Level 2."""
    return ["stage1", *rft_eval_models(config), *(["rl_level2"] if "level2" in config["rl"]["runs"] else [])]


def failure_mode_models(config: Mapping) -> list[str]:
    """Fig. 6: the Stage-1 base, the last iterative-RFT model, RL Level 1 and RL Level 2."""
    wanted = ["stage1", f"rft_level2_iter{rft_iterations(config)}", "rl_level1", "rl_level2"]
    return [m for m in wanted if not m.startswith("rl_") or m.removeprefix("rl_") in config["rl"]["runs"]]


def contrast_pairs(config: Mapping) -> list[list[str]]:
    """The paper's claims as (A, B) pairs whose paired difference the contrast figure shows, for the
    runs the config has: RL Level 2 and Level 1+2 against RL Level 1 (Fig. 2), RL Level 1 against the
    Stage-1 base, RL Level 2 against the last iterative-RFT model (Fig. 3)."""
    runs = config["rl"]["runs"]
    pairs = [[f"rl_{run}", "rl_level1"] for run in ("level2", "level1to2") if run in runs and "level1" in runs]
    if "level1" in runs:
        pairs.append(["rl_level1", "stage1"])
    if "level2" in runs and rft_iterations(config):
        pairs.append(["rl_level2", f"rft_level2_iter{rft_iterations(config)}"])
    return pairs


def countdown_models(config: Mapping) -> list[str]:
    """Paper Table 1's models, in its order: Multi-Base, Multi-Base + string RL (countdown.rl_runs),
    String-Base + RL L1+2. None of them ever gets Countdown RL."""
    return [MULTI_BASE, *(rl_model(run, "multi") for run in config["countdown"]["rl_runs"]),
            rl_model(STRING_BASE_RUN)]


def countdown_atomic_check(config: Mapping) -> str:
    """The Multi-Base on held-out 2-number problems (its atomic skill), a row of the Countdown figure."""
    return f"results/eval/{MULTI_BASE}/countdown{COUNTDOWN_ATOMIC_CHECK}.parquet"


def figure_inputs(config: Mapping, figure: str) -> list[str]:
    """The artifacts each figure reads."""
    runs = config["rl"]["runs"]
    if figure == "passk_level_curve":
        many = [f"results/metrics/{m}/{TEST_MANY}.parquet" for m in config["evaluate"]["many_samples"]["models"]
                if m in passk_models(config)] if many_samples_enabled(config) else []
        return [f"results/metrics/{m}/test.parquet" for m in passk_models(config)] + many
    if figure == "rft_vs_rl":
        return [f"results/metrics/{m}/test.parquet" for m in rft_vs_rl_models(config)]
    if figure in ("rl_level_accuracy", "training_dynamics"):
        return [f"{rl_dir(rl_model(run))}/metrics.parquet" for run in runs]
    if figure == "failure_modes":
        return [f"results/eval/{m}/test.parquet" for m in failure_mode_models(config)]
    if figure in ("model_contrasts", "function_transfer"):
        models = dict.fromkeys(m for pair in contrast_pairs(config) for m in pair)
        if figure == "function_transfer":
            return [f"results/eval/{m}/{split}.parquet" for split in ("test", TEST_TRAIN_FUNCS) for m in models]
        # each model's own pass@1 interval (the findings' pass@1 of models Fig. 5 does not draw) from its metrics
        splits = ["test", *([TEST_FULL_TRACE] if test_full_trace_enabled(config) else [])]
        return ([f"results/eval/{m}/{split}.parquet" for split in splits for m in models]
                + [f"results/metrics/{m}/test.parquet" for m in models])
    if figure == "countdown_transfer":
        return [f"results/eval/{m}/{split}.parquet" for m in countdown_models(config)
                for split in countdown_test_splits(config)] + [countdown_atomic_check(config)]
    raise ValueError(f"unknown figure {figure!r}; known: {', '.join(FIGURES)}")


def browser_settings(config: Mapping) -> str:
    return dumps({"per_cell": 3, "seed": derive_seed(config["seed"], "browser")})


def planned_figures(config: Mapping) -> list[str]:
    """The names of every figure the config asks for (countdown_transfer only with countdown.enabled,
    model_contrasts only where the RL runs make a pair to compare, function_transfer only with a test set
    over the train functions too)."""
    return [name for name in FIGURES
            if (name != "countdown_transfer" or countdown_enabled(config))
            and (name not in ("model_contrasts", "function_transfer") or contrast_pairs(config))
            and (name != "function_transfer" or test_train_funcs_enabled(config))]


def figure_targets(config: Mapping) -> list[str]:
    return [f"figures/{name}.pdf" for name in planned_figures(config)]


def findings_inputs(config: Mapping) -> list[str]:
    """The CSVs of the figures the findings read, among those the config asks for."""
    return [f"figures/{name}.csv" for name in planned_figures(config) if name in FINDINGS_TABLES]
