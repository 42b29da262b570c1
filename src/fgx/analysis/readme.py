"""The README's measured numbers, generated from the committed result files so they cannot drift.

Three blocks of README.md are written by this module and nowhere else:

- ``results``: the results table, ``python -m fgx.analysis.findings docs/results/seed0 ... --readme``
  (pass@1 per model, each finding's verdict, each run's machine and commit);
- ``timing``: the main job's wall time as a range over its recorded runs, each with its machine and commit
  (``docs/results/main-job-runs.json``), and every figure's from ``docs/results/main-job.json``
  (``benchmarks/main_job.py --then-all --keep`` writes that record);
- ``level4``: Level 4 on the prompts only a full trace solves, for the default's seeds and for the
  overlay ``experiments/<LEVEL4_OVERLAY>.yaml`` whose runs ``docs/results/<LEVEL4_OVERLAY>/seed*`` keeps,
  with that overlay's main-job and ``rule all`` wall times (its seed 0's ``run.json``).

    python -m fgx.analysis.readme            # check: exit 1 and say which block differs
    python -m fgx.analysis.readme --write    # rewrite the blocks from the result files
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path

from fgx.plan.figures import FULL_TRACE_SET_PROMPTS

ROOT = Path(__file__).resolve().parents[3]
RESULTS = ROOT / "docs" / "results"
SEEDS = ("seed0", "seed1", "seed2")
LEVEL4_OVERLAY = "prior-depth-5-unmarked-0.3"  # the overlay that reaches the full-trace Level-4 prompts


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
    """The main job's wall time as a range over its recorded runs (main-job-runs.json: each run's machine,
    commit, seconds and whether its figure table equals seed 0's), and every figure's: the benchmarked main
    job's own record (main-job.json) when it went on to rule all, else seed 0's run (which did)."""
    runs = json.loads((results / "main-job-runs.json").read_text())["runs"]
    timed = [run for run in runs if run["wall_s"] is not None]  # a run on a machine shared with other work has no time
    walls = sorted(run["wall_s"] for run in timed)
    pre = sorted(run["pretrain_s"] for run in timed if run.get("pretrain_s") is not None)
    machines = " or ".join(dict.fromkeys(run["machine"] for run in timed))
    text = (f"The main job takes {walls[0] / 60:.0f}–{walls[-1] / 60:.0f} min on {machines} ({len(timed)} runs on "
            f"machines of that kind, commits {', '.join(run['commit'] for run in timed)}; pretraining "
            f"{pre[0]:,}–{pre[-1]:,} s of it; a GPU is not timed); `snakemake --cores all` builds every figure in "
            "about ")
    r = json.loads((results / "main-job.json").read_text())
    if "rule_all_wall_s" in r:
        text += (f"{r['rule_all_wall_s'] / 60:.0f} min where the main job took {r['wall_s'] / 60:.0f} "
                 f"(commit {r['commit']}).")
    else:
        s0 = json.loads((results / SEEDS[0] / "run.json").read_text())
        text += f"{s0['rule_all_wall_s'] / 60:.0f} min (seed 0's run, commit {s0['commit']})."
    if all(run["figure_table_equals_seed0"] for run in runs):
        text += (f" The figure table of every run ({len(runs)}, commits {', '.join(run['commit'] for run in runs)}) "
                 "equals `docs/results/seed0`'s byte for byte: figure tables repeat byte for byte across machines "
                 "of one kind.")
    return text


def _numbers(seeds) -> str:
    """"seed0", "seed1" -> "0 / 1"."""
    return " / ".join(s.replace("seed", "") for s in seeds)


def level4_block(results: Path = RESULTS) -> str:
    """The default's RL Level 2 on the full-trace Level-4 prompts, then the overlay's lead there, how many of
    its seeds keep findings 1-3, and what it costs in wall time."""
    import yaml

    from fgx.analysis.findings import FULL_TRACE_FINDING, check, contrast_rows, core_findings_hold, load_run

    overlay_dir = results / LEVEL4_OVERLAY
    seeds = sorted(p.name for p in overlay_dir.glob("seed*"))
    if not seeds:
        raise FileNotFoundError(f"{overlay_dir}: no seed*/ directories; publish the overlay's runs there "
                                f"(python -m fgx.figures.publish RUN {overlay_dir}/seedN)")
    default = [contrast_rows(load_run(results / seed), "rl_level2", "rl_level1", FULL_TRACE_SET_PROMPTS).loc[4]
               for seed in SEEDS]
    leads, holding = [], 0
    for seed in seeds:
        rows = check(load_run(overlay_dir / seed))
        leads.append(next(r for r in rows if r["finding"] == FULL_TRACE_FINDING)["measured"].split(" (")[0])
        holding += core_findings_hold(rows)
    overlay = yaml.safe_load((ROOT / "experiments" / f"{LEVEL4_OVERLAY}.yaml").read_text())
    timed = json.loads((overlay_dir / seeds[0] / "run.json").read_text())
    if "rule_all_wall_s" not in timed:
        raise ValueError(f"{overlay_dir / seeds[0] / 'run.json'}: no rule_all_wall_s; publish a run timed with "
                         "benchmarks/main_job.py --then-all --keep DIR")
    main_job = json.loads((results / "main-job.json").read_text())
    return (f"RL Level 2 solves {' / '.join(f'{100 * r.a_accuracy:.1f}' for r in default)} % of the "
            f"{int(default[0].n_prompts)} in seeds {_numbers(SEEDS)}. "
            f"[An overlay](experiments/{LEVEL4_OVERLAY}.yaml) with prior traces up to "
            f"{overlay['data']['pretrain_prior_levels'][1]} steps deep and {overlay['base']['train']['steps']:,} "
            f"pretraining steps reaches them, {' / '.join(leads)} points over RL Level 1 in seeds "
            f"{_numbers(seeds)} with findings 1–3 holding in {holding} of "
            f"{len(seeds)} ([its runs](docs/results/{LEVEL4_OVERLAY})), at a main job of {timed['wall_s'] / 60:.0f} "
            f"min and {timed['rule_all_wall_s'] / 60:.0f} min for every figure (seed {_numbers(seeds[:1])}, "
            f"{timed['machine']}) against the default's {main_job['wall_s'] / 60:.0f} and "
            f"{main_job['rule_all_wall_s'] / 60:.0f}.")


BLOCKS = {"results": results_block, "timing": timing_block, "level4": level4_block}


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
