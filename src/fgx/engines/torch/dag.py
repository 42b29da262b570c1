"""From the DAG's engine-neutral job settings (fgx.workflow) to the torch engine's settings.

The workflow hands every engine the same settings, named as in config.yaml; this module is the
one place that renames them for the torch trainers and sampler (the verl engine has its own
mapping to verl's Hydra keys in fgx.engines.verl.commands).
"""

from __future__ import annotations

from typing import Any, Mapping

# config.yaml `base.model` (Hugging Face names) -> fgx.engines.torch.model.ModelSettings
MODEL_KEYS = {"hidden_size": "hidden_size", "num_hidden_layers": "num_layers",
              "num_attention_heads": "num_heads", "num_key_value_heads": "num_kv_heads",
              "intermediate_size": "intermediate_size", "max_position_embeddings": "max_positions"}


def _runtime(s: Mapping[str, Any]) -> dict:
    device = s.get("device", "cpu")
    return {"device": device, "threads": s.get("threads"), "seed": s.get("seed", 0)}


def sampling_kwargs(s: Mapping[str, Any]) -> dict:
    """Keyword arguments of TorchEngine.sample."""
    return {"n": s["n"], "temperature": s.get("temperature", 1.0), "top_p": s.get("top_p", 1.0),
            "max_new_tokens": s["max_new_tokens"], "seed": s.get("seed", 0), "device": s.get("device", "cpu"),
            "threads": s.get("threads"), "batch_size": s.get("sampler_batch_size", 256)}


def pretrain_settings(s: Mapping[str, Any]) -> dict:
    unknown = sorted(set(s["model"]) - set(MODEL_KEYS))
    if unknown:
        raise ValueError(f"base.model: unknown key(s) {unknown}; known: {sorted(MODEL_KEYS)}")
    train = s["train"]
    names = []
    tokenizer = s.get("tokenizer", "chars")
    if tokenizer in ("chars+names", "chars+calls"):
        from fgx.tasks.strings import compact_call_names

        # chars+calls: "f21(" is one token, so copying a call needs no look at the character after the name
        names = [n + "(" if tokenizer == "chars+calls" else n for n in compact_call_names()]
    out = {**_runtime(s), "model": {MODEL_KEYS[k]: v for k, v in s["model"].items()}, "token_names": names,
           "max_steps": train["steps"], "batch_size": train["batch_size"], "lr": train["lr"],
           "warmup_steps": train.get("warmup_steps", 0), "weight_decay": train.get("weight_decay", 0.0),
           "loss_on_prompt": False}
    for key in ("position_jitter", "answer_gap"):  # only when set: unset keeps older runs' settings hashes
        if train.get(key):
            out[key] = train[key]
    return out


def sft_settings(s: Mapping[str, Any]) -> dict:
    out = {**_runtime(s), "epochs": s.get("epochs", 1), "batch_size": s["batch_size"], "lr": s["lr"]}
    if "micro_batch_size" in s:
        out["micro_batch_size"] = s["micro_batch_size"]
    if "max_length" in s:
        out["max_length"] = s["max_length"]
    return out


def rl_settings(s: Mapping[str, Any], work_dir: str | None) -> dict:
    batches = s.get("max_generation_batches", 10)
    out = {**_runtime(s), "algorithm": s["algorithm"], "total_steps": s["steps"],
           "train_batch_size": s["batch_size"], "n": s["group_size"], "lr": s["lr"],
           "clip_low": s.get("clip_low", 0.2), "clip_high": s.get("clip_high", 0.2),
           "kl_coef": s.get("kl_coef"), "entropy_coef": s.get("entropy_coef", 0.0),
           "loss_agg_mode": s.get("loss_agg_mode", "token-mean"),
           "dynamic_sampling": s.get("dynamic_sampling", True), "max_num_gen_batches": batches,
           "temperature": s.get("temperature", 1.0), "max_new_tokens": s["max_new_tokens"],
           "val_every": s.get("eval_every", 10), "save_every": s.get("save_every", 10)}
    if "ref_refresh_every" in s:
        out["ref_update_every"] = s["ref_refresh_every"]
    if s.get("frozen"):  # only when set: unset keeps older runs' settings hashes
        out["frozen"] = list(s["frozen"])
    if work_dir:
        out["checkpoint_dir"] = str(work_dir)
    return out


class TorchDagEngine:
    """The torch engine behind the DAG's engine interface (the same signatures as
    fgx.engines.verl.VerlEngine): every method takes the job's neutral settings."""

    name = "torch"

    def __init__(self):
        from fgx.engines.torch import ENGINE

        self.engine = ENGINE

    def sample(self, model_dir, rows, out_path, settings: Mapping[str, Any]) -> None:
        import pandas as pd

        from fgx.io import write_parquet

        df = rows if isinstance(rows, pd.DataFrame) else pd.read_parquet(rows)
        out = self.engine.sample(model_dir, df, None, **sampling_kwargs(settings))
        write_parquet(out, out_path, settings=dict(settings))

    def pretrain(self, data_paths, out_dir, settings: Mapping[str, Any]) -> None:
        import tempfile

        import pandas as pd

        paths = [data_paths] if isinstance(data_paths, (str, bytes)) or not hasattr(data_paths, "__iter__") \
            else list(data_paths)
        with tempfile.TemporaryDirectory() as tmp:
            data = paths[0]
            if len(paths) > 1:  # the trainer reads one file: concatenate the pretraining mix
                data = f"{tmp}/pretrain.parquet"
                pd.concat([pd.read_parquet(p) for p in paths], ignore_index=True).to_parquet(data)
            self.engine.pretrain(data, out_dir, pretrain_settings(settings))

    def sft(self, model_dir, data_path, out_dir, settings: Mapping[str, Any]) -> None:
        import logging
        import shutil

        import pandas as pd

        from fgx.io import atomic_dir, write_json

        if len(pd.read_parquet(data_path, columns=["response"])) == 0:
            # Rejection sampling kept nothing (no correct rollout): fine-tuning on nothing leaves
            # the model as it was. Say so loudly rather than fail the DAG.
            logging.getLogger("fgx").warning("%s holds no responses: %s is a copy of %s", data_path, out_dir, model_dir)
            with atomic_dir(out_dir) as tmp:
                shutil.copytree(model_dir, tmp, dirs_exist_ok=True)
                write_json({"stage": "sft", "model_dir": str(model_dir), "data_path": str(data_path),
                            "examples": 0, "note": "no examples: weights copied unchanged",
                            **sft_settings(settings)}, tmp / "resolved_config.json")
            return
        self.engine.sft(model_dir, data_path, out_dir, sft_settings(settings))

    def rl(self, model_dir, train_path, val_path, out_dir, metrics_path, settings: Mapping[str, Any],
           work_dir=None) -> None:
        self.engine.rl(model_dir, train_path, val_path, out_dir, metrics_path, rl_settings(settings, work_dir))
