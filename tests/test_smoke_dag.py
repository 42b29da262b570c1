"""Tier 3: the whole DAG on the smoke config (.test/config.yaml), then dry runs proving that a
changed knob reruns only the stages that read it."""

import pandas as pd
import pytest
import yaml
from dagtools import planned_jobs

pytestmark = pytest.mark.slow


def modified_config(work, tmp_path, edit):
    cfg = yaml.safe_load((work / ".test/config.yaml").read_text())
    edit(cfg)
    path = tmp_path / "changed.yaml"
    path.write_text(yaml.safe_dump(cfg))
    return path


def test_figures_and_tables(smoke_run):
    for name in ("passk_level_curve", "rl_level_accuracy", "rft_vs_rl", "model_contrasts", "failure_modes",
                 "training_dynamics", "countdown_transfer", "function_transfer"):
        pdf, csv = smoke_run / f"figures/{name}.pdf", smoke_run / f"figures/{name}.csv"
        assert pdf.read_bytes()[:4] == b"%PDF"
        table = pd.read_csv(csv)
        assert len(table) > 0 and {"source", "config_hash"} <= set(table.columns)
    passk = pd.read_csv(smoke_run / "figures/passk_level_curve.csv")
    assert {"model", "level", "k", "pass_at_k", "ci_low", "ci_high"} <= set(passk.columns)
    assert set(passk["model"]) == {"stage1", "rl_level1to2"}  # figures.passk_models
    full, subset = passk[passk["prompts"] == "all"], passk[passk["prompts"] != "all"]
    assert set(full["level"]) == {1, 2, 3} and set(full["k"]) == {1, 2, 4}
    # the many-samples subset: the base and RL on Level 1+2, k up to evaluate.many_samples.n
    assert set(subset["model"]) == {"stage1", "rl_level1to2"} and set(subset["k"]) == {1, 2, 4, 8}
    assert (subset["n_prompts"] == 4).all()
    assert passk["pass_at_k"].between(0, 1).all()
    assert (passk["ci_low"] <= passk["pass_at_k"] + 1e-9).all()
    assert (passk["pass_at_k"] <= passk["ci_high"] + 1e-9).all()
    # pass@k never decreases with k for a model and level
    for _, g in passk.groupby(["model", "level"]):
        assert g.sort_values("k")["pass_at_k"].diff().dropna().ge(-1e-9).all()
    # the paired differences agree with the two models' own pass@1 on the same prompts
    every = pd.read_csv(smoke_run / "figures/model_contrasts.csv")
    assert every[["a", "b"]].drop_duplicates().values.tolist() == [
        ["rl_level2", "rl_level1"], ["rl_level1to2", "rl_level1"], ["rl_level1", "stage1"],
        ["rl_level2", "rft_level2_iter2"]]
    # every pair on the full-trace test set too (data.test_full_trace_levels: [3, 3], 4 prompts in the smoke config)
    on_set = every[every["prompts"] == "full-trace test set"]
    assert len(on_set) == 4 and set(on_set["level"]) == {3} and (on_set["n_prompts"] == 4).all()
    assert on_set["source"].str.endswith("/test_full_trace.parquet").all()
    contrasts = every[every["prompts"] == "all"]
    at_1 = passk[(passk["k"] == 1) & (passk["prompts"] == "all")].set_index(["model", "level"])
    for _, row in contrasts.iterrows():
        assert row["diff"] == pytest.approx(row["a_accuracy"] - row["b_accuracy"])
        assert row["ci_low"] - 1e-9 <= row["diff"] <= row["ci_high"] + 1e-9
        for side in ("a", "b"):  # each model's own interval, as its metrics table (and Fig. 5, if drawn) has it
            assert row[f"{side}_ci_low"] - 1e-9 <= row[f"{side}_accuracy"] <= row[f"{side}_ci_high"] + 1e-9
            if (row[side], row["level"]) in at_1.index:
                drawn = at_1.loc[(row[side], row["level"])]
                assert (row[f"{side}_accuracy"], row[f"{side}_ci_low"]) == pytest.approx(
                    (drawn["pass_at_k"], drawn["ci_low"]))
    # the same pairs on the held-out functions (where they equal model_contrasts' differences) and on new
    # compositions of the train functions (data.test_train_funcs_levels: [2, 3] in the smoke config)
    transfer = pd.read_csv(smoke_run / "figures/function_transfer.csv")
    pairs = contrasts[["a", "b"]].drop_duplicates().values.tolist()
    assert transfer[["a", "b"]].drop_duplicates().values.tolist() == pairs
    assert set(transfer["level"]) == {2, 3} and set(transfer["functions"]) == {"held-out functions", "train functions"}
    held = transfer[transfer["functions"] == "held-out functions"].set_index(["a", "b", "level"])["diff"]
    assert held.to_dict() == pytest.approx(contrasts.set_index(["a", "b", "level"])["diff"].loc[held.index].to_dict())
    train = transfer[transfer["functions"] == "train functions"]
    assert train["source"].str.endswith("/test_train_funcs.parquet").all()
    curves = pd.read_csv(smoke_run / "figures/rl_level_accuracy.csv")
    assert set(curves["model"]) == {"rl_level1", "rl_level2", "rl_level1to2"}
    assert curves["step"].max() == 4


def test_countdown_transfer_table(smoke_run):
    """Paper Table 1's shape: 4 models x 3 number counts and the Multi-Base's 2-number check, Avg@4 of
    4 prompts each, with CIs and the answers' step statistics."""
    cd = pd.read_csv(smoke_run / "figures/countdown_transfer.csv")
    assert list(dict.fromkeys(cd["model"])) == ["stage1_multi", "rl_multi_level1", "rl_multi_level1to2",
                                                "rl_level1to2"]
    assert len(cd) == 13 and set(cd["numbers"]) == {2, 3, 4, 5}
    assert list(cd.loc[cd["numbers"] == 2, "model"]) == ["stage1_multi"]
    assert cd["multi_step"].between(0, 1).all() and cd["chained"].between(0, 1).all() and (cd["steps"] >= 0).all()
    assert not cd.duplicated(["model", "numbers"]).any()
    assert (cd["n_prompts"] == 4).all() and (cd["n_samples"] == 4).all()
    assert cd["avg_at_k"].between(0, 1).all()
    assert (cd["ci_low"] <= cd["avg_at_k"] + 1e-9).all() and (cd["avg_at_k"] <= cd["ci_high"] + 1e-9).all()
    assert cd["source"].str.match(r"results/eval/\w+/countdown[2345]\.parquet").all()
    # the Multi-Base's held-out 2-number check and its training data (reference traces) exist
    check = pd.read_parquet(smoke_run / "results/eval/stage1_multi/countdown2.parquet")
    assert len(check) == 4 and check["level"].eq(2).all()
    mix = pd.read_parquet(smoke_run / "results/rft/mix/stage1_multi.parquet")
    assert mix["data_source"].str.startswith("reasoning-gym-countdown-depth2").sum() == 200


def test_artifacts_are_inspectable(smoke_run):
    evals = pd.read_parquet(smoke_run / "results/eval/stage1/test.parquet")
    assert len(evals) == 3 * 8
    assert evals["responses"].map(len).eq(4).all() and evals["correct"].map(len).eq(4).all()
    assert {"data_source", "prompt", "ability", "reward_model", "extra_info"} <= set(evals.columns)
    from transformers import AutoModelForCausalLM, AutoTokenizer

    for model in ("base", "stage1", "rl_level2", "rft_level2_iter2", "stage1_multi", "rl_multi_level1"):
        path = smoke_run / "results/models" / model
        assert (path / "model.safetensors").exists() and (path / "resolved_config.json").exists()
        AutoModelForCausalLM.from_pretrained(path)
        AutoTokenizer.from_pretrained(path)
    leakage = yaml.safe_load((smoke_run / "results/data/strings/leakage.json").read_text())
    assert leakage["ok"] and leakage["n_leaked_rows"] == 0
    findings = (smoke_run / "results/analysis/findings.md").read_text()
    assert "| finding | paper (Llama-3.1-8B-Instruct) | this run |" in findings and "| Stage-1 base |" in findings
    assert "| RL Level 2 − RL Level 1 | train functions | " in findings  # the function_transfer diagnostic


def test_every_job_logged_and_benchmarked(smoke_run):
    logs = list((smoke_run / "logs").rglob("*.log"))
    benches = list((smoke_run / "results/benchmarks").rglob("*.tsv"))
    assert len(logs) >= 30 and len(benches) == len(logs)


def test_rl_knob_reruns_only_rl_and_downstream(smoke_run, tmp_path):
    assert planned_jobs(smoke_run, "--configfile", ".test/config.yaml") == {}, "smoke run left work undone"
    changed = modified_config(smoke_run, tmp_path, lambda c: c["rl"].update(lr=2e-3))
    jobs = planned_jobs(smoke_run, "--configfile", str(changed))
    # 3 string RL runs + 2 from the Multi-Base; string test evals of the 3 RL models (held-out functions,
    # train functions and the full-trace set), Countdown 3/4/5 evals of the 3 RL models in the transfer
    # figure (rl_multi_level1/level1to2, rl_level1to2), and rl_level1to2's many samples on the pass@k subset
    assert jobs.pop("rl") == 3 and jobs.pop("rl_multi") == 2
    assert jobs.pop("evaluate") == 3 * 3 + 3 * 3 + 1 and jobs.pop("metrics") == 3 + 1
    assert jobs.pop("figure") == 8 and jobs.pop("sample_browser") == 1  # every figure reads an RL model
    assert jobs.pop("findings") == 1
    assert set(jobs) <= {"all"}


def test_plot_knob_reruns_only_the_plot(smoke_run, tmp_path):
    changed = modified_config(smoke_run, tmp_path, lambda c: c["figures"].update(passk_ks=[1, 4]))
    jobs = planned_jobs(smoke_run, "--configfile", str(changed))
    assert jobs == {"figure": 1, "findings": 1, "all": 1}  # pass@k's table is one the findings read


def test_thread_counts_rerun_nothing(smoke_run, tmp_path):
    """Threads and the sampler's GPU shapes are machine knobs (profiles, compute:): not rerun triggers."""
    changed = modified_config(smoke_run, tmp_path, lambda c: c.setdefault("compute", {}).update(torch_threads=2))
    assert planned_jobs(smoke_run, "--configfile", str(changed)) == {}
    changed = modified_config(smoke_run, tmp_path, lambda c: c.setdefault("compute", {}).update(
        gpu_slots=64, gpu_chunk_prompts=16))
    assert planned_jobs(smoke_run, "--configfile", str(changed)) == {}
    assert planned_jobs(smoke_run, "--configfile", ".test/config.yaml", "--set-threads", "rl=2", "evaluate=2") == {}


def test_countdown_knob_reruns_only_the_countdown_lineage(smoke_run, tmp_path):
    """The Multi-Base's SFT settings: the Multi-Base, the 2 RL runs from it, their Countdown evals
    (and the 2-number check) and the transfer figure; never pretraining, string RL or Stage 1."""
    changed = modified_config(smoke_run, tmp_path, lambda c: c["countdown"]["sft"].update(lr=2e-3))
    jobs = planned_jobs(smoke_run, "--configfile", str(changed))
    assert jobs == {"rft_sft": 1, "rl_multi": 2, "evaluate": 3 * 3 + 1, "figure": 1, "findings": 1, "all": 1}
    changed = modified_config(smoke_run, tmp_path, lambda c: c["countdown"]["evaluate"].update(n=2))
    assert planned_jobs(smoke_run, "--configfile", str(changed)) == {
        "evaluate": 4 * 3 + 1, "figure": 1, "findings": 1, "all": 1}
    changed = modified_config(smoke_run, tmp_path, lambda c: c["countdown"].update(test_problems=3))
    assert planned_jobs(smoke_run, "--configfile", str(changed)) == {
        "generate_countdown": 4, "evaluate": 4 * 3 + 1, "figure": 1, "findings": 1, "all": 1}


def test_data_knob_reruns_from_generation(smoke_run, tmp_path):
    changed = modified_config(smoke_run, tmp_path, lambda c: c["data"].update(test_per_level=6))
    jobs = planned_jobs(smoke_run, "--configfile", str(changed))
    # the test set and the full-trace set, which leaves out the test set's expressions; nothing that trains
    assert jobs.get("generate_strings") == 2 and "pretrain_base" not in jobs and "rl" not in jobs
    # every evaluated model, the pass@k subset drawn from the test set (2 models) and the 5 full-trace evals
    assert jobs.get("evaluate") == 6 + 2 + 5 and jobs.get("select_prompts") == 1
    # the test set over the train functions is a knob of its own: its set, the leakage check, the five
    # evaluations of the function_transfer figure, that figure and the findings that read it; nothing that
    # trains, no other figure
    changed = modified_config(smoke_run, tmp_path, lambda c: c["data"].update(test_train_funcs_per_level=3))
    assert planned_jobs(smoke_run, "--configfile", str(changed)) == {
        "generate_strings": 1, "check_leakage": 1, "evaluate": 5, "figure": 1, "findings": 1, "all": 1}
