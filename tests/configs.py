"""config.yaml as tests read it: the defaults, overlays merged as ``--configfile`` merges them."""

from __future__ import annotations

import copy
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]


def load_config(*overlays: str | Path) -> dict:
    """config.yaml with each overlay (a path relative to the repository, or absolute) merged over it."""
    from snakemake.utils import update_config

    cfg = yaml.safe_load((ROOT / "config.yaml").read_text())
    for overlay in overlays:
        update_config(cfg, yaml.safe_load((ROOT / overlay).read_text()))
    return cfg


def verl_section(**changes) -> dict:
    """config.yaml's complete ``verl:`` section with ``changes`` (a nested section's keys merged into it):
    what a verl job's ``settings["verl"]`` holds."""
    verl = copy.deepcopy(load_config()["verl"])
    for key, value in changes.items():
        verl[key] = {**verl[key], **value} if isinstance(verl.get(key), dict) else value
    return verl
