"""Config validation with errors a person can act on.

Snakemake's own ``validate`` reports jsonschema's raw message; here every problem names the
config file, the dotted key, what was found and what is allowed, and all problems are reported
at once, before any job starts.
"""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path
from typing import Any, Mapping

import yaml

from fgx.schema import problems as schema_problems

SCHEMA_PATH = Path(__file__).resolve().parents[2] / "schemas" / "config.schema.yaml"


class ConfigError(ValueError):
    """A config value violates the schema; the message lists every violation."""


def load_schema(path: str | Path = SCHEMA_PATH) -> dict:
    with open(path) as fh:
        return yaml.safe_load(fh)


def validate_config(config: Mapping[str, Any], source: str = "config",
                    schema_path: str | Path = SCHEMA_PATH, schema: Mapping[str, Any] | None = None) -> None:
    """Raise ConfigError naming every offending key of ``config`` (read from ``source``), by ``schema``
    (default: the one at ``schema_path``)."""
    schema = load_schema(schema_path) if schema is None else schema
    problems = schema_problems(schema, dict(config)) + _semantic_checks(config)
    if problems:
        lines = "\n".join(f"  - {p}" for p in problems)
        raise ConfigError(f"invalid configuration ({source}):\n{lines}\n"
                          f"See the comments in config.yaml and {Path(schema_path).name}.")


def _semantic_checks(config: Mapping[str, Any]) -> list[str]:
    """Cross-key rules a JSON schema cannot say readably (the schema has already checked types)."""
    problems = []
    model, task, data = _mapping(config, "model"), _mapping(config, "task"), _mapping(config, "data")
    if model.get("source") == "path" and not model.get("path"):
        problems.append("key 'model.path': required when model.source is 'path'; "
                        "set it to a local Hugging Face model directory")
    if model.get("source") == "scratch" and task.get("style") != "compact":
        problems.append(f"key 'task.style': a model pretrained from scratch learns the compact style, got "
                        f"{task.get('style')!r}; set task.style: compact or model.source: path")
    for key in ("test_levels", "pretrain_prior_levels", "pretrain_step_levels", "test_train_funcs_levels",
                "test_full_trace_levels"):
        levels = data.get(key)
        if _is_range(levels) and levels[0] > levels[1]:
            problems.append(f"key 'data.{key}': got {levels}; write [min, max] with min <= max")
    for key in ("pretrain_prior_levels", "pretrain_step_levels", "test_full_trace_levels"):
        levels = data.get(key)
        if _is_range(levels) and levels[0] < 2:
            problems.append(f"key 'data.{key}': got {levels}; these are compositions, so min >= 2")
    shares, prior_levels = data.get("pretrain_prior_level_shares"), data.get("pretrain_prior_levels")
    if isinstance(shares, list) and _is_range(prior_levels) and len(shares) != prior_levels[1] - prior_levels[0] + 1:
        depths = prior_levels[1] - prior_levels[0] + 1
        problems.append(f"key 'data.pretrain_prior_level_shares': got {len(shares)} shares {shares} for depths "
                        f"{prior_levels[0]}..{prior_levels[1]} (data.pretrain_prior_levels); give one per depth, "
                        f"{depths} in all, or null for an even split")
    val, test_levels = data.get("val_per_level"), data.get("test_levels")
    if isinstance(val, list) and _is_range(test_levels) and len(val) != test_levels[1] - test_levels[0] + 1:
        problems.append(f"key 'data.val_per_level': got {len(val)} counts {val} for levels {test_levels[0]}.."
                        f"{test_levels[1]} (data.test_levels); give one per level, "
                        f"{test_levels[1] - test_levels[0] + 1} in all")
    many = _mapping(_mapping(config, "evaluate"), "many_samples")
    test_levels, many_levels = data.get("test_levels"), many.get("levels")
    if _is_range(test_levels) and _is_range(many_levels) and not (
            test_levels[0] <= many_levels[0] <= many_levels[1] <= test_levels[1]):
        problems.append(f"key 'evaluate.many_samples.levels': got {many_levels}; these prompts come from the test "
                        f"set, so keep them within data.test_levels {test_levels}")
    if isinstance(many.get("prompts_per_level"), int) and isinstance(data.get("test_per_level"), int) \
            and many["prompts_per_level"] > data["test_per_level"]:
        problems.append(f"key 'evaluate.many_samples.prompts_per_level': got {many['prompts_per_level']}; at most "
                        f"data.test_per_level ({data['test_per_level']}) prompts exist per level")
    rl = _mapping(config, "rl")
    if isinstance(rl.get("overlong_buffer"), int) and isinstance(rl.get("max_new_tokens"), int) \
            and rl["overlong_buffer"] >= rl["max_new_tokens"]:
        problems.append(f"key 'rl.overlong_buffer': got {rl['overlong_buffer']}; it must be below rl.max_new_tokens "
                        f"({rl['max_new_tokens']}), or 0 for no overlong penalty")
    figures = _mapping(config, "figures")
    if _is_range(test_levels):
        for key, levels in (("passk_levels", figures.get("passk_levels")),
                            ("failure_level", [figures.get("failure_level")])):
            outside = [lv for lv in levels or [] if isinstance(lv, int) and not test_levels[0] <= lv <= test_levels[1]]
            if outside:
                problems.append(f"key 'figures.{key}': got {figures.get(key)}; the test set has levels "
                                f"{test_levels[0]}..{test_levels[1]} (data.test_levels), so choose among them")
    verl = _mapping(config, "verl")
    if config.get("engine") == "verl" and isinstance(verl.get("logger"), list) and "file" not in verl["logger"]:
        problems.append(f"key 'verl.logger': got {verl['logger']}; it must include \"file\": each RL run's "
                        "metrics.parquet is read from verl's file logger")
    for key, overrides in (("verl.ppo_overrides", verl.get("ppo_overrides")),
                           ("verl.sft.overrides", _mapping(verl, "sft").get("overrides"))):
        for item in overrides if isinstance(overrides, list) else []:
            if isinstance(item, str) and not HYDRA_OVERRIDE.fullmatch(item):
                problems.append(f"key '{key}': got {json.dumps(item)}; write a Hydra override: key=value, "
                                "+key=value (a key verl's config lacks), ++key=value or ~key")
    return problems + _family_checks(config)


def _family_checks(config: Mapping[str, Any]) -> list[str]:
    """Each task family's own cross-key rules over its section (fgx.tasks.family.TaskFamily.check_config)."""
    from fgx.tasks.registry import families

    return [p for f in families() if f.config and isinstance(config.get(f.config.key), Mapping)
            for p in f.check_config(config)]


# a Hydra override as verl's command line takes it: [+|++]dotted.key=value, or ~dotted.key[=value]
HYDRA_OVERRIDE = re.compile(r"(?:\+\+|\+)?[A-Za-z_][\w.\-/@]*=.*|~[A-Za-z_][\w.\-/@]*(?:=.*)?", re.S)


def _mapping(config: Mapping[str, Any], key: str) -> Mapping[str, Any]:
    """A section, or {} where the value is not a mapping (the schema has named that already)."""
    value = config.get(key)
    return value if isinstance(value, Mapping) else {}


def _is_range(levels: Any) -> bool:
    return isinstance(levels, list) and len(levels) == 2 and all(isinstance(v, int) for v in levels)


def settings_hash(obj: Any) -> str:
    """Short stable hash of a settings object (figure provenance columns)."""
    blob = json.dumps(obj, sort_keys=True, default=str).encode()
    return hashlib.sha256(blob).hexdigest()[:12]
