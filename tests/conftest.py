import os
from pathlib import Path

import pytest

# the tests and every script they run import this checkout's fgx (pyproject's pythonpath = src for
# the tests; the scripts get it as the rules give it to jobs: src/ on PYTHONPATH)
os.environ["PYTHONPATH"] = os.pathsep.join(
    [str(Path(__file__).resolve().parents[1] / "src"), *filter(None, [os.environ.get("PYTHONPATH")])])

from fgx.engines.torch.model import build_model, save_checkpoint
from fgx.engines.torch.tokenizer import build_char_tokenizer
from skip_guard import pytest_make_collect_report, pytest_runtest_makereport  # noqa: F401  (CI's skip guard)
from toy import SMALLEST, toy_rows


@pytest.fixture(scope="module")
def tok():
    return build_char_tokenizer()


@pytest.fixture()
def base_dir(tok, tmp_path):
    """A tiny random model in ``base/`` and toy prompts in ``train.parquet``."""
    save_checkpoint(build_model(SMALLEST, tok, seed=0), tok, tmp_path / "base")
    toy_rows().to_parquet(tmp_path / "train.parquet")
    return tmp_path


@pytest.fixture(scope="session")
def smoke_run(tmp_path_factory):
    """A copy of the repository with the smoke DAG run to completion in it."""
    from smoke import fresh_copy, snakemake

    work = fresh_copy(tmp_path_factory.mktemp("smoke") / "fgx")
    snakemake(work, "--cores", "2", "--configfile", ".test/config.yaml")
    return work
