"""Copy a finished run's figure tables, its main figures as PNG and its run record into the
repository (``docs/results/<run>/``), where the README's results table and images come from.

    python -m fgx.figures.publish /path/to/run docs/results/seed0

The run directory holds ``figures/*.csv`` and ``figures/*.png`` (rule ``figure``) and ``run.json``
(machine, wall time, commit: ``benchmarks/main_job.py --keep`` writes it).
"""

from __future__ import annotations

import argparse
import shutil
import sys
from pathlib import Path

from fgx.plan.figures import figure_names

PNGS = ("passk_level_curve", "rl_level_accuracy", "model_contrasts")  # the README shows these


def publish(run: str | Path, dest: str | Path) -> list[Path]:
    run, dest = Path(run), Path(dest)
    figures = run / "figures"
    if not (run / "run.json").is_file():
        raise FileNotFoundError(f"{run}/run.json: no run record; time the run with benchmarks/main_job.py --keep")
    dest.mkdir(parents=True, exist_ok=True)
    written = [Path(shutil.copy2(run / "run.json", dest / "run.json"))]
    for name in figure_names():
        if (figures / f"{name}.csv").is_file():
            written.append(Path(shutil.copy2(figures / f"{name}.csv", dest / f"{name}.csv")))
    for name in PNGS:
        if (figures / f"{name}.png").is_file():
            written.append(Path(shutil.copy2(figures / f"{name}.png", dest / f"{name}.png")))
    return written


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="python -m fgx.figures.publish", description=__doc__.split("\n\n")[0])
    p.add_argument("run", help="a run's directory (with figures/ and run.json)")
    p.add_argument("dest", help="e.g. docs/results/seed0")
    a = p.parse_args(argv)
    try:
        for path in publish(a.run, a.dest):
            print(path)
    except FileNotFoundError as err:
        print(f"error: {err}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
