"""What the verl engine's commands run inside: the machine (CPU or GPUs, one node or a SLURM allocation),
a Ray cluster no one else can use, and the host lock.

**The machine.** A job uses the GPUs it sees (``CUDA_VISIBLE_DEVICES``, as SLURM sets it), in data-parallel
groups of ``tensor_parallel_size``; its SLURM allocation's nodes are asked of SLURM. A job that sees no GPU
runs the same commands on the CPU, one rank (:func:`cpu_env`): verl with fgx's CPU platform
(:mod:`fgx.engines.verl.cpu_platform`), vLLM's CPU build with fgx's plugin (:mod:`fgx.engines.verl.vllm_cpu`).

**Ray.** verl's GRPO trainer starts Ray (``ray.init``), and :file:`scripts/ray_slurm.sh` starts it over a
multi-node allocation (``ray start``). Ray runs code for whoever reaches its ports, so every Ray that
fgx starts is made private (:func:`private_ray`):

* token authentication (``RAY_AUTH_MODE=token``) with a token of this job alone, 256 random bits in a
  0600 file (``RAY_AUTH_TOKEN_PATH``) in the job's work directory, which every node of a multi-node job
  reads; never ``~/.ray/auth_token``, which Ray would otherwise write (0644 under the usual umask) and
  share between all of a user's clusters;
* Ray's session files (logs, sockets, the address file ``ray.init()`` reads to find "the" cluster of
  a machine) under a fresh directory only this user can enter (``RAY_TMPDIR``), never the shared
  ``/tmp/ray``;
* on one node, a cluster of its own (``RAY_ADDRESS=local``): ``ray.init()`` without an address
  joins the newest cluster it finds on the machine, another job's or another user's;
* the dashboard off: :func:`fgx.engines.verl.commands.ppo_overrides` starts Ray with
  ``include_dashboard=false`` and ray_slurm.sh with ``--include-dashboard=false`` (its job API would
  run code for anyone who reaches 127.0.0.1:8265);
* verl's vLLM servers during RL (:data:`VLLM_SERVER_ENV`): an API key of this job alone on their
  OpenAI-compatible routes, and none of the development or LoRA-loading routes that run code.

The token file and the session directory go when the command ends.

**The host lock.** verl syncs its weights to vLLM through a socket of a fixed name in ``/tmp``
(:data:`WEIGHT_SYNC_LOCK`'s comment); two verl RL jobs on one host take turns through
:func:`host_lock`, a lock file in a directory of this user's own (:func:`user_dir`).
"""

from __future__ import annotations

import contextlib
import logging
import os
import secrets
import shutil
import stat
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Iterator, Mapping, Sequence

from fgx.io import InputError

log = logging.getLogger("fgx.engines.verl")

SRC_DIR = Path(__file__).resolve().parents[3]  # .../src: fgx importable from here


# ----------------------------------------------------------------------------- the machine: CPU, GPUs, SLURM
def on_cpu() -> bool:
    """True when this job sees no GPU: ``CUDA_VISIBLE_DEVICES`` empty, or unset and CUDA counts none."""
    cvd = os.environ.get("CUDA_VISIBLE_DEVICES")
    if cvd is not None:
        return not cvd.strip() or cvd.strip() == "NoDevFiles"
    try:
        import torch

        return torch.cuda.device_count() == 0
    except Exception:  # no torch / no driver
        return True


def cpu_env(v: Mapping) -> dict[str, str | None]:
    """Environment of a verl or vLLM command on the CPU: verl imports fgx's CPU platform and uses it
    (``VERL_USE_EXTERNAL_MODULES``, ``VERL_PLATFORM``) and picks its FSDP engine, registered for
    "cuda" only (``VERL_ENGINE_DEVICE``); vLLM takes its CPU platform and a KV cache of
    ``verl.cpu_kv_cache_gb`` GB (else it sizes the cache as a share of the machine's memory)."""
    return {"VERL_USE_EXTERNAL_MODULES": "fgx.engines.verl.cpu_platform", "VERL_PLATFORM": "cpu",
            "VERL_ENGINE_DEVICE": "cuda", "VLLM_TARGET_DEVICE": "cpu",
            "VLLM_CPU_KVCACHE_SPACE": str(int(v["cpu_kv_cache_gb"])),
            # unset: Ray refuses its "GPU" (one per CPU rank, cpu_platform) when the variable lists none
            "CUDA_VISIBLE_DEVICES": None}


def sampler_cpu_env(v: Mapping) -> dict[str, str | None]:
    """:func:`cpu_env` for fgx's own vLLM sampler (not verl's rollout server, whose async engine needs a
    process of its own): vLLM's engine core and its worker run inside the sampling process, two
    processes fewer to start, each of which imports torch and vLLM again (about half of a small sampling
    job's time on a CPU). Requests are seeded one by one, so the samples are the same."""
    return {**cpu_env(v), "VLLM_ENABLE_V1_MULTIPROCESSING": "0"}


def visible_gpus(default: int) -> list[str]:
    """Device ids this job may use: CUDA_VISIBLE_DEVICES, else CUDA's count, else ``default``."""
    cvd = os.environ.get("CUDA_VISIBLE_DEVICES")
    if cvd is not None and cvd.strip() and cvd.strip() != "NoDevFiles":
        return [d.strip() for d in cvd.split(",") if d.strip()]
    try:
        import torch

        n = torch.cuda.device_count()
    except Exception:  # no torch / no driver: fall back to the configured count
        n = 0
    return [str(i) for i in range(n or int(default))]


def slurm_job_nodes() -> int:
    """Nodes of this job's SLURM allocation (1 outside SLURM).

    Asked of SLURM (``squeue -j $SLURM_JOB_ID``): inside a job step, as Snakemake's SLURM jobstep
    runs every job, SLURM_JOB_NUM_NODES / SLURM_JOB_NODELIST describe the one-node step instead.
    """
    job = os.environ.get("SLURM_JOB_ID")
    if job and shutil.which("squeue"):
        try:
            out = subprocess.run(["squeue", "-h", "-j", job, "-o", "%D"], capture_output=True, text=True,
                                 timeout=60).stdout.strip()
            if out.isdigit():
                return max(1, int(out))
        except (OSError, subprocess.TimeoutExpired):
            pass
    return max(1, int(os.environ.get("SLURM_JOB_NUM_NODES") or 1))


def gpu_groups(devices: Sequence[str], tensor_parallel_size: int) -> list[list[str]]:
    """Split devices into data-parallel groups of ``tensor_parallel_size`` GPUs."""
    tp = max(1, int(tensor_parallel_size))
    if len(devices) < tp:
        raise RuntimeError(f"model.tensor_parallel_size={tp} but this job sees {len(devices)} GPU(s) "
                           f"({','.join(devices) or 'none'}); request more GPUs in the profile or lower it")
    return [list(devices[i * tp:(i + 1) * tp]) for i in range(len(devices) // tp)]


def job_env(extra: Mapping[str, str | None] | None = None) -> dict[str, str]:
    """This process's environment for a command, fgx importable, with ``extra`` (None: unset)."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(SRC_DIR), *filter(None, [env.get("PYTHONPATH")])])
    env.setdefault("TOKENIZERS_PARALLELISM", "true")
    env.setdefault("WANDB_MODE", "disabled")
    env.update(extra or {})
    return {k: v for k, v in env.items() if v is not None}


# ----------------------------------------------------------------------------- Ray and the host lock
TOKEN_FILE = "ray-auth-token"


def user_dir(base: str | os.PathLike = "/tmp") -> Path:
    """``base/fgx-<uid>``: a directory of this user's own for fgx's host-wide files. Made 0700 if
    absent; refused, naming it, if it is not a directory that this user owns and no one else may
    enter (a name in a shared directory that another user made first, or a link)."""
    path = Path(base) / f"fgx-{os.getuid()}"
    try:
        path.mkdir(mode=0o700)
    except FileExistsError:
        pass
    st = os.lstat(path)
    if not stat.S_ISDIR(st.st_mode) or st.st_uid != os.getuid() or st.st_mode & 0o077:
        raise InputError(f"{path}: fgx keeps its host-wide locks here, but this is not a directory that only you "
                         f"(uid {os.getuid()}) may enter (owner uid {st.st_uid}, mode {stat.filemode(st.st_mode)}); "
                         "someone else may have made it. Remove it (or ask its owner to), and rerun")
    return path


# verl's colocated weight sync (actor -> vLLM) goes through /tmp/rl-colocate-zmq-<Ray job id>-replica-<r>-rank-<k>.sock,
# and every job that starts a Ray cluster of its own is Ray job 01000000: two such verl RL jobs on one host bind
# the same socket, and when their syncs meet both hang. One lock per user and host makes that user's jobs take
# turns. It lies under /tmp itself, not $TMPDIR, because the socket does: where SLURM gives each job a /tmp of
# its own, the sockets cannot meet and neither do the locks.
WEIGHT_SYNC_LOCK = "verl-weight-sync.lock"


@contextlib.contextmanager
def host_lock(path: str | os.PathLike | None = None, what: str = "verl RL job") -> Iterator[None]:
    """Hold an exclusive lock on ``path`` (default: :data:`WEIGHT_SYNC_LOCK` in :func:`user_dir`) until
    the block ends, however the process ends."""
    import fcntl

    path = Path(path) if path is not None else user_dir() / WEIGHT_SYNC_LOCK
    fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW, 0o600)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            log.info("another %s runs on this host (lock %s): waiting for it, as verl's weight sync of two "
                     "jobs on one host would collide", what, path)
            t0 = time.time()
            fcntl.flock(fd, fcntl.LOCK_EX)
            log.info("lock %s taken after %.0f s", path, time.time() - t0)
        yield
    finally:
        os.close(fd)


def write_token(path: Path) -> Path:
    """A fresh Ray token (256 random bits, as ``ray get-auth-token --generate`` makes) in ``path``, mode 0600
    from the start: an earlier attempt's file is replaced, never reused, and never opened through a link."""
    with contextlib.suppress(FileNotFoundError):
        path.unlink()
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
    try:
        os.write(fd, secrets.token_hex(32).encode())
    finally:
        os.close(fd)
    return path


# Ray's sockets lie ~75 characters deep in its session directory, and a socket's path is 107 bytes at most
SESSION_BASE_MAX = 30


def session_base() -> str:
    """Where a job's Ray session directory goes: $TMPDIR, or /tmp where $TMPDIR is too long a path for
    Ray's sockets (the name under it is fresh and private either way)."""
    base = tempfile.gettempdir()
    return base if len(base) <= SESSION_BASE_MAX else "/tmp"


# verl's RL rollout runs each vLLM engine behind vLLM's HTTP server, on the node's address at a free port
# (verl's own calls go through Ray): its /v1 routes answer only the key in VLLM_API_KEY, and the variables that
# would add routes running code on the engine (development endpoints, LoRA loading by path) are unset
VLLM_SERVER_ENV = {"VLLM_SERVER_DEV_MODE": None, "VLLM_ALLOW_RUNTIME_LORA_UPDATING": None}


@contextlib.contextmanager
def private_ray(work: Path, *, one_node: bool = True) -> Iterator[dict[str, str | None]]:
    """The environment of a command that may start Ray (module docstring): token authentication with a
    new token in ``work``, Ray's session files in a new private directory, and with ``one_node`` a
    cluster of its own (else no address: ray_slurm.sh gives the command its head's). None unsets a
    variable (a ``RAY_AUTH_TOKEN`` of the user's would take precedence over the file). Both files go
    when the block ends."""
    token = write_token(Path(work) / TOKEN_FILE)
    session = Path(tempfile.mkdtemp(prefix="fgx-ray-", dir=session_base()))  # 0700; Ray makes "ray" inside
    env = {"RAY_AUTH_MODE": "token", "RAY_AUTH_TOKEN_PATH": str(token.resolve()), "RAY_TMPDIR": str(session),
           "RAY_AUTH_TOKEN": None, **VLLM_SERVER_ENV, "VLLM_API_KEY": secrets.token_hex(32)}
    env["RAY_ADDRESS"] = "local" if one_node else None
    try:
        yield env
    finally:
        token.unlink(missing_ok=True)
        shutil.rmtree(session, ignore_errors=True)
