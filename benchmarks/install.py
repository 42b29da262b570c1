"""What `bash envs/install.sh` costs on a fresh machine: seconds, MB downloaded and MB on disk.

Runs the install in a scratch copy of this checkout (``fgx.checkout.copy_checkout``) as a machine that never
installed fgx would: pip's cache is an empty directory of the scratch copy, pip's local wheel directories
(``PIP_FIND_LINKS``) are unset, and the user configuration directory (``XDG_CONFIG_HOME``: pip's user settings,
and Snakemake's, where the install links the SLURM profile) is the scratch copy's, so nothing this machine has
is reused or changed. Each step is one command; a step after the first runs in the same copy (``--extras verl``
adds ``FGX_EXTRAS=verl bash envs/install.sh`` on top of the core install, as a user who wants the verl engine
too would run it).

Per step it prints the seconds, the MB pip downloaded (the sizes pip logs for every file it downloads,
``PIP_LOG``), the MB the network interfaces received meanwhile (the same download seen from outside pip, and
anything else the machine fetched) and the size of ``.venv``; MB are 10^6 bytes, as pip counts them.
``--record FILE`` appends the result, with the machine, the commit and the date, to a JSON record
(``docs/results/install.json``, which the README's install sentence is generated from). The seconds are mostly
the download's, so they say as much about the network as about the machine. Run it alone on the machine::

    nice -n 19 flock ~/.fgx-bench.lock python3 benchmarks/install.py --extras verl \\
        --record docs/results/install.json
    python3 benchmarks/install.py --torch-index https://download.pytorch.org/whl/cpu   # CPU-only torch

Last line: ``install_wall_s: N`` (every step together).
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))  # run from a checkout

from fgx.checkout import copy_checkout  # noqa: E402
from main_job import machine  # noqa: E402


MB = 10**6  # pip's unit
UNITS = {"bytes": 1, "kB": 10**3, "MB": 10**6, "GB": 10**9}
DOWNLOADED = re.compile(r"Downloading \S+ \(([\d.]+) (bytes|kB|MB|GB)\)")


def tree_mb(path: Path) -> float:
    """MB of the files under ``path`` (links not followed)."""
    return sum(f.stat().st_size for f in path.rglob("*") if f.is_file() and not f.is_symlink()) / MB


def logged_download_mb(log: Path) -> float:
    """MB of every file pip's log says it downloaded."""
    text = log.read_text(errors="replace") if log.exists() else ""
    return sum(float(size) * UNITS[unit] for size, unit in DOWNLOADED.findall(text)) / MB


def received_bytes() -> int:
    """Bytes received so far by every network interface but the loopback (0 where /proc is absent)."""
    try:
        lines = Path("/proc/net/dev").read_text().splitlines()[2:]
    except OSError:
        return 0
    return sum(int(line.split(":", 1)[1].split()[0]) for line in lines if line.split(":")[0].strip() != "lo")


def fresh_env(scratch: Path, torch_index: str | None) -> dict[str, str]:
    """The environment of a machine that never installed fgx: empty pip cache, no local wheels, its own
    Snakemake configuration directory."""
    env = {k: v for k, v in os.environ.items()
           if k not in ("PIP_FIND_LINKS", "PIP_LOG", "FGX_EXTRAS", "FGX_TORCH_INDEX")}
    env.update(PIP_CACHE_DIR=str(scratch / "pip-cache"), XDG_CONFIG_HOME=str(scratch / "config"))
    if torch_index:
        env["FGX_TORCH_INDEX"] = torch_index
    return env


def run_step(name: str, work: Path, env: dict[str, str], log: Path) -> dict:
    """One install command in ``work``: its seconds, MB downloaded and the venv's MB afterwards (pip's log of the
    step in ``log``)."""
    cmd = ["bash", "envs/install.sh"]
    shown = " ".join(f"{k}={env[k]}" for k in ("FGX_EXTRAS", "FGX_TORCH_INDEX") if k in env)
    print(f"step {name}: {shown + ' ' if shown else ''}{' '.join(cmd)}  (in {work})", flush=True)
    rx0, t0 = received_bytes(), time.perf_counter()
    proc = subprocess.run(cmd, cwd=work, env={**env, "PIP_LOG": str(log)}, stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT, text=True)
    wall = time.perf_counter() - t0
    rx = (received_bytes() - rx0) / MB
    if proc.returncode != 0:
        print(proc.stdout[-3000:], file=sys.stderr)
        raise SystemExit(f"error: step {name} exited {proc.returncode} after {wall:.0f} s in {work}")
    got = {"step": name, "command": f"{shown + ' ' if shown else ''}bash envs/install.sh", "wall_s": round(wall),
           "download_mb": round(logged_download_mb(log)), "network_rx_mb": round(rx),
           "venv_mb": round(tree_mb(work / ".venv"))}
    print(f"  {got['wall_s']} s, {got['download_mb']} MB downloaded (network: {got['network_rx_mb']} MB), "
          f".venv {got['venv_mb']} MB", flush=True)
    return got


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--extras", nargs="*", default=[], help="after the core install, FGX_EXTRAS=<extra> each")
    ap.add_argument("--torch-index", default=None, help="FGX_TORCH_INDEX for every step (e.g. PyTorch's CPU index)")
    ap.add_argument("--python", default=None, help="PYTHON for envs/install.sh (default: its own, python3)")
    ap.add_argument("--record", default=None, help="append the result to this JSON record")
    ap.add_argument("--keep", default=None, help="install in this empty directory and keep it")
    args = ap.parse_args(argv)

    scratch = Path(args.keep) if args.keep else Path(tempfile.mkdtemp(prefix="fgx-install-"))
    if scratch.exists() and any(scratch.iterdir()):
        raise SystemExit(f"error: {scratch} is not empty; the install is measured from nothing")
    work = copy_checkout(ROOT, scratch / "fgx")
    env = fresh_env(scratch, args.torch_index)
    if args.python:
        env["PYTHON"] = args.python
    python = subprocess.run([env.get("PYTHON", "python3"), "--version"], capture_output=True, text=True).stdout
    print(f"machine: {machine()}; {python.strip()}", flush=True)
    steps = [run_step("core", work, env, scratch / "pip-core.log")]
    for extra in args.extras:
        steps.append(run_step(extra, work, {**env, "FGX_EXTRAS": extra}, scratch / f"pip-{extra}.log"))
    if args.record:
        commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True,
                                text=True).stdout.strip()
        path = Path(args.record)
        record = json.loads(path.read_text()) if path.exists() else {"runs": []}
        record["runs"].append({"date": datetime.date.today().isoformat(), "commit": commit, "machine": machine(),
                               "python": python.strip(), "torch_index": args.torch_index, "steps": steps})
        path.write_text(json.dumps(record, indent=2) + "\n")
    if not args.keep:
        shutil.rmtree(scratch, ignore_errors=True)
    print(f"install_wall_s: {sum(s['wall_s'] for s in steps)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
