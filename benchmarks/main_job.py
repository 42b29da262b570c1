"""Wall time of the main job (or any target) from an empty results directory, per rule and in all.

Runs ``snakemake --cores all <target>`` in a scratch copy of this checkout (so nothing here is
touched or reused), then reads each job's ``results/benchmarks/`` file. Prints the machine (CPU
model and cores, GPU if any), the command, one line per rule (jobs, summed job seconds, the
longest job) and the DAG's wall time; then ``main_job_wall_s: N``
(and ``rule_all_wall_s: N`` with ``--then-all``).

    python benchmarks/main_job.py                                   # figures/passk_level_curve.pdf
    python benchmarks/main_job.py --target all                      # every figure (rule all)
    python benchmarks/main_job.py --then-all --keep /tmp/run0       # the main job, then every figure
    python benchmarks/main_job.py --config seed=1 --keep /tmp/run1  # a top-level --config, keep the run
    python benchmarks/main_job.py --configfile experiments/first-steps-all-marked.yaml
"""

from __future__ import annotations

import argparse
import csv
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))  # run from a checkout

from fgx.checkout import copy_checkout  # noqa: E402


def machine() -> str:
    cpu = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    out = f"{cpu}, {os.cpu_count()} cores"
    try:
        import torch

        if torch.cuda.is_available():
            out += f", GPU {torch.cuda.get_device_name(0)}"
    except ImportError:
        pass
    return out


def rule_times(work: Path) -> dict[str, list[float]]:
    """Seconds of each job, by rule, from Snakemake's benchmark files."""
    times: dict[str, list[float]] = defaultdict(list)
    for tsv in sorted((work / "results" / "benchmarks").rglob("*.tsv")):
        rule = tsv.relative_to(work / "results" / "benchmarks").parts[0]
        with open(tsv) as fh:
            rows = list(csv.DictReader(fh, delimiter="\t"))
        if rows:
            times[rule].append(float(rows[-1]["s"]))
    return times


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--target", default="figures/passk_level_curve.pdf", help="a file target, or 'all'")
    ap.add_argument("--cores", default="all")
    ap.add_argument("--config", nargs="*", default=[], metavar="KEY=VALUE", help="passed to --config")
    ap.add_argument("--configfile", default=None, help="an overlay passed to --configfile")
    ap.add_argument("--keep", default=None, help="run in this directory and keep it (default: a temporary one)")
    ap.add_argument("--then-all", action="store_true",
                    help="after the target, build every figure (rule all) in the same directory and record "
                         "the whole DAG's wall time as rule_all_wall_s")
    args = ap.parse_args(argv)

    work = Path(args.keep) if args.keep else Path(tempfile.mkdtemp(prefix="fgx-main-job-"))
    if work.exists() and any(work.iterdir()):
        print(f"error: {work} is not empty; the job is timed from an empty results directory", file=sys.stderr)
        return 2
    # the code that runs is the working tree as copied now: its commit, marked when it has local changes
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True,
                            text=True).stdout.strip()
    if subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], cwd=ROOT, capture_output=True,
                      text=True).stdout.strip():
        commit += " (with local changes)"
    copy_checkout(ROOT, work)
    # targets first: --configfile and --config take several values
    cmd = [sys.executable, "-m", "snakemake", *([args.target] if args.target != "all" else []), "--cores", args.cores]
    if args.configfile:
        cmd += ["--configfile", str(Path(args.configfile).resolve())]
    if args.config:
        cmd += ["--config", *args.config]
    print(f"machine: {machine()}")
    print(f"command: {' '.join(cmd)}  (in {work})", flush=True)
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, cwd=work, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    wall = time.perf_counter() - t0
    if proc.returncode != 0:
        print(proc.stderr[-3000:], file=sys.stderr)
        print(f"error: snakemake exited {proc.returncode} after {wall:.0f} s", file=sys.stderr)
        return 1
    all_wall = None
    if args.then_all:
        t1 = time.perf_counter()
        rest = subprocess.run([c for c in cmd if c != args.target], cwd=work, stdout=subprocess.DEVNULL,
                              stderr=subprocess.PIPE, text=True)
        if rest.returncode != 0:
            print(rest.stderr[-3000:], file=sys.stderr)
            print(f"error: snakemake (rule all) exited {rest.returncode}", file=sys.stderr)
            return 1
        all_wall = wall + time.perf_counter() - t1
    times = rule_times(work)
    if args.keep:  # the run's record, beside its outputs (python -m fgx.figures.publish copies it)
        import json

        record = {"machine": machine(), "wall": f"{wall / 60:.0f} min", "wall_s": round(wall),
                  "commit": commit, "target": args.target, "config": args.config, "configfile": args.configfile,
                  "job_s": {rule: round(sum(ts)) for rule, ts in times.items()}}
        if all_wall is not None:
            record["rule_all_wall_s"] = round(all_wall)
        (work / "run.json").write_text(json.dumps(record, indent=2) + "\n")
    print(f"{'rule':<18} {'jobs':>4} {'job s':>8} {'longest s':>10}")
    for rule, ts in sorted(times.items(), key=lambda kv: -sum(kv[1])):
        print(f"{rule:<18} {len(ts):>4} {sum(ts):>8.0f} {max(ts):>10.0f}")
    print(f"{'all jobs':<18} {sum(map(len, times.values())):>4} {sum(map(sum, times.values())):>8.0f}")
    if not args.keep:
        shutil.rmtree(work, ignore_errors=True)
    print(f"main_job_wall_s: {wall:.0f}")
    if all_wall is not None:
        print(f"rule_all_wall_s: {all_wall:.0f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
