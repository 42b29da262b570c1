"""Model text is data: whatever a response holds (JSON escapes that decode to lone surrogates, NUL,
markup, mathtext, megabytes), it goes through classification, the sample browser and the failure-mode
figure without a crash, and the page shows it escaped, never as markup."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from fgx.tasks.strings.failure_modes import classify_detailed, classify_eval, truth_trace
from fgx.analysis.sample_browser import render_html
from fgx.io import write_parquet
from fgx.tasks import strings as S

ROOT = Path(__file__).resolve().parents[1]
BAD = ["\\ud800", "\\udfff\\ud800", "<script>alert(1)</script>", "$x^2$", "a\\u0000b", "</pre><b>"]


def hostile(solution: str) -> list[str]:
    """Responses that state each bad value as a step's value and as the answer, as a model could."""
    lines = solution.strip().split("\n")
    out = []
    for bad in BAD:
        step = lines[0].rsplit("=", 1)[0] + f'="{bad}"'
        out += ["\n".join([step, '{"output": "%s"}' % bad]) + "\n",
                "\n".join([*lines[:-2], lines[-2].rsplit("=", 1)[0] + f'="{bad}"', '{"output": "%s"}' % bad]) + "\n",
                f'main_solution: the value is "{bad}" and then "{bad}{bad}"\n{{"output": "{bad}"}}']
    return out + ["<script>document.write(1)</script>$\\alpha$\x00", "z" * 200_000 + '{"output": "\\ud800"}', ""]


@pytest.fixture(scope="module")
def samples(tmp_path_factory):
    rows = []
    for style in ("compact", "paper"):
        p = S.generate(stage=2, split="test", min_level=2, max_level=3, num=4, seed=0, style=style)
        rows.append(p.assign(responses=[hostile("\n".join(truth_trace(r["ground_truth"]))) for r in p.reward_model],
                             level=[e["depth"] for e in p.extra_info]))
    df = pd.concat(rows, ignore_index=True)
    df = df.assign(scores=[[0.0] * len(r) for r in df.responses], correct=[[False] * len(r) for r in df.responses])
    path = tmp_path_factory.mktemp("eval") / "m" / "test.parquet"
    write_parquet(df, path)
    return df, path


def test_classification_and_the_page_take_any_text(samples):
    df, _ = samples
    table = classify_eval(df, level=None)
    assert len(table) == sum(map(len, df.responses))
    for col in ("reason", "response", "prompt", "truth"):
        "".join(table[col]).encode("utf-8")  # every field is writable
    assert any("\\ud800" in r for r in table["reason"])  # the lone surrogate is shown as its escape
    # text no parquet can hold (raw lone surrogates, as a decoder bug could produce) and non-strings
    raw = df.head(1).assign(responses=[["\ud800 raw", '{"output": "\udfff"}', None, b"bytes", 3]])
    assert len(classify_eval(raw, level=None)) == 5
    assert classify_detailed('{"output": "\\ud800"}', df.reward_model[0]["ground_truth"]).reason.encode()
    page = render_html({"m": table, "<b>model</b>": classify_eval(raw, level=None)}, per_cell=50)
    page.encode("utf-8")
    assert "<script>" not in page and "&lt;script&gt;" in page and "</pre><b>" not in page
    assert "<b>model</b>" not in page and "&lt;b&gt;model&lt;/b&gt;" in page


def test_the_sample_browser_and_the_failure_mode_figure_write_any_text(samples, tmp_path):
    _, path = samples
    out = tmp_path / "samples.html"
    proc = subprocess.run([sys.executable, str(ROOT / "scripts/sample_browser.py"), "--inputs", str(path),
                           "--settings", json.dumps({"per_cell": 50, "seed": 0}), "--out", str(out)],
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr[-3000:]
    page = out.read_text(encoding="utf-8")
    assert "&lt;script&gt;" in page and "<script>" not in page
    proc = subprocess.run([sys.executable, str(ROOT / "scripts/plot.py"), "failure_modes", "--inputs", str(path),
                           "--settings", json.dumps({"figure": "failure_modes", "failure_level": 3}),
                           "--pdf", str(tmp_path / "f.pdf"), "--csv", str(tmp_path / "f.csv")],
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr[-3000:]
    table = pd.read_csv(tmp_path / "f.csv")
    # the figure shows counts per category, never model text (so no mathtext can reach its labels)
    assert table["count"].sum() == sum(len(hostile("a=b\nc")) for _ in range(4))
