"""Wall time of the main job (or any target) from an empty results directory, per rule and in all.

Runs ``snakemake --cores all <target>`` in a scratch copy of this checkout (so nothing here is
touched or reused), then reads each job's ``results/benchmarks/`` file. Prints the machine (CPU
model and cores, GPU if any), the command, one line per rule (jobs, summed job seconds, the
longest job), the GPU's utilisation over the run where ``nvidia-smi`` is found (sampled every
second: mean, share of samples at 0 % and at >= 90 %) and the DAG's wall time; then
``main_job_wall_s: N`` (and ``rule_all_wall_s: N`` with ``--then-all``), the largest job's resident
memory (``peak_job_rss_mb``, Snakemake's max_rss) and the MiB the run wrote (``disk_mb``). ``--keep``
writes the same as ``run.json`` beside the run.

    python benchmarks/main_job.py                                   # figures/passk_level_curve.pdf
    python benchmarks/main_job.py --target all                      # every figure (rule all)
    python benchmarks/main_job.py --then-all --keep /tmp/run0       # the main job, then every figure
    python benchmarks/main_job.py --config seed=1 --keep /tmp/run1  # a top-level --config, keep the run
    python benchmarks/main_job.py --configfile experiments/first-steps-all-marked.yaml
    python benchmarks/main_job.py --baseline experiments-2026-11 --keep /tmp/run0  # side by side with a tag
    python benchmarks/main_job.py --keep /tmp/run0 --commit 1a2b3c4  # a copy without .git names its commit
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
    cpu, flags = platform.processor() or platform.machine(), ""
    try:  # the first CPU's fields (every core reports the same model and flags)
        first = Path("/proc/cpuinfo").read_text().split("\n\n")[0]
        fields = {k.strip(): v.strip() for k, _, v in (line.partition(":") for line in first.splitlines())}
        cpu, flags = fields.get("model name", cpu), fields.get("flags", "")
    except OSError:
        pass
    # the vector unit (AVX-512 or not) moves CPU times between machines of one model name
    out = f"{cpu}{' with AVX-512' if 'avx512f' in flags.split() else ''}, {os.cpu_count()} cores"
    try:
        import torch

        if torch.cuda.is_available():
            out += f", GPU {torch.cuda.get_device_name(0)}"
    except ImportError:
        pass
    return out


def job_records(work: Path):
    """(rule, the last row of the job's Snakemake benchmark file) for every job that wrote one."""
    for tsv in sorted((work / "results" / "benchmarks").rglob("*.tsv")):
        with open(tsv) as fh:
            rows = list(csv.DictReader(fh, delimiter="\t"))
        if rows:
            yield tsv.relative_to(work / "results" / "benchmarks").parts[0], rows[-1]


def rule_times(work: Path) -> dict[str, list[float]]:
    """Seconds of each job, by rule, from Snakemake's benchmark files."""
    times: dict[str, list[float]] = defaultdict(list)
    for rule, row in job_records(work):
        times[rule].append(float(row["s"]))
    return times


def peak_memory_mb(work: Path) -> dict[str, float]:
    """The largest resident set (MiB: 2^20 bytes, as Snakemake counts) of any job of each rule, from the benchmark
    files' max_rss."""
    peaks: dict[str, float] = {}
    for rule, row in job_records(work):
        try:
            rss = float(row["max_rss"])
        except (KeyError, ValueError):  # "NA" where the job ended before it was sampled
            continue
        peaks[rule] = max(peaks.get(rule, 0.0), rss)
    return peaks


def disk_mb(work: Path) -> float:
    """MiB (2^20 bytes) the run wrote under results/, figures/ and logs/."""
    return sum(f.stat().st_size for d in ("results", "figures", "logs") for f in (work / d).rglob("*")
               if f.is_file()) / 2**20


def footprint(work: Path) -> dict:
    """What the run so far needed: each rule's largest job resident set and the MiB written."""
    return {"peak_rss_mb": {rule: round(mb) for rule, mb in peak_memory_mb(work).items()},
            "disk_mb": round(disk_mb(work))}


def run(work: Path, cmd: list[str], target: str, then_all: bool) -> dict | None:
    """The target's wall seconds (``wall``), its job seconds by rule (``times``) and its ``footprint``; with
    ``then_all`` also the whole DAG's wall seconds (``all_wall``) and footprint (``all_footprint``) after it.
    None on failure."""
    print(f"command: {' '.join(cmd)}  (in {work})", flush=True)
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, cwd=work, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    wall = time.perf_counter() - t0
    if proc.returncode != 0:
        print(proc.stderr[-3000:], file=sys.stderr)
        print(f"error: snakemake exited {proc.returncode} after {wall:.0f} s in {work}", file=sys.stderr)
        return None
    got = {"wall": wall, "all_wall": None, "times": rule_times(work), "footprint": footprint(work)}
    if not then_all:
        return got
    t1 = time.perf_counter()
    rest = subprocess.run([c for c in cmd if c != target], cwd=work, stdout=subprocess.DEVNULL,
                          stderr=subprocess.PIPE, text=True)
    if rest.returncode != 0:
        print(rest.stderr[-3000:], file=sys.stderr)
        print(f"error: snakemake (rule all) exited {rest.returncode} in {work}", file=sys.stderr)
        return None
    return {**got, "all_wall": wall + time.perf_counter() - t1, "all_footprint": footprint(work)}


class GpuUtilisation:
    """``nvidia-smi``'s GPU utilisation, sampled every second while the ``with`` block runs (nothing
    without ``nvidia-smi``); :meth:`summary` after it."""

    def __init__(self):
        self.samples: list[float] = []
        self._proc = None

    def __enter__(self):
        if shutil.which("nvidia-smi"):
            self._file = tempfile.TemporaryFile(mode="w+")
            self._proc = subprocess.Popen(["nvidia-smi", "--query-gpu=utilization.gpu", "--format=csv,noheader,nounits",
                                           "-lms", "1000"], stdout=self._file, stderr=subprocess.DEVNULL)
        return self

    def __exit__(self, *exc):
        if self._proc is not None:
            self._proc.terminate()
            self._proc.wait()
            self._file.seek(0)
            # one line per GPU per sample; the first GPU's (fgx's torch engine uses one)
            values = [line.split(",")[0].strip() for line in self._file.read().splitlines()]
            self.samples = [float(v) for v in values if v.replace(".", "", 1).isdigit()]
            self._file.close()
        return False

    def summary(self) -> dict | None:
        if not self.samples:
            return None
        n = len(self.samples)
        return {"samples": n, "mean_pct": round(sum(self.samples) / n, 1),
                "zero_share": round(sum(v == 0 for v in self.samples) / n, 3),
                "ge90_share": round(sum(v >= 90 for v in self.samples) / n, 3)}


def print_rules(times: dict[str, list[float]]) -> None:
    print(f"{'rule':<18} {'jobs':>4} {'job s':>8} {'longest s':>10}")
    for rule, ts in sorted(times.items(), key=lambda kv: -sum(kv[1])):
        print(f"{rule:<18} {len(ts):>4} {sum(ts):>8.0f} {max(ts):>10.0f}")
    print(f"{'all jobs':<18} {sum(map(len, times.values())):>4} {sum(map(sum, times.values())):>8.0f}")


def export_commit(commit: str, dest: Path) -> str:
    """The tree of ``commit`` in ``dest``, as a fresh clone of it would have it; its short hash."""
    short = subprocess.run(["git", "rev-parse", "--short", commit], cwd=ROOT, capture_output=True, text=True,
                           check=True).stdout.strip()
    dest.mkdir(parents=True, exist_ok=True)
    archive = subprocess.Popen(["git", "archive", commit], cwd=ROOT, stdout=subprocess.PIPE)
    subprocess.run(["tar", "-x", "-C", str(dest)], stdin=archive.stdout, check=True)
    if archive.wait() != 0:
        raise SystemExit(f"error: git archive {commit} failed")
    return short


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
    ap.add_argument("--workflow-profile", default=None,
                    help="a profile in place of profiles/default, e.g. profiles/gpu (passed to Snakemake)")
    ap.add_argument("--commit", default=None,
                    help="the commit to record (default: git's HEAD; a copy of a checkout without .git names it here)")
    ap.add_argument("--baseline", default=None, metavar="COMMIT",
                    help="first run the same command on this commit's tree (its own code and config.yaml), "
                         "then on the working tree, and print the ratio of the two walls")
    args = ap.parse_args(argv)

    work = Path(args.keep) if args.keep else Path(tempfile.mkdtemp(prefix="fgx-main-job-"))
    if work.exists() and any(work.iterdir()):
        print(f"error: {work} is not empty; the job is timed from an empty results directory", file=sys.stderr)
        return 2
    # the code that runs is the working tree as copied now: its commit, marked when it has local changes
    commit = args.commit or subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True,
                                           text=True).stdout.strip()
    if not args.commit and subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], cwd=ROOT,
                                          capture_output=True, text=True).stdout.strip():
        commit += " (with local changes)"
    copy_checkout(ROOT, work)
    # targets first: --configfile and --config take several values
    cmd = [sys.executable, "-m", "snakemake", *([args.target] if args.target != "all" else []), "--cores", args.cores]
    if args.configfile:
        cmd += ["--configfile", str(Path(args.configfile).resolve())]
    if args.workflow_profile:
        cmd += ["--workflow-profile", args.workflow_profile]
    if args.config:
        cmd += ["--config", *args.config]
    print(f"machine: {machine()}", flush=True)

    baseline = None
    if args.baseline:  # the same command on the older tree first, alone on the machine as the second
        base_work = Path(tempfile.mkdtemp(prefix="fgx-main-job-baseline-"))
        base_commit = export_commit(args.baseline, base_work)
        got = run(base_work, cmd, args.target, args.then_all)
        if got is None:
            return 1
        print(f"baseline {base_commit}:")
        print_rules(got["times"])
        shutil.rmtree(base_work, ignore_errors=True)
        baseline = (base_commit, got["wall"], got["all_wall"])
        print(f"{commit}:")

    with GpuUtilisation() as gpu:
        got = run(work, cmd, args.target, args.then_all)
    if got is None:
        return 1
    wall, all_wall, times = got["wall"], got["all_wall"], got["times"]
    util = gpu.summary()
    if args.keep:  # the run's record, beside its outputs (python -m fgx.figures.publish copies it)
        import json

        record = {"machine": machine(), "wall": f"{wall / 60:.0f} min", "wall_s": round(wall),
                  "commit": commit, "target": args.target, "config": args.config, "configfile": args.configfile,
                  **({"workflow_profile": args.workflow_profile} if args.workflow_profile else {}),
                  "job_s": {rule: round(sum(ts)) for rule, ts in times.items()}, **got["footprint"],
                  **({"gpu_utilisation": util} if util else {})}
        if all_wall is not None:  # job_s stays the target's; the whole DAG's jobs are summed apart
            record["rule_all_wall_s"] = round(all_wall)
            record["rule_all_job_s"] = {rule: round(sum(ts)) for rule, ts in rule_times(work).items()}
            record.update({f"rule_all_{key}": value for key, value in got["all_footprint"].items()})
        if baseline:
            record["baseline"] = {"commit": baseline[0], "wall_s": round(baseline[1]),
                                  **({"rule_all_wall_s": round(baseline[2])} if baseline[2] else {})}
        (work / "run.json").write_text(json.dumps(record, indent=2) + "\n")
    print_rules(times)
    if util:
        print(f"gpu_utilisation: mean {util['mean_pct']} % over {util['samples']} one-second samples; "
              f"0 % in {util['zero_share']:.0%} of them, >= 90 % in {util['ge90_share']:.0%}")
    peaks = got["footprint"]["peak_rss_mb"]
    if peaks:
        rule = max(peaks, key=peaks.get)
        print(f"peak_job_rss_mb: {peaks[rule]}  ({rule})")
    print(f"disk_mb: {got['footprint']['disk_mb']}")
    if not args.keep:
        shutil.rmtree(work, ignore_errors=True)
    print(f"main_job_wall_s: {wall:.0f}")
    if all_wall is not None:
        print(f"rule_all_wall_s: {all_wall:.0f}")
    if baseline:
        print(f"baseline_main_job_wall_s: {baseline[1]:.0f}  ({baseline[0]})")
        print(f"speedup_main_job: {baseline[1] / wall:.2f}x")
        if all_wall is not None and baseline[2]:
            print(f"baseline_rule_all_wall_s: {baseline[2]:.0f}")
            print(f"speedup_rule_all: {baseline[2] / all_wall:.2f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
