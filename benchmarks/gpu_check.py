"""fgx's GPU measurements in one run of about ten minutes, each result written under --out as it comes.

For a GPU machine with a CUDA torch but no package registry (``benchmarks/pack_gpu_env.py`` packs what it
lacks); from the checkout's root, with the image's Python:

    python3 benchmarks/gpu_check.py --pack build/gpu-env/fgx-gpu-env.tar.xz --out "$OUT" --commit <hash>

1. ``pytest -m gpu tests/test_gpu.py``: the captured sampler and training steps against their references;
2. the main job (``benchmarks/main_job.py --keep``: per-rule seconds, the GPU's utilisation sampled every
   second), then from its outputs RL's seconds per step (its metrics' ``step_time_s``), pretraining's steps
   per second and each evaluation job's seconds; its ``run.json``, figure tables, benchmark files, RL
   metrics and logs are copied to ``OUT/main_job/``;
3. ``benchmarks/sampler.py --device cuda --static`` at the RL shape (128 slots, 256 prompts, 64 new tokens);
4. ``benchmarks/training.py --device cuda``: pretraining steps per second and RL's update, captured and eager;
5. ``benchmarks/sampler.py`` at the evaluation shape (1,024 slots, 2,048 prompts, 384 new tokens);
6. if the budget allows, the main job again under ``profiles/gpu`` (model jobs share the GPU, ``gpu_jobs``
   at a time) against step 2's ``profiles/default``.

Each step has a time cap and the whole a budget (``--budget``, 570 s: the device tool's commands end at
600 s); a step that runs out of time is ended with every process it started, and one that would start
past the budget is skipped and said so. ``OUT/summary.txt`` collects
every step's figures of merit (its lines of the form ``name: value``) and exit status. ``--quick`` runs
the same logic on the CPU at toy sizes (the smoke configuration, small shapes) to check the script.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import signal
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
MERIT = re.compile(r"^[a-z][a-z0-9_]*: .+$")


class Run:
    """The steps of one check: each one's output in ``out``, figures of merit in ``out/summary.txt``."""

    def __init__(self, out: Path, budget: float, env: dict):
        self.out, self.env, self.deadline = out, env, time.monotonic() + budget
        self.summary = out / "summary.txt"

    def note(self, text: str) -> None:
        print(text, flush=True)
        with open(self.summary, "a") as fh:
            fh.write(text + "\n")

    def step(self, name: str, cmd: list[str], cap: float, cwd: Path = ROOT) -> str | None:
        """Run ``cmd`` for at most ``cap`` seconds (less if the budget is nearer); its output goes to
        ``out/<name>.txt`` as it is written. Returns the output, or None when skipped."""
        left = self.deadline - time.monotonic()
        if left < min(cap, 30):
            self.note(f"[{name}] skipped: {left:.0f} s of the budget left")
            return None
        log = self.out / f"{name}.txt"
        t = time.monotonic()
        with open(log, "w") as fh:
            fh.write(f"$ {' '.join(cmd)}\n")
            fh.flush()
            # its own process group: a step that runs out of time is ended with everything it started
            proc = subprocess.Popen(cmd, cwd=cwd, env=self.env, stdout=fh, stderr=subprocess.STDOUT,
                                    start_new_session=True)
            try:
                rc = proc.wait(timeout=min(cap, left))
            except subprocess.TimeoutExpired:
                rc = "timeout"
                for sig, grace in ((signal.SIGTERM, 15), (signal.SIGKILL, 5)):
                    try:
                        os.killpg(proc.pid, sig)
                        proc.wait(timeout=grace)
                        break
                    except (ProcessLookupError, subprocess.TimeoutExpired):
                        continue
        text = log.read_text(errors="replace")
        self.note(f"[{name}] exit {rc} after {time.monotonic() - t:.0f} s")
        for line in text.splitlines():
            if MERIT.match(line) and not line.startswith(("model: ", "command: ")):
                self.note(f"  {line}")
        if name.startswith("pytest"):
            for line in text.splitlines()[-15:]:
                if re.search(r"(passed|failed|error|skipped)", line):
                    self.note(f"  {line.strip()}")
        return text


def unpack(pack: Path, dest: Path) -> Path:
    dest.mkdir()  # a new directory under this run's scratch: nothing of anyone else's is replaced
    with tarfile.open(pack) as tar:
        tar.extractall(dest, filter="data")
    return dest


def main_job_outputs(run: Run, work: Path, quick: bool) -> None:
    """Copy the kept main job's small outputs to OUT/main_job and note RL's seconds per step,
    pretraining's steps per second and the seconds of each sampling and training job after it."""
    dest = run.out / "main_job"
    dest.mkdir(exist_ok=True)
    for pattern in ("run.json", "figures/*.csv", "results/benchmarks/**/*.tsv", "results/rl/*/metrics.parquet",
                    "logs/**/*.log", "results/models/*/resolved_config.json"):
        for src in work.glob(pattern):
            target = dest / src.relative_to(work)
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, target)
    import csv

    import pandas as pd
    import yaml

    steps = yaml.safe_load((work / "config.yaml").read_text())["base"]["train"]["steps"]
    if quick:
        steps = yaml.safe_load((work / ".test/config.yaml").read_text())["base"]["train"]["steps"]
    for m in sorted(work.glob("results/rl/*/metrics.parquet")):
        df = pd.read_parquet(m)
        t, g = df[df.metric == "step_time_s"]["value"], df[df.metric == "gen_time_s"]["value"]
        run.note(f"  rl_s_per_step[{m.parent.name}]: {t.mean():.3f} (generation {g.mean():.3f}; {len(t)} steps)")
    for tsv in sorted((work / "results" / "benchmarks").rglob("*.tsv")):
        job = tsv.relative_to(work / "results" / "benchmarks").with_suffix("")
        with open(tsv) as fh:
            seconds = float(list(csv.DictReader(fh, delimiter="\t"))[-1]["s"])
        if job.parts[0] == "pretrain_base":
            run.note(f"  pretrain_steps_per_s_in_job: {steps / seconds:.0f} ({seconds:.0f} s)")
        elif job.parts[0] in ("evaluate", "rl", "rft_sft", "rollout"):
            run.note(f"  job_s[{job}]: {seconds:.1f}")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--pack", default=None,
                    help="the .tar.xz of benchmarks/pack_gpu_env.py (none: this Python has every package)")
    ap.add_argument("--out", default=os.environ.get("OUT", "gpu-check"), help="where every result goes ($OUT)")
    ap.add_argument("--commit", default=None, help="the commit measured (a copy of a checkout has no .git)")
    ap.add_argument("--budget", type=float, default=570.0, help="seconds for the whole check")
    ap.add_argument("--quick", action="store_true", help="the same steps on the CPU at toy sizes (checks the script)")
    args = ap.parse_args(argv)

    out = Path(args.out).resolve()
    out.mkdir(parents=True, exist_ok=True)
    # the unpacked packages and the main jobs' directories: one scratch directory of this run's own
    # (mkdtemp: new, 0700), removed at the end, so nothing another user or run left in /tmp is touched
    scratch = Path(tempfile.mkdtemp(prefix="fgx-gpu-check-"))
    try:
        return check(args, out, scratch)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def check(args: argparse.Namespace, out: Path, scratch: Path) -> int:
    env = {**os.environ, "MPLBACKEND": "Agg", "TOKENIZERS_PARALLELISM": "false"}
    paths = [str(ROOT / "src")]
    if args.pack:
        paths.insert(0, str(unpack(Path(args.pack), scratch / "env")))
    env["PYTHONPATH"] = os.pathsep.join([*paths, *filter(None, [os.environ.get("PYTHONPATH")])])
    run = Run(out, args.budget, env)
    (out / "summary.txt").write_text("")
    py = sys.executable
    run.step("versions", [py, "-c", "import torch, transformers, snakemake, platform; print(f'python: "
                          "{platform.python_version()}'); print(f'torch: {torch.__version__}'); print(f'cuda: "
                          "{torch.cuda.get_device_name(0) if torch.cuda.is_available() else None}'); "
                          "print(f'transformers: {transformers.__version__}'); print(f'snakemake: "
                          "{snakemake.__version__}')"], 60)
    if shutil.which("nvidia-smi"):
        run.step("nvidia_smi", ["nvidia-smi"], 30)
    run.step("pytest_gpu", [py, "-m", "pytest", "-m", "gpu", "-p", "no:cacheprovider", "-q", "-ra",
                            "tests/test_gpu.py"], 240)
    work = scratch / "main_job"
    options = ["--commit", args.commit] if args.commit else []
    if args.quick:
        options += ["--configfile", ".test/config.yaml"]
    job = [py, "benchmarks/main_job.py", "--keep", str(work), *options]
    if run.step("main_job", job, 330 if not args.quick else 900) is not None and (work / "run.json").exists():
        main_job_outputs(run, work, args.quick)
    dev = "cpu" if args.quick else "cuda"
    rl_shape = ["--batch", "128", "--max-new-tokens", "64"] if not args.quick else \
        ["--batch", "16", "--max-new-tokens", "16", "--repeats", "1"]
    run.step("sampler_rl_shape", [py, "benchmarks/sampler.py", "--device", dev, "--static", *rl_shape], 120)
    run.step("training", [py, "benchmarks/training.py", "--device", dev, "--steps", "300" if not args.quick else "3"],
             120)
    eval_shape = ["--batch", "1024", "--prompts", "2048", "--max-new-tokens", "384", "--repeats", "2"] \
        if not args.quick else ["--batch", "32", "--prompts", "64", "--max-new-tokens", "24", "--repeats", "1"]
    run.step("sampler_eval_shape", [py, "benchmarks/sampler.py", "--device", dev, "--static", *eval_shape], 180)
    # the main job again with profiles/gpu (model jobs share the GPU up to gpu_jobs at once), if time is left
    run.step("main_job_gpu_profile", [py, "benchmarks/main_job.py", "--keep", str(scratch / "main_job_gpu_profile"),
                                      *options, "--workflow-profile", "profiles/gpu"], 330 if not args.quick else 900)
    run.note(f"done: {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
