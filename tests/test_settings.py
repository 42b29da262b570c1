"""Job settings (fgx.settings) against the config schema: one layer of defaults, one set of names."""

import dataclasses
import json
from pathlib import Path

import pytest
import yaml

from fgx import settings as S
from fgx.plan import models, params
from fgx.config import load_schema

ROOT = Path(__file__).resolve().parents[1]


def _section(schema: dict, path: tuple[str, ...]) -> dict:
    node = schema
    for key in path:
        node = node["properties"][key]
        while "$ref" in node:
            node = schema["$defs"][node["$ref"].rsplit("/", 1)[1]]
    return node


@pytest.mark.parametrize("cls", list(S.CONFIG_SECTIONS), ids=lambda c: c.__name__)
def test_each_settings_class_has_exactly_its_config_sections_keys(cls):
    keys = set(_section(load_schema(), S.CONFIG_SECTIONS[cls])["properties"]) - {"runs"}
    assert {f.name for f in dataclasses.fields(cls)} == keys


def test_every_sampling_and_sft_section_has_the_same_keys():
    schema = load_schema()
    for path in (("rft_baseline", "rollout"), ("countdown", "evaluate")):
        assert set(_section(schema, path)["properties"]) == {f.name for f in dataclasses.fields(S.Sampling)}
    assert {f.name for f in dataclasses.fields(S.Sampling)} < set(_section(schema, ("evaluate",))["properties"])
    for path in (("rft_baseline", "sft"), ("countdown", "sft")):
        assert set(_section(schema, path)["properties"]) == {f.name for f in dataclasses.fields(S.SFT)}


def test_the_workflow_builds_settings_every_job_reads():
    cfg = yaml.safe_load((ROOT / "config.yaml").read_text())
    S.Pretrain.from_settings(json.loads(params.pretrain_settings(cfg)))
    S.RL.from_settings(json.loads(params.rl_settings(cfg, "level2")))
    S.RL.from_settings(json.loads(params.rl_settings(cfg, "level1", "multi")))
    for model in ("stage1", "rft_level2_iter1", models.MULTI_BASE):
        S.SFT.from_settings(json.loads(params.sft_settings(cfg, model)))
    for purpose, model, split in (("rollout", "base", "stage1"), ("rollout", "stage1", "level2_chunk1"),
                                  ("eval", "rl_level2", "test"), ("eval", "stage1_multi", "countdown3")):
        s = json.loads(params.sampling_settings(cfg, purpose, model, split))
        S.Sampling.from_settings(s)
        S.Runtime.from_settings(s)


def test_missing_and_unknown_keys_are_named():
    with pytest.raises(S.SettingsError, match="missing lr, max_length; unknown lrr"):
        S.SFT.from_settings({"engine": "torch", "epochs": 1, "batch_size": 2, "lrr": 1})
