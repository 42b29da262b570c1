"""Engines: ``get_engine("torch")`` (embedded, CPU or one GPU) or ``get_engine("verl")`` (vLLM + verl).

Both have the methods ``sample``, ``pretrain`` (torch only), ``sft`` and ``rl``, take the job's
settings as :mod:`fgx.plan.params` builds them, and write the same files (docs/architecture.md).
"""

from __future__ import annotations

from fgx.settings import ENGINES


def get_engine(name: str):
    """The engine that config key ``engine`` names; its modules are imported only here."""
    if name == "torch":
        from fgx.engines.torch import TorchEngine

        return TorchEngine()
    if name == "verl":
        from fgx.engines.verl import VerlEngine

        return VerlEngine()
    raise ValueError(f"engine {name!r} unknown; set config 'engine' to one of {', '.join(ENGINES)}")
