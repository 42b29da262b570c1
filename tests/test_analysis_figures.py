"""Analysis targets on small synthetic artifacts: the failure-modes and training-dynamics figures,
the sample browser page and its CLI."""

import importlib.util
import json
import math
from pathlib import Path

import matplotlib
import pandas as pd
import pytest

matplotlib.use("Agg")

from fgx.tasks.strings.failure_modes import CATEGORIES, CORRECT, IGNORES, classify_eval
from fgx.analysis.sample_browser import render_html
from fgx.figures import failure_modes as FIG_FM
from fgx.figures import function_transfer as FIG_FT
from fgx.figures import model_contrasts as FIG_MC
from fgx.figures import rl_level_accuracy as FIG_RL
from fgx.figures import training_dynamics as FIG_TD
from fgx.io import write_parquet
from fgx.tasks.strings.shortcuts import has_shortcut
from fgx.tasks.strings import generate

ROOT = Path(__file__).resolve().parents[1]


def eval_parquet(path, wrong_share: int, seed=0, split="test", max_level=3):
    """An eval parquet like scripts/sample.py writes: levels 2-3, 4 responses per prompt."""
    df = generate(stage=2, split=split, min_level=2, max_level=max_level, num=2 * (max_level - 1), seed=seed,
                  style="compact")
    responses = []
    for _, row in df.iterrows():
        sol = row["extra_info"]["solution"]
        bad = ['{"output": "zzz"}', sol.split("\n")[0] + "\n", "<script>alert(1)</script> & \"q\""]
        responses.append([sol] * (4 - wrong_share) + bad[:wrong_share] + [bad[0]] * max(0, wrong_share - 3))
    df["responses"] = responses
    df["level"] = [r["depth"] for r in df["extra_info"]]
    df["correct"] = [[i < 4 - wrong_share for i in range(4)] for _ in range(len(df))]
    df["n_correct"] = 4 - wrong_share
    write_parquet(df, path, settings={"eval": {"n": 4}})
    return path


def test_failure_modes_figure(tmp_path):
    a = eval_parquet(tmp_path / "eval" / "stage1" / "test.parquet", wrong_share=3)
    b = eval_parquet(tmp_path / "eval" / "rl_level2" / "test.parquet", wrong_share=1, seed=1)
    table = FIG_FM.table([str(a), str(b)], {"failure_level": 3})
    assert list(table.columns) == FIG_FM.COLUMNS
    assert list(table["model"].unique()) == ["stage1", "rl_level2"]
    assert list(table[table["model"] == "stage1"]["category"]) == list(CATEGORIES)
    s1 = table[table["model"] == "stage1"].set_index("category")
    assert s1["n_responses"].iloc[0] == 2 * 4  # two Level-3 prompts, four responses each
    assert s1.loc[CORRECT, "count"] == 2 and s1.loc[IGNORES, "count"] == 2 + 2  # "zzz" and the script garbage
    assert math.isclose(table.groupby("model")["share"].sum()["stage1"], 1.0)
    fails = table[table["category"] != CORRECT].groupby("model")["failure_share"].sum()
    assert all(math.isclose(v, 1.0) for v in fails)
    assert (table["source"] == str(a)).sum() == len(CATEGORIES) and table["config_hash"].str.len().gt(0).all()
    pdf = tmp_path / "failure_modes.pdf"
    FIG_FM.draw(table, pdf, {})
    assert pdf.read_bytes()[:4] == b"%PDF"


def test_model_contrasts_figure(tmp_path):
    # the same test set (seed 0) for all three models: rl_level2 right 3 of 4, rl_level1 1 of 4
    paths = {m: str(eval_parquet(tmp_path / "eval" / m / "test.parquet", wrong_share=w))
             for m, w in (("rl_level2", 1), ("rl_level1", 3), ("stage1", 3))}
    settings = {"pairs": [["rl_level2", "rl_level1"], ["rl_level1", "stage1"]], "bootstrap": 200, "bootstrap_seed": 3}
    table = FIG_MC.table(list(paths.values()), settings)
    assert list(table.columns) == FIG_MC.COLUMNS
    assert table[["a", "b"]].drop_duplicates().values.tolist() == settings["pairs"]
    assert sorted(table["level"].unique()) == [2, 3]
    # every pair twice: on every prompt, and on those no one-step wrong trace solves
    assert table["prompts"].value_counts().to_dict() == {"all": 4, "full trace only": 4}
    full = table[(table["prompts"] == "full trace only") & (table["a"] == "rl_level2")].set_index("level")
    ev = pd.read_parquet(paths["rl_level2"])
    for level, n in full["n_prompts"].items():
        gts = ev[ev["level"] == level]["reward_model"]
        assert n == sum(not has_shortcut(rm["ground_truth"], 8) for rm in gts) < len(gts) + 1
    table = table[table["prompts"] == "all"]
    better = table[table["a"] == "rl_level2"]
    assert better["diff"].tolist() == pytest.approx([0.5, 0.5]) and (better["p_a_better"] == 1).all()
    assert better["ci_low"].tolist() == pytest.approx([0.5, 0.5]) == better["ci_high"].tolist()
    same = table[table["a"] == "rl_level1"]
    assert (same[["diff", "ci_low", "ci_high"]] == 0).all().all()
    assert (better["source"] == paths["rl_level2"]).all() and (better["source_b"] == paths["rl_level1"]).all()
    assert better["config_hash"].str.len().gt(0).all() and better["config_hash_b"].str.len().gt(0).all()
    pdf = tmp_path / "model_contrasts.pdf"
    FIG_MC.draw(table, pdf, settings)
    assert pdf.read_bytes()[:4] == b"%PDF"
    with pytest.raises(ValueError, match="results/eval/rft_level2_iter2/test.parquet"):
        FIG_MC.table(list(paths.values()), {"pairs": [["rl_level2", "rft_level2_iter2"]]})
    other = str(eval_parquet(tmp_path / "other" / "rl_level1" / "test.parquet", wrong_share=3, seed=5))
    with pytest.raises(ValueError, match="not evaluated on the same prompts"):
        FIG_MC.table([paths["rl_level2"], other], {"pairs": [["rl_level2", "rl_level1"]]})


def test_model_contrasts_carry_each_models_own_interval_from_its_metrics_table(tmp_path):
    """The findings read pass@1 of the models the pass@k figure does not draw from these columns."""
    from fgx.metrics import level_pass_at_k

    evals = {m: str(eval_parquet(tmp_path / "eval" / m / "test.parquet", wrong_share=w))
             for m, w in (("rl_level2", 1), ("rl_level1", 3))}
    metrics = {}
    for m, p in evals.items():
        table = level_pass_at_k(pd.read_parquet(p), [1, 2], resamples=200, seed=11).assign(model=m)
        metrics[m] = tmp_path / "metrics" / m / "test.parquet"
        metrics[m].parent.mkdir(parents=True)
        write_parquet(table, metrics[m], settings={"metrics": {"seed": 11}})
    settings = {"pairs": [["rl_level2", "rl_level1"]], "bootstrap": 200}
    table = FIG_MC.table([*evals.values(), *map(str, metrics.values())], settings)
    every = table[table["prompts"] == "all"].set_index("level")
    for side, m in (("a", "rl_level2"), ("b", "rl_level1")):
        own = pd.read_parquet(metrics[m]).query("k == 1").set_index("level")
        assert every[f"{side}_ci_low"].tolist() == own.loc[every.index, "ci_low"].tolist()
        assert every[f"{side}_ci_high"].tolist() == own.loc[every.index, "ci_high"].tolist()
        assert every[f"{side}_accuracy"].tolist() == pytest.approx(own.loc[every.index, "pass_at_k"].tolist())
    assert table[table["prompts"] != "all"][["a_ci_low", "b_ci_high"]].isna().all().all()  # subsets: no metrics
    assert FIG_MC.table(list(evals.values()), settings)[["a_ci_low", "b_ci_low"]].isna().all().all()
    many = tmp_path / "metrics" / "rl_level1" / "test_full_trace.parquet"
    write_parquet(pd.read_parquet(metrics["rl_level1"]), many)
    with pytest.raises(ValueError, match="metrics table of another split"):
        FIG_MC.table([*evals.values(), str(many)], settings)


def test_model_contrasts_on_the_full_trace_test_set(tmp_path):
    """With test_full_trace.parquet evaluations beside the test set's, every pair is compared on that set too."""
    models = (("rl_level2", 1), ("rl_level1", 3))
    paths = [str(eval_parquet(tmp_path / "eval" / m / f"{split}.parquet", wrong_share=w, seed=seed))
             for split, seed in (("test", 0), ("test_full_trace", 7)) for m, w in models]
    settings = {"pairs": [["rl_level2", "rl_level1"]], "bootstrap": 200}
    table = FIG_MC.table(paths, settings)
    assert table["prompts"].value_counts().to_dict() == {"all": 2, "full trace only": 2, "full-trace test set": 2}
    on_set = table[table["prompts"] == "full-trace test set"].set_index("level")
    assert on_set["diff"].tolist() == pytest.approx([0.5, 0.5]) and (on_set["n_prompts"] == 2).all()
    assert on_set["source"].str.endswith("rl_level2/test_full_trace.parquet").all()
    pdf = tmp_path / "model_contrasts.pdf"
    FIG_MC.draw(table, pdf, settings)
    assert pdf.read_bytes()[:4] == b"%PDF"
    with pytest.raises(ValueError, match="rl_level1/test_full_trace.parquet"):
        FIG_MC.table(paths[:3], settings)  # one model of the pair lacks the set
    odd = str(eval_parquet(tmp_path / "eval" / "rl_level1" / "test_many.parquet", wrong_share=3))
    with pytest.raises(ValueError, match="neither a test.parquet nor a test_full_trace.parquet"):
        FIG_MC.table(paths + [odd], settings)


def test_function_transfer_figure(tmp_path):
    # held-out functions (Levels 2-4): rl_level2 right 2 of 4, rl_level1 1 of 4; train functions (Levels 2-3):
    # rl_level2 4 of 4, rl_level1 1 of 4. The held-out side is cut to the train-functions set's levels.
    paths = [str(eval_parquet(tmp_path / "eval" / m / "test.parquet", wrong_share=w, max_level=4))
             for m, w in (("rl_level2", 2), ("rl_level1", 3))]
    paths += [str(eval_parquet(tmp_path / "eval" / m / "test_train_funcs.parquet", wrong_share=w, split="train"))
              for m, w in (("rl_level2", 0), ("rl_level1", 3))]
    settings = {"pairs": [["rl_level2", "rl_level1"]], "bootstrap": 200, "bootstrap_seed": 3}
    table = FIG_FT.table(paths, settings)
    assert list(table.columns) == FIG_FT.COLUMNS
    assert table["functions"].tolist() == ["held-out functions"] * 2 + ["train functions"] * 2
    assert table["level"].tolist() == [2, 3, 2, 3]
    assert table["diff"].tolist() == pytest.approx([0.25, 0.25, 0.75, 0.75])
    assert table["n_prompts"].tolist() == [2, 2, 2, 2]
    assert table["source"].tolist() == [paths[0]] * 2 + [paths[2]] * 2
    assert (table["source_b"] == table["source_b"]).all()
    pdf = tmp_path / "function_transfer.pdf"
    FIG_FT.draw(table, pdf, settings)
    assert pdf.read_bytes()[:4] == b"%PDF"
    with pytest.raises(ValueError, match="results/eval/rl_level1/test_train_funcs.parquet"):
        FIG_FT.table(paths[:3], settings)
    with pytest.raises(ValueError, match="neither a test.parquet"):
        FIG_FT.table(paths + [str(tmp_path / "eval" / "stage1" / "val.parquet")], settings)


def metrics_parquet(path, metrics):
    rows = []
    for step in range(0, 30, 10):
        for metric in metrics:
            levels = [1, 2, 3] if metric == "val_accuracy" else [-1]
            for level in levels:
                rows.append({"step": step, "metric": metric, "level": level, "value": 0.1 * level + step / 100})
    rows.append({"step": 0, "metric": "loss", "level": -1, "value": 3.0})  # not plotted
    write_parquet(pd.DataFrame(rows), path, settings={"rl": {"algo": "grpo"}})
    return path


def validation_parquet(path, shares: dict, prompts=40, n=4, temperature=1.0):
    """An RL run's validation table: shares[(step, level)] of each level's prompts solve every sample."""
    rows = [{"step": step, "level": level, "prompt_row": (level - 1) * prompts + i, "n_samples": n,
             "n_correct": n * (i < round(share * prompts))}
            for (step, level), share in shares.items() for i in range(prompts)]
    write_parquet(pd.DataFrame(rows), path, settings={"val_n": n, "val_temperature": temperature})
    return str(path)


def test_rl_level_accuracy_figure_draws_each_point_with_its_band(tmp_path):
    settings = {"figure": "rl_level_accuracy", "bootstrap": 200, "ci": 0.95, "bootstrap_seed": 3}
    level2 = validation_parquet(tmp_path / "rl" / "level2" / "validation.parquet",
                                {(0, 2): 0.3, (0, 3): 0.1, (20, 2): 0.6, (20, 3): 0.3})
    level1 = validation_parquet(tmp_path / "rl" / "level1" / "validation.parquet",
                                {(0, 2): 0.3, (0, 3): 0.1, (20, 2): 0.3, (20, 3): 0.1}, prompts=20, n=2)
    table = FIG_RL.table([level2, level1], settings)
    assert list(table.columns) == FIG_RL.COLUMNS
    assert table[["model", "step", "level"]].values.tolist() == [
        ["rl_level1", 0, 2], ["rl_level1", 20, 2], ["rl_level1", 0, 3], ["rl_level1", 20, 3],
        ["rl_level2", 0, 2], ["rl_level2", 20, 2], ["rl_level2", 0, 3], ["rl_level2", 20, 3]]
    l2 = table[table["model"] == "rl_level2"].set_index(["level", "step"])
    assert l2["accuracy"].tolist() == pytest.approx([0.3, 0.6, 0.1, 0.3])
    assert l2.loc[(2, 20), "change"] == pytest.approx(0.3) and l2.loc[(2, 20), "change_ci_low"] > 0.15
    assert (table["ci_low"] <= table["accuracy"]).all() and (table["accuracy"] <= table["ci_high"]).all()
    assert (l2["n_prompts"] == 40).all() and (l2["n_samples"] == 4).all() and (table["temperature"] == 1.0).all()
    assert table["source"].str.endswith("validation.parquet").all()
    assert table.equals(FIG_RL.table([level2, level1], settings))  # the bootstrap's own seed
    pdf = tmp_path / "rl_level_accuracy.pdf"
    FIG_RL.draw(table, pdf, settings)
    assert pdf.read_bytes()[:4] == b"%PDF"


def test_level_panels_all_carry_x_tick_labels():
    """Six levels in two rows: the top row's panels have no panel below them, so each shows its own ticks."""
    from fgx.figures.style import level_grid

    fig, panels = level_grid([1, 2, 3, 4, 5, 6])
    assert all(ax.xaxis.get_tick_params()["labelbottom"] for ax in panels.values())


def test_training_dynamics_figure(tmp_path):
    a = metrics_parquet(tmp_path / "rl" / "level1" / "metrics.parquet",
                        ["reward", "val_accuracy", "response_length", "filtered_group_share"])
    b = metrics_parquet(tmp_path / "rl" / "level2" / "metrics.parquet", ["reward", "val_accuracy"])  # no length
    table = FIG_TD.table([str(a), str(b)], {})
    assert list(table.columns) == FIG_TD.COLUMNS
    assert set(table["metric"]) == {"reward", "val_accuracy", "response_length", "filtered_group_share"}
    assert set(table["model"]) == {"rl_level1", "rl_level2"} and set(table["run"]) == {"level1", "level2"}
    assert FIG_TD.panels(table)[:4] == [("reward", -1), ("val_accuracy", 1), ("val_accuracy", 2), ("val_accuracy", 3)]
    assert table[(table["model"] == "rl_level2") & (table["metric"] == "response_length")].empty
    pdf = tmp_path / "training_dynamics.pdf"
    FIG_TD.draw(table, pdf, {})
    assert pdf.read_bytes()[:4] == b"%PDF"
    only = FIG_TD.table([str(a)], {"dynamics_metrics": ["val_accuracy"], "dynamics_levels": [3]})
    assert set(zip(only["metric"], only["level"])) == {("val_accuracy", 3)}
    empty = FIG_TD.table([str(b)], {"dynamics_metrics": ["entropy"]})
    assert empty.empty
    FIG_TD.draw(empty, tmp_path / "empty.pdf", {})
    assert (tmp_path / "empty.pdf").stat().st_size > 0


def test_training_dynamics_rejects_wide_format(tmp_path):
    path = tmp_path / "rl" / "x" / "metrics.parquet"
    write_parquet(pd.DataFrame({"step": [0], "reward": [1.0]}), path)
    with pytest.raises(ValueError, match="long format"):
        FIG_TD.table([str(path)], {})


def test_sample_browser_page(tmp_path):
    a = eval_parquet(tmp_path / "eval" / "stage1" / "test.parquet", wrong_share=3)
    tables = {"stage1": classify_eval(pd.read_parquet(a), level=None), "empty<model>": classify_eval(
        pd.read_parquet(a), level=9)}
    page = render_html(tables, per_cell=2, seed=0)
    assert page == render_html(tables, per_cell=2, seed=0)
    assert page.startswith("<!DOCTYPE html>") and page.rstrip().endswith("</html>")
    assert "<script>" not in page and "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    assert "empty&lt;model&gt;" in page and "http" not in page and " src=" not in page
    assert "stage1 · Level 2" in page and "stage1 · Level 3" in page
    for cat in ("Correct", "Ignores Composition"):
        assert f"{cat}: " in page
    assert page.count("class='sample'") <= 2 * 2 * len(CATEGORIES)
    assert "Reference trace" in page and '{&quot;output&quot;' in page
    with pytest.raises(ValueError):
        render_html(tables, per_cell=0)


def test_sample_browser_cli(tmp_path):
    a = eval_parquet(tmp_path / "eval" / "stage1" / "test.parquet", wrong_share=2)
    b = eval_parquet(tmp_path / "eval" / "rl_level2" / "test.parquet", wrong_share=1, seed=1)
    spec = importlib.util.spec_from_file_location("sample_browser_cli", ROOT / "scripts" / "sample_browser.py")
    cli = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(cli)
    out = tmp_path / "results" / "samples.html"
    cli.main(["--inputs", str(a), str(b), "--out", str(out), "--level", "3",
              "--settings", json.dumps({"per_cell": 1, "seed": 1})])
    page = out.read_text(encoding="utf-8")
    assert "id='stage1'" in page and "id='rl_level2'" in page and "Level 2" not in page
    assert not [p for p in out.parent.iterdir() if p.name.startswith(".")]  # atomic: no temp file left
