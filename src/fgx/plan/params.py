"""Each job's settings: canonical JSON ``params``, so Snakemake reruns a job (and only that job and
its descendants) when a setting it reads changes."""

from __future__ import annotations

from typing import Mapping

from fgx.engines import engine_settings
from fgx.plan.models import MULTI_BASE, sft_mix_repeats
from fgx.plan.splits import COUNTDOWN_TRAIN, TEST_MANY, is_countdown_split
from fgx.seeds import derive_seed, dumps


def _runtime(config: Mapping) -> dict:
    # threads are not here: the rules pass Snakemake's {threads} (--threads), so a machine's thread
    # count is not a rerun trigger; an engine's knobs reach (and rerun) only that engine's jobs
    return engine_settings(config)


def pretrain_settings(config: Mapping) -> str:
    base = config["base"]
    return dumps({**_runtime(config), "model": base["model"], "train": base["train"],
                  "seed": derive_seed(config["seed"], "pretrain")})


def sampling_settings(config: Mapping, purpose: str, model: str, split: str) -> str:
    """Sampling settings: ``purpose`` is 'rollout' (training data) or 'eval'."""
    if purpose == "eval":
        # Countdown tests: countdown.evaluate (Avg@32 at T=1.0); string tests: evaluate
        s = config["countdown"]["evaluate"] if is_countdown_split(split) else config["evaluate"]
        if split == TEST_MANY:
            s = {**config["evaluate"], "n": config["evaluate"]["many_samples"]["n"]}
    elif split in ("stage1", COUNTDOWN_TRAIN):  # Multi-Base's Countdown RFT data: Stage 1's sampling
        s = config["stage1"]["rollout"]
    elif split.startswith("level2_chunk"):
        s = config["rft_baseline"]["rollout"]
    else:
        raise ValueError(f"no rollout settings for split {split!r}")
    sampling = {k: s[k] for k in ("n", "temperature", "max_new_tokens")}
    return dumps({**_runtime(config), **sampling, "seed": derive_seed(config["seed"], purpose, model, split)})


def filter_settings(config: Mapping, split: str) -> str:
    stage1 = split in ("stage1", COUNTDOWN_TRAIN)
    return dumps(config["stage1"]["filter"] if stage1 else config["rft_baseline"]["filter"])


def sft_settings(config: Mapping, model: str) -> str:
    if model == MULTI_BASE:
        sft = config["countdown"]["sft"]
    else:
        sft = config["stage1"]["sft"] if model == "stage1" else config["rft_baseline"]["sft"]
    return dumps({**_runtime(config), **sft, "seed": derive_seed(config["seed"], "sft", model)})


def sft_mix_settings(config: Mapping, model: str) -> str:
    """How the merge weights its sources: ``repeats`` per source (aligned with models.sft_mix_sources)."""
    return dumps({"repeats": sft_mix_repeats(config, model)})


def rl_settings(config: Mapping, run: str, lineage: str = "string") -> str:
    """Settings of RL run ``run`` (``rl:``, the run's own seed). The Countdown lineage (``multi``)
    runs the same string-task RL for ``countdown.rl_steps`` steps."""
    rl = {k: v for k, v in config["rl"].items() if k != "runs"}
    if lineage == "multi":
        rl["steps"] = config["countdown"]["rl_steps"]
    return dumps({**_runtime(config), **rl, "seed": derive_seed(config["seed"], "rl", run)})


def passk_grid(n: int) -> list[int]:
    """Every power of two up to n, and n: what metrics compute, whatever a figure shows."""
    ks = [1 << i for i in range(n.bit_length()) if (1 << i) <= n]
    return sorted({*ks, n})


def metrics_settings(config: Mapping, split: str = "test") -> str:
    e = config["evaluate"]
    n = e["many_samples"]["n"] if split == TEST_MANY else e["n"]
    return dumps({"ks": passk_grid(n), "bootstrap": e["bootstrap"], "ci": e["ci"],
                  "seed": derive_seed(config["seed"], "metrics")})


def browser_settings(config: Mapping) -> str:
    return dumps({"per_cell": 3, "seed": derive_seed(config["seed"], "browser")})
