"""The README's measured numbers, generated from the committed result files so they cannot drift.

Two blocks of README.md are written by this module and nowhere else:

- ``results``: the results table, ``python -m fgx.analysis.findings docs/results/seed0 ... --readme``
  (pass@1 per model, each finding's verdict, each run's machine, wall time and commit);
- ``timing``: the main job's wall time on a named machine, from ``docs/results/main-job.json``
  (``benchmarks/main_job.py --keep`` writes that record).

    python -m fgx.analysis.readme            # check: exit 1 and say which block differs
    python -m fgx.analysis.readme --write    # rewrite the blocks from the result files
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
RESULTS = ROOT / "docs" / "results"
SEEDS = ("seed0", "seed1", "seed2")


def _block(name: str) -> re.Pattern:
    return re.compile(rf"(<!-- {name}:begin -->)(.*?)(<!-- {name}:end -->)", re.S)


def results_block(results: Path = RESULTS) -> str:
    from fgx.analysis.findings import load_run, readme_markdown

    runs, infos = [], []
    for seed in SEEDS:
        d = results / seed
        runs.append((seed.replace("seed", "seed "), load_run(d)))
        infos.append(json.loads((d / "run.json").read_text()))
    return "\n" + readme_markdown(runs, infos) + "\n"


def timing_block(results: Path = RESULTS) -> str:
    """The main job's wall time (main-job.json) and every figure's: the main job's own record when it
    went on to rule all, else seed 0's run (which did), with its commit."""
    r = json.loads((results / "main-job.json").read_text())
    pre = r["job_s"].get("pretrain_base")
    rl = r["job_s"].get("rl")
    text = (f"The main job takes {r['wall_s'] / 60:.0f} min on {r['machine']} (commit {r['commit']}; "
            f"pretraining {pre / 60:.0f} min of it, RL {rl / 60:.0f} min); `snakemake --cores all` builds every "
            f"figure in about ")
    if "rule_all_wall_s" in r:
        return text + f"{r['rule_all_wall_s'] / 60:.0f} min."
    s0 = json.loads((results / SEEDS[0] / "run.json").read_text())
    return text + f"{s0['rule_all_wall_s'] / 60:.0f} min (seed 0's run, commit {s0['commit']})."


BLOCKS = {"results": results_block, "timing": timing_block}


def render(text: str, results: Path = RESULTS) -> str:
    for name, make in BLOCKS.items():
        pattern = _block(name)
        if not pattern.search(text):
            raise ValueError(f"README.md has no <!-- {name}:begin --> ... <!-- {name}:end --> block")
        text = pattern.sub(lambda m: m[1] + make(results) + m[3], text, count=1)
    return text


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="python -m fgx.analysis.readme", description=__doc__.split("\n\n")[0])
    p.add_argument("--write", action="store_true", help="rewrite README.md's generated blocks")
    p.add_argument("--readme", default=str(ROOT / "README.md"))
    a = p.parse_args(argv)
    path = Path(a.readme)
    text = path.read_text()
    new = render(text)
    if a.write:
        path.write_text(new)
        return 0
    if new != text:
        bad = [n for n in BLOCKS if _block(n).search(text)[2] != _block(n).search(new)[2]]
        print(f"{path}: the generated block(s) {', '.join(bad)} differ from the result files; run "
              "`python -m fgx.analysis.readme --write`", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
