"""The wiring decisions (fgx.plan, the string task's problem sets) and the DAG's shape, checked without
running jobs."""

import json
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from dagtools import planned_jobs
from fgx import seeds
from fgx.dag import targets
from fgx.plan import comparisons, figures, models, params, splits
from fgx.tasks.strings.splits import split_spec

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture
def config():
    return yaml.safe_load((ROOT / "config.yaml").read_text())


def test_seeds_are_stable_and_distinct():
    assert seeds.derive_seed(0, "data", "test") == seeds.derive_seed(0, "data", "test")
    assert seeds.derive_seed(0, "data", "test") != seeds.derive_seed(0, "data", "val")
    assert seeds.derive_seed(0, "data", "test") != seeds.derive_seed(1, "data", "test")


def test_split_specs_follow_the_paper(config):
    s1 = split_spec(config, "stage1")
    assert (s1["stage"], s1["split"], s1["min_level"], s1["max_level"]) == (1, "train", 1, 1)
    l12 = split_spec(config, "level1to2")
    assert (l12["stage"], l12["split"], l12["min_level"], l12["max_level"]) == (2, "train", 1, 2)
    test = split_spec(config, "test")
    lo, hi = config["data"]["test_levels"]
    assert (test["split"], test["min_level"], test["max_level"]) == ("test", lo, hi)
    assert test["num"] == config["data"]["test_per_level"] * (hi - lo + 1)
    val = split_spec(config, "val")
    assert (val["min_level"], val["max_level"]) == (lo, hi)
    assert splits.generate_seed(config, "val") != splits.generate_seed(config, "test")
    assert splits.generate_seed(config, "test") == seeds.derive_seed(config["seed"], "data", "test")
    # the validation set: its own count per level (more where a level's prompts spread the most)
    counts = config["data"]["val_per_level"]
    assert val["num"] == sum(counts) and len(counts) == hi - lo + 1
    assert "--level-shares " + " ".join(map(str, counts)) in splits.generate_args(config, "val")
    even = {**config, "data": {**config["data"], "val_per_level": [16] * len(counts)}}
    assert "--level-shares" not in splits.generate_args(even, "val")  # the even split: the former command
    with pytest.raises(ValueError, match="unknown string-task split"):
        split_spec(config, "level9")
    with pytest.raises(ValueError, match="unknown split 'level9'"):
        splits.generate_args(config, "level9")


def test_pretraining_sets_use_the_prior_grammar_carried_inputs_and_first_steps(config):
    args = {s: splits.generate_args(config, s) for s in splits.family_splits(config, "strings")}
    assert " --inputs carried" in args["pretrain"] and "--grammar" not in args["pretrain"]
    assert " --grammar prior" in args["pretrain_prior"]
    assert args["pretrain_steps"].endswith("--first-step --first-step-unmarked 0.1")
    others = [a for s, a in args.items() if not s.startswith("pretrain")]
    assert not any(flag in a for a in others for flag in ("--inputs", "--grammar", "--first-step"))
    assert all("--style compact" in a for a in args.values())


def test_prior_depth_reaches_only_the_prior(config):
    """data.pretrain_prior_levels changes the prior's problem set alone."""
    before = {s: splits.generate_args(config, s) for s in splits.family_splits(config, "strings")}
    config["data"]["pretrain_prior_levels"] = [2, 4]
    after = {s: splits.generate_args(config, s) for s in splits.family_splits(config, "strings")}
    assert sorted(s for s in before if before[s] != after[s]) == ["pretrain_prior"]
    assert "--min-level 2 --max-level 4" in after["pretrain_prior"]


def test_prior_level_shares_reach_only_the_prior_and_equal_shares_are_the_even_split(config):
    before = {s: splits.generate_args(config, s) for s in splits.family_splits(config, "strings")}
    config["data"].update(pretrain_prior_levels=[2, 5], pretrain_prior_level_shares=[1, 1, 1, 1])
    even = {s: splits.generate_args(config, s) for s in splits.family_splits(config, "strings")}
    assert "--level-shares" not in even["pretrain_prior"]
    config["data"]["pretrain_prior_level_shares"] = [3, 3, 1, 1]
    after = {s: splits.generate_args(config, s) for s in splits.family_splits(config, "strings")}
    assert sorted(s for s in before if before[s] != after[s]) == ["pretrain_prior"]
    assert after["pretrain_prior"] == even["pretrain_prior"] + " --level-shares 3 3 1 1"


def test_test_and_val_sets_leave_out_the_pretraining_prior(config):
    """Exact prior expressions never reach the held-out sets (the leakage check's rule); the
    dependency runs one way only, so a test-set knob never reruns pretraining."""
    config["data"]["pretrain_step_problems"] = 0  # the prior alone; first-step problems: the next test
    prior = "results/data/strings/pretrain_prior.parquet"
    assert splits.generate_exclusions(config, "test") == splits.generate_exclusions(config, "val") == [prior]
    assert splits.generate_args(config, "test").endswith(f"--exclude {prior}")
    assert not any(splits.generate_exclusions(config, s) for s in splits.training_splits(config))
    no_prior = {**config, "data": {**config["data"], "pretrain_prior_problems": 0}}
    assert splits.generate_exclusions(no_prior, "test") == []
    llm = {**config, "model": {"source": "path", "path": "/models/llama", "tensor_parallel_size": 1}}
    assert splits.generate_exclusions(llm, "test") == []


def test_first_step_problems_are_a_pretraining_split_the_held_out_sets_leave_out(config):
    """data.pretrain_step_problems > 0 adds the pretrain_steps split (levels from pretrain_step_levels);
    it changes no other split's arguments but the test/val exclusions."""
    config["data"]["pretrain_step_problems"] = 0
    before = {s: splits.generate_args(config, s) for s in splits.family_splits(config, "strings")}
    assert "pretrain_steps" not in before and not any("--first-step" in a for a in before.values())
    config["data"]["pretrain_step_problems"] = 300
    after = {s: splits.generate_args(config, s) for s in splits.family_splits(config, "strings")}
    assert splits.pretrain_splits(config)[-1] == "pretrain_steps" and "pretrain_steps" in splits.training_splits(config)
    assert " --min-level 2 --max-level 6 --num 300 " in after["pretrain_steps"]
    assert after["pretrain_steps"].startswith("--stage 1 ")
    assert after["pretrain_steps"].endswith("--first-step --first-step-unmarked 0.1")
    assert sorted(s for s in before if before[s] != after[s]) == ["test", "test_full_trace", "test_train_funcs", "val"]
    steps = "results/data/strings/pretrain_steps.parquet"
    assert splits.generate_exclusions(config, "test") == ["results/data/strings/pretrain_prior.parquet", steps]
    config["data"]["pretrain_step_levels"] = [3, 4]
    assert " --min-level 3 --max-level 4 " in splits.generate_args(config, "pretrain_steps")
    config["data"]["pretrain_step_unmarked"] = 0.25  # only the first-step problems' own command changes
    assert splits.generate_args(config, "pretrain_steps").endswith("--first-step --first-step-unmarked 0.25")
    assert all(splits.generate_args(config, s) == after[s] for s in after if s != "pretrain_steps")
    llm = {**config, "model": {"source": "path", "path": "/models/llama", "tensor_parallel_size": 1}}
    assert "pretrain_steps" not in splits.family_splits(llm, "strings")
    assert splits.generate_exclusions(llm, "test") == []


def test_test_set_over_the_train_functions(config):
    """data.test_train_funcs_per_level adds a Stage-2 set over the train functions, in the test partition,
    that leaves out every Stage-2 training file; no model learns from it, the leakage check reads it, and
    the function_transfer figure compares the contrast pairs on it and on the held-out test set."""
    spec = split_spec(config, "test_train_funcs")
    lo, hi = config["data"]["test_train_funcs_levels"]
    assert (spec["stage"], spec["split"], spec["min_level"], spec["max_level"]) == (2, "train", lo, hi)
    assert spec["num"] == config["data"]["test_train_funcs_per_level"] * (hi - lo + 1)
    args = splits.generate_args(config, "test_train_funcs")
    assert "--partition test " in args and "--split train " in args
    excluded = splits.generate_exclusions(config, "test_train_funcs")
    assert excluded[:2] == splits.generate_exclusions(config, "test")
    assert excluded[2:] == [f"results/data/strings/{s}.parquet"
                            for s in ("level1", "level2", "level1to2", "level2_chunk1", "level2_chunk2")]
    assert "test_train_funcs" in splits.eval_splits(config) and "test_train_funcs" not in splits.training_splits(config)
    assert "function_transfer" in targets.planned_figures(config)
    models = ["rl_level2", "rl_level1", "rl_level1to2", "stage1", "rft_level2_iter2"]
    assert targets.figure_inputs(config, "function_transfer") == [
        f"results/eval/{m}/{s}.parquet" for s in ("test", "test_train_funcs") for m in models]
    pairs = json.loads(targets.figure_settings(config, "function_transfer"))["pairs"]
    assert pairs == comparisons.contrast_pairs(config)
    # a test-set knob: the other splits' arguments stay as they are
    before = {s: splits.generate_args(config, s) for s in splits.family_splits(config, "strings")}
    config["data"]["test_train_funcs_levels"] = [2, 3]
    after = {s: splits.generate_args(config, s) for s in splits.family_splits(config, "strings")}
    assert sorted(s for s in before if before[s] != after[s]) == ["test_train_funcs"]
    config["data"]["test_train_funcs_per_level"] = 0
    assert "test_train_funcs" not in splits.family_splits(config, "strings")
    assert splits.eval_splits(config) == ["test", "val", "test_full_trace"]
    assert "function_transfer" not in targets.planned_figures(config)
    with pytest.raises(ValueError, match="unknown string-task split"):
        split_spec(config, "test_train_funcs")


def test_full_trace_test_set(config):
    """data.test_full_trace_per_level adds a held-out set (test partition, eval functions) of prompts only a
    full trace solves, none of them in the test set; every model of a contrast pair is evaluated on it for
    the model_contrasts figure, and no other split or figure changes with its knobs."""
    spec = split_spec(config, "test_full_trace")
    lo, hi = config["data"]["test_full_trace_levels"]
    assert (spec["stage"], spec["split"], spec["min_level"], spec["max_level"]) == (2, "test", lo, hi)
    assert spec["num"] == config["data"]["test_full_trace_per_level"] * (hi - lo + 1)
    args = splits.generate_args(config, "test_full_trace")
    assert "--partition test " in args and "--full-trace-only" in args
    excluded = splits.generate_exclusions(config, "test_full_trace")
    assert excluded == splits.generate_exclusions(config, "test") + ["results/data/strings/test.parquet"]
    assert "test_full_trace" in splits.eval_splits(config) and "test_full_trace" not in splits.training_splits(config)
    models = ["rl_level2", "rl_level1", "rl_level1to2", "stage1", "rft_level2_iter2"]
    own = [f"results/metrics/{m}/test.parquet" for m in models]  # each model's own pass@1 interval
    assert targets.figure_inputs(config, "model_contrasts") == [
        f"results/eval/{m}/{s}.parquet" for s in ("test", "test_full_trace") for m in models] + own
    assert all("test_full_trace" not in p for f in figures.figure_names() if f != "model_contrasts"
               for p in targets.figure_inputs(config, f))
    before = {s: splits.generate_args(config, s) for s in splits.family_splits(config, "strings")}
    config["data"]["test_full_trace_levels"] = [4, 5]
    after = {s: splits.generate_args(config, s) for s in splits.family_splits(config, "strings")}
    assert sorted(s for s in before if before[s] != after[s]) == ["test_full_trace"]
    config["data"]["test_full_trace_per_level"] = 0
    assert "test_full_trace" not in splits.family_splits(config, "strings")
    assert targets.figure_inputs(config, "model_contrasts") == [f"results/eval/{m}/test.parquet" for m in models] + own
    with pytest.raises(ValueError, match="unknown string-task split"):
        split_spec(config, "test_full_trace")


def test_model_lineage(config):
    assert models.sft_sources(config, "stage1") == {"init": "results/models/base",
                                                "data": "results/rft/base/stage1.parquet"}
    assert models.sft_sources(config, "rft_level2_iter1")["init"] == "results/models/stage1"
    assert models.sft_sources(config, "rft_level2_iter2") == {
        "init": "results/models/rft_level2_iter1",
        "data": "results/rft/rft_level2_iter1/level2_chunk2.parquet"}
    path_cfg = {**config, "model": {"source": "path", "path": "/models/llama", "tensor_parallel_size": 1}}
    assert models.sft_sources(path_cfg, "stage1")["init"] == "/models/llama"


def test_settings_are_canonical_and_local(config):
    before = params.rl_settings(config, "level2")
    config["figures"]["passk_ks"] = [1, 2]
    config["stage1"]["sft"]["lr"] = 1e-5
    assert params.rl_settings(config, "level2") == before      # RL does not read plot or SFT settings
    config["rl"]["lr"] = 1e-6
    assert params.rl_settings(config, "level2") != before
    assert json.loads(before)["engine"] == config["engine"]


def dry_run_jobs(*args):
    # --forceall: the whole DAG, whatever a run of the main job in this checkout has built already
    return planned_jobs(ROOT, "--forceall", *args)


def test_dry_run_builds_every_figure():
    jobs = dry_run_jobs()
    for rule in ["generate_strings", "check_leakage", "pretrain_base", "rollout", "filter_rollouts",
                 "rft_sft", "rl", "evaluate", "metrics", "figure", "sample_browser", "findings"]:
        assert jobs.get(rule, 0) >= 1, (rule, jobs)
    assert jobs["rl"] == 3 and jobs["figure"] == 8 and jobs["rl_multi"] == 2 and jobs["findings"] == 1


@pytest.mark.parametrize("overlay", sorted(p.name for p in (ROOT / "experiments").glob("*.yaml")))
def test_dry_run_with_an_experiment_overlay(overlay):
    jobs = dry_run_jobs("--configfile", f"experiments/{overlay}")
    assert jobs.get("rl") == 3 and jobs.get("figure", 0) >= 7


def test_findings_read_the_tables_of_the_figures_planned(config):
    # the study's tables, then those of the task families' findings (Countdown's)
    assert targets.findings_inputs(config) == [f"figures/{n}.csv" for n in
                                          ("passk_level_curve", "rl_level_accuracy", "rft_vs_rl", "model_contrasts",
                                           "function_transfer", "countdown_transfer")]
    config["countdown"]["enabled"] = False
    assert "figures/countdown_transfer.csv" not in targets.findings_inputs(config)
    config["data"]["test_train_funcs_per_level"] = 0
    assert "figures/function_transfer.csv" not in targets.findings_inputs(config)
    assert set(figures.findings_tables()) <= set(figures.figure_names())


def test_contrast_pairs_follow_the_runs(config):
    assert comparisons.contrast_pairs(config) == [["rl_level2", "rl_level1"], ["rl_level1to2", "rl_level1"],
                                         ["rl_level1", "stage1"], ["rl_level2", "rft_level2_iter2"]]
    models = ("rl_level2", "rl_level1", "rl_level1to2", "stage1", "rft_level2_iter2")
    assert targets.figure_inputs(config, "model_contrasts") == [
        f"results/eval/{m}/{s}.parquet" for s in ("test", "test_full_trace") for m in models] + [
        f"results/metrics/{m}/test.parquet" for m in models]
    assert json.loads(targets.figure_settings(config, "model_contrasts"))["pairs"] == comparisons.contrast_pairs(config)
    config["rl"]["runs"] = ["level2"]
    config["data"]["rft_chunks"] = 1
    assert comparisons.contrast_pairs(config) == [["rl_level2", "rft_level2_iter1"]]
    config["rl"]["runs"] = ["level1to2"]
    assert comparisons.contrast_pairs(config) == []
    assert "figures/model_contrasts.pdf" not in targets.figure_targets(config)  # nothing to compare


def test_lint_is_clean():
    proc = subprocess.run([sys.executable, "-m", "snakemake", "--lint"], cwd=ROOT,
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-2000:]


def test_the_passk_figure_draws_its_configured_models_of_the_runs_trained(config):
    """figures.passk_models sets which models the main job (the pass@k figure) evaluates, and so trains."""
    assert config["figures"]["passk_models"] == ["stage1", "rl_level1to2"]
    tests = [p for p in targets.figure_inputs(config, "passk_level_curve") if p.endswith("/test.parquet")]
    assert tests == ["results/metrics/stage1/test.parquet", "results/metrics/rl_level1to2/test.parquet"]
    config["figures"]["passk_models"] = ["stage1", "rl_level1", "rl_level2", "rl_level1to2"]
    assert comparisons.passk_models(config) == ["stage1", "rl_level1", "rl_level2", "rl_level1to2"]
    config["rl"]["runs"] = ["level1", "level2"]  # a model whose RL run the config leaves out is not drawn
    assert comparisons.passk_models(config) == ["stage1", "rl_level1", "rl_level2"]
    many = [p for p in targets.figure_inputs(config, "passk_level_curve") if "test_many" in p]
    assert many == ["results/metrics/stage1/test_many.parquet"]  # of the many-samples pair, the one drawn


def test_many_samples_reach_only_the_passk_figure_of_their_pair(config):
    inputs = targets.figure_inputs(config, "passk_level_curve")
    assert inputs[-2:] == [f"results/metrics/{m}/test_many.parquet" for m in ("stage1", "rl_level1to2")]
    s = json.loads(params.sampling_settings(config, "eval", "stage1", "test_many"))
    assert s["n"] == config["evaluate"]["many_samples"]["n"]
    assert s["max_new_tokens"] == config["evaluate"]["max_new_tokens"]
    assert json.loads(params.metrics_settings(config, "test_many"))["ks"][-1] == config["evaluate"]["many_samples"]["n"]
    assert json.loads(params.metrics_settings(config, "test"))["ks"][-1] == config["evaluate"]["n"]
    before = {s: params.sampling_settings(config, "eval", "stage1", s) for s in ("test", "test_train_funcs")}
    config["evaluate"]["many_samples"]["n"] = 64
    assert {s: params.sampling_settings(config, "eval", "stage1", s) for s in before} == before
    config["evaluate"]["many_samples"]["prompts_per_level"] = 0
    assert not any("test_many" in p for p in targets.figure_inputs(config, "passk_level_curve"))


def test_first_per_level_keeps_the_first_prompts_of_each_level():
    import pandas as pd

    from fgx.tasks.contract import first_per_level

    rows = pd.DataFrame({"extra_info": [{"depth": d} for d in (1, 2, 1, 2, 3, 1)], "i": range(6)})
    assert first_per_level(rows, [1, 2], 2)["i"].tolist() == [0, 2, 1, 3]
    with pytest.raises(ValueError, match="fewer than 2 prompts at some level"):
        first_per_level(rows, [3], 2)
