"""One vLLM sampling shard: n samples per prompt, scored with fgx.tasks.compute_score.

    python -m fgx.engines.verl.vllm_sample --model DIR --data rows.parquet --out-dir DIR \\
        --shard 0 --num-shards 8 --n 10 --temperature 1.0 --max-tokens 8192 --seed 7

Runs in the verl environment (vLLM, one GPU group via CUDA_VISIBLE_DEVICES); the verl engine
starts ``--num-shards`` of these side by side (data parallel) and joins their chunk files.
Shard ``i`` takes rows ``i, i + num_shards, ...`` and writes them in chunks of
``--chunk-prompts`` prompts to ``shard{i:03d}-chunk{j:05d}.parquet``, each written atomically and
skipped when it already exists, so a preempted job resumes at the next chunk. Every prompt is
sampled with its own seed (``seed + row index``): the samples do not depend on the sharding.

Prompts are rendered with the model's chat template (as verl's RL dataset does) and passed as
token ids, so no second BOS is added. vLLM is imported only in :func:`main`.
"""

from __future__ import annotations

import argparse
import logging
import sys
from pathlib import Path
from typing import Sequence

log = logging.getLogger("fgx.vllm_sample")
CHUNK_COLUMNS = ["row_index", "responses", "response_tokens", "finish_reasons", "scores", "correct"]


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--model", required=True, help="Hugging Face model directory")
    p.add_argument("--data", required=True, help="parquet of prompt rows (verl schema)")
    p.add_argument("--out-dir", required=True, help="directory for this shard's chunk files")
    p.add_argument("--shard", type=int, default=0)
    p.add_argument("--num-shards", type=int, default=1)
    p.add_argument("--n", type=int, required=True, help="samples per prompt")
    p.add_argument("--temperature", type=float, default=1.0)
    p.add_argument("--top-p", type=float, default=1.0)
    p.add_argument("--max-tokens", type=int, required=True, help="max new tokens per sample")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--tensor-parallel-size", type=int, default=1)
    p.add_argument("--gpu-memory-utilization", type=float, default=0.9)
    p.add_argument("--max-model-len", type=int, default=None)
    p.add_argument("--chunk-prompts", type=int, default=256)
    p.add_argument("--enforce-eager", action="store_true")
    p.add_argument("--dtype", default="auto", choices=("auto", "float32", "bfloat16", "float16"),
                   help="weights and activations (auto: the checkpoint's, fp32 becomes bf16 in vLLM)")
    p.add_argument("--logprobs", action="store_true",
                   help="also write each sample's token ids and their log-probs under the model (columns token_ids, "
                        "logprobs), to hold vLLM's model against another implementation of it")
    p.add_argument("--whole-prefills", action="store_true",
                   help="prefill each prompt in one step, never split (vLLM's CPU build: a split prefill rewinds "
                        "the request's seeded generator, and a CPU generator has no offset to rewind)")
    a = p.parse_args(argv)
    problems = []
    if not 0 <= a.shard < a.num_shards:
        problems.append(f"--shard {a.shard} must be in [0, --num-shards={a.num_shards})")
    for name in ("n", "max_tokens", "chunk_prompts", "tensor_parallel_size"):
        if getattr(a, name) < 1:
            problems.append(f"--{name.replace('_', '-')} must be >= 1, got {getattr(a, name)}")
    if a.temperature < 0 or not 0 < a.top_p <= 1:
        problems.append(f"need --temperature >= 0 and 0 < --top-p <= 1 (got {a.temperature}, {a.top_p})")
    if not 0 < a.gpu_memory_utilization <= 1:
        problems.append(f"--gpu-memory-utilization must be in (0, 1], got {a.gpu_memory_utilization}")
    if problems:
        p.error("; ".join(problems))
    return a


def shard_indices(n_rows: int, shard: int, num_shards: int) -> list[int]:
    """Row indices of one shard: strided, so every shard sees every level."""
    return list(range(shard, n_rows, num_shards))


def chunks(indices: Sequence[int], size: int) -> list[list[int]]:
    return [list(indices[i:i + size]) for i in range(0, len(indices), size)]


def chunk_path(out_dir: str | Path, shard: int, chunk: int) -> Path:
    return Path(out_dir) / f"shard{shard:03d}-chunk{chunk:05d}.parquet"


def request_seed(seed: int, row_index: int) -> int:
    return (int(seed) + int(row_index)) % (2**31 - 1)


def context_length(model_dir: str | Path, requested: int | None) -> int | None:
    """vLLM's ``max_model_len``: the requested context, at most the model's positions (as verl's rollout
    and the torch sampler cap it; vLLM refuses a longer one). A sample that reaches it stops there."""
    import json

    config = Path(model_dir) / "config.json"
    positions = json.loads(config.read_text()).get("max_position_embeddings") if config.exists() else None
    if requested is None or positions is None or requested <= positions:
        return requested
    log.info("context of %d tokens capped at the model's %d positions", requested, positions)
    return int(positions)


def prompt_ids(tokenizer, messages) -> list[int]:
    """Token ids of a prompt row, rendered as the torch engine renders it (fgx.engines.prompts)."""
    from fgx.engines.prompts import encode_prompts, render_prompt

    return encode_prompts(tokenizer, [render_prompt(tokenizer, list(messages))])[0]


def main(argv: Sequence[str] | None = None) -> None:
    a = parse_args(argv)
    logging.basicConfig(level=logging.INFO, stream=sys.stderr,
                        format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    import pandas as pd

    from fgx.io import write_parquet
    from fgx.tasks import score_responses

    rows = pd.read_parquet(a.data)
    todo = [(j, idx) for j, idx in enumerate(chunks(shard_indices(len(rows), a.shard, a.num_shards),
                                                     a.chunk_prompts))
            if not chunk_path(a.out_dir, a.shard, j).exists()]
    log.info("shard %d/%d: %d rows, %d chunks to sample", a.shard, a.num_shards, len(rows), len(todo))
    if not todo:
        return
    from vllm import LLM, SamplingParams  # the verl environment only

    llm = LLM(model=a.model, tensor_parallel_size=a.tensor_parallel_size, seed=a.seed,
              gpu_memory_utilization=a.gpu_memory_utilization,
              max_model_len=context_length(a.model, a.max_model_len),
              enforce_eager=a.enforce_eager, dtype=a.dtype,
              **({"enable_chunked_prefill": False} if a.whole_prefills else {}))
    tokenizer = llm.get_tokenizer()
    for j, idx in todo:
        prompts = [{"prompt_token_ids": prompt_ids(tokenizer, rows.iloc[i]["prompt"])} for i in idx]
        # vLLM refuses n > 1 at temperature 0: n greedy samples are one greedy sample n times
        n_requested = 1 if a.temperature == 0 else a.n
        params = [SamplingParams(n=n_requested, temperature=a.temperature, top_p=a.top_p, max_tokens=a.max_tokens,
                                 seed=request_seed(a.seed, i), logprobs=0 if a.logprobs else None) for i in idx]
        outputs = llm.generate(prompts, params)
        records = []
        for i, out in zip(idx, outputs, strict=True):
            samples = list(out.outputs) * (a.n // n_requested)
            texts = [o.text for o in samples]
            scores, correct = score_responses(rows.iloc[i].to_dict(), texts, a.data)
            records.append({"row_index": i, "responses": texts,
                            "response_tokens": [len(o.token_ids) for o in samples],
                            "finish_reasons": [str(o.finish_reason) for o in samples],
                            "scores": scores, "correct": correct})
            if a.logprobs:  # the sampled token's entry of each step (logprobs=0 asks for that one only)
                records[-1].update(token_ids=[list(o.token_ids) for o in samples],
                                   logprobs=[[float(step[t].logprob) for step, t in zip(o.logprobs, o.token_ids)]
                                             for o in samples])
        columns = CHUNK_COLUMNS + (["token_ids", "logprobs"] if a.logprobs else [])
        write_parquet(pd.DataFrame(records, columns=columns), chunk_path(a.out_dir, a.shard, j))
        log.info("shard %d chunk %d: %d prompts done", a.shard, j, len(idx))


if __name__ == "__main__":
    main()
