"""Rollouts and evaluations of the torch engine: ``n`` scored samples per prompt row.

Prompts are sampled in chunks (:data:`CHUNK_PROMPTS` on the CPU, ``compute.gpu_chunk_prompts`` on
a GPU), and each finished chunk is written to the job's work directory (stamped with the fingerprint
of the model, the prompts, the settings and the chunk size). Every sequence draws from the job's seed
under its index in the job (:func:`fgx.engines.torch.sampler.generate_ids`' ``seq_offset``), so the
samples are the same whatever the chunk size and slot count. A killed job resumes from its finished
chunks and ends with the same samples as an uninterrupted run; the work directory goes once the
output is written. A finished chunk that does not load (truncated by a power loss, damaged on disk)
is moved aside (``corrupt-...``, named in the log) and sampled again: the seed makes the new one
equal to what the damaged one held, so recomputing costs minutes and changes nothing, where stopping
would make every retry fail on the same file.
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any, Mapping

import numpy as np
import pandas as pd
import torch

from fgx.engines.prompts import encode_prompts, prompt_texts
from fgx.engines.torch import counter_rng
from fgx.engines.torch.model import load_model, load_tokenizer, resolve_device
from fgx.engines.torch.sampler import decode_completions, generate_ids
from fgx.io import prepare_work_dir, read_rows, remove_work_dir, run_fingerprint, set_aside, write_parquet
from fgx.settings import MACHINE_RUNTIME_KEYS, Runtime, Sampling
from fgx.tasks import compute_score, score_rows
from fgx.tasks.contract import row_levels

SAMPLER_BATCH = 256  # sequences decoded together on the CPU (a GPU's: compute.gpu_slots)
CHUNK_PROMPTS = 128  # prompts per resumable chunk on the CPU (a GPU's: compute.gpu_chunk_prompts)
SAMPLE_COLUMNS = ("responses", "scores", "correct", "response_tokens")


def _rows_key(rows: pd.DataFrame) -> str:
    """A hash of the prompt rows (their text and ground truth): changed rows start the work afresh."""
    blob = rows[["data_source", "prompt", "reward_model"]].to_json(orient="records", default_handler=str)
    return hashlib.sha256(blob.encode()).hexdigest()[:16]


def sampler_shape(rt: Runtime, device) -> tuple[int, int]:
    """(slots, prompts per chunk) of a sampling job on ``device``: the CPU's constants, or on a GPU the
    job's ``compute`` machine keys where it was given them."""
    if device.type == "cuda":
        return rt.gpu_slots or SAMPLER_BATCH, rt.gpu_chunk_prompts or CHUNK_PROMPTS
    return SAMPLER_BATCH, CHUNK_PROMPTS


def sample(model_dir, rows, out_path, work_dir, settings: Mapping[str, Any], *, score_fn=None,
           progress: bool = True, stop_after_chunks: int | None = None) -> pd.DataFrame:
    """Sample ``n`` responses per row of ``rows`` (a frame or a parquet path), score them and write
    ``out_path`` (if given) with the columns responses, scores, correct, response_tokens, level and
    n_correct added. ``work_dir`` (None: no resuming) keeps finished chunks; ``stop_after_chunks``
    stops (KeyboardInterrupt) after that many new chunks, for tests of resuming."""
    s, rt = Sampling.from_settings(settings), Runtime.from_settings(settings)
    source = str(rows) if not isinstance(rows, pd.DataFrame) else str(out_path or "rows")
    data_file = None if isinstance(rows, pd.DataFrame) else rows
    files = [f for f in (model_dir, data_file, out_path) if f is not None]
    if data_file is not None:
        rows = read_rows(rows, "prompts", ("prompt", "reward_model", "data_source", "extra_info"))
    if rt.threads:
        torch.set_num_threads(int(rt.threads))
    rows = rows.reset_index(drop=True)
    levels = row_levels(rows, data_file)  # before any sampling: a row without a level stops the job here
    device = resolve_device(rt.device)
    slots, chunk = sampler_shape(rt, device)
    work = None
    if work_dir is not None:
        fp = run_fingerprint({**settings, "chunk_prompts": chunk, "draws": counter_rng.SCHEME},
                             ("device", *MACHINE_RUNTIME_KEYS), model=model_dir, rows=_rows_key(rows))
        work = prepare_work_dir(work_dir, fp, files)
    tok = load_tokenizer(model_dir)
    model = load_model(model_dir, device).eval()
    prompts = encode_prompts(tok, prompt_texts(tok, rows, source))
    parts, new = [], 0
    for c, start in enumerate(range(0, len(rows), chunk)):
        done = work / f"chunk{c:05d}.parquet" if work is not None else None
        if done is not None and done.exists():
            part = _read_chunk(done, len(rows.iloc[start:start + chunk]))
            if part is not None:
                parts.append(part)
                continue
        part = _sample_chunk(model, tok, prompts[start:start + chunk], rows.iloc[start:start + chunk],
                             s, rt.seed, start * s.n, slots, source, score_fn or compute_score, progress,
                             f"sample {Path(str(model_dir)).name} [{c + 1}/{-(-len(rows) // chunk)}]")
        if done is not None:
            write_parquet(part, done)
        parts.append(part)
        new += 1
        if stop_after_chunks is not None and new >= stop_after_chunks:
            raise KeyboardInterrupt(f"sampling stopped after {new} chunk(s) (stop_after_chunks)")
    out = rows.copy()
    cols = (pd.concat(parts, ignore_index=True) if parts
            else pd.DataFrame({c: pd.Series([], dtype=object) for c in SAMPLE_COLUMNS}))
    for col in SAMPLE_COLUMNS:
        out[col] = pd.Series([list(v) for v in cols[col]], dtype=object)
    out["correct"] = out["correct"].map(lambda xs: [bool(x) for x in xs])
    out["level"] = levels
    out["n_correct"] = [int(np.sum(c)) for c in out["correct"]]
    if out_path is not None:
        write_parquet(out, out_path, settings={k: v for k, v in settings.items() if k not in MACHINE_RUNTIME_KEYS})
        if work is not None:
            remove_work_dir(work)
    return out


def _read_chunk(path: Path, n_rows: int) -> pd.DataFrame | None:
    """A finished chunk, or None (and the file set aside) if it does not load or is not whole."""
    try:
        part = pd.read_parquet(path)
        missing = [c for c in SAMPLE_COLUMNS if c not in part.columns]
        if missing or len(part) != n_rows:
            raise ValueError(f"{len(part)} rows for {n_rows} prompts" if not missing else f"lacks {missing}")
        return part
    except Exception as err:  # pyarrow raises several types for truncated files
        set_aside(path, f"{type(err).__name__}: {err}")
        return None


def _sample_chunk(model, tok, prompts, rows: pd.DataFrame, s: Sampling, seed: int, seq_offset: int, slots: int,
                  source: str, score_fn, progress: bool, desc: str) -> pd.DataFrame:
    comps = generate_ids(model, tok, prompts, n=s.n, temperature=s.temperature, max_new_tokens=s.max_new_tokens,
                         seed=seed, seq_offset=seq_offset, batch_size=slots, progress=progress, desc=desc)
    texts = decode_completions(tok, comps)
    n = s.n
    responses = [texts[i * n:(i + 1) * n] for i in range(len(prompts))]
    scores, correct = score_rows(rows, responses, source, score_fn)
    return pd.DataFrame({
        "responses": responses, "scores": scores, "correct": correct,
        "response_tokens": [[len(c.token_ids) for c in comps[i * n:(i + 1) * n]] for i in range(len(prompts))],
    })
