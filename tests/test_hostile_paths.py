"""Paths from the config are data, never shell text: a model directory and a problem file whose names
hold spaces and shell metacharacters run through the smoke DAG's jobs that read them, and nothing else
runs (no PWNED file appears)."""

from __future__ import annotations

import yaml

from fgx.engines.torch.model import build_model, save_checkpoint
from fgx.engines.torch.tokenizer import build_char_tokenizer
from fgx.io import write_parquet
from fgx.tasks import strings as S
from smoke import fresh_copy, snakemake
from toy import SMALLEST

# every way a shell would run text: ;, $( ), backticks, a quote that ends a quoted string, & and |
HOSTILE = "a b;touch PWNED1 $(touch PWNED2) `touch PWNED3` 'q' & touch PWNED4 | x"


def test_config_paths_with_shell_metacharacters_run_nothing_but_the_job(tmp_path):
    work = fresh_copy(tmp_path / "fgx")
    ext = tmp_path / f"ext {HOSTILE}"
    tok = build_char_tokenizer(model_max_length=256)
    save_checkpoint(build_model(SMALLEST.__class__(**{**SMALLEST.__dict__, "max_position_embeddings": 256}), tok,
                                seed=0), tok, ext / f"model {HOSTILE}")
    problems = S.generate(stage=2, split="test", min_level=1, max_level=3, num=12, seed=0, style="compact")
    write_parquet(problems, ext / f"test {HOSTILE}.parquet")
    overlay = tmp_path / "hostile.yaml"
    overlay.write_text(yaml.safe_dump({"model": {"source": "path", "path": str(ext / f"model {HOSTILE}")},
                                       "data": {"external": {"test": str(ext / f"test {HOSTILE}.parquet")}}}))
    # evaluate reads model.path and data.external.test, select_prompts the test file, generate_strings
    # excludes it through its argument string (params.args), metrics reads the evaluation
    snakemake(work, "results/metrics/base/test.parquet", "results/data/subsets/test_many.parquet",
              "results/data/strings/test_full_trace.parquet", "--cores", "2",
              "--configfile", ".test/config.yaml", str(overlay))
    pwned = [p for p in tmp_path.rglob("PWNED*")]
    assert pwned == [], pwned
    assert (work / "results/eval/base/test.parquet").exists()
