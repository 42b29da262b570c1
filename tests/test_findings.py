"""fgx.analysis.findings: the paper's findings checked against figure tables by fixed rules."""

from pathlib import Path

import pandas as pd
import pytest

from fgx.analysis import findings as F

MODELS = ("stage1", "rl_level1", "rl_level2", "rl_level1to2")


def _passk(acc: dict, gap_k: dict | None = None) -> pd.DataFrame:
    """pass@k rows for k in (1, 16): acc[(model, level)] = pass@1 (CI +-0.05); pass@16 = pass@1 + 0.2,
    plus gap_k[level] for rl_level1to2."""
    rows = []
    for (m, lv), a in acc.items():
        for k in (1, 16):
            v = a if k == 1 else a + 0.2 + (gap_k or {}).get(lv, 0.0) * (m == "rl_level1to2")
            rows.append({"model": m, "level": lv, "k": k, "pass_at_k": v, "ci_low": v - 0.05, "ci_high": v + 0.05})
    return pd.DataFrame(rows)


def _contrasts(acc: dict, pairs, half_width=0.05) -> pd.DataFrame:
    rows = []
    for a, b in pairs:
        for lv in sorted({lv for (_, lv) in acc}):
            d = acc[(a, lv)] - acc[(b, lv)]
            rows.append({"a": a, "b": b, "level": lv, "a_accuracy": acc[(a, lv)], "b_accuracy": acc[(b, lv)],
                         "diff": d, "ci_low": d - half_width, "ci_high": d + half_width})
    return pd.DataFrame(rows)


def _tables(l3_lead: float, half_width=0.05, rft_l3=0.10):
    acc = {}
    for lv in range(1, 7):
        base = {1: 0.9, 2: 0.5, 3: 0.3, 4: 0.1, 5: 0.05, 6: 0.02}[lv]
        acc.update({("stage1", lv): base, ("rl_level1", lv): base + 0.01,
                    ("rl_level2", lv): base + 0.01 + (l3_lead if lv == 3 else 0.08 if lv == 4 else 0.02),
                    ("rl_level1to2", lv): base + 0.01 + (l3_lead if lv == 3 else 0.01)})
    acc.update({("rft_level2_iter2", lv): acc[("stage1", lv)] for lv in range(1, 7)})
    acc.update({("rft_level2_iter10", lv): acc[("stage1", lv)] for lv in range(1, 7)})
    acc[("rft_level2_iter10", 3)] = rft_l3
    pairs = [("rl_level2", "rl_level1"), ("rl_level1to2", "rl_level1"), ("rl_level1", "stage1"),
             ("rl_level2", "rft_level2_iter10")]
    passk = _passk({k: v for k, v in acc.items() if k[0] in MODELS},
                   gap_k={1: -0.02, 2: -0.05, 3: 0.05, 4: 0.05, 5: 0.05, 6: 0.05})
    return {"passk_level_curve": passk, "model_contrasts": _contrasts(acc, pairs, half_width)}


def _verdicts(tables) -> dict:
    return {r["finding"]: r["verdict"] for r in F.check(tables)}


def test_a_level3_lead_of_20_points_with_intervals_apart_holds():
    v = _verdicts(_tables(0.20))
    assert v["RL on Level 2 − RL on Level 1 at Level 3 (holds at ≥ +15, intervals apart)"] == "holds"
    assert v["RL on Level 1+2 − RL on Level 1 at Level 3 (holds at ≥ +15, intervals apart)"] == "holds"
    assert v["RL on Level 1 stays near the Stage-1 base on Levels ≥ 3"] == "holds"
    assert v["RL on Level 2 − RL on Level 1 at Level 4"] == "holds"   # +8, paired CI [3, 13]
    assert v["RL on Level 2 − RL on Level 1 above zero at Levels ≥ 5"] == "holds"
    assert v["pass@k gap (RL L1+2 − base, k 1 → 16) grows at Levels ≥ 3, shrinks at 1–2"] == "holds"


def _pair_drawn(tables) -> dict:
    """``tables`` as a run whose pass@k figure draws only the Stage-1 base and RL Level 1+2: every other
    model's pass@1 and own interval (+-0.05, as the pass@k rows) in the contrast table."""
    p, c = tables["passk_level_curve"], tables["model_contrasts"].copy()
    for side in ("a", "b"):
        c[f"{side}_ci_low"], c[f"{side}_ci_high"] = c[f"{side}_accuracy"] - 0.05, c[f"{side}_accuracy"] + 0.05
    return {**tables, "passk_level_curve": p[p["model"].isin(["stage1", "rl_level1to2"])], "model_contrasts": c}


@pytest.mark.parametrize("lead", [0.20, 0.16, 0.10, 0.03])
def test_pass_at_1_of_models_the_passk_figure_does_not_draw_comes_from_the_contrast_table(lead):
    every, pair = _tables(lead), _pair_drawn(_tables(lead))
    assert _verdicts(pair) == _verdicts(every)
    key = ["model", "level"]
    a = F.pass_at_1(every).sort_values(key).reset_index(drop=True)
    b = F.pass_at_1(pair).sort_values(key)
    b = b[b["model"].isin(MODELS)].reset_index(drop=True)  # and the RFT model of the last pair
    pd.testing.assert_frame_equal(a, b, check_dtype=False)
    same = [line for line in F.readme_markdown([("seed 0", every)], [{}]).splitlines() if "iterative RFT" not in line]
    assert same == [line for line in F.readme_markdown([("seed 0", pair)], [{}]).splitlines()
                    if "iterative RFT" not in line]


def test_own_intervals_from_the_contrast_table_decide_holds_as_the_passk_rows_do():
    tables = _pair_drawn(_tables(0.16))
    key = "RL on Level 2 − RL on Level 1 at Level 3 (holds at ≥ +15, intervals apart)"
    assert _verdicts(tables)[key] == "holds"
    c = tables["model_contrasts"]
    c.loc[(c["a"] == "rl_level2") & (c["level"] == 3), "a_ci_low"] -= 0.10  # RL L2's own interval reaches RL L1's
    row = next(r for r in F.check(tables) if r["finding"] == key)
    assert row["verdict"] == "partly" and "own intervals overlap" in row["measured"]


def test_a_resolved_lead_below_15_points_is_partly_and_an_unresolved_one_no():
    v = _verdicts(_tables(0.10))
    key = "RL on Level 2 − RL on Level 1 at Level 3 (holds at ≥ +15, intervals apart)"
    assert v[key] == "partly"
    assert "lead below +15 points" in next(r["measured"] for r in F.check(_tables(0.10)) if r["finding"] == key)
    assert _verdicts(_tables(0.03))[key] == "no"          # paired CI [-2, 8] includes zero
    assert _verdicts(_tables(-0.10))[key] == "no"


def test_holds_needs_the_models_own_intervals_apart():
    tables = _tables(0.16)
    p = tables["passk_level_curve"]
    wide = (p["model"] == "rl_level2") & (p["level"] == 3) & (p["k"] == 1)
    p.loc[wide, "ci_low"] -= 0.10  # RL L2's own interval now reaches into RL L1's
    key = "RL on Level 2 − RL on Level 1 at Level 3 (holds at ≥ +15, intervals apart)"
    row = next(r for r in F.check(tables) if r["finding"] == key)
    assert row["verdict"] == "partly" and "own intervals overlap" in row["measured"]


def test_rft_uses_the_last_iteration_by_number_and_rl_level1_drifting_from_the_base_fails():
    rows = {r["finding"]: r for r in F.check(_tables(0.20, rft_l3=0.10))}
    rft = rows["RL on Level 2 − iterative RFT at Level 3"]
    assert rft["verdict"] == "holds" and "(RFT 10.0 %)" in rft["measured"]  # iter10, not iter2 (30 %)
    assert _verdicts(_tables(0.20, rft_l3=0.55))["RL on Level 2 − iterative RFT at Level 3"] == "no"
    tables = _tables(0.20)
    c = tables["model_contrasts"]
    c.loc[(c["a"] == "rl_level1") & (c["b"] == "stage1") & (c["level"] == 4), "diff"] = 0.08
    assert _verdicts(tables)["RL on Level 1 stays near the Stage-1 base on Levels ≥ 3"] == "no"


def test_missing_tables_and_models_are_not_run():
    rows = F.check({})
    assert {r["verdict"] for r in rows} == {"not run"}
    cd = pd.DataFrame({"model": ["stage1_multi", "rl_multi_level1", "rl_multi_level1to2", "rl_level1to2"],
                       "numbers": 3, "avg_at_k": [0.1, 0.2, 0.3, 0.05]})
    v = _verdicts({"countdown_transfer": cd})
    assert v["Countdown, 3 numbers: Multi-Base + RL L1+2 the best model"] == "holds"
    cd["avg_at_k"] = 0.0
    assert _verdicts({"countdown_transfer": cd})["Countdown, 3 numbers: Multi-Base + RL L1+2 the best model"] == "no"
    # the Multi-Base's 2-number check (its atomic skill) rides along, never counted as a 3-number model
    cd = pd.concat([cd, pd.DataFrame({"model": ["stage1_multi"], "numbers": [2], "avg_at_k": [0.62]})])
    row = next(r for r in F.check({"countdown_transfer": cd}) if r["finding"].startswith("Countdown"))
    assert row["verdict"] == "no" and row["measured"].endswith("(Multi-Base on 2 numbers 62.0 %)")
    assert F._short(row) == "**no** every model 0.0 % (Multi-Base on 2 numbers 62.0 %)"


def test_cli_writes_both_tables_for_two_runs(tmp_path, capsys):
    for seed, lead in ((0, 0.20), (1, 0.10)):
        d = tmp_path / f"s{seed}"
        d.mkdir()
        for name, table in _tables(lead).items():
            table.to_csv(d / f"{name}.csv", index=False)
    out = tmp_path / "findings.md"
    assert F.main([str(tmp_path / "s0"), str(tmp_path / "s1"), "--labels", "seed 0", "seed 1", "--out", str(out)]) == 0
    text = out.read_text()
    assert text == capsys.readouterr().out[:-1]  # print adds a newline
    assert "| RL Level 2 | 93.0 / 53.0 / 51.0 / 19.0 | 93.0 / 53.0 / 41.0 / 19.0 |" in text
    assert "**holds**: +20.0 [15.0, 25.0] (51.0 vs 31.0 %)" in text and "**partly**: +10.0" in text
    with pytest.raises(SystemExit, match="no such directory"):
        F.main([str(tmp_path / "absent")])
    with pytest.raises(SystemExit):
        F.main([str(tmp_path / "s0"), "--labels", "a", "b"])


def test_cli_reads_one_runs_tables_as_files_as_the_rule_does(tmp_path, capsys):
    paths = []
    for name, table in _tables(0.20).items():
        table.to_csv(tmp_path / f"{name}.csv", index=False)
        paths.append(str(tmp_path / f"{name}.csv"))
    out = tmp_path / "analysis" / "findings.md"
    assert F.main(["--tables", *paths, "--out", str(out)]) == 0
    text = out.read_text()
    assert "| finding | paper (Llama-3.1-8B-Instruct) | this run |" in text and "**holds**: +20.0" in text
    other = tmp_path / "training_dynamics.csv"
    other.write_text("model,level\n")
    with pytest.raises(SystemExit, match="training_dynamics.csv: not one of the figure tables"):
        F.main(["--tables", str(other)])
    with pytest.raises(SystemExit):  # directories and files together
        F.main([str(tmp_path), "--tables", *paths])


def _transfer(diffs: dict) -> pd.DataFrame:
    """function_transfer rows: diffs[(functions, level)] for the pair RL Level 2 - RL Level 1."""
    return pd.DataFrame([{"a": "rl_level2", "b": "rl_level1", "functions": f, "level": lv, "diff": d,
                          "ci_low": d - 0.05, "ci_high": d + 0.05} for (f, lv), d in diffs.items()])


def test_transfer_table_sets_train_functions_beside_held_out_ones_without_a_verdict(tmp_path, capsys):
    assert F.transfer_markdown([("run", _tables(0.2))]) == ""  # no function_transfer table: no section
    t0 = _transfer({("held-out functions", 2): 0.07, ("held-out functions", 3): -0.0004,
                    ("train functions", 2): 0.12, ("train functions", 3): 0.19})
    text = F.transfer_markdown([("seed 0", {"function_transfer": t0}), ("seed 1", {})])
    assert "| pair | functions | seed 0: Levels 2 / 3 | seed 1: Levels 2 / 3 |" in text
    assert "| RL Level 2 − RL Level 1 | held-out functions | +7.0 / +0.0 | not run |" in text
    assert "| RL Level 2 − RL Level 1 | train functions | +12.0 / +19.0 | not run |" in text
    tables = _tables(0.2)
    for name, table in {**tables, "function_transfer": t0}.items():
        table.to_csv(tmp_path / f"{name}.csv", index=False)
    assert F.main([str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "Learnt per function, or carried over?" in out and "+19.0" in out
    assert out.index("The paper's findings") < out.index("Learnt per function")


def test_a_many_samples_subset_sets_the_pass_at_k_gap_but_not_pass_at_1():
    """The subset's k = 1 rows (a few prompts) must not mix with the whole test set's pass@1; the
    pass@k finding reads the subset, whose k goes furthest."""
    tables = _tables(0.20)
    full = tables["passk_level_curve"].assign(prompts=F.PASSK_ALL_PROMPTS)
    subset = full.assign(prompts="subset, many samples", pass_at_k=0.0, ci_low=0.0, ci_high=0.0)
    subset.loc[subset["k"] == 16, "k"] = 256
    tables["passk_level_curve"] = pd.concat([full, subset], ignore_index=True)
    p1 = F.pass_at_1(tables)
    assert len(p1) == (full["k"] == 1).sum() and p1["accuracy"].gt(0).all()
    gap = next(r for r in F.check(tables) if r["finding"].startswith("pass@k gap"))
    assert "k 1 → 256" in gap["finding"] and gap["verdict"] == "no"  # the subset's gap is 0 at every k
    assert "–" not in F.pass1_markdown([("seed 0", tables)])  # every model and level has its pass@1


def test_readme_table_has_every_finding_and_each_runs_machine_and_commit():
    infos = [{"machine": "CPU A", "commit": "abc1234", "target": "figures/passk_level_curve.pdf", "wall_s": 1500,
              "rule_all_wall_s": 3000},
             {"machine": "CPU B", "commit": "def5678", "target": "all", "wall_s": 2400}]
    md = F.readme_markdown([("seed 0", _tables(0.20)), ("seed 1", _tables(0.10))], infos)
    rows = {line.split(" | ")[0].lstrip("| "): line for line in md.splitlines()}
    assert all(name in rows for name, _ in F.README_FINDINGS)
    assert "**holds** +20.0" in rows["2. RL Level 2 − RL Level 1, Level 3"]
    assert "**partly** +10.0" in rows["2. RL Level 2 − RL Level 1, Level 3"]
    assert rows[F.README_FINDINGS[5][0]].count("not run") == 2  # a study's row no run measured still appears
    assert rows["machine"] == "| machine | CPU A | CPU B | |" and rows["commit"] == "| commit | abc1234 | def5678 | |"


def test_a_familys_readme_rows_appear_where_a_run_holds_its_tables():
    """A task family's README rows come with its findings' tables (a study run apart: once published), one
    row per row its check returns, even when one run lacks them; without them, none."""
    owned = [(name, owner) for name, _, owner in F.readme_findings() if owner]
    assert {owner for _, owner in owned} >= {"countdown", "arithmetic"}

    def names(*runs):
        md = F.readme_markdown([(f"seed {i}", t) for i, t in enumerate(runs)], [{}] * len(runs), run_rows=False)
        return {line.split(" | ")[0].lstrip("| ") for line in md.splitlines()}

    cd = pd.DataFrame({"model": ["stage1_multi", "rl_multi_level1", "rl_multi_level1to2"], "numbers": 3,
                       "avg_at_k": [0.1, 0.2, 0.3]})
    without = names(_tables(0.20))
    assert all(name not in without for name, _ in owned) and all(n in without for n, _ in F.README_FINDINGS)
    with_countdown = names(_tables(0.20), {**_tables(0.10), "countdown_transfer": cd})
    assert {name for name, owner in owned if owner == "countdown"} <= with_countdown
    assert all(name not in with_countdown for name, owner in owned if owner != "countdown")


def test_level4_on_prompts_only_a_full_trace_solves_has_its_own_verdict():
    name = "RL on Level 2 − RL on Level 1 at Level 4, prompts only a full trace solves"
    tables = _tables(0.20)
    assert _verdicts(tables)[name] == "not run"  # a contrast table without the prompts column
    every = tables["model_contrasts"].assign(prompts="all")
    for diff, verdict in ((0.06, "holds"), (0.045, "partly"), (0.02, "partly"), (0.0, "no")):
        full = every.assign(prompts="full trace only", diff=diff, ci_low=diff - 0.04, ci_high=diff + 0.04, n_prompts=34)
        tables["model_contrasts"] = pd.concat([every, full], ignore_index=True)
        assert _verdicts(tables)[name] == verdict
        # the other findings still read every prompt
        finding = "RL on Level 2 − RL on Level 1 at Level 3 (holds at ≥ +15, intervals apart)"
        assert _verdicts(tables)[finding] == "holds"
    # the full-trace test set, where the run has one, decides the row over the test set's few such prompts
    full = every.assign(prompts="full trace only", diff=0.06, ci_low=0.02, ci_high=0.10, n_prompts=34)
    on_set = every.assign(prompts="full-trace test set", diff=0.004, ci_low=-0.003, ci_high=0.011, n_prompts=256)
    tables["model_contrasts"] = pd.concat([every, full, on_set], ignore_index=True)
    assert _verdicts(tables)[name] == "partly"
    row = next(r for r in F.check(tables) if r["finding"] == name)
    assert "of the full-trace test set's 256 prompts" in row["measured"]


def test_findings_1_to_3_hold_only_when_every_core_row_says_holds():
    def tables(l3_lead=0.20, **kw):  # the fixture with RL Level 1+2 ahead at Level 4 as well (+8, CI [3, 13])
        t = _tables(l3_lead, **kw)
        c = t["model_contrasts"]
        at = (c["a"] == "rl_level1to2") & (c["b"] == "rl_level1") & (c["level"] == 4)
        c.loc[at, ["diff", "ci_low", "ci_high"]] = [0.08, 0.03, 0.13]
        return t

    names = [r["finding"] for r in F.check(tables())]
    assert set(F.CORE_FINDINGS) <= set(names) and F.FULL_TRACE_FINDING in names  # the names check() writes
    assert F.core_findings_hold(F.check(tables()))
    assert not F.core_findings_hold(F.check(_tables(0.20)))  # RL Level 1+2 +1.0 [-4, 6] at Level 4: "partly"
    assert not F.core_findings_hold(F.check(tables(0.10)))  # a Level-3 lead of 10 points: "partly"
    assert not F.core_findings_hold(F.check(tables(rft_l3=0.55)))  # iterative RFT above RL Level 2
    # the refinements are not findings 1-3: a full-trace row that says "no" leaves them holding
    rows = [dict(r, verdict="no") if r["finding"] == F.FULL_TRACE_FINDING else r for r in F.check(tables())]
    assert F.core_findings_hold(rows)


def test_the_papers_numbers_are_written_once():
    """Every paper number the findings and the README's table quote comes from PAPER_LEVEL34 (a lead is the
    difference of two of its pass@1 values), so the README's pass@1 row and a lead cannot disagree."""
    import ast
    import re

    tree = ast.parse(Path(F.__file__).read_text(encoding="utf-8"))
    literals = [n.value for n in ast.walk(tree) if isinstance(n, ast.Constant) and isinstance(n.value, str)]
    assert not [t for t in literals if re.search(r"[≈~] ?\+?\d|\d+ → \d+ %", t)], "a paper number written by hand"
    lead = F.paper_lead("rl_level2", 3)
    base, rl = F.PAPER_PASS1["rl_level1"].split(" / ")[2], F.PAPER_PASS1["rl_level2"].split(" / ")[2]
    assert lead == f"≈ +{int(rl[1:]) - int(base[1:])} ({base[1:]} → {rl[1:]} %)"
    assert dict(F.README_FINDINGS)["2. RL Level 2 − RL Level 1, Level 4"] == F.paper_lead("rl_level2", 4, short=True)


def _curves(l2_rise=0.30, l3_rise=0.18, flat_jitter=0.01, half_width=0.05, paired=0.03):
    """rl_level_accuracy rows: RL Level 2 lifts Levels 2 and 3 by the rises, RL Level 1 stays at its start
    (+- flat_jitter); own bands +- half_width, paired change intervals +- paired."""
    rows = []
    for model in ("rl_level1", "rl_level2"):
        for level, start in {1: 0.95, 2: 0.3, 3: 0.1, 4: 0.03}.items():
            rise = {2: l2_rise, 3: l3_rise}.get(level, 0.0) if model == "rl_level2" else 0.0
            for k, step in enumerate((0, 80, 160)):
                change = rise * k / 2 + (flat_jitter * (-1) ** k if step and model == "rl_level1" else 0.0)
                acc = start + change
                rows.append({"model": model, "step": step, "level": level, "accuracy": acc,
                             "ci_low": acc - half_width, "ci_high": acc + half_width, "change": change,
                             "change_ci_low": change - paired * (step > 0),
                             "change_ci_high": change + paired * (step > 0),
                             "n_prompts": 128, "n_samples": 4})
    return pd.DataFrame(rows)


def test_the_rl_curves_rise_under_rl_on_level2_and_stay_in_their_band_under_rl_on_level1():
    rise2 = F.FIG2_RISE_FINDING.format(level=2, pts=20)
    rise3 = F.FIG2_RISE_FINDING.format(level=3, pts=15)
    rows = {r["finding"]: r for r in F.check({"rl_level_accuracy": _curves()})}
    assert rows[rise2]["verdict"] == "holds" and rows[rise3]["verdict"] == "holds"
    assert rows[rise2]["measured"] == "+30.0 [27.0, 33.0] (30.0 → 60.0 % at step 160, 128 prompts × 4 samples)"
    assert rows[F.FIG2_FLAT_FINDING]["verdict"] == "holds"
    assert rows[F.FIG2_FLAT_FINDING]["measured"].startswith("L3 -1.0 at most; L4 -1.0 at most")
    rows = {r["finding"]: r for r in F.check({"rl_level_accuracy": _curves(l2_rise=0.10, l3_rise=0.01,
                                                                           flat_jitter=0.08)})}
    assert rows[rise2]["verdict"] == "partly"  # resolved, below +20
    assert rows[rise3]["verdict"] == "no"      # +1 [-2, 4]: not resolved
    assert rows[F.FIG2_FLAT_FINDING]["verdict"] == "no"
    assert "outside at step 80, 160" in rows[F.FIG2_FLAT_FINDING]["measured"]
    # a table without bands (drawn before they were) is not read
    old = _curves()[["model", "step", "level", "accuracy"]]
    assert {r["verdict"] for r in F.curve_rows({"rl_level_accuracy": old})} == {"not run"}
    assert {r["verdict"] for r in F.curve_rows({})} == {"not run"}
