"""A toy engine from outside src/fgx, the shape of a new engine: one module, registered by one line of
``fgx.settings.ENGINES`` (tests/test_engines.py adds it in a scratch copy of the checkout, as
``"toy": "toy_engine:ToyEngine"``).

It answers every prompt with an empty response, scored by the task as any response is; its models are
its starting model's files (pretraining: a model directory of its own making) and each holds
``toy_engine.json``, what the engine was asked to do and with which settings. It writes the files the
protocol names, so the DAG's light jobs (filters, metrics) read them as they read the other engines'.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any, Mapping

RECORD = "toy_engine.json"


class ToyEngine:
    name = "toy"
    env_file = "envs/torch.yaml"  # the light jobs' environment serves it
    one_rl_job_per_host = True    # so that the test sees the DAG read it (the rl rule's verl_rl resource)

    @staticmethod
    def gpus_per_job(config: Mapping) -> int:
        return 3

    @staticmethod
    def job_settings(config: Mapping) -> dict:
        return {"tensor_parallel_size": 3}

    # --------------------------------------------------------------------- models
    @staticmethod
    def _model(out_dir, settings: Mapping, op: str, start=None) -> None:
        from fgx.io import atomic_dir

        with atomic_dir(out_dir) as tmp:
            if start is None:
                (tmp / "config.json").write_text(json.dumps({"model_type": "toy"}))
                (tmp / "model.safetensors").write_bytes(b"")
                (tmp / "tokenizer.json").write_text("{}")
            else:
                for f in Path(start).iterdir():
                    if f.is_file() and f.name != RECORD:
                        shutil.copy2(f, tmp / f.name)
            (tmp / RECORD).write_text(json.dumps({"op": op, "settings": dict(settings)}, sort_keys=True))

    def pretrain(self, data_paths, out_dir, work_dir, settings: Mapping[str, Any]) -> None:
        self._model(out_dir, settings, "pretrain")

    def sft(self, model_dir, data_path, out_dir, work_dir, settings: Mapping[str, Any]) -> None:
        self._model(out_dir, settings, "sft", start=model_dir)

    def rl(self, model_dir, train_path, val_path, out_dir, metrics_path, work_dir, settings: Mapping[str, Any], *,
           validation_path=None) -> None:
        import pandas as pd

        from fgx.engines import validation
        from fgx.io import read_rows, write_parquet
        from fgx.tasks.contract import row_levels

        levels = row_levels(read_rows(val_path, "validation prompts", ("extra_info",)), val_path)
        write_parquet(pd.DataFrame({"step": [0], "metric": ["val/accuracy"], "level": [-1], "value": [0.0]}),
                      metrics_path, settings=dict(settings))
        if validation_path is not None:
            flags = [[False] * int(settings["val_n"]) for _ in levels]
            write_parquet(validation.frame(validation.rows_of_step(0, levels, flags)), validation_path,
                          settings=dict(settings))
        self._model(out_dir, settings, "rl", start=model_dir)

    # --------------------------------------------------------------------- sampling
    def sample(self, model_dir, rows, out_path, work_dir, settings: Mapping[str, Any]) -> None:
        import pandas as pd

        from fgx.io import read_rows, write_parquet
        from fgx.tasks import compute_score
        from fgx.tasks.contract import row_levels

        path = None if isinstance(rows, pd.DataFrame) else rows
        df = rows if path is None else read_rows(path, "prompts", ("prompt", "reward_model", "extra_info"))
        n = int(settings["n"])
        scores = [compute_score(ds, "", rm["ground_truth"]) for ds, rm in zip(df["data_source"], df["reward_model"])]
        out = df.assign(responses=[[""] * n for _ in scores], scores=[[float(s["score"])] * n for s in scores],
                        correct=[[bool(s["acc"])] * n for s in scores], response_tokens=[[0] * n for _ in scores],
                        level=row_levels(df, path), n_correct=[n * bool(s["acc"]) for s in scores])
        write_parquet(out, out_path, settings=dict(settings))
