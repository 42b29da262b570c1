"""The verl engine's commands as child processes: run with their output in the job's log, and stopped
whole when the job is.

A job cancelled by SIGTERM (Snakemake, SLURM's time limit, ``kill``) raises SystemExit in fgx's main
thread (:func:`fgx.cli.exit_cleanly_on_sigterm`), and Ctrl-C KeyboardInterrupt, while the job waits for
its commands. Every command still running is then stopped with everything it started
(:func:`stop`): SIGTERM to the command, so that verl's trainer can stop Ray and torchrun its ranks;
after :data:`STOP_GRACE_S`, SIGTERM to every process of its tree that is still there (Ray's workers run
in sessions of their own, which a process group would miss); after as long again, SIGKILL. A process is
known by its pid and start time, so a pid the system has given to someone else since is left alone.

Shared memory: the segments in /dev/shm that the stopped processes held (mapped or open) are removed
once every one of them is gone, if fgx can prove they were theirs alone (:func:`remove_orphaned_segments`):
a plain file this user owns, readable and writable by no one else (so no other user's process can
have opened it), that no live process holds. vLLM's and verl's segments (``psm_*``, ``verl_weights_*``)
are such files; a process killed outright (SIGKILL, a lost node) cannot clean up, and neither can fgx.
"""

from __future__ import annotations

import logging
import os
import shlex
import signal
import stat
import subprocess
import time
from pathlib import Path
from typing import Iterable, Mapping, Sequence

log = logging.getLogger("fgx.engines.verl")

STOP_GRACE_S = 10.0  # seconds a command, and then what it left, has to end after SIGTERM (SLURM's KillWait is 30)
SHM_DIR = Path("/dev/shm")


def run_logged(argv: Sequence[str], env: Mapping[str, str], cwd: Path | None = None) -> None:
    """Run one command, its output going to ours (the job's log); raise naming it on failure."""
    log.info("running: %s", shlex.join(map(str, argv)))
    t0 = time.time()
    (rc,) = run_all([[str(a) for a in argv]], [env], cwd)
    log.info("exit %d after %.0f s", rc, time.time() - t0)
    if rc != 0:
        raise RuntimeError(f"verl engine: command failed with exit code {rc} (its output is above in this job's "
                           f"log): {shlex.join(map(str, argv))}")


def run_parallel(argvs: Sequence[Sequence[str]], envs: Sequence[Mapping[str, str]]) -> None:
    """Run commands side by side (one per GPU group); raise if any fails."""
    for argv, env in zip(argvs, envs, strict=True):
        log.info("starting (CUDA_VISIBLE_DEVICES=%s): %s", env.get("CUDA_VISIBLE_DEVICES"), shlex.join(argv))
    codes = run_all(argvs, envs)
    failed = [(argv, rc) for argv, rc in zip(argvs, codes) if rc != 0]
    if failed:
        raise RuntimeError("verl engine: sampling shard(s) failed: " +
                           "; ".join(f"exit {rc}: {shlex.join(a)}" for a, rc in failed))


def run_all(argvs: Sequence[Sequence[str]], envs: Sequence[Mapping[str, str]], cwd: Path | None = None) -> list[int]:
    """Start every command, wait for all, return their exit codes; whatever ends the wait (SIGTERM's
    SystemExit, Ctrl-C, an error) first stops every command still running, with all it started."""
    procs: list[subprocess.Popen] = []
    try:
        for argv, env in zip(argvs, envs, strict=True):
            procs.append(subprocess.Popen(list(argv), env=dict(env), cwd=cwd))
        return [p.wait() for p in procs]
    except BaseException:
        stop(procs)
        raise


# ----------------------------------------------------------------------------- process trees
def _stat(pid: int) -> tuple[int, int, str] | None:
    """(parent pid, start time in clock ticks since boot, state) of ``pid`` from /proc, None once it is gone."""
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    fields = text[text.rindex(")") + 2:].split()  # the command name may hold spaces and parentheses
    return int(fields[1]), int(fields[19]), fields[0]


def _all_processes() -> dict[int, tuple[int, int, str]]:
    out = {}
    for entry in os.scandir("/proc"):
        if entry.name.isdigit() and (st := _stat(int(entry.name))) is not None:
            out[int(entry.name)] = st
    return out


def descendants(roots: dict[int, int]) -> dict[int, int]:
    """``roots`` (pid -> start time) and every live process below one of them, as pid -> start time."""
    table = _all_processes()
    children: dict[int, list[int]] = {}
    for pid, (ppid, _, _) in table.items():
        children.setdefault(ppid, []).append(pid)
    found: dict[int, int] = {}
    stack = [pid for pid, start in roots.items() if pid in table and table[pid][1] == start]
    while stack:
        pid = stack.pop()
        if pid not in found:
            found[pid] = table[pid][1]
            stack.extend(children.get(pid, ()))
    return found


def _alive(pid: int, start: int) -> bool:
    st = _stat(pid)
    return st is not None and st[1] == start and st[2] not in ("Z", "X")


def _signal(procs: dict[int, int], sig: int) -> None:
    for pid, start in procs.items():
        if _alive(pid, start):  # the same process, not another that got its pid
            try:
                os.kill(pid, sig)
            except (ProcessLookupError, PermissionError):
                pass


def _wait_gone(procs: dict[int, int], seconds: float, popens: Sequence[subprocess.Popen] = ()) -> dict[int, int]:
    """Wait up to ``seconds`` for ``procs`` to end (reaping ``popens``, our own children); the ones left."""
    deadline = time.monotonic() + seconds
    while True:
        for p in popens:
            p.poll()
        left = {pid: start for pid, start in procs.items() if _alive(pid, start)}
        if not left or time.monotonic() >= deadline:
            return left
        time.sleep(0.05)


def stop(popens: Sequence[subprocess.Popen], grace: float | None = None) -> None:
    """Stop the commands ``popens`` and everything they started (module docstring), then remove the
    shared-memory segments only they held."""
    grace = STOP_GRACE_S if grace is None else grace
    running = [p for p in popens if p.poll() is None]
    if not running:
        return
    tree = descendants({p.pid: start for p in running if (start := _start_time(p.pid)) is not None})
    held = segments_held(tree)
    log.warning("stopping %d command(s) and the %d process(es) they started", len(running), len(tree) - len(running))
    _signal({p.pid: tree[p.pid] for p in running if p.pid in tree}, signal.SIGTERM)
    _wait_gone({p.pid: tree[p.pid] for p in running if p.pid in tree}, grace, running)
    tree.update(descendants({pid: start for pid, start in tree.items() if _alive(pid, start)}))
    _signal(tree, signal.SIGTERM)
    left = _wait_gone(tree, grace, running)
    if left:
        log.warning("SIGKILL to %d process(es) still running %.0f s after SIGTERM: %s", len(left), 2 * grace,
                    " ".join(map(str, sorted(left))))
        _signal(left, signal.SIGKILL)
        _wait_gone(left, grace, running)
    for p in running:
        p.wait()
    remove_orphaned_segments(held)


def _start_time(pid: int) -> int | None:
    st = _stat(pid)
    return None if st is None else st[1]


# ----------------------------------------------------------------------------- shared memory
def _shm_paths_of(pid: int) -> set[Path]:
    """The /dev/shm files process ``pid`` maps or has open (where this user may look: its own processes)."""
    found: set[Path] = set()
    prefix = f"{SHM_DIR}/"
    try:
        with open(f"/proc/{pid}/maps") as maps:
            for line in maps:
                fields = line.rstrip("\n").split(maxsplit=5)
                if len(fields) == 6 and fields[5].startswith(prefix) and not fields[5].endswith(" (deleted)"):
                    found.add(Path(fields[5]))
    except OSError:
        pass
    try:
        for fd in os.scandir(f"/proc/{pid}/fd"):
            try:
                target = os.readlink(fd.path)
            except OSError:
                continue
            if target.startswith(prefix) and not target.endswith(" (deleted)"):
                found.add(Path(target))
    except OSError:
        pass
    return found


def segments_held(procs: Iterable[int]) -> set[Path]:
    """The shared-memory segments (files in /dev/shm) that any of ``procs`` maps or has open."""
    return set().union(*(_shm_paths_of(pid) for pid in procs))


def remove_orphaned_segments(candidates: Iterable[Path]) -> list[Path]:
    """Delete each of ``candidates`` (segments stopped processes held) that is provably no one else's: a
    plain file (not a link) this user owns with no permission for group or others, which no live process
    maps or has open. Returns those deleted."""
    mine = []
    for path in candidates:
        try:
            st = os.lstat(path)
        except FileNotFoundError:
            continue  # its owner removed it on the way out
        if path.parent != SHM_DIR or not stat.S_ISREG(st.st_mode) or st.st_uid != os.getuid() \
                or st.st_mode & 0o077:
            continue
        mine.append(path)
    if not mine:
        return []
    still_held = segments_held(_all_processes())
    removed = []
    for path in mine:
        if path in still_held:
            continue
        try:
            path.unlink()
            removed.append(path)
        except FileNotFoundError:
            pass
    if removed:
        log.info("removed %d shared-memory segment(s) the stopped processes left: %s", len(removed),
                 " ".join(p.name for p in removed))
    return removed
