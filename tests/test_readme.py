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
    block = re.search(r"<!-- results:begin -->(.*?)<!-- results:end -->", TEXT, re.S)[1]
    digit = re.search(r"\d", block)
    assert digit, "the results block holds numbers"
    i = TEXT.index(block) + digit.start()
    edited = TEXT[:i] + str((int(TEXT[i]) + 1) % 10) + TEXT[i + 1:]
    assert readme.render(edited) != edited


def test_links_resolve_and_the_readme_stays_short():
    assert len(TEXT.splitlines()) <= 220
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
    runs = tmp_path / readme.LEVEL4_OVERLAY
    shutil.copytree(readme.RESULTS / readme.LEVEL4_OVERLAY, runs)
    assert "points over RL Level 1" in readme.level4_block(tmp_path)
    shutil.rmtree(runs / "seed0")
    shutil.rmtree(runs / "seed1")  # seed 2's run, timed to model_contrasts only, is left
    with pytest.raises(ValueError, match="seed2/run.json: no rule_all_wall_s"):
        readme.level4_block(tmp_path)


def test_the_timing_block_is_a_range_over_every_recorded_run(tmp_path):
    import json
    import shutil

    shutil.copy(readme.RESULTS / "main-job.json", tmp_path)
    record = json.loads((readme.RESULTS / "main-job-runs.json").read_text())
    assert len(record["runs"]) >= 2 and all(r["machine"] and r["commit"] for r in record["runs"])
    assert sum(r["wall_s"] is not None for r in record["runs"]) >= 2
    record["runs"].append({**record["runs"][0], "commit": "abc1234", "wall_s": 3 * 3600, "pretrain_s": 9000,
                           "figure_table_equals_seed0": True})
    record["runs"].append({**record["runs"][0], "commit": "def5678", "wall_s": None, "pretrain_s": None,
                           "figure_table_equals_seed0": True})  # a shared machine: untimed
    (tmp_path / "main-job-runs.json").write_text(json.dumps(record))
    block = readme.timing_block(tmp_path)
    walls = sorted(r["wall_s"] for r in record["runs"] if r["wall_s"] is not None)
    assert f"takes {walls[0] / 60:.0f}–180 min on {record['runs'][0]['machine']}" in block
    assert "abc1234" in block and "9,000 s" in block and f"({len(walls)} runs on" in block
    assert f"every run ({len(record['runs'])}, " in block and "def5678" in block  # counted for the table only
    record["runs"][-2]["figure_table_equals_seed0"] = False
    (tmp_path / "main-job-runs.json").write_text(json.dumps(record))
    block = readme.timing_block(tmp_path)
    assert "byte for byte" not in block  # said only when every run's figure table equals seed 0's
