"""TensorBoard event files of the torch engine's RL: the metrics parquet's values under verl's tags, read
back with tensorboard's own loaders."""

import time

import numpy as np
import pandas as pd
import pytest
from tensorboard.backend.event_processing.event_accumulator import EventAccumulator
from tensorboard.backend.event_processing.event_file_loader import LegacyEventFileLoader
from tensorboard.compat.proto.event_pb2 import SessionLog

from fgx.engines import get_engine
from fgx.engines.torch import tensorboard as tb
from toy import rl_settings, toy_rows, toy_score


def _toy_data(path):
    """Toy rows whose data source names the level (as the string task's do), so that held-out
    accuracy per level has verl's ``val-core/<data_source>`` tag."""
    rows = toy_rows()
    rows["data_source"] = [f"toy-depth{e['depth']}" for e in rows["extra_info"]]
    rows.to_parquet(path)
    return path


def _events(work):
    return sorted((work / "tensorboard").glob("events.out.tfevents.*"))


def _scalars(path):
    """(step, tag, value) of every scalar in one event file, in file order, as tensorboard's loader reads it."""
    return [(e.step, v.tag, v.simple_value) for e in LegacyEventFileLoader(str(path)).Load() for v in e.summary.value]


def _session_starts(path):
    return [e.step for e in LegacyEventFileLoader(str(path)).Load()
            if e.HasField("session_log") and e.session_log.status == SessionLog.START]


def test_tags_are_verls_names_where_verl_has_the_quantity():
    sources = tb.val_sources([1, 1, 2, 3, 3], ["s-depth1", "s-depth1", "s-depth2", "x", "y"])
    assert sources == {1: "s-depth1", 2: "s-depth2"}  # level 3 has two sources: no verl tag
    assert tb.tag("reward") == "critic/score/mean" and tb.tag("pg_loss") == "actor/pg_loss"
    assert tb.tag("val_accuracy", 2, sources) == "val-core/s-depth2/acc/mean@1"
    assert tb.tag("val_accuracy", 2, sources, samples=4) == "val-core/s-depth2/acc/mean@4"  # verl's, at val_n 4
    assert tb.tag("val_accuracy", 3, sources) == "fgx/val_accuracy/level3"
    assert tb.tag("val_accuracy") == "fgx/val_accuracy" and tb.tag("filtered_group_share") == "fgx/filtered_group_share"


def test_rl_writes_event_files_with_the_metrics_parquets_values(base_dir):
    data = _toy_data(base_dir / "data.parquet")
    work = base_dir / "work"
    get_engine("torch").rl(base_dir / "base", data, data, base_dir / "rl", base_dir / "metrics.parquet", work,
                           rl_settings(steps=6, eval_every=3, save_every=3), score_fn=toy_score)
    (path,) = _events(work)
    got = {(step, t): v for step, t, v in _scalars(path)}
    m = pd.read_parquet(base_dir / "metrics.parquet")
    sources = {1: "toy-depth1", 2: "toy-depth2"}
    want = {(int(r.step), tb.tag(r.metric, int(r.level), sources, 2)): np.float32(r.value) for r in m.itertuples()}
    assert got.keys() == want.keys() and len(got) == len(m)
    assert all(got[k] == want[k] for k in want)
    for step in (0, 3, 6):  # two samples per prompt (the toy's rl.val_n): verl's tag for them
        assert got[(step, "val-core/toy-depth1/acc/mean@2")] == np.float32(
            m.query("metric == 'val_accuracy' and level == 1 and step == @step")["value"].item())
    reward = m[m.metric == "reward"].sort_values("step")
    assert [got[(s, "critic/score/mean")] for s in reward.step] == reward["value"].astype(np.float32).tolist()
    assert {"actor/pg_loss", "actor/grad_norm", "response_length/mean", "fgx/accuracy"} <= {t for _, t in got}
    assert _session_starts(path) == []  # a first attempt hides nothing


def test_a_resumed_run_logs_each_step_once_as_tensorboard_shows_it(base_dir):
    data = _toy_data(base_dir / "data.parquet")
    work = base_dir / "work"
    args = (base_dir / "base", data, data, base_dir / "rl", base_dir / "metrics.parquet", work,
            rl_settings(steps=5, eval_every=2, save_every=2))
    with pytest.raises(KeyboardInterrupt):
        get_engine("torch").rl(*args, score_fn=toy_score, stop_after=3)  # killed after step 3, checkpoint at 2
    # TensorBoard reads a directory's files in name order, and the writer begins a name with the second it
    # opens the file: a job resumed in another process starts seconds later, this one in the next second
    time.sleep(1.01 - time.time() % 1.0)
    get_engine("torch").rl(*args, score_fn=toy_score)
    first, second = _events(work)
    assert {s for s, _, _ in _scalars(first)} == {0, 1, 2, 3}
    assert {s for s, _, _ in _scalars(second)} == {3, 4, 5}  # steps <= 2 came from the checkpoint
    assert _session_starts(first) == [] and _session_starts(second) == [3]  # the resume marker (purge_step)
    m = pd.read_parquet(base_dir / "metrics.parquet")
    sources = {1: "toy-depth1", 2: "toy-depth2"}
    ea = EventAccumulator(str(work / "tensorboard"))
    ea.Reload()
    # the killed attempt's step 3 is purged (SessionLog.START at step 3): one point per step and tag
    for (metric, level), g in m.groupby(["metric", "level"]):
        shown = [(e.step, e.value) for e in ea.Scalars(tb.tag(metric, level, sources, 2))]
        assert [s for s, _ in shown] == g["step"].tolist()
        if not metric.endswith("time_s"):
            assert [v for _, v in shown] == g["value"].astype(np.float32).tolist()
