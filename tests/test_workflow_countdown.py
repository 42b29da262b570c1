"""The Countdown transfer lineage (paper Section 4.3): the countdown task family's record read through
fgx.plan, the merged SFT data, and the jobs a dry run plans for figures/countdown_transfer.pdf."""

import copy
import json
from pathlib import Path

import pytest
import yaml

from dagtools import planned_jobs
from fgx import seeds
from fgx.dag import targets
from fgx.figures.countdown_transfer import countdown_models
from fgx.plan import models, params, splits
from fgx.algos.rft import mix_sft_data, sft_rows
from fgx.config import ConfigError, validate_config
from fgx.tasks import countdown as C
from fgx.tasks.countdown import splits as CS

ROOT = Path(__file__).resolve().parents[1]
MODELS = ["stage1_multi", "rl_multi_level1", "rl_multi_level1to2", "rl_level1to2"]


@pytest.fixture
def config():
    return yaml.safe_load((ROOT / "config.yaml").read_text())


def test_splits_and_generator_arguments(config):
    assert splits.family_splits(config, "countdown") == ["countdown_train", "countdown2", "countdown3",
                                                         "countdown4", "countdown5"]
    train = CS.split_spec(config, "countdown_train")
    assert (train["numbers"], train["partition"], train["split"]) == (2, "train", "train")
    assert train["num"] == config["countdown"]["train_problems"]
    check = CS.split_spec(config, "countdown2")       # held out from the training problems
    assert (check["numbers"], check["partition"]) == (2, "test")
    test4 = CS.split_spec(config, "countdown4")
    assert (test4["numbers"], test4["num"], test4["partition"]) == (4, config["countdown"]["test_problems"], "none")
    assert len({splits.generate_seed(config, s) for s in CS.split_names(config)}) == 5
    assert train["style"] == config["task"]["style"]
    seed3 = seeds.derive_seed(config["seed"], "countdown", "countdown3")
    assert splits.generate_args(config, "countdown3") == (
        f"--numbers 3 --num {config['countdown']['test_problems']} --seed {seed3} "
        "--split test --style compact --partition none --max-value 100 --trace target")
    # the trace is the training data's only: a test set never changes with it
    traced = copy.deepcopy(config)
    traced["countdown"]["trace"] = "search"
    assert splits.generate_args(traced, "countdown_train").endswith("--trace search")
    assert all(splits.generate_args(traced, s) == splits.generate_args(config, s)
               for s in CS.split_names(config) if s != "countdown_train")
    smaller = copy.deepcopy(config)
    smaller["countdown"]["max_value"] = 20
    assert all("--max-value 20" in splits.generate_args(smaller, s) for s in CS.split_names(config))
    for bad in ("countdown7", "countdown", "train"):
        with pytest.raises(ValueError, match="unknown countdown split"):
            CS.split_spec(config, bad)
        with pytest.raises(ValueError, match=f"unknown split '{bad}'"):
            splits.generate_args(config, bad)


def test_data_paths(config):
    assert splits.data_path(config, "countdown3") == "results/data/countdown/countdown3.parquet"
    assert splits.data_path(config, "countdown_train") == "results/data/countdown/countdown_train.parquet"
    assert splits.data_path(config, "test") == "results/data/strings/test.parquet"
    assert splits.data_path(config, "level1to2") == "results/data/strings/level1to2.parquet"


def test_multi_base_lineage(config):
    assert models.sft_sources(config, "stage1_multi") == {"init": "results/models/base",
                                                      "data": "results/rft/mix/stage1_multi.parquet"}
    # the tiny model has no Countdown skill to sample from: reference traces; an LLM: RFT data
    assert models.sft_mix_sources(config, "stage1_multi") == [
        "results/rft/base/stage1.parquet", "results/data/countdown/countdown_train.parquet"]
    paper = {**config, "task": {**config["task"], "style": "paper"}}
    assert models.sft_mix_sources(paper, "stage1_multi")[1] == "results/rft/base/countdown_train.parquet"
    assert json.loads(params.sft_mix_settings(config, "stage1_multi"))["repeats"] == [
        config["countdown"]["string_repeats"], config["countdown"]["train_repeats"]]
    path_cfg = {**config, "model": {"source": "path", "path": "/models/llama"}}
    assert models.sft_sources(path_cfg, "stage1_multi")["init"] == "/models/llama"
    with pytest.raises(ValueError, match="no merged SFT data"):
        models.sft_mix_sources(config, "stage1")


def test_rl_lineages(config):
    assert models.rl_model("level1") == "rl_level1"
    assert models.rl_model("level1to2", "multi") == "rl_multi_level1to2"
    with pytest.raises(ValueError, match="no RL model"):
        models.rl_model("level3", "multi")
    assert models.rl_sources(config, "rl_level2") == {"init": "results/models/stage1",
                                                  "train": "results/data/strings/level2.parquet",
                                                  "val": "results/data/strings/val.parquet"}
    multi = models.rl_sources(config, "rl_multi_level1")
    assert multi == {"init": "results/models/stage1_multi", "train": "results/data/strings/level1.parquet",
                     "val": "results/data/strings/val.parquet"}   # the same string-task RL
    assert models.rl_metrics("level1", "multi") == "results/rl/multi_level1/metrics.parquet"
    assert models.rl_metrics("level1") == "results/rl/level1/metrics.parquet"
    assert models.rl_model_of_dir("multi_level1") == "rl_multi_level1"
    assert models.rl_model_of_dir("level1") == "rl_level1"
    with pytest.raises(ValueError, match="not an RL model"):
        models.rl_sources(config, "stage1")


def test_countdown_rl_steps_set_only_the_multi_lineage(config):
    string = params.rl_settings(config, "level1")
    same = copy.deepcopy(config)
    same["countdown"]["rl_steps"] = config["rl"]["steps"]
    assert params.rl_settings(same, "level1", "multi") == string  # as many steps: the same RL, the same seed
    changed = copy.deepcopy(config)
    changed["countdown"]["rl_steps"] = 7
    assert params.rl_settings(changed, "level1") == string
    got = json.loads(params.rl_settings(changed, "level1", "multi"))
    assert got == {**json.loads(string), "steps": 7}


def test_figure_inputs_and_targets(config):
    assert countdown_models(config) == MODELS
    inputs = targets.figure_inputs(config, "countdown_transfer")
    assert inputs == [f"results/eval/{m}/countdown{n}.parquet" for m in MODELS for n in (3, 4, 5)] + [
        "results/eval/stage1_multi/countdown2.parquet"]  # the Multi-Base's atomic skill
    assert "figures/countdown_transfer.pdf" in targets.figure_targets(config)
    off = copy.deepcopy(config)
    off["countdown"]["enabled"] = False
    assert "figures/countdown_transfer.pdf" not in targets.figure_targets(off)
    assert targets.figure_targets(off) == [t for t in targets.figure_targets(config) if "countdown" not in t]


def test_countdown_knobs_are_local(config):
    """A countdown knob changes only the countdown jobs' settings (so only they rerun), and the
    string-task knobs of evaluate/stage1 do not leak into the Multi-Base's SFT or Countdown evals."""
    def string_jobs(c):
        return (params.pretrain_settings(c), params.rl_settings(c, "level1to2"), params.sft_settings(c, "stage1"),
                params.sampling_settings(c, "rollout", "base", "stage1"),
                params.sampling_settings(c, "eval", "rl_level1to2", "test"), splits.generate_args(c, "test"))

    before = string_jobs(config)
    sft = params.sft_settings(config, "stage1_multi")
    ev = params.sampling_settings(config, "eval", "stage1_multi", "countdown3")
    changed = copy.deepcopy(config)
    changed["countdown"]["sft"]["lr"] = 1e-4
    changed["countdown"]["evaluate"]["n"] = 8
    changed["countdown"]["train_problems"] = 100
    assert string_jobs(changed) == before
    assert params.sft_settings(changed, "stage1_multi") != sft
    assert json.loads(params.sampling_settings(changed, "eval", "stage1_multi", "countdown3"))["n"] == 8
    assert json.loads(ev)["n"] == config["countdown"]["evaluate"]["n"]
    other = copy.deepcopy(config)
    other["evaluate"]["n"] = 3
    other["stage1"]["sft"]["lr"] = 1e-5
    assert params.sampling_settings(other, "eval", "stage1_multi", "countdown3") == ev
    assert params.sft_settings(other, "stage1_multi") == sft


def test_paper_style_multi_base_uses_stage1_sampling(config):
    r = json.loads(params.sampling_settings(config, "rollout", "base", "countdown_train"))
    assert r["n"] == config["stage1"]["rollout"]["n"]
    assert params.filter_settings(config, "countdown_train") == params.filter_settings(config, "stage1")


def test_config_errors_are_readable(config):
    bad = copy.deepcopy(config)
    bad["countdown"]["test_numbers"] = [2, 3]
    bad["countdown"]["rl_runs"] = ["level9"]
    bad["countdown"]["evaluate"]["n"] = 0
    with pytest.raises(ConfigError) as err:
        validate_config(bad, source="config.yaml")
    msg = str(err.value)
    assert "countdown.test_numbers.0" in msg and "countdown.rl_runs.0" in msg and "countdown.evaluate.n" in msg
    missing = copy.deepcopy(config)
    del missing["countdown"]["sft"]
    with pytest.raises(ConfigError, match="key 'countdown': 'sft' is a required property"):
        validate_config(missing)


# ----------------------------------------------------------------------------- merged SFT data
def test_mix_takes_rollout_responses_and_reference_solutions():
    cd = C.generate(numbers=2, num=5, seed=1, style="compact")
    rft = cd.iloc[:2].copy()
    rft["response"] = ["a", "b"]
    rft["level"] = 2                         # rollout-only columns are dropped
    mixed = mix_sft_data([rft, cd], repeats=[1, 3])
    assert list(mixed.columns) == ["data_source", "prompt", "ability", "reward_model", "extra_info", "response"]
    assert len(mixed) == 2 + 15
    assert list(mixed.response[:2]) == ["a", "b"]
    assert mixed.response[2] == cd.extra_info[0]["solution"] == mixed.response[7]
    assert C.compute_score(mixed.data_source[2], mixed.response[2], mixed.reward_model[2]["ground_truth"])["acc"]
    with pytest.raises(ValueError, match="one per input"):
        mix_sft_data([rft, cd], repeats=[1])
    paper = C.generate(numbers=2, num=1, seed=1, style="compact")
    paper.at[0, "extra_info"] = {**paper.extra_info[0], "solution": None}
    with pytest.raises(ValueError, match="neither a 'response' column nor extra_info.solution"):
        sft_rows(paper, "paper.parquet")


# ----------------------------------------------------------------------------- dry runs
def test_countdown_target_plans_exactly_its_lineage(tmp_path):
    """From nothing, the figure needs: the string base and Stage-1 data (shared with the string
    lineage), the Multi-Base, two string RL runs from it, String-Base RL L1+2, 4 x 3 evals and the
    Multi-Base's 2-number check."""
    jobs = planned_jobs(tmp_path, "-s", str(ROOT / "Snakefile"), "figures/countdown_transfer.pdf",
                        "--configfile", str(ROOT / "config.yaml"))
    # generate_strings: pretrain, pretrain_prior, pretrain_steps (first-step problems), stage1, level1 and
    # level1to2 (the RL runs from the Multi-Base), val
    assert jobs == {"generate_countdown": 5, "generate_strings": 7, "pretrain_base": 1, "rollout": 1,
                    "filter_rollouts": 1, "mix_sft_data": 1, "rft_sft": 2, "rl": 1, "rl_multi": 2,
                    "evaluate": 13, "figure": 1}


def test_countdown_switch_drops_its_targets(tmp_path):
    on = planned_jobs(tmp_path, "-s", str(ROOT / "Snakefile"), "--configfile", str(ROOT / "config.yaml"))
    cfg = yaml.safe_load((ROOT / "config.yaml").read_text())
    cfg["countdown"]["enabled"] = False
    off_path = tmp_path / "off.yaml"
    off_path.write_text(yaml.safe_dump(cfg))
    off = planned_jobs(tmp_path, "-s", str(ROOT / "Snakefile"), "--configfile", str(ROOT / "config.yaml"),
                       str(off_path))
    assert on["rl_multi"] == 2 and on["generate_countdown"] == 5 and on["evaluate"] - off["evaluate"] == 13
    assert not {"rl_multi", "generate_countdown", "mix_sft_data"} & set(off)
    assert on["figure"] - off["figure"] == 1 and on["rft_sft"] - off["rft_sft"] == 1
    assert on["rl"] == off["rl"] and on["pretrain_base"] == off["pretrain_base"] == 1
