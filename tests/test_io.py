"""fgx.io: atomic writes leave nothing half-written and give results the umask's mode."""

import os
import stat
from pathlib import Path

import pandas as pd
import pytest

from fgx.io import atomic_dir, atomic_path, write_parquet


@pytest.fixture
def umask_022():
    old = os.umask(0o022)
    yield
    os.umask(old)


def _mode(p) -> int:
    return stat.S_IMODE(os.stat(p).st_mode)


def test_atomic_writes_follow_the_umask_not_mkstemps_private_mode(tmp_path, umask_022):
    """On a shared cluster a group reads the results: a parquet, a figure or a checkpoint
    directory must get 0644 / 0755 under umask 022, as open() and mkdir() would give."""
    write_parquet(pd.DataFrame({"a": [1]}), tmp_path / "x.parquet")
    assert _mode(tmp_path / "x.parquet") == 0o644
    with atomic_path(tmp_path / "fig.pdf") as tmp:
        tmp.write_bytes(b"%PDF")
    assert _mode(tmp_path / "fig.pdf") == 0o644
    with atomic_dir(tmp_path / "model") as tmp:
        (tmp / "config.json").write_text("{}")
    assert _mode(tmp_path / "model") == 0o755
    os.umask(0o077)
    with atomic_path(tmp_path / "private.csv") as tmp:
        tmp.write_text("a\n")
    assert _mode(tmp_path / "private.csv") == 0o600


def test_a_failed_block_leaves_neither_the_file_nor_a_temporary(tmp_path):
    with pytest.raises(RuntimeError):
        with atomic_path(tmp_path / "out.csv") as tmp:
            tmp.write_text("half")
            raise RuntimeError("killed")
    with pytest.raises(RuntimeError):
        with atomic_dir(tmp_path / "model") as tmp:
            (tmp / "weights").write_text("half")
            raise RuntimeError("killed")
    assert list(tmp_path.iterdir()) == []


def test_a_work_dir_that_fgx_did_not_make_is_never_deleted(tmp_path):
    """--work-dir is a free argument: a mistyped one (a user's directory, results/) is an error naming it,
    and nothing in it is touched; only a directory holding fgx's own stamp is cleared, or an empty one used."""
    from fgx.io import InputError, is_work_dir, prepare_work_dir, remove_work_dir

    user = tmp_path / "thesis"
    user.mkdir()
    (user / "chapter1.tex").write_text("years of work")
    for fake in ("", "not a fingerprint\n"):  # a fingerprint.txt fgx did not write is no proof either
        if fake:
            (user / "fingerprint.txt").write_text(fake)
        with pytest.raises(InputError, match=r"thesis: --work-dir exists and fgx did not make it"):
            prepare_work_dir(user, "0123456789abcdef")
        assert (user / "chapter1.tex").read_text() == "years of work"
    remove_work_dir(user)  # the end-of-job removal checks the stamp again
    assert (user / "chapter1.tex").exists() and not is_work_dir(user)
    a_file = tmp_path / "notes.txt"
    a_file.write_text("x")
    with pytest.raises(InputError, match="not a directory"):
        prepare_work_dir(a_file, "0123456789abcdef")
    with pytest.raises(InputError, match="holds .*out.parquet"):  # deleting work would delete the output
        prepare_work_dir(tmp_path / "w", "0123456789abcdef", [tmp_path / "w" / "out.parquet"])

    empty = tmp_path / "empty"
    empty.mkdir()
    assert prepare_work_dir(empty, "0123456789abcdef") == empty and is_work_dir(empty)
    (empty / "chunk00000.parquet").write_text("resume me")
    prepare_work_dir(empty, "0123456789abcdef")  # same fingerprint: resumed
    assert (empty / "chunk00000.parquet").exists()
    prepare_work_dir(empty, "fedcba9876543210")  # fgx's own, other fingerprint: cleared
    assert [p.name for p in empty.iterdir()] == ["fingerprint.txt"]
    assert (empty / "fingerprint.txt").read_text() == "fedcba9876543210\n"
    remove_work_dir(empty)
    assert not empty.exists()


def test_a_directory_output_replaces_only_a_model_directory(tmp_path):
    """--out of a model directory replaces an earlier model directory, never a user's tree."""
    from fgx.io import InputError

    model = tmp_path / "model"
    with atomic_dir(model) as tmp:
        (tmp / "config.json").write_text("{}")
    with atomic_dir(model) as tmp:  # an earlier output: replaced
        (tmp / "config.json").write_text('{"v": 2}')
    assert (model / "config.json").read_text() == '{"v": 2}'
    home = tmp_path / "home"
    (home / "photos").mkdir(parents=True)
    (home / "config.json").write_text("{}")
    for user_dir in (home, home / "photos"):
        (user_dir / "a.jpg").write_bytes(b"jpg")
        with pytest.raises(InputError, match="is not a model directory fgx wrote"):
            with atomic_dir(user_dir) as tmp:
                (tmp / "config.json").write_text("{}")
        assert (user_dir / "a.jpg").exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["home", "model"]  # no temporary left


def _recording(monkeypatch):
    """Record os.fsync (by the path of the descriptor) and os.replace calls, in order."""
    calls = []
    real_fsync, real_replace = os.fsync, os.replace

    def fsync(fd):
        calls.append(("fsync", os.readlink(f"/proc/self/fd/{fd}")))
        real_fsync(fd)

    def replace(a, b):
        calls.append(("replace", str(a), str(b)))
        real_replace(a, b)

    monkeypatch.setattr(os, "fsync", fsync)
    monkeypatch.setattr(os, "replace", replace)
    return calls


@pytest.mark.skipif(not os.path.isdir("/proc/self/fd"), reason="reads descriptor paths from /proc")
def test_atomic_writes_are_flushed_before_and_after_the_rename(tmp_path, monkeypatch):
    """A power loss after the rename must not leave a zero-length "complete" file: the data is
    fsynced before the rename, the directory entry after it."""
    calls = _recording(monkeypatch)
    with atomic_path(tmp_path / "out.csv") as tmp:
        tmp.write_text("a\n")
    assert [c[0] for c in calls] == ["fsync", "replace", "fsync"]
    assert calls[0][1] == calls[1][1] == str(tmp) and calls[1][2] == str(tmp_path / "out.csv")
    assert calls[2][1] == str(tmp_path)
    calls.clear()
    with atomic_dir(tmp_path / "model") as tmp:
        (tmp / "config.json").write_text("{}")
    synced = [c[1] for c in calls if c[0] == "fsync"]
    assert synced[:2] == [str(tmp / "config.json"), str(tmp)]  # the files, then the new directory
    assert calls[2] == ("replace", str(tmp), str(tmp_path / "model")) and calls[3] == ("fsync", str(tmp_path))


def test_a_directory_swap_never_leaves_a_half_deleted_output(tmp_path, monkeypatch):
    """The old directory is renamed aside, the new one renamed into place, only then the old deleted:
    at every moment the final name holds the old or the new directory whole, or the aside copy does."""
    model = tmp_path / "model"
    with atomic_dir(model) as tmp:
        (tmp / "config.json").write_text("old")
    real_replace = os.replace
    seen = []

    def replace(a, b):
        if Path(a).name.endswith(".tmp"):  # the moment between the two renames: a kill here...
            asides = list(tmp_path.glob(".model.*.old"))
            seen.append([p.read_text() for p in asides[0].iterdir()] if asides else None)
            seen.append(model.exists())
            raise OSError("disk gone")
        real_replace(a, b)

    monkeypatch.setattr(os, "replace", replace)
    with pytest.raises(OSError, match="disk gone"):
        with atomic_dir(model) as tmp:
            (tmp / "config.json").write_text("new")
    assert seen == [["old"], False]  # ...leaves the old one whole under the aside name
    assert (model / "config.json").read_text() == "old"  # and a failed rename puts it back
    assert sorted(p.name for p in tmp_path.iterdir()) == ["model"]
    monkeypatch.setattr(os, "replace", real_replace)
    with atomic_dir(model) as tmp:
        (tmp / "config.json").write_text("new")
    assert (model / "config.json").read_text() == "new" and sorted(p.name for p in tmp_path.iterdir()) == ["model"]


_SLOW_WRITER = """
import sys, time
from fgx.cli import exit_cleanly_on_sigterm
from fgx.io import atomic_path, atomic_dir
if sys.argv[1] == "term":
    exit_cleanly_on_sigterm()
with atomic_path(sys.argv[2] + "/metrics.parquet", suffix=".parquet") as tmp, atomic_dir(sys.argv[2] + "/model") as d:
    tmp.write_bytes(b"")
    (d / "config.json").write_text("{}")
    print("writing", flush=True)
    time.sleep(60)
"""


def _killed_writer(tmp_path: Path, how: str, sig) -> int:
    import subprocess
    import sys

    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1] / "src")}
    proc = subprocess.Popen([sys.executable, "-c", _SLOW_WRITER, how, str(tmp_path)], stdout=subprocess.PIPE,
                            text=True, env=env)
    assert proc.stdout.readline().strip() == "writing"
    # both mid-write, each holding its writers' lock
    assert sorted(p.name.split(".")[-1] for p in tmp_path.iterdir()) == ["lock", "lock", "parquet", "tmp"]
    proc.send_signal(sig)
    return proc.wait(timeout=30)


def test_a_job_cancelled_with_sigterm_leaves_no_temporary(tmp_path):
    """Snakemake cancelling a job and SLURM's time limit send SIGTERM; the job's writers clean up
    (Python's default would end the process before any ``finally``, leaving ``.metrics.parquet.XXXX``)."""
    import signal

    assert _killed_writer(tmp_path, "term", signal.SIGTERM) == 128 + signal.SIGTERM
    assert list(tmp_path.iterdir()) == []


def test_the_next_write_removes_what_a_sigkilled_writer_left_and_nothing_else(tmp_path):
    import signal

    assert _killed_writer(tmp_path, "plain", signal.SIGKILL) == -signal.SIGKILL
    assert len(list(tmp_path.iterdir())) == 4  # no finally ran: a file, a directory and their locks left over
    near_misses = [".metrics.parquet.notes.parquet", ".metrics.parquet.abcd1234.csv",
                   "metrics.parquet.abcd1234.parquet", ".other.parquet.abcd1234.parquet", ".model.abcd1234.tmp.bak"]
    for name in near_misses:  # names a user might have, close to fgx's but not fgx's own
        (tmp_path / name).write_text("mine")
    write_parquet(pd.DataFrame({"a": [1]}), tmp_path / "metrics.parquet")
    with atomic_dir(tmp_path / "model") as d:
        (d / "config.json").write_text("{}")
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(["metrics.parquet", "model", *near_misses])
