"""The torch engine: the tiny Llama trained from scratch, a fast batched sampler, and the
pretraining, SFT and RL loops, on CPU or one GPU.

Works with any local Hugging Face causal LM directory (chat templates applied when the tokenizer
has one); the fast decode path covers Llama-architecture models (Llama, Qwen2). Every method
takes the job's settings as :mod:`fgx.plan.params` builds them (:mod:`fgx.settings` reads them).
"""

from __future__ import annotations

import logging
import shutil
from pathlib import Path
from typing import TYPE_CHECKING, Any, Mapping

if TYPE_CHECKING:
    import pandas as pd


class TorchEngine:
    """The :class:`fgx.engines.Engine` that runs in the job's own process, on the CPU or one GPU."""

    name = "torch"
    env_file = "envs/torch.yaml"
    one_rl_job_per_host = False  # a job's RL shares nothing on the host with another's

    @staticmethod
    def gpus_per_job(config: Mapping) -> int:
        """One GPU for ``device: cuda``; none otherwise (``auto`` takes a GPU where the job finds one)."""
        return 1 if config["device"] == "cuda" else 0

    @staticmethod
    def job_settings(config: Mapping) -> dict:
        """A model runs on one device."""
        return {"tensor_parallel_size": 1}

    def sample(self, model_dir, rows, out_path, work_dir, settings: Mapping[str, Any], *, score_fn=None,
               progress: bool = True) -> pd.DataFrame:
        """Sample ``n`` responses per prompt row, score them with the task's ``compute_score`` and
        write the rows with columns responses, scores, correct, response_tokens, level, n_correct."""
        from fgx.engines.torch.sampling import sample

        return sample(model_dir, rows, out_path, work_dir, settings, score_fn=score_fn, progress=progress)

    def pretrain(self, data_paths, out_dir, work_dir, settings: Mapping[str, Any]) -> dict:
        from fgx.engines.torch.supervised import pretrain

        return pretrain(data_paths, out_dir, work_dir, settings)

    def sft(self, model_dir, data_path, out_dir, work_dir, settings: Mapping[str, Any]) -> dict | None:
        from fgx.engines.torch.supervised import sft
        from fgx.io import atomic_dir, read_rows, write_json

        if len(read_rows(data_path, "SFT data", ("response",))) == 0:
            # Rejection sampling kept nothing (no correct rollout): fine-tuning on nothing leaves the
            # model as it was. Say so loudly rather than fail the DAG.
            logging.getLogger("fgx").warning("%s holds no responses: %s is a copy of %s", data_path, out_dir, model_dir)
            with atomic_dir(out_dir) as tmp:
                shutil.copytree(model_dir, tmp, dirs_exist_ok=True)
                write_json({"stage": "sft", "model_dir": str(model_dir), "data_path": str(data_path), "examples": 0,
                            "note": "no examples: weights copied unchanged"}, Path(tmp) / "resolved_config.json")
            return None
        return sft(model_dir, data_path, out_dir, work_dir, settings)

    def rl(self, model_dir, train_path, val_path, out_dir, metrics_path, work_dir, settings: Mapping[str, Any],
           **kw) -> dict:
        from fgx.engines.torch.rl import rl

        return rl(model_dir, train_path, val_path, out_dir, metrics_path, work_dir, settings, **kw)
