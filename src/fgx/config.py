"""Config validation with errors a person can act on.

Snakemake's own ``validate`` reports jsonschema's raw message; here every problem names the
config file, the dotted key, what was found and what is allowed, and all problems are reported
at once, before any job starts.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any, Mapping

import jsonschema
import yaml

SCHEMA_PATH = Path(__file__).resolve().parents[2] / "schemas" / "config.schema.yaml"


class ConfigError(ValueError):
    """A config value violates the schema; the message lists every violation."""


def _key_path(error: jsonschema.ValidationError) -> str:
    parts = [str(p) for p in error.absolute_path]
    return ".".join(parts) if parts else "(top level)"


def _explain(error: jsonschema.ValidationError) -> str:
    key = _key_path(error)
    found = json.dumps(error.instance, default=str)
    if len(found) > 80:
        found = found[:77] + "..."
    v, s = error.validator, error.schema
    if v == "enum":
        return f"key '{key}': got {found}; allowed values: {', '.join(map(json.dumps, s['enum']))}"
    if v == "additionalProperties":
        allowed = sorted(s.get("properties", {}))
        extra = sorted(set(error.instance) - set(allowed))
        return (f"key '{key}': unknown key(s) {', '.join(extra)}; "
                f"allowed keys: {', '.join(allowed)}")
    if v == "required":
        return f"key '{key}': {error.message}"
    if v == "pattern":
        return f"key '{key}': got {found}; must match {s['pattern']}"
    if v in {"minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"}:
        return f"key '{key}': got {found}; {v} is {s[v]}"
    if v == "type":
        return f"key '{key}': got {found}; expected type {s['type']}"
    return f"key '{key}': {error.message}"


def load_schema(path: str | Path = SCHEMA_PATH) -> dict:
    with open(path) as fh:
        return yaml.safe_load(fh)


def validate_config(config: Mapping[str, Any], source: str = "config",
                    schema_path: str | Path = SCHEMA_PATH) -> None:
    """Raise ConfigError naming every offending key of ``config`` (read from ``source``)."""
    schema = load_schema(schema_path)
    validator = jsonschema.Draft202012Validator(schema)
    errors = sorted(validator.iter_errors(dict(config)), key=lambda e: list(map(str, e.absolute_path)))
    problems = [_explain(e) for e in errors]
    problems += _semantic_checks(config)
    if problems:
        lines = "\n".join(f"  - {p}" for p in problems)
        raise ConfigError(f"invalid configuration ({source}):\n{lines}\n"
                          f"See the comments in config.yaml and {Path(schema_path).name}.")


def _semantic_checks(config: Mapping[str, Any]) -> list[str]:
    """Cross-key rules a JSON schema cannot say readably."""
    problems = []
    model = config.get("model", {}) or {}
    if model.get("source") == "path" and not model.get("path"):
        problems.append("key 'model.path': required when model.source is 'path'; "
                        "set it to a local Hugging Face model directory")
    if config.get("engine") == "verl" and model.get("source") == "scratch":
        problems.append("key 'model.source': the verl engine needs a pretrained model; "
                        "set model.source: path and model.path (see config.paper.yaml)")
    if config.get("engine") == "verl" and (config.get("rl") or {}).get("frozen"):
        problems.append("key 'rl.frozen': holding parameters fixed is a torch-engine setting; "
                        "remove it or set engine: torch")
    task = config.get("task", {}) or {}
    if task.get("render", "nested") == "chain":
        if task.get("style") != "compact":
            problems.append("key 'task.render': chain is a compact-style rendering; set task.style: compact "
                            "or task.render: nested")
        from fgx.tasks.strings.expr import CHAIN_TRACES

        if task.get("trace", "rewrite") not in CHAIN_TRACES:
            problems.append(f"key 'task.render': chain writes redex, redex_full, steps or call_steps traces, got task.trace: "
                            f"{task.get('trace', 'rewrite')}; set task.trace: redex")
    # the trace format is the compact style's (the tiny model's pretraining traces); paper-style
    # configs merged over config.yaml inherit its trace and never write one
    if (task.get("style") == "compact" and task.get("trace") in ("steps", "call_steps")
            and task.get("render", "nested") != "chain"):
        problems.append(f"key 'task.trace': {task.get('trace')} traces are written for chain prompts only (the next step is "
                        "read off the prompt); set task.render: chain or task.trace: redex")
    # (only a model pretrained from scratch reads them: config.paper.yaml merged over config.yaml inherits the key)
    if ((config.get("data", {}) or {}).get("pretrain_step_problems") and task.get("style") != "compact"
            and (config.get("model", {}) or {}).get("source") == "scratch"):
        problems.append("key 'data.pretrain_step_problems': first-step problems are written in the compact style "
                        f"(the tiny model's pretraining), got task.style: {task.get('style')}; set it to 0")
    for key in ("test_levels", "pretrain_prior_levels", "pretrain_step_levels", "test_train_funcs_levels"):
        levels = (config.get("data", {}) or {}).get(key)
        if isinstance(levels, list) and len(levels) == 2 and levels[0] > levels[1]:
            problems.append(f"key 'data.{key}': got {levels}; write [min, max] with min <= max")
    data = config.get("data", {}) or {}
    shares, prior_levels = data.get("pretrain_prior_level_shares"), data.get("pretrain_prior_levels", [2, 3])
    if (isinstance(shares, list) and isinstance(prior_levels, list) and len(prior_levels) == 2
            and len(shares) != prior_levels[1] - prior_levels[0] + 1):
        problems.append(f"key 'data.pretrain_prior_level_shares': got {len(shares)} shares {shares} for depths "
                        f"{prior_levels[0]}..{prior_levels[1]} (data.pretrain_prior_levels); give one per depth, "
                        f"{prior_levels[1] - prior_levels[0] + 1} in all")
    countdown = config.get("countdown") or {}
    if countdown.get("enabled"):
        needed = ("train_problems", "test_problems", "test_numbers", "rl_runs", "sft", "evaluate")
        missing = [k for k in needed if k not in countdown]
        if missing:
            problems.append(f"key 'countdown': {', '.join(missing)} required when countdown.enabled is true "
                            "(see the countdown section of config.yaml), or set enabled: false")
    return problems


def settings_hash(obj: Any) -> str:
    """Short stable hash of a settings object (figure provenance columns)."""
    blob = json.dumps(obj, sort_keys=True, default=str).encode()
    return hashlib.sha256(blob).hexdigest()[:12]
