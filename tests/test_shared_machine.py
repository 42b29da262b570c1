"""What fgx promises on a machine other people use (docs/safety.md), each promise tried here: no Ray that
runs a stranger's code, no file of a fixed name in a shared directory, no output deleted or half-published
by a second writer, no process or shared-memory segment left behind by a cancelled job, and resume state
that never mixes attempts or devices.

The Ray tests start Ray for real (skipped where Ray is not installed); the rest run in seconds."""

from __future__ import annotations

import json
import os
import shutil
import signal
import stat
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

import pandas as pd
import pytest

from configs import verl_section
from ray_probe import GCS_PROBE
from toy import string_rows
from fgx.engines.verl import commands as C
from fgx.engines.verl import engine as E
from fgx.engines.verl import environment as ENV
from fgx.engines.verl import metrics as M
from fgx.engines.verl import processes as P

ROOT = Path(__file__).resolve().parents[1]


def _runtime(**kw) -> dict:
    return {"engine": "verl", "device": "auto", "seed": 1, "tensor_parallel_size": 1, "verl": verl_section(), **kw}


RL = _runtime(algorithm="grpo", reward="acc", steps=2, batch_size=2, group_size=2, lr=1e-6, kl_coef=0.0,
              entropy_coef=0.0, loss_agg_mode="token-mean", dynamic_sampling=False, max_generation_batches=1,
              temperature=1.0, max_new_tokens=8, overlong_buffer=0, eval_every=1, save_every=1, val_n=1,
              val_temperature=1.0)
SAMPLING = _runtime(n=2, temperature=1.0, max_new_tokens=8)
SFT = _runtime(epochs=1, batch_size=2, lr=1e-5, max_length=64)


def _finish_like_verl(argv, env, cwd, steps=2):
    """What verl leaves for the engine: a checkpoint per step, file-logger metrics, a merged model."""
    if C.MERGE_MODULE in argv:
        target = Path(argv[argv.index("--target_dir") + 1])
        (target / "model.safetensors").write_bytes(b"weights")
        (target / "config.json").write_text("{}")
        return
    ov = dict(a.split("=", 1) for a in argv if "=" in a and not a.startswith("-"))
    ckpt = Path(ov["trainer.default_local_dir"])
    (ckpt / f"global_step_{steps}" / "actor").mkdir(parents=True, exist_ok=True)
    (ckpt / "latest_checkpointed_iteration.txt").write_text(str(steps))
    with open(env["VERL_FILE_LOGGER_PATH"], "w") as fh:
        for s in range(1, steps + 1):
            fh.write(json.dumps({"step": s, "data": {"critic/score/mean": 0.5, "train/loss": 1.0,
                                                     "train/grad_norm": 1.0, "train/lr": 1e-5}}) + "\n")


def _inputs(tmp_path) -> tuple[Path, Path]:
    model = tmp_path / "model"
    model.mkdir()
    (model / "config.json").write_text("{}")
    string_rows(4).to_parquet(tmp_path / "prompts.parquet")
    return model, tmp_path / "prompts.parquet"


# ----------------------------------------------------------------------------- Ray
FAKE_MAIN_PPO = GCS_PROBE + textwrap.dedent('''
    # verl's main_ppo as far as Ray goes: ray.init(**ray_kwargs.ray_init) from the overrides; then what a
    # stranger on the machine can do with the cluster, written to ray_check.json in the working directory
    import json, os, sys
    from pathlib import Path
    import ray

    kwargs = {}
    for arg in sys.argv[1:]:
        key, _, value = arg.lstrip("+").partition("=")
        if key.startswith("ray_kwargs.ray_init."):
            kwargs[key.rsplit(".", 1)[1]] = {"true": True, "false": False}.get(value, value)
            if isinstance(kwargs[key.rsplit(".", 1)[1]], str) and value.isdigit():
                kwargs[key.rsplit(".", 1)[1]] = int(value)
    ray.init(**kwargs)
    node = ray._private.worker.global_worker.node
    gcs_of = lambda token: gcs(node.gcs_address, token)  # noqa: E731
    token_path = Path(os.environ["RAY_AUTH_TOKEN_PATH"])
    tmp = Path(os.environ["RAY_TMPDIR"])
    Path("ray_check.json").write_text(json.dumps({
        "no_token": gcs_of(None), "wrong_token": gcs_of("0" * 64), "job_token": gcs_of(token_path.read_text()),
        "dashboard": node.address_info.get("webui_url") or "", "kwargs": kwargs,
        "token_mode": oct(token_path.stat().st_mode & 0o777), "session_dir": node.get_session_dir_path(),
        "tmp_mode": oct(tmp.stat().st_mode & 0o777), "tmp_owner": tmp.stat().st_uid,
        "home_token": (Path.home() / ".ray" / "auth_token").exists()}))
    ray.shutdown()
''')


def test_a_verl_rl_jobs_ray_refuses_anyone_without_the_jobs_token_and_serves_no_dashboard(tmp_path, monkeypatch):
    """Finding 1 on one node (the CPU path here; the GPU path gets the same environment, next test): Ray as
    verl's trainer starts it, from the engine's command and environment. A client without the token, or
    with another, is refused; the job's token (a 0600 file) is accepted; no dashboard; nothing in ~/.ray;
    Ray's session files in a 0700 directory of the job's; token and directory gone after the job."""
    pytest.importorskip("ray")
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    for var in ("RAY_AUTH_MODE", "RAY_AUTH_TOKEN", "RAY_AUTH_TOKEN_PATH", "RAY_ADDRESS", "RAY_TMPDIR"):
        monkeypatch.delenv(var, raising=False)
    (tmp_path / "main_ppo.py").write_text(FAKE_MAIN_PPO)
    model, prompts = _inputs(tmp_path)
    seen = {}

    def run(argv, env, cwd):
        if C.PPO_MODULE in argv:
            seen["env"] = env
            P.run_logged([sys.executable, str(tmp_path / "main_ppo.py"), *argv[3:]], env, cwd)
        _finish_like_verl(argv, env, cwd)

    work = tmp_path / "work"
    E.VerlEngine(runner=run).rl(model, prompts, prompts, tmp_path / "out", tmp_path / "metrics.parquet", work, RL)
    got = json.loads((work / "ray_check.json").read_text())
    assert got["no_token"] == got["wrong_token"] == "UNAUTHENTICATED" and got["job_token"] == "OK", got
    assert got["kwargs"]["include_dashboard"] is False and got["dashboard"] == "", got
    assert got["token_mode"] == "0o600" and got["tmp_mode"] == "0o700" and got["tmp_owner"] == os.getuid(), got
    assert got["session_dir"].startswith(seen["env"]["RAY_TMPDIR"]) and not got["home_token"], got
    assert not Path(seen["env"]["RAY_AUTH_TOKEN_PATH"]).exists() and not Path(seen["env"]["RAY_TMPDIR"]).exists()


def _capture_env(tmp_path, monkeypatch, job: str, gpus: str, nodes: int = 1) -> tuple[list, dict]:
    """The argv and environment of each command ``job`` runs, and the token file's state while it runs."""
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", gpus)
    monkeypatch.setenv("SLURM_JOB_NUM_NODES", str(nodes))
    monkeypatch.delenv("SLURM_JOB_ID", raising=False)
    monkeypatch.setenv("RAY_AUTH_TOKEN", "a token of the user's own cluster")
    monkeypatch.setenv("VLLM_SERVER_DEV_MODE", "1")  # vLLM's routes that run code, asked for in the user's shell
    monkeypatch.setenv("VLLM_ALLOW_RUNTIME_LORA_UPDATING", "1")
    monkeypatch.setenv("VLLM_API_KEY", "a key of the user's own server")
    model, prompts = _inputs(tmp_path)
    seen = []

    def record(argv, env):
        token = Path(env["RAY_AUTH_TOKEN_PATH"]) if "RAY_AUTH_TOKEN_PATH" in env else None
        tmp = Path(env["RAY_TMPDIR"]) if "RAY_TMPDIR" in env else None
        seen.append({"argv": list(argv), "env": dict(env),
                     "token_mode": token and stat.S_IMODE(token.stat().st_mode), "token": token and token.read_text(),
                     "tmp_mode": tmp and stat.S_IMODE(tmp.stat().st_mode)})

    def run(argv, env, cwd):
        if C.MERGE_MODULE not in argv:
            record(argv, env)
        _finish_like_verl(argv, env, cwd)

    def run_parallel(argvs, envs):
        for argv, env in zip(argvs, envs):
            record(argv, env)
            out_dir = Path(argv[argv.index("--out-dir") + 1])
            pd.DataFrame([{"row_index": i, "responses": ["r"] * 2, "response_tokens": [1] * 2,
                           "finish_reasons": ["stop"] * 2, "scores": [0.0] * 2, "correct": [False] * 2}
                          for i in range(4)]).to_parquet(out_dir / "shard000-chunk00000.parquet")

    engine = E.VerlEngine(runner=run, parallel_runner=run_parallel)
    if job == "rl":
        engine.rl(model, prompts, prompts, tmp_path / "out", tmp_path / "m.parquet", tmp_path / "work", RL)
    else:
        engine.sample(model, prompts, tmp_path / "out.parquet", tmp_path / "work", SAMPLING)
    return seen, {"work": tmp_path / "work"}


@pytest.mark.parametrize("job,gpus,nodes", [("rl", "", 1), ("rl", "0", 1), ("rl", "0,1", 2), ("sample", "", 1),
                                            ("sample", "0", 1)])
def test_every_command_that_may_start_ray_gets_a_private_authenticated_cluster(tmp_path, monkeypatch, job, gpus,
                                                                              nodes):
    """Findings 1 and 2 on every path fgx starts Ray: RL on the CPU, on one GPU node and over a multi-node
    allocation (ray_slurm.sh), and the vLLM shards (vLLM starts Ray for an engine larger than a node).
    Each gets RAY_AUTH_MODE=token with a fresh 0600 token file of its own (not the user's RAY_AUTH_TOKEN),
    Ray's session files in a 0700 directory of its own, and on one node RAY_ADDRESS=local (never another
    job's cluster); verl's Ray starts without its dashboard. verl's vLLM servers (RL) take a fresh API key of
    their own and none of vLLM's routes that run code."""
    seen, where = _capture_env(tmp_path, monkeypatch, job, gpus, nodes)
    assert seen
    for call in seen:
        env = call["env"]
        assert env.get("RAY_AUTH_MODE") == "token" and "RAY_AUTH_TOKEN" not in env, env
        assert call["token_mode"] == 0o600 and len(call["token"]) == 64, call["token_mode"]
        assert call["tmp_mode"] == 0o700 and Path(env["RAY_TMPDIR"]).name.startswith("fgx-ray-")
        assert env.get("RAY_ADDRESS") == ("local" if nodes == 1 else None), env.get("RAY_ADDRESS")
        assert "VLLM_SERVER_DEV_MODE" not in env and "VLLM_ALLOW_RUNTIME_LORA_UPDATING" not in env
        assert len(env["VLLM_API_KEY"]) == 64 and env["VLLM_API_KEY"] not in {call["token"] for call in seen}
        if job == "rl":
            assert "+ray_kwargs.ray_init.include_dashboard=false" in call["argv"]
            assert (call["argv"][:2] == ["bash", str(E.RAY_SLURM)]) == (nodes > 1)
        assert not Path(env["RAY_AUTH_TOKEN_PATH"]).exists() and not Path(env["RAY_TMPDIR"]).exists()
    assert len({call["token"] for call in seen}) == len(seen)  # a new token every time
    assert len({call["env"]["VLLM_API_KEY"] for call in seen}) == len(seen)


def test_vllms_server_refuses_a_request_without_the_jobs_key(monkeypatch):
    """What the key in VLLM_API_KEY buys, by vLLM's own middleware on an app with vLLM's default server
    arguments (verl's server parses its arguments with vLLM's parser): the OpenAI-compatible routes refuse
    a request without the key."""
    pytest.importorskip("vllm")
    from fastapi import FastAPI
    from fastapi.testclient import TestClient
    from vllm.entrypoints.launchers.cli_args import make_arg_parser
    from vllm.entrypoints.serve.middleware.register import init_entrypoints_middleware
    from vllm.utils.argparse_utils import FlexibleArgumentParser

    monkeypatch.setenv("VLLM_API_KEY", "k" * 64)
    app = FastAPI()
    app.get("/v1/models")(lambda: {"data": []})
    init_entrypoints_middleware(make_arg_parser(FlexibleArgumentParser()).parse_args([]), app, ("generate",))
    client = TestClient(app)
    assert client.get("/v1/models").status_code == 401
    assert client.get("/v1/models", headers={"Authorization": "Bearer " + "k" * 64}).status_code == 200


RAY_CLIENT = GCS_PROBE + textwrap.dedent('''
    import json, os, ray
    ray.init()  # the cluster ray_slurm.sh names in RAY_ADDRESS
    address = os.environ["RAY_ADDRESS"]
    print(json.dumps({"nodes": len(ray.nodes()), "gpus": ray.cluster_resources().get("GPU", 0),
                      "no_token": gcs(address, None),
                      "job_token": gcs(address, open(os.environ["RAY_AUTH_TOKEN_PATH"]).read()),
                      "dashboard": ray._private.worker.get_dashboard_url() or ""}))
''')

# SLURM's commands as ray_slurm.sh calls them, for an allocation of two nodes both of which are this machine
SLURM_STUBS = {
    "squeue": 'echo "2 n[1-2]"',
    "scontrol": "printf 'n1\\nn2\\n'",
    "srun": 'while [ $# -gt 0 ]; do case "$1" in -w) shift 2;; --*) shift;; *) break;; esac; done; exec "$@"',
}


def _stubs(tmp_path: Path, scripts: dict[str, str]) -> Path:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir(exist_ok=True)
    for name, body in scripts.items():
        (bin_dir / name).write_text("#!/usr/bin/env bash\n" + body + "\n")
        (bin_dir / name).chmod(0o755)
    return bin_dir


def test_ray_over_an_allocation_demands_the_jobs_token_and_keeps_its_files_private(tmp_path):
    """Finding 1 across nodes: scripts/ray_slurm.sh over a two-node allocation (SLURM's commands stubbed,
    both nodes this machine) starts a cluster that refuses a client without the token, has no dashboard
    and removes each node's session directory when it stops; it refuses to start Ray without a token."""
    pytest.importorskip("ray")
    bin_dir = _stubs(tmp_path, SLURM_STUBS)
    (tmp_path / "client.py").write_text(RAY_CLIENT)
    token = ENV.write_token(tmp_path / "token")
    sessions = Path(tempfile.mkdtemp(prefix="fgx-t", dir="/tmp"))  # short: Ray's socket paths lie below it
    env = {**os.environ, "PATH": f"{bin_dir}{os.pathsep}{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}",
           "SLURM_JOB_ID": "7", "FGX_GPUS_PER_NODE": "1", "TMPDIR": str(sessions), "HOME": str(tmp_path)}
    for var in ("RAY_AUTH_MODE", "RAY_AUTH_TOKEN_PATH", "RAY_ADDRESS", "RAY_TMPDIR"):
        env.pop(var, None)
    argv = ["bash", str(E.RAY_SLURM), "--", sys.executable, str(tmp_path / "client.py")]
    refused = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=60)
    assert refused.returncode == 2 and "token authentication only" in refused.stderr, refused.stderr[-2000:]
    env.update(RAY_AUTH_MODE="token", RAY_AUTH_TOKEN_PATH=str(token))
    proc = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-4000:]
    got = json.loads(proc.stdout.strip().splitlines()[-1])
    assert got["nodes"] == 2 and got["gpus"] == 2, got
    assert got["no_token"] == "UNAUTHENTICATED" and got["job_token"] == "OK" and got["dashboard"] == "", got
    assert list(sessions.iterdir()) == [] and not (tmp_path / ".ray").exists()
    sessions.rmdir()


# ----------------------------------------------------------------------------- the host lock
def test_the_host_lock_lies_in_a_directory_only_its_user_may_enter(tmp_path):
    """Finding 3: not a fixed name in /tmp, which the first user to make it owns (the next user's jobs fail,
    any user can hold it), but ``/tmp/fgx-<uid>/``, made 0700; a directory of that name that someone else
    made, or anyone may write, or a link, is refused by name."""
    base = tmp_path / "shared"
    base.mkdir()
    mine = ENV.user_dir(base)
    assert mine == base / f"fgx-{os.getuid()}" and stat.S_IMODE(mine.stat().st_mode) == 0o700
    assert ENV.user_dir(base) == mine  # the second job finds its own directory
    with ENV.host_lock(mine / "a.lock"):
        assert stat.S_IMODE((mine / "a.lock").stat().st_mode) == 0o600
    from fgx.io import InputError

    mine.chmod(0o777)
    with pytest.raises(InputError, match=rf"fgx-{os.getuid()}: .*not a directory that only you"):
        ENV.user_dir(base)
    shutil.rmtree(mine)
    (base / "elsewhere").mkdir(mode=0o700)
    mine.symlink_to(base / "elsewhere")
    with pytest.raises(InputError, match="Remove it"):
        ENV.user_dir(base)
    if os.getuid() == 0:  # as root, a directory another user made first
        mine.unlink()
        mine.mkdir(mode=0o700)
        os.chown(mine, 65534, 65534)
        with pytest.raises(InputError, match="owner uid 65534"):
            ENV.user_dir(base)
    def open_files() -> set[Path]:
        found = set()
        for fd in os.scandir("/proc/self/fd"):
            try:
                found.add(Path(os.readlink(fd.path)))
            except OSError:
                pass
        return found

    before = open_files()
    with ENV.host_lock():  # the lock verl RL jobs take: the file this process opens for it
        held = open_files() - before
    assert [p.parent for p in held] == [Path("/tmp") / f"fgx-{os.getuid()}"], held
    assert stat.S_IMODE(os.stat(f"/tmp/fgx-{os.getuid()}").st_mode) == 0o700


# ----------------------------------------------------------------------------- output guards
@pytest.mark.parametrize("job", ["sample", "sft", "rl"])
def test_the_verl_engine_refuses_a_work_dir_holding_its_output_before_any_work(tmp_path, monkeypatch, job):
    """Finding 4: ``--out W/out --work-dir W`` would let the job delete its own output with its work directory;
    the verl engine refuses it, as the torch engine does, before a command runs, and leaves W as it was."""
    from fgx.io import InputError

    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "0")
    model, prompts = _inputs(tmp_path)
    ran = []
    engine = E.VerlEngine(runner=lambda *a: ran.append(a), parallel_runner=lambda *a: ran.append(a))
    work = tmp_path / "w"
    work.mkdir()
    (work / "fingerprint.txt").write_text("0123456789abcdef\n")  # an fgx work directory of another run
    out = work / ("out.parquet" if job != "rl" else "out")
    pd.DataFrame({"a": [1]}).to_parquet(work / "keep.parquet")
    sft_data = tmp_path / "sft.parquet"
    string_rows(4).assign(response=["a"] * 4).to_parquet(sft_data)
    with pytest.raises(InputError, match="work directory holds"):
        if job == "sample":
            engine.sample(model, prompts, out, work, SAMPLING)
        elif job == "sft":
            engine.sft(model, sft_data, out, work, SFT)
        else:
            engine.rl(model, prompts, prompts, tmp_path / "model_out", out, work, RL)
    assert ran == [] and sorted(p.name for p in work.iterdir()) == ["fingerprint.txt", "keep.parquet"]


@pytest.mark.parametrize("job", ["sft", "rl"])
def test_the_verl_engine_refuses_an_output_it_may_not_replace_before_training(tmp_path, monkeypatch, job):
    """Finding 4: an ``--out`` that is not a model directory (a user's) is refused before the trainer runs,
    not after hours of training, as the torch engine refuses it."""
    from fgx.io import InputError

    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "0")
    model, prompts = _inputs(tmp_path)
    out = tmp_path / "my files"
    (out / "notes").mkdir(parents=True)
    ran = []
    engine = E.VerlEngine(runner=lambda *a: ran.append(a))
    sft_data = tmp_path / "sft.parquet"
    string_rows(4).assign(response=["a"] * 4).to_parquet(sft_data)
    with pytest.raises(InputError, match="not a model directory"):
        if job == "sft":
            engine.sft(model, sft_data, out, tmp_path / "work", SFT)
        else:
            engine.rl(model, prompts, prompts, out, tmp_path / "m.parquet", tmp_path / "work", RL)
    assert ran == [] and (out / "notes").is_dir() and not (tmp_path / "work").exists()


# ----------------------------------------------------------------------------- SIGTERM
CHILD = textwrap.dedent('''
    """A command as verl's trainer or a vLLM shard is one: it holds a shared-memory segment it never unlinks,
    and starts a process in a session of its own (as Ray's workers run); with "stubborn" it ignores SIGTERM."""
    import os, signal, subprocess, sys, time
    from multiprocessing import resource_tracker, shared_memory
    name, stubborn, out = sys.argv[1], sys.argv[2] == "stubborn", sys.argv[3]
    if stubborn:
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
    seg = shared_memory.SharedMemory(create=True, size=4096, name=f"fgx_test_{name}_{os.getpid()}")
    resource_tracker.unregister(seg._name, "shared_memory")  # as a killed process leaves it
    worker = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"], start_new_session=True)
    with open(out, "a") as fh:
        fh.write(f"{os.getpid()} {worker.pid} {seg.name}\\n")
    time.sleep(600)
''')

JOB = textwrap.dedent('''
    import sys
    from fgx.cli import run
    from fgx.engines.verl import processes as P
    P.STOP_GRACE_S = 2.0
    how, child, out = sys.argv[1], sys.argv[2], sys.argv[3]
    cmd = lambda name, mood: [sys.executable, child, name, mood, out]
    if how == "trainer":
        sys.exit(run(lambda: P.run_logged(cmd("trainer", "stubborn"), {}, None)))
    sys.exit(run(lambda: P.run_parallel([cmd("shard0", "polite"), cmd("shard1", "stubborn")], [{}, {}])))
''')


@pytest.mark.parametrize("how", ["trainer", "shards"])
def test_sigterm_stops_every_child_and_removes_the_segments_they_held(tmp_path, how):
    """Finding 5: a verl job cancelled with SIGTERM while it waits for its trainer (or its sampling shards)
    stops every command and every process they started, a process that ignores SIGTERM included (SIGKILL
    after the grace period), and removes the shared-memory segments they held; a segment of this user's
    that the job never held stays."""
    from multiprocessing import resource_tracker, shared_memory

    (tmp_path / "child.py").write_text(CHILD)
    (tmp_path / "job.py").write_text(JOB)
    pids = tmp_path / "pids.txt"
    other = shared_memory.SharedMemory(create=True, size=4096, name=f"fgx_test_other_{os.getpid()}")
    resource_tracker.unregister(other._name, "shared_memory")
    try:
        job = subprocess.Popen([sys.executable, str(tmp_path / "job.py"), how, str(tmp_path / "child.py"), str(pids)],
                               env={**os.environ, "PYTHONPATH": str(ROOT / "src")})
        expected = 1 if how == "trainer" else 2
        deadline = time.time() + 60
        while (not pids.exists() or len(pids.read_text().splitlines()) < expected) and time.time() < deadline:
            time.sleep(0.05)
        started = [line.split() for line in pids.read_text().splitlines()]
        assert len(started) == expected
        job.send_signal(signal.SIGTERM)
        t0 = time.time()
        assert job.wait(timeout=60) == 128 + signal.SIGTERM
        elapsed = time.time() - t0
        for child, worker, segment in started:
            for pid in (int(child), int(worker)):
                assert P._stat(pid) is None or P._stat(pid)[2] == "Z", f"process {pid} still runs"
            assert not (P.SHM_DIR / segment.lstrip("/")).exists(), segment
        assert (P.SHM_DIR / other.name.lstrip("/")).exists()  # not the job's: left alone
        assert elapsed < 4 * 2.0 + 5, elapsed
    finally:
        other.close()
        other.unlink()


def test_a_segment_someone_else_can_open_is_not_removed(tmp_path):
    """A segment is proven the job's own only if no other user could have opened it (mode 0600) and no live
    process holds it."""
    from multiprocessing import resource_tracker, shared_memory

    segs = [shared_memory.SharedMemory(create=True, size=64, name=f"fgx_test_{k}_{os.getpid()}") for k in "abc"]
    for s in segs:
        resource_tracker.unregister(s._name, "shared_memory")
    paths = [P.SHM_DIR / s.name.lstrip("/") for s in segs]
    paths[1].chmod(0o644)
    segs[0].close()
    segs[1].close()  # c stays mapped by this process
    try:
        assert P.remove_orphaned_segments(paths) == [paths[0]]
        assert paths[1].exists() and paths[2].exists()
    finally:
        segs[2].close()
        for p in paths[1:]:
            p.unlink(missing_ok=True)


# ----------------------------------------------------------------------------- attempt logs
def test_attempt_logs_keep_the_order_of_the_attempts_whatever_the_clock_says(tmp_path, monkeypatch):
    """Three attempts of one job, the clock set back an hour between the first two (a DST fall-back,
    a requeue onto a node in another zone): the metrics of a step logged twice are the later attempt's."""
    import time as time_module

    clock = iter(["20261101-013000", "20261101-010500", "20261101-011000"])  # 01:30, then 01:05 again
    monkeypatch.setattr(time_module, "strftime", lambda fmt, *t: next(clock))
    logs = []
    for value in (1.0, 2.0, 3.0):
        path = M.next_attempt_log(tmp_path)
        path.write_text(json.dumps({"step": 5, "data": {"critic/score/mean": value}}) + "\n")
        logs.append(path)
    assert M.attempt_logs(tmp_path) == logs
    assert M.read_verl_jsonl(M.attempt_logs(tmp_path))[5]["critic/score/mean"] == 3.0
    assert M.read_verl_jsonl(list(reversed(logs)))[5]["critic/score/mean"] == 3.0  # given in any order


# ----------------------------------------------------------------------------- device in the fingerprint
def test_a_sampling_job_begun_on_the_cpu_and_resumed_on_a_gpu_starts_afresh(tmp_path, monkeypatch):
    """The CPU samples in fp32, a GPU in bf16: chunks a CPU attempt finished are not reused by an
    attempt that sees a GPU (mixed precisions in one file), while a second CPU attempt reuses them."""
    model, prompts = _inputs(tmp_path)
    work = tmp_path / "work"
    found = []

    def attempt(argvs, envs, kill=True):
        out_dir = Path(argvs[0][argvs[0].index("--out-dir") + 1])
        found.append(sorted(p.name for p in out_dir.iterdir()))
        for i in range(4):
            pd.DataFrame([{"row_index": i, "responses": ["r"] * 2, "response_tokens": [1] * 2,
                           "finish_reasons": ["stop"] * 2, "scores": [0.0] * 2, "correct": [False] * 2}]
                         ).to_parquet(out_dir / f"shard000-chunk{i:05d}.parquet")
            if kill and i == 1:
                raise KeyboardInterrupt

    for gpus in ("", ""):
        monkeypatch.setenv("CUDA_VISIBLE_DEVICES", gpus)
        with pytest.raises(KeyboardInterrupt):
            E.VerlEngine(parallel_runner=attempt).sample(model, prompts, tmp_path / "o.parquet", work, SAMPLING)
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "0")
    E.VerlEngine(parallel_runner=lambda a, e: attempt(a, e, kill=False)).sample(
        model, prompts, tmp_path / "o.parquet", work, SAMPLING)
    assert found == [[], ["shard000-chunk00000.parquet", "shard000-chunk00001.parquet"], []]


# ----------------------------------------------------------------------------- one writer at a time
WRITER = textwrap.dedent('''
    import sys, time
    from pathlib import Path
    from fgx.io import atomic_dir
    with atomic_dir(sys.argv[1]) as tmp:
        (tmp / "config.json").write_text("{}")
        (tmp / "part1").write_text("first writer")
        print("writing", flush=True)
        time.sleep(1.5)  # a merge of large weights takes minutes
        (tmp / "part2").write_text("first writer")
''')


def test_a_second_writer_of_an_output_waits_and_deletes_nothing_the_first_writes(tmp_path):
    """A second writer of the same model directory (``--nolock``, a script run by hand beside the DAG) neither
    deletes the first one's temporary as a killed writer's nor lets the first publish a part of a model: it
    waits for the first's lock, the first finishes whole, then the second replaces it."""
    from fgx.io import atomic_dir

    (tmp_path / "writer.py").write_text(WRITER)
    out = tmp_path / "model"
    first = subprocess.Popen([sys.executable, str(tmp_path / "writer.py"), str(out)], stdout=subprocess.PIPE,
                             text=True, env={**os.environ, "PYTHONPATH": str(ROOT / "src")})
    assert first.stdout.readline().strip() == "writing"
    with atomic_dir(out) as tmp:
        assert (out / "part2").read_text() == "first writer"  # the first writer's output, whole, is out
        (tmp / "config.json").write_text("{}")
        (tmp / "part1").write_text("second writer")
        (tmp / "part2").write_text("second writer")
    assert first.wait(timeout=30) == 0
    assert {p.name: p.read_text() for p in out.iterdir() if p.name != "config.json"} == \
        {"part1": "second writer", "part2": "second writer"}
    assert sorted(p.name for p in tmp_path.iterdir()) == ["model", "writer.py"]


def test_without_locks_a_writer_writes_and_deletes_no_temporary(tmp_path, monkeypatch):
    """On a file system that refuses locks (some NFS and Lustre mounts) fgx cannot tell a live writer's
    temporary from a dead one's: it writes, and removes none."""
    import errno
    import fcntl

    from fgx.io import write_parquet

    def no_locks(fd, op):
        raise OSError(errno.ENOLCK, "No locks available")

    monkeypatch.setattr(fcntl, "flock", no_locks)
    left = tmp_path / ".m.parquet.abcd1234.parquet"
    left.write_bytes(b"a writer's, live or dead")
    write_parquet(pd.DataFrame({"a": [1]}), tmp_path / "m.parquet")
    assert left.exists() and pd.read_parquet(tmp_path / "m.parquet")["a"].tolist() == [1]
    assert sorted(p.name for p in tmp_path.iterdir()) == [left.name, "m.parquet"]


# ----------------------------------------------------------------------------- the CI's SLURM directory
CI_STUBS = {name: "exit 0" for name in ("apt-get", "mungekey", "runuser", "chown", "mknod", "ln", "slurmctld",
                                         "slurmd", "sacctmgr", "mysqladmin")}
CI_STUBS.update({"id": 'if [ "$1" = -u ]; then echo 0; else command -p id "$@"; fi', "dpkg": "exit 0",
                 "chmod": 'case "${@: -1}" in "$TMPDIR"/*) command -p chmod "$@";; esac',
                 "munge": "echo cred", "unmunge": "cat >/dev/null", "sinfo": 'echo "idle"; echo idle'})


def _slurm_up(tmp_path, **env):
    bin_dir = _stubs(tmp_path, CI_STUBS)
    return subprocess.run(["bash", str(ROOT / ".ci" / "slurm-up.sh")], capture_output=True, text=True, timeout=60,
                          env={**os.environ, "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}",
                               "TMPDIR": str(tmp_path), **env})


AS_ROOT = pytest.mark.skipif(os.getuid() != 0, reason="slurm-up.sh runs as root (CI); its system directories need it")


@AS_ROOT
def test_the_ci_cluster_lives_in_a_fresh_directory_of_its_own(tmp_path):
    """.ci/slurm-up.sh (its package, munge and daemon commands stubbed) makes a new directory,
    writable by its user alone, and says where; slurm-down.sh trusts that directory."""
    proc = _slurm_up(tmp_path)
    assert proc.returncode == 0, proc.stderr[-3000:]
    conf = Path(proc.stdout.strip().splitlines()[-1].removeprefix("export SLURM_CONF="))
    base = conf.parent.parent
    assert conf.is_file() and base.parent == tmp_path and base.name.startswith("fgx-slurm.")
    assert base.stat().st_uid == os.getuid() and not base.stat().st_mode & 0o022 and (base / ".fgx-slurm").is_file()
    down = subprocess.run(["bash", str(ROOT / ".ci" / "slurm-down.sh")], capture_output=True, text=True,
                          env={**os.environ, "SLURM_CONF": str(conf)})
    assert down.returncode == 0, down.stderr


@AS_ROOT
def test_the_ci_cluster_refuses_a_directory_it_did_not_make(tmp_path):
    """A directory at the chosen path that someone else made (here: one anyone may write, and one
    without slurm-up.sh's mark) is refused before anything is written into it, and slurm-down.sh kills no
    PID written there."""
    planted = tmp_path / "fgx-slurm"
    (planted / "run").mkdir(parents=True)
    planted.chmod(0o777)
    victim = subprocess.Popen(["sleep", "60"])
    try:
        (planted / "run" / "slurmctld.pid").write_text(str(victim.pid))
        proc = _slurm_up(tmp_path, BASE=str(planted))
        assert proc.returncode != 0 and "refusing to use it" in proc.stderr, proc.stderr[-3000:]
        assert sorted(p.name for p in planted.iterdir()) == ["run"]
        down = subprocess.run(["bash", str(ROOT / ".ci" / "slurm-down.sh")], capture_output=True, text=True,
                              env={**os.environ, "BASE": str(planted)})
        assert down.returncode != 0 and victim.poll() is None, down.stdout + down.stderr
        planted.chmod(0o755)  # writable by its owner alone, but not made by slurm-up.sh
        assert _slurm_up(tmp_path, BASE=str(planted)).returncode != 0
        assert sorted(p.name for p in planted.iterdir()) == ["run"]
    finally:
        victim.kill()
        victim.wait()
