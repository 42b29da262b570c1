"""Leakage check between test and training parquet files."""

import json

import pandas as pd
import pytest

from fgx.io import write_parquet
from fgx.tasks import countdown as C
from fgx.tasks import strings as S
from fgx.tasks.leakage import check_leakage, find_leaks, main


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    d = tmp_path_factory.mktemp("leak")
    test = S.generate(stage=2, split="test", min_level=1, max_level=3, num=30, seed=1)
    test_codes = {json.loads(g["ground_truth"])["ref_code"] for g in test.reward_model}
    train = S.generate(stage=2, split="train", min_level=1, max_level=2, num=60, seed=2,
                       exclude={S.normalise_code(c) for c in test_codes})
    paths = {"test": d / "test.parquet", "train": d / "train.parquet"}
    write_parquet(test, paths["test"])
    write_parquet(train, paths["train"])
    # a training file holding one test program (on another input, in compact style, other spacing)
    e = S.parse_code(json.loads(test.reward_model[5]["ground_truth"])["ref_code"])
    row = S.make_row(S.Problem(e, "zzz", S.evaluate(e, "zzz"), S.depth(e)), stage=2, split="train",
                     style="compact", index=0)
    gt = json.loads(row["reward_model"]["ground_truth"])
    gt["ref_code"] = gt["ref_code"].replace(", ", ",")
    row["reward_model"]["ground_truth"] = json.dumps(gt)
    paths["leaky"] = d / "leaky.parquet"
    write_parquet(pd.DataFrame([row]), paths["leaky"])
    # Stage-1 Level-1 data containing every Level-1 test program (expected by design)
    lvl1 = [S.parse_code(json.loads(g["ground_truth"])["ref_code"]) for g, info in
            zip(test.reward_model, test.extra_info) if info["depth"] == 1]
    rows = [S.make_row(S.Problem(e, "abc", S.evaluate(e, "abc"), 1), stage=1, split="train", style="paper", index=i)
            for i, e in enumerate(lvl1)]
    paths["stage1"] = d / "stage1.parquet"
    write_parquet(pd.DataFrame(rows), paths["stage1"])
    paths["d"] = d
    paths["leaked_expr"] = "strings:" + S.render_code(e)
    return paths


def test_clean_and_leaky(files):
    assert check_leakage([files["test"]], [files["train"]]) == []
    assert check_leakage([files["test"]], [files["train"], files["leaky"]]) == [files["leaked_expr"]]


def test_stage1_level1_overlap_is_expected_unless_strict(files):
    report = find_leaks([files["test"]], [files["stage1"]])
    assert report["ok"] and report["n_expected_overlap_rows"] == 10
    assert len(check_leakage([files["test"]], [files["stage1"]], strict=True)) == 10


def test_stage1_rows_without_a_stage_field_are_read_as_stage1_by_their_file(files, tmp_path):
    """Upstream's rows carry only index, split and depth: a Stage-1 file is one whose programs print
    definitions, and its Level-1 rows without a custom call (``(x + 'ab')``) are Stage 1 as well."""
    rows = [dict(r, extra_info={k: r["extra_info"][k] for k in ("index", "split", "depth")})
            for r in pd.read_parquet(files["stage1"]).to_dict("records")]
    plain = S.Problem(S.parse_code("(x + 'ab')"), "abc", "abcab", 1)
    rows.append(S.make_row(plain, stage=1, split="train", style="paper", index=len(rows)))
    rows[-1]["extra_info"] = {"index": len(rows) - 1, "split": "train", "depth": 1}
    write_parquet(pd.DataFrame(rows), tmp_path / "upstream_stage1.parquet")
    test = pd.read_parquet(files["test"])
    extra = S.make_row(plain, stage=2, split="test", style="paper", index=99)
    write_parquet(pd.concat([test, pd.DataFrame([extra])], ignore_index=True), tmp_path / "test.parquet")
    report = find_leaks([tmp_path / "test.parquet"], [tmp_path / "upstream_stage1.parquet"])
    assert report["ok"] and report["n_expected_overlap_rows"] == 11


def test_countdown_keys(tmp_path):
    a = C.generate(numbers=3, num=3, seed=42)
    write_parquet(a, tmp_path / "a.parquet")
    write_parquet(a.iloc[[1]], tmp_path / "b.parquet")
    gt = json.loads(a.reward_model[1]["ground_truth"])
    assert check_leakage([tmp_path / "a.parquet"], [tmp_path / "b.parquet"]) == [
        f"countdown:{sorted(gt['numbers'])}->{gt['answer']}"]


def test_cli(files, capsys):
    out = files["d"] / "report.json"
    assert main(["--test", str(files["test"]), "--train", str(files["train"]), str(files["stage1"]),
                 "--out", str(out)]) == 0
    assert json.loads(out.read_text())["ok"] is True
    assert main(["--test", str(files["test"]), "--train", str(files["train"]), str(files["leaky"]),
                 "--out", str(out)]) == 1
    err = capsys.readouterr().err
    assert "leaky.parquet row 0" in err and files["leaked_expr"] in err
    report = json.loads(out.read_text())
    assert not report["ok"] and report["leaks"][0]["test_row"] == 5


def test_bad_files_name_file_field_and_fix(files, capsys):
    bad = files["d"] / "bad.parquet"
    write_parquet(pd.DataFrame({"data_source": ["codeio-forward-incomplete-depth1"],
                                "reward_model": [{"style": "rule"}]}), bad)
    with pytest.raises(ValueError, match=r"bad.parquet: row 0 lacks field reward_model.ground_truth; regenerate"):
        check_leakage([bad], [files["train"]])
    nocol = files["d"] / "nocol.parquet"
    write_parquet(pd.DataFrame({"x": [1]}), nocol)
    with pytest.raises(ValueError, match="nocol.parquet: column.s. data_source, reward_model missing"):
        check_leakage([nocol], [files["train"]])
    assert main(["--test", str(files["d"] / "missing.parquet"), "--train", str(files["train"]),
                 "--out", str(files["d"] / "r.json")]) == 2
    assert "missing.parquet: problem set not found" in capsys.readouterr().err
