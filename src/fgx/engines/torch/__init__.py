"""The torch engine: tiny char-level Llama, fast batched sampler, pretrain / SFT / RL loops.

Works with any local HF causal LM directory on CPU or CUDA (chat templates applied when the
tokenizer has one); the fast decode path covers Llama-architecture models (Llama, Qwen2).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Callable, Mapping, Sequence

import pandas as pd


class TorchEngine:
    name = "torch"

    def sample(self, model_dir, rows: pd.DataFrame, out_path=None, *, n: int = 1, temperature: float = 1.0,
               top_p: float = 1.0, max_new_tokens: int = 512, seed: int = 0, stop: Sequence[str] = (),
               batch_size: int = 256, device: str = "auto", dtype: str | None = None, threads: int | None = None,
               score_fn: Callable | None = None, progress: bool = True, fast: bool | None = None) -> pd.DataFrame:
        """Sample ``n`` responses per row, score them, write the rollout parquet (if ``out_path``).

        Adds columns responses, scores, correct, response_tokens, level, n_correct."""
        import numpy as np
        import torch

        from fgx.engines.torch.model import load_model, load_tokenizer
        from fgx.engines.torch.sampler import decode_completions, generate_ids
        from fgx.engines.torch.tokenizer import encode_prompts
        from fgx.engines.torch.trainer import _extra, _prompt_texts, score_responses
        from fgx.io import write_parquet

        if threads:
            torch.set_num_threads(int(threads))
        rows = rows.reset_index(drop=True)
        tok = load_tokenizer(model_dir)
        model = load_model(model_dir, device).eval()
        prompts = encode_prompts(tok, _prompt_texts(tok, rows, str(out_path or "rows")))
        comps = generate_ids(model, tok, prompts, n=n, temperature=temperature, top_p=top_p,
                             max_new_tokens=max_new_tokens, stop=stop, seed=seed, batch_size=batch_size,
                             dtype=dtype, progress=progress, fast=fast, desc=f"sample {Path(str(model_dir)).name}")
        texts = decode_completions(tok, comps, stop)
        responses = [texts[i * n:(i + 1) * n] for i in range(len(rows))]
        scores, correct = score_responses(rows, responses, score_fn, str(out_path or "rows"))
        out = rows.copy()
        out["responses"] = pd.Series(responses, dtype=object)
        out["scores"] = pd.Series(scores, dtype=object)
        out["correct"] = pd.Series(correct, dtype=object)
        out["response_tokens"] = pd.Series([[len(c.token_ids) for c in comps[i * n:(i + 1) * n]]
                                            for i in range(len(rows))], dtype=object)
        out["level"] = [int(_extra(r).get("depth", -1)) for _, r in rows.iterrows()]
        out["n_correct"] = [int(np.sum(c)) for c in correct]
        if out_path is not None:
            write_parquet(out, out_path)
        return out

    def pretrain(self, data_path, out_dir, settings: Mapping[str, Any] | None = None, **kw) -> dict:
        from fgx.engines.torch.trainer import pretrain

        return pretrain(data_path, out_dir, settings, **kw)

    def sft(self, model_dir, data_path, out_dir, settings: Mapping[str, Any] | None = None, **kw) -> dict:
        from fgx.engines.torch.trainer import sft

        return sft(model_dir, data_path, out_dir, settings, **kw)

    def rl(self, model_dir, train_path, val_path, out_dir, metrics_path, settings: Mapping[str, Any] | None = None,
           **kw) -> dict:
        from fgx.engines.torch.trainer import rl

        return rl(model_dir, train_path, val_path, out_dir, metrics_path, settings, **kw)


ENGINE = TorchEngine()


def get_engine() -> TorchEngine:
    return ENGINE
