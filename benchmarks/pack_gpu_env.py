"""Pack what a GPU machine without a package registry lacks to run fgx's device checks, as one .tar.xz.

Such a machine's image has a CUDA torch (e.g. 2.11+cu130), pandas, pyarrow, matplotlib, seaborn,
pytest, jinja2, PyYAML, requests, packaging and numpy, and what those depend on (torch's filelock, fsspec
and typing-extensions, pytest's pygments among them). This installs fgx's
pins (envs/requirements.txt) of snakemake, transformers, tokenizers, safetensors, tqdm and jsonschema
with their dependencies into one folder for the image's Python (``pip install --target`` run by that
Python's version, 3.12 by default), removes every distribution the image has (the packages above and
the dependencies they pull in) and pulp's solver binaries (Snakemake then schedules with its greedy
scheduler), and packs the rest. ``benchmarks/gpu_check.py --pack FILE`` unpacks it into a scratch
directory of its own (``mkdtemp``, removed when it ends) and puts it on PYTHONPATH, ahead of the image's
own packages (so the pinned transformers wins over the image's).

    .venv/bin/python benchmarks/pack_gpu_env.py [--python python3.12] [--out build/gpu-env/fgx-gpu-env.tar.xz]
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CARRIED = ("snakemake", "transformers", "tokenizers", "safetensors", "tqdm", "jsonschema")
IMAGE = ("torch", "pandas", "pyarrow", "matplotlib", "seaborn", "pytest", "jinja2", "pyyaml", "requests",
         "packaging", "numpy",
         "filelock", "fsspec", "typing-extensions", "pygments")  # torch's and pytest's, not in this folder to follow
DROPPED_PATHS = ("pulp/solverdir",)  # CBC binaries for every platform (tens of MB); Snakemake works without


def canonical(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def pins(names) -> list[str]:
    """``name==version`` of each of ``names`` from envs/requirements.txt."""
    lines = (ROOT / "envs" / "requirements.txt").read_text().splitlines()
    found = {canonical(line.split("==")[0]): line.strip() for line in lines
             if "==" in line and not line.startswith("#")}
    missing = [n for n in names if canonical(n) not in found]
    if missing:
        raise SystemExit(f"error: envs/requirements.txt pins none of {missing}")
    return [found[canonical(n)] for n in names]


def distributions(target: Path) -> dict[str, Path]:
    """{canonical name: its .dist-info folder} of what ``target`` holds."""
    out = {}
    for info in target.glob("*.dist-info"):
        meta = (info / "METADATA").read_text(encoding="utf-8", errors="replace")
        name = re.search(r"^Name: (.+)$", meta, re.M).group(1).strip()
        out[canonical(name)] = info
    return out


def requirements(info: Path, python: str) -> list[str]:
    """The distributions ``info``'s METADATA requires on Linux under Python ``python`` (no extras)."""
    from packaging.requirements import Requirement

    env = {"python_version": ".".join(python.split(".")[:2]), "python_full_version": python, "extra": "",
           "sys_platform": "linux", "platform_system": "Linux", "os_name": "posix"}
    out = []
    for line in (info / "METADATA").read_text(encoding="utf-8", errors="replace").splitlines():
        if line.startswith("Requires-Dist:"):
            req = Requirement(line.split(":", 1)[1].strip())
            if req.marker is None or req.marker.evaluate(env):
                out.append(canonical(req.name))
    return out


def image_closure(dists: dict[str, Path], python: str) -> set[str]:
    """The image's packages and everything they require, among ``dists``."""
    todo, seen = [canonical(n) for n in IMAGE], set()
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        seen.add(name)
        if name in dists:
            todo += requirements(dists[name], python)
    return seen & set(dists)


def remove_distribution(target: Path, info: Path) -> None:
    """Delete every file a distribution's RECORD lists, then its now empty folders and its dist-info."""
    record = info / "RECORD"
    folders = set()
    for line in record.read_text().splitlines() if record.exists() else []:
        rel = line.split(",")[0]
        path = (target / rel).resolve()
        if target.resolve() in path.parents and path.is_file():
            path.unlink()
            folders.add(path.parent)
    for folder in sorted(folders, key=lambda p: -len(p.parts)):
        while folder != target.resolve() and folder.exists() and not any(folder.iterdir()):
            folder.rmdir()
            folder = folder.parent
    shutil.rmtree(info, ignore_errors=True)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--python", default="python3.12", help="the GPU image's Python (its version picks the wheels)")
    ap.add_argument("--out", default=str(ROOT / "build" / "gpu-env" / "fgx-gpu-env.tar.xz"))
    args = ap.parse_args(argv)

    env = {**os.environ, "PYENV_VERSION": os.environ.get("PYENV_VERSION", "3.12.1")}
    version = subprocess.run([args.python, "-c", "import platform; print(platform.python_version())"], env=env,
                             capture_output=True, text=True, check=True).stdout.strip()
    with tempfile.TemporaryDirectory(prefix="fgx-gpu-env-") as tmp:
        target = Path(tmp) / "site"
        cmd = [args.python, "-m", "pip", "install", "-q", "--no-compile", "--prefer-binary", "--target",
               str(target), *pins(CARRIED)]
        print(f"python {version}: {' '.join(cmd[1:])}", flush=True)
        subprocess.run(cmd, env=env, check=True)
        dists = distributions(target)
        dropped = sorted(image_closure(dists, version))
        for name in dropped:
            remove_distribution(target, dists[name])
        for rel in DROPPED_PATHS:
            shutil.rmtree(target / rel, ignore_errors=True)
        for cache in list(target.rglob("__pycache__")):
            shutil.rmtree(cache, ignore_errors=True)
        kept = sorted(set(dists) - set(dropped))
        print(f"dropped (the image has them): {', '.join(dropped)}")
        print(f"carried ({len(kept)}): {', '.join(kept)}")
        out = Path(args.out)
        out.parent.mkdir(parents=True, exist_ok=True)
        partial = out.with_name(out.name + ".partial")
        with tarfile.open(partial, "w:xz", preset=9) as tar:
            for path in sorted(target.iterdir()):
                tar.add(path, arcname=path.name)
        partial.replace(out)
    print(f"packed: {out} ({out.stat().st_size / 2**20:.1f} MiB)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
