"""fgx.io: atomic writes leave nothing half-written and give results the umask's mode."""

import os
import stat

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
