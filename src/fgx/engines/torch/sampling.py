"""Rollouts and evaluations of the torch engine: ``n`` scored samples per prompt row."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Mapping

import numpy as np
import pandas as pd
import torch

from fgx.engines.prompts import encode_prompts, prompt_texts
from fgx.engines.torch.model import load_model, load_tokenizer
from fgx.engines.torch.sampler import decode_completions, generate_ids
from fgx.io import read_rows, write_parquet
from fgx.settings import Runtime, Sampling
from fgx.tasks import compute_score, score_rows

SAMPLER_BATCH = 256  # sequences decoded together


def sample(model_dir, rows, out_path, work_dir, settings: Mapping[str, Any], *, score_fn=None,
           progress: bool = True) -> pd.DataFrame:
    """Sample ``n`` responses per row of ``rows`` (a frame or a parquet path), score them and write
    ``out_path`` (if given) with the columns responses, scores, correct, response_tokens, level and
    n_correct added."""
    s, rt = Sampling.from_settings(settings), Runtime.from_settings(settings)
    source = str(rows) if not isinstance(rows, pd.DataFrame) else str(out_path or "rows")
    if not isinstance(rows, pd.DataFrame):
        rows = read_rows(rows, "prompts", ("prompt", "reward_model", "data_source", "extra_info"))
    if rt.threads:
        torch.set_num_threads(int(rt.threads))
    rows = rows.reset_index(drop=True)
    tok = load_tokenizer(model_dir)
    model = load_model(model_dir, rt.device).eval()
    prompts = encode_prompts(tok, prompt_texts(tok, rows, source))
    comps = generate_ids(model, tok, prompts, n=s.n, temperature=s.temperature, max_new_tokens=s.max_new_tokens,
                         seed=rt.seed, batch_size=SAMPLER_BATCH, progress=progress,
                         desc=f"sample {Path(str(model_dir)).name}")
    texts = decode_completions(tok, comps)
    n = s.n
    responses = [texts[i * n:(i + 1) * n] for i in range(len(rows))]
    scores, correct = score_rows(rows, responses, source, score_fn or compute_score)
    out = rows.copy()
    out["responses"] = pd.Series(responses, dtype=object)
    out["scores"] = pd.Series(scores, dtype=object)
    out["correct"] = pd.Series(correct, dtype=object)
    out["response_tokens"] = pd.Series([[len(c.token_ids) for c in comps[i * n:(i + 1) * n]]
                                        for i in range(len(rows))], dtype=object)
    out["level"] = [int((dict(e) if e is not None else {}).get("depth", -1)) for e in rows["extra_info"]]
    out["n_correct"] = [int(np.sum(c)) for c in correct]
    if out_path is not None:
        write_parquet(out, out_path, settings={k: v for k, v in settings.items() if k != "threads"})
    return out
