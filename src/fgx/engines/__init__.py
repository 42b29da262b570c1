"""Engines: ``get_engine("torch")`` (embedded, CPU or one GPU) or ``get_engine("verl")``
(vLLM + verl command builders). Both write the same files (docs/architecture.md)."""

from __future__ import annotations

import importlib

ENGINES = ("torch", "verl")


def get_engine(name: str):
    """Return the engine object for ``config["engine"]``; modules are imported lazily."""
    if name not in ENGINES:
        raise ValueError(f"engine {name!r} unknown; set config 'engine' to one of {list(ENGINES)}")
    mod = importlib.import_module(f"fgx.engines.{name}")
    if hasattr(mod, "get_engine"):
        return mod.get_engine()
    if hasattr(mod, "ENGINE"):
        return mod.ENGINE
    return mod
