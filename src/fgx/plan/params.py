"""Each job's settings: canonical JSON ``params``, so Snakemake reruns a job (and only that job and
its descendants) when a setting it reads changes."""

from __future__ import annotations

from typing import Mapping

from fgx.engines import engine_settings
from fgx.plan.models import rl_lineages, sft_mix_repeats, sft_model
from fgx.plan.splits import TEST_MANY, split_info
from fgx.seeds import derive_seed, dumps


def _section(config: Mapping, keys) -> Mapping:
    """The config section at ``keys`` (("countdown", "sft") -> config["countdown"]["sft"])."""
    for key in keys:
        config = config[key]
    return config


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
    if purpose == "eval" and split == TEST_MANY:
        s = {**config["evaluate"], "n": config["evaluate"]["many_samples"]["n"]}
    elif purpose == "eval":
        # the split's own (a Countdown test: countdown.evaluate, Avg@32 at T=1.0; a string test: evaluate)
        s = _section(config, split_info(config, split).evaluate)
    else:
        s = config[_rollout_section(config, split)]["rollout"]
    sampling = {k: s[k] for k in ("n", "temperature", "max_new_tokens")}
    return dumps({**_runtime(config), **sampling, "seed": derive_seed(config["seed"], purpose, model, split)})


def _rollout_section(config: Mapping, split: str) -> str:
    """The config section (stage1, rft_baseline) whose rollout and filter settings sample a model on
    ``split`` for RFT (the Multi-Base's Countdown RFT data: Stage 1's)."""
    section = split_info(config, split).rollout
    if section is None:
        raise ValueError(f"no rollout settings for split {split!r}")
    return section


def filter_settings(config: Mapping, split: str) -> str:
    return dumps(config[_rollout_section(config, split)]["filter"])


def sft_settings(config: Mapping, model: str) -> str:
    sft = _section(config, sft_model(config, model).settings)
    return dumps({**_runtime(config), **sft, "seed": derive_seed(config["seed"], "sft", model)})


def sft_mix_settings(config: Mapping, model: str) -> str:
    """How the merge weights its sources: ``repeats`` per source (aligned with models.sft_mix_sources)."""
    return dumps({"repeats": sft_mix_repeats(config, model)})


def rl_settings(config: Mapping, run: str, lineage: str = "string") -> str:
    """Settings of RL run ``run`` (``rl:``, the run's own seed). A lineage may set its own step count
    (the Multi-Base's, ``multi``: ``countdown.rl_steps``)."""
    rl = {k: v for k, v in config["rl"].items() if k != "runs"}
    steps = rl_lineages()[lineage].steps(config)
    if steps is not None:
        rl["steps"] = steps
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
