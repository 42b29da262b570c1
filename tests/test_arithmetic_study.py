"""The arithmetic study through the task plug-in: its problem sets, models and RL lineages from the config,
its two figure tables on synthetic evaluations, its findings' verdicts by rule, and the DAG it plans
(experiments/arithmetic.yaml: findings 1-3 on arithmetic and the transfer, one target of their own)."""

import json
import re
import shutil

import numpy as np
import pandas as pd
import pytest

from configs import load_config
from dagtools import planned_jobs
from fgx.analysis import findings as study_findings
from fgx.figures import arithmetic_composition as C, arithmetic_transfer as T
from fgx.io import write_parquet
from fgx.plan import paths
from fgx.tasks.arithmetic import findings as F, models as M, splits as S
from fgx.tasks.arithmetic.chain import evaluate, render_chain
from fgx.tasks.arithmetic.ground_truth import ground_truth
from fgx.tasks.arithmetic.trace import solution_text
from fgx.tasks.registry import family
from smoke import snakemake

ROOT = __import__("pathlib").Path(__file__).resolve().parents[1]
OVERLAY = "experiments/arithmetic.yaml"


def test_disabled_by_default_and_the_overlay_asks_for_every_set():
    assert S.splits(load_config()) == {} and M.models(load_config()) == []
    assert M.ARITHMETIC.runs(load_config()) == [] and M.MULTI.runs(load_config()) == []
    cfg = load_config(OVERLAY)
    sets = S.splits(cfg)
    assert list(sets) == ["arithmetic_stage1", "arithmetic_level1", "arithmetic_level2", "arithmetic_level2_chunk1",
                          "arithmetic_level2_chunk2", "arithmetic_test", "arithmetic_val"]
    assert [s.role for s in sets.values()] == ["train"] * 5 + ["eval"] * 2
    assert sets["arithmetic_level2_chunk1"].rollout == "rft_baseline" and sets["arithmetic_test"].evaluate == (
        "arithmetic", "evaluate")
    a = cfg["arithmetic"]
    test = S.generate_args(cfg, "arithmetic_test", 7, [])
    assert test == (f"--stage 2 --split test --min-level 1 --max-level 6 --num {6 * a['test_per_level']} --seed 7 "
                    f"--style compact --max-value {a['max_value']} --partition test")
    assert "--partition val" in S.generate_args(cfg, "arithmetic_val", 7, [])
    assert "--stage 1 --split train --min-level 1 --max-level 1" in S.generate_args(cfg, "arithmetic_stage1", 7, [])
    assert "--min-level 2 --max-level 2 --num 400 " in S.generate_args(cfg, "arithmetic_level2_chunk2", 7, [])
    with pytest.raises(ValueError, match="unknown arithmetic split 'arithmetic_level1to2'"):
        S.split_spec(cfg, "arithmetic_level1to2")


def test_one_stage1_model_carries_both_questions():
    cfg = load_config(OVERLAY)
    stage1, *rft = M.models(cfg)
    assert stage1.name == "arithmetic_stage1" and stage1.init == "base" and stage1.settings == ("arithmetic", "sft")
    assert [(s.split, s.rollouts_of, r) for s, r in stage1.data] == [
        ("stage1", "base", cfg["arithmetic"]["string_repeats"]), ("arithmetic_stage1", None, 1)]
    assert [(m.name, m.init, m.data[0][0].split, m.data[0][0].rollouts_of) for m in rft] == [
        ("rft_arithmetic_iter1", "arithmetic_stage1", "arithmetic_level2_chunk1", "arithmetic_stage1"),
        ("rft_arithmetic_iter2", "rft_arithmetic_iter1", "arithmetic_level2_chunk2", "rft_arithmetic_iter1")]
    assert (M.ARITHMETIC.init, M.MULTI.init) == ("arithmetic_stage1", "arithmetic_stage1")
    assert (M.ARITHMETIC.train.format(run="level2"), M.ARITHMETIC.val) == ("arithmetic_level2", "arithmetic_val")
    assert (M.MULTI.train, M.MULTI.val) == ("{run}", "val")  # the string task's RL data
    cfg["arithmetic"]["string_repeats"] = 0
    assert [s.split for s, _ in M.models(cfg)[0].data] == ["arithmetic_stage1"]
    cfg["task"]["style"] = "paper"
    assert M.models(cfg)[0].data[0][0].rollouts_of == "base"


def test_stage1_chains_add_composed_train_operations_to_stage1_only():
    """arithmetic.stage1_chain_problems: Level-2 chains of train operations with full traces, one more
    problem set mixed into the arithmetic Stage 1 (as often as its atomic problems); none by default."""
    cfg = load_config(OVERLAY)
    assert cfg["arithmetic"]["stage1_chain_problems"] == 0 and "arithmetic_stage1_chains" not in S.splits(cfg)
    cfg["arithmetic"]["stage1_chain_problems"] = 160
    assert list(S.splits(cfg))[:2] == ["arithmetic_stage1", "arithmetic_stage1_chains"]
    assert S.splits(cfg)["arithmetic_stage1_chains"].role == "train"
    assert S.generate_args(cfg, "arithmetic_stage1_chains", 7, []).startswith(
        "--stage 2 --split train --min-level 2 --max-level 2 --num 160 --seed 7")
    stage1, *rft = M.models(cfg)
    assert [(s.split, s.rollouts_of, r) for s, r in stage1.data] == [
        ("stage1", "base", cfg["arithmetic"]["string_repeats"]), ("arithmetic_stage1", None, 1),
        ("arithmetic_stage1_chains", None, 1)]
    assert all("arithmetic_stage1_chains" not in (s.split for s, _ in m.data) for m in rft)
    cfg["task"]["style"] = "paper"
    assert M.models(cfg)[0].data[2][0].rollouts_of == "base"


def test_the_family_is_registered_with_its_findings_and_figures():
    record = family("arithmetic")
    assert record.data_source_prefix == "arithmetic-chain" and record.checks_leakage
    assert set(record.figures) == {"arithmetic_composition", "arithmetic_transfer"}
    assert record.findings.tables == F.TABLES and len(record.findings.readme) == len(F.ROWS)
    assert (F.HOLDS_LEAD, F.NEAR_BASE) == (study_findings.HOLDS_LEAD, study_findings.NEAR_BASE)


# ----------------------------------------------------------------------------- figure tables
PROBLEM = {lv: (417, [("sub", 3), ("div", 2), ("rot", None), ("app", 5), ("sub", 1), ("mod", 100)][:lv])
           for lv in range(1, 7)}


def _eval(root, model, rates, rng, prompts=24, samples=8):
    rows = []
    for lv, rate in rates.items():
        start, steps = PROBLEM[lv]
        right = solution_text(start, steps)
        for i in range(prompts):
            correct = list(rng.random(samples) < rate)
            rows.append({"prompt": [{"role": "user", "content": f"{render_chain(start + i, steps)}\n"}],
                         "level": lv, "correct": correct,
                         "responses": [right if c else '417.sub(3)=1\n{"output": 1}\n' for c in correct],
                         "reward_model": {"style": "rule",
                                          "ground_truth": ground_truth(start, steps, evaluate(start, steps))}})
    path = root / "results/eval" / model / "arithmetic_test.parquet"
    write_parquet(pd.DataFrame(rows), path, settings={"model": model})
    return str(path)


@pytest.fixture
def evals(tmp_path):
    rng = np.random.default_rng(0)
    rates = {"arithmetic_stage1": [0.9, 0.3, 0.1, 0.05, 0.0, 0.0],
             "rl_arithmetic_level1": [0.95, 0.3, 0.1, 0.05, 0, 0],
             "rl_arithmetic_level2": [0.95, 0.8, 0.6, 0.4, 0.2, 0.1],
             "rft_arithmetic_iter2": [0.9, 0.5, 0.2, 0.1, 0, 0],
             "rl_arithmetic_multi_level1": [0.9, 0.3, 0.1, 0.05, 0, 0],
             "rl_arithmetic_multi_level1to2": [0.9, 0.5, 0.3, 0.2, 0, 0]}
    return {m: _eval(tmp_path, m, dict(enumerate(r, 1)), rng) for m, r in rates.items()}


def test_the_composition_table_and_its_verdicts(evals, tmp_path):
    cfg = load_config(OVERLAY)
    settings = {**C.spec_settings(cfg, "arithmetic_composition"), "bootstrap": 200}
    models = settings["models"]
    assert models == ["arithmetic_stage1", "rl_arithmetic_level1", "rl_arithmetic_level2", "rft_arithmetic_iter2"]
    assert settings["pairs"] == [["rl_arithmetic_level1", "arithmetic_stage1"],
                                 ["rl_arithmetic_level2", "rl_arithmetic_level1"],
                                 ["rl_arithmetic_level2", "rft_arithmetic_iter2"]]
    t = C.table([evals[m] for m in models], settings)
    assert list(t.columns) == C.COLUMNS
    acc = t[t.kind == "pass@1"]
    assert list(dict.fromkeys(acc.a)) == models and len(acc) == 4 * 6
    row = acc[(acc.a == "rl_arithmetic_level2") & (acc.levels == "3")].iloc[0]
    back = pd.read_parquet(row.source)
    assert row.value == pytest.approx(np.mean([np.mean(c) for c in back[back.level == 3].correct]))
    assert row.ci_low <= row.value <= row.ci_high and row.n_prompts == 24 and row.n_samples == 8
    # a right response writes every step right; the wrong one writes one wrong step
    assert row.steps_written == pytest.approx(3 * row.full_trace + (1 - row.full_trace))
    diff = t[t.kind == "difference"].set_index(["a", "b", "levels"])
    d = diff.loc[("rl_arithmetic_level2", "rl_arithmetic_level1", "3")]
    assert d.value == pytest.approx(d.a_value - d.b_value) and d.ci_low < d.value < d.ci_high
    pd.testing.assert_frame_equal(t, C.table([evals[m] for m in models], settings))  # deterministic
    C.draw(t, tmp_path / "c.pdf", settings)
    assert (tmp_path / "c.pdf").read_bytes()[:4] == b"%PDF"
    t.to_csv(tmp_path / "c.csv", index=False)
    rows = F.check({"arithmetic_composition": pd.read_csv(tmp_path / "c.csv")})
    assert [r["verdict"] for r in rows] == ["holds", "holds", "holds", "holds", "not run"]
    assert rows[1]["measured"].startswith("+") and "vs" in rows[1]["measured"]
    # the rows name how many answers compose (every step written right), so a lead without one shows as such
    full = acc.set_index(["a", "levels"]).full_trace
    for i, level, other in ((1, "3", "rl_arithmetic_level1"), (2, "4", "rl_arithmetic_level1"),
                            (3, "3", "rft_arithmetic_iter2")):
        want = f"full traces {100 * full[('rl_arithmetic_level2', level)]:.1f} vs {100 * full[(other, level)]:.1f} %"
        assert rows[i]["short"].endswith(", " + want) and rows[i]["measured"].endswith("; " + want)


def test_verdicts_follow_the_rules():
    def diff(a, b, lv, value, lo, hi):
        return {"kind": "difference", "a": a, "b": b, "levels": lv, "value": value, "ci_low": lo, "ci_high": hi,
                "a_value": 0.5, "b_value": 0.5 - value}

    def acc(a, lv, value, lo, hi):
        return {"kind": "pass@1", "a": a, "b": np.nan, "levels": lv, "value": value, "ci_low": lo, "ci_high": hi}

    rows = [diff(F.RL1, "arithmetic_stage1", 3, 0.01, -0.02, 0.04), diff(F.RL1, "arithmetic_stage1", 4, 0.08, 0, 0.1),
            diff(F.RL2, F.RL1, 3, 0.10, 0.05, 0.15), diff(F.RL2, F.RL1, 4, 0.03, -0.01, 0.07),
            diff(F.RL2, "rft_arithmetic_iter2", 3, -0.02, -0.05, 0.01), acc(F.RL2, 3, 0.4, 0.35, 0.45),
            acc(F.RL1, 3, 0.3, 0.25, 0.35)]
    got = F.check({"arithmetic_composition": pd.DataFrame(rows)})
    assert [r["verdict"] for r in got[:4]] == ["no", "partly", "partly", "no"]
    assert not any("full traces" in r["measured"] for r in got)  # a table without the column: no claim
    transfer = pd.DataFrame([diff(F.BEST, F.OTHER, "2-4", 0.1, 0.02, 0.2), diff(F.BEST, "arithmetic_stage1", "2-4",
                                                                                0.05, -0.01, 0.1),
                             acc("arithmetic_stage1", "2-4", 0.2, 0.1, 0.3), acc(F.OTHER, "2-4", 0.15, 0.1, 0.2),
                             acc(F.BEST, "2-4", 0.25, 0.2, 0.3), acc("arithmetic_stage1", 1, 0.9, 0.8, 1)])
    row = F.check({"arithmetic_transfer": transfer})[4]
    assert row["verdict"] == "partly" and "Multi-Base at Level 1 90.0 %" in row["measured"]
    assert row["short"].startswith("Multi-Base 20.0 %, +RL L1 15.0 %, +RL L1+2 25.0 %")
    transfer.loc[1, "ci_low"] = 0.01
    assert F.check({"arithmetic_transfer": transfer})[4]["verdict"] == "holds"
    transfer.loc[0, ["value", "ci_low"]] = [-0.01, -0.05]
    assert F.check({"arithmetic_transfer": transfer})[4]["verdict"] == "no"
    assert [r["verdict"] for r in F.check({})] == ["not run"] * 5


def test_the_transfer_table_pools_its_levels(evals, tmp_path):
    cfg = load_config(OVERLAY)
    settings = {**T.spec_settings(cfg, "arithmetic_transfer"), "bootstrap": 200}
    assert settings["models"] == ["arithmetic_stage1", "rl_arithmetic_multi_level1", "rl_arithmetic_multi_level1to2"]
    assert settings["levels"] == [2, 4]
    t = T.table([evals[m] for m in settings["models"]], settings)
    acc = t[t.kind == "pass@1"]
    assert list(acc[acc.a == "arithmetic_stage1"].levels) == ["1", "2", "3", "4", "2-4"]
    pooled = acc[(acc.a == "arithmetic_stage1") & (acc.levels == "2-4")].iloc[0]
    assert pooled.n_prompts == 3 * 24
    assert pooled.value == pytest.approx(acc[(acc.a == "arithmetic_stage1") & acc.levels.isin(["2", "3", "4"])]
                                         .value.mean())
    T.draw(t, tmp_path / "t.pdf", settings)
    t.to_csv(tmp_path / "t.csv", index=False)
    row = F.check({"arithmetic_transfer": pd.read_csv(tmp_path / "t.csv")})[4]
    assert row["verdict"] in ("holds", "partly") and row["measured"].startswith("Levels 2-4: Multi-Base ")


def test_an_evaluation_of_another_split_is_refused(evals, tmp_path):
    other = tmp_path / "results/eval/arithmetic_stage1/test.parquet"
    other.parent.mkdir(parents=True, exist_ok=True)
    pd.read_parquet(evals["arithmetic_stage1"]).to_parquet(other)
    with pytest.raises(ValueError, match="not an evaluation on arithmetic_test"):
        C.table([str(other)], {"models": [], "pairs": []})
    with pytest.raises(ValueError, match="needs results/eval/rl_arithmetic_level1/arithmetic_test.parquet"):
        C.table([evals["arithmetic_stage1"]], {"pairs": [["rl_arithmetic_level1", "arithmetic_stage1"]]})


# ----------------------------------------------------------------------------- the DAG
def test_the_study_is_one_target_of_its_own():
    """The two questions' figures and verdicts, and only the jobs they need: the base, the string task's
    Stage-1 data, arithmetic Stage 1, RL on arithmetic Levels 1 and 2, two iterative-RFT iterations, the string
    RL runs from the arithmetic Stage-1 model, six evaluations."""
    jobs = planned_jobs(ROOT, "--forceall", "results/analysis/findings_arithmetic.md", "--configfile", OVERLAY)
    assert jobs == {"generate_arithmetic": 7, "generate_strings": 7, "pretrain_base": 1, "rollout": 3,
                    "filter_rollouts": 3, "mix_sft_data": 1, "rft_sft": 3, "rl_arithmetic": 2,
                    "rl_arithmetic_multi": 2, "evaluate": 6, "figure": 2, "findings_family": 1}


@pytest.mark.parametrize("change,message", [
    ({"test_levels": [4, 1]}, "key 'arithmetic.test_levels': got [4, 1]; write [min, max] with min <= max"),
    ({"test_levels": [1, 3]}, "key 'arithmetic.transfer_levels': got [2, 4]; the transfer is measured on the test set"),
    ({"transfer_levels": [3, 2]}, "key 'arithmetic.transfer_levels': got [3, 2]; write [min, max]"),
])
def test_a_bad_level_range_is_named_before_any_job(change, message):
    from fgx.config import ConfigError, validate_config
    from fgx.knobs import schema

    cfg = load_config(OVERLAY)
    cfg["arithmetic"].update(change)
    with pytest.raises(ConfigError, match=re.escape(message)):
        validate_config(cfg, schema=schema())
    validate_config(load_config(OVERLAY), schema=schema())


@pytest.mark.slow
def test_the_study_runs_at_smoke_size_beside_the_smoke_run(smoke_run, tmp_path):
    """The target on .test/arithmetic.yaml in a copy of the smoke run: only the study's own jobs run (the base
    and the string task's Stage-1 data are reused), the leakage check covers the arithmetic sets, the figures
    and the findings file hold every model and every verdict row."""
    work = tmp_path / "fgx"
    shutil.copytree(smoke_run, work, symlinks=True)
    target = ["results/analysis/findings_arithmetic.md", paths.LEAKAGE]
    proc = snakemake(work, "--cores", "2", *target, "--configfile", ".test/config.yaml", ".test/arithmetic.yaml")
    ran = set(re.findall(r"^(?:local)?rule (\w+):", proc.stdout + proc.stderr, re.M))
    assert ran == {"generate_arithmetic", "mix_sft_data", "rft_sft", "rollout", "filter_rollouts", "rl_arithmetic",
                   "rl_arithmetic_multi", "evaluate", "figure", "findings_family", "check_leakage"}
    composition = pd.read_csv(work / "figures/arithmetic_composition.csv")
    assert set(composition.a) == {"arithmetic_stage1", "rl_arithmetic_level1", "rl_arithmetic_level2",
                                  "rft_arithmetic_iter1"}
    assert set(composition[composition.kind == "pass@1"].levels) == {1, 2, 3, 4}
    transfer = pd.read_csv(work / "figures/arithmetic_transfer.csv")
    assert set(transfer.levels.astype(str)) == {"1", "2", "3", "4", "2-4"}
    findings = (work / "results/analysis/findings_arithmetic.md").read_text()
    assert all(row[0] in findings for row in F.ROWS)
    leakage = json.loads((work / paths.LEAKAGE).read_text())
    assert leakage["ok"] and any("arithmetic_test" in f for f in leakage["test_files"])
    evaluation = pd.read_parquet(work / "results/eval/arithmetic_stage1/arithmetic_test.parquet")
    assert len(evaluation) == 16 and evaluation.data_source.str.startswith("arithmetic-chain-depth").all()
    assert (work / "results/models/rl_arithmetic_multi_level1to2/config.json").is_file()


def test_the_readme_table_shows_the_study_where_its_runs_are_published(evals, tmp_path):
    """The README's results table: no arithmetic row until a seed of the study is published under
    docs/results/arithmetic/; then its rows, from the same seed's study run, and a note naming them."""
    from fgx.analysis import readme

    results = tmp_path / "docs/results"
    results.mkdir(parents=True)
    for seed in readme.SEEDS:
        (results / seed).symlink_to(ROOT / "docs/results" / seed)
    before = readme.results_block(results)
    assert "Arithmetic" not in before and "arithmetic study" not in readme.verdicts_block(results)
    assert ("Arithmetic" in readme.results_block()) == (ROOT / "docs/results/arithmetic").is_dir()
    cfg = load_config(OVERLAY)
    study = results / "arithmetic/seed1"
    study.mkdir(parents=True)
    for module in (C, T):
        name = module.__name__.rsplit(".", 1)[1]
        settings = {**module.spec_settings(cfg, name), "bootstrap": 50}
        module.table([evals[m] for m in settings["models"]], settings).to_csv(study / f"{name}.csv", index=False)
    after = readme.results_block(results)
    rows = [line for line in after.splitlines() if "Arithmetic" in line]
    assert [r.split(" | ")[0].lstrip("| ") for r in rows] == [name for name, _ in F.README]
    assert all(r.split(" | ")[1] == "not run" == r.split(" | ")[3] and "**" in r.split(" | ")[2] for r in rows)
    assert "The arithmetic rows: the same seeds of `experiments/arithmetic.yaml`'s study" in after
    assert "took" not in after, "no study time without a run record"
    verdicts = readme.verdicts_block(results)
    got = [r["verdict"] for r in F.check(readme.family_studies(results, "seed1")["arithmetic"])]
    counted = re.findall(r"holds in (\d) of 1", verdicts.split("arithmetic study's 1 seed")[1])
    assert [int(c) for c in counted] == [v == "holds" for v in got]
    (study / "run.json").write_text(json.dumps({"wall_s": 2460, "machine": "a 2-core CPU", "commit": "abc1234"}))
    timed = readme.results_block(results)
    assert "its target from an empty results directory took 41 min in seed 1 (a 2-core CPU, commit abc1234)" in timed
