"""The settings declarations (fgx.settings) against the config schema, config.yaml and docs/knobs.md: one
declaration per key, one layer of defaults, one set of names."""

import dataclasses
import json
from pathlib import Path

import pytest
import yaml

from fgx import settings as S
from fgx.plan import params, splits
from fgx.config import load_schema
from fgx.tasks.countdown.models import MULTI_BASE

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
    for model in ("stage1", "rft_level2_iter1", MULTI_BASE):
        S.SFT.from_settings(json.loads(params.sft_settings(cfg, model)))
    for purpose, model, split in (("rollout", "base", "stage1"), ("rollout", "stage1", "level2_chunk1"),
                                  ("eval", "rl_level2", "test"), ("eval", "stage1_multi", "countdown3")):
        s = json.loads(params.sampling_settings(cfg, purpose, model, split))
        S.Sampling.from_settings(s)
        S.Runtime.from_settings(s)
    # the light jobs' own settings
    S.Filter.from_settings(json.loads(params.filter_settings(cfg, "stage1")))
    S.Metrics.from_settings(json.loads(params.metrics_settings(cfg)))
    S.SFTMix.from_settings(json.loads(params.sft_mix_settings(cfg, MULTI_BASE)))
    S.PromptSubset.from_settings(json.loads(splits.many_samples_settings(cfg)))
    S.SampleBrowser.from_settings(json.loads(params.browser_settings(cfg)))


def test_missing_and_unknown_keys_are_named():
    with pytest.raises(S.SettingsError, match="missing lr, max_length; unknown lrr"):
        S.SFT.from_settings({"engine": "torch", "epochs": 1, "batch_size": 2, "lrr": 1})


def test_the_committed_schema_and_key_tables_are_what_the_declarations_generate():
    """schemas/config.schema.yaml and docs/knobs.md's key tables come from fgx.settings; edit the declarations."""
    from fgx import knobs

    stale = [str(p.relative_to(ROOT)) for p in knobs.stale()]
    assert not stale, f"{', '.join(stale)} differ from the declarations in src/fgx/settings.py: run `{knobs.COMMAND}`"


def test_every_config_key_is_declared_once_with_a_description():
    """config.yaml's keys are exactly the declared ones (fgx.settings' and the task families' sections), and
    every declaration says what its key is."""
    from fgx import knobs, schema

    def keys(cls, prefix=""):
        for f, tp in schema.fields(cls):
            k = S.knob_of(f)
            assert k.doc and "\n" not in k.doc, f"{prefix}{f.name}: one line of description"
            inner = schema.split_optional(tp)[0]
            if dataclasses.is_dataclass(inner) and not k.partial:
                yield from keys(inner, f"{prefix}{f.name}.")
            else:
                yield f"{prefix}{f.name}"

    def leaves(d, prefix=""):
        for k, v in d.items():
            if isinstance(v, dict) and k != "external":
                yield from leaves(v, f"{prefix}{k}.")
            else:
                yield f"{prefix}{k}"

    declared = list(keys(knobs.config_class()))
    assert len(declared) == len(set(declared)) > 100
    assert set(declared) == set(leaves(yaml.safe_load((ROOT / "config.yaml").read_text())))


def test_the_task_families_vocabularies_are_declared_once():
    """The prompt styles task.style allows are the ones every family's generator (and the string classifier)
    reads, and Countdown's trace choices its trace writer's: one tuple each, imported."""
    import importlib

    from fgx.tasks.countdown import settings as countdown_settings, trace
    from fgx.tasks.strings import failure_modes

    # the packages export a generate() function: the modules by their full names
    strings_generate, countdown_generate, arithmetic_generate = (
        importlib.import_module(f"fgx.tasks.{family}.generate") for family in ("strings", "countdown", "arithmetic"))
    assert strings_generate.STYLES is countdown_generate.STYLES is failure_modes.STYLES is S.STYLES
    assert arithmetic_generate.STYLES is S.STYLES
    choices = {f.name: S.knob_of(f).choices for cls in (S.Task, countdown_settings.Countdown)
               for f in dataclasses.fields(cls)}
    assert choices["style"] is S.STYLES and choices["trace"] is trace.TRACES


def test_machine_knobs_are_declared_with_their_keys():
    from fgx.engines.verl import commands as C

    assert set(C.MACHINE_KEYS) == {f.name for f in dataclasses.fields(S.Verl) if S.knob_of(f).machine}
    assert {"gpu_memory_utilization", "ppo_max_token_len_per_gpu", "param_offload"} <= set(C.MACHINE_KEYS)
    assert "max_prompt_length" not in C.MACHINE_KEYS and "filter_groups_metric" not in C.MACHINE_KEYS
    assert C.MACHINE_SUBKEYS == {"sft": ("micro_batch_size_per_gpu", "max_token_len_per_gpu", "use_dynamic_bsz"),
                                 "sample": ("gpu_memory_utilization", "enforce_eager")}


def test_samples_per_prompt_is_one_reading_of_n_and_group_size():
    cfg = yaml.safe_load((ROOT / "config.yaml").read_text())
    rl = S.RL.from_settings(json.loads(params.rl_settings(cfg, "level2")))
    sampling = S.Sampling.from_settings(json.loads(params.sampling_settings(cfg, "eval", "stage1", "test")))
    assert rl.samples_per_prompt == cfg["rl"]["group_size"] and sampling.samples_per_prompt == cfg["evaluate"]["n"]


def test_a_verl_section_missing_or_adding_a_key_is_named():
    from configs import verl_section

    S.Verl.from_config(verl_section())
    v = verl_section(sample={"chunk": 8})
    del v["log_val_generations"]
    with pytest.raises(S.SettingsError, match="'verl': missing key\\(s\\) log_val_generations"):
        S.Verl.from_config(v)
    v["log_val_generations"] = 0
    with pytest.raises(S.SettingsError, match="'verl.sample': unknown key\\(s\\) chunk"):
        S.Verl.from_config(v)
