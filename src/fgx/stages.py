"""The DAG's stages behind one interface: ``engine_for(settings)`` returns the engine a job's
settings name (``torch`` or ``verl``), with the methods ``sample``, ``pretrain``, ``sft`` and
``rl`` that take the job's neutral settings (fgx.workflow). scripts/ call only this."""

from __future__ import annotations

from typing import Any, Mapping


def engine_for(settings: Mapping[str, Any]):
    name = settings.get("engine", "torch")
    if name == "torch":
        from fgx.engines.torch.dag import TorchDagEngine

        return TorchDagEngine()
    if name == "verl":
        from fgx.engines.verl import VerlEngine

        return VerlEngine()
    raise ValueError(f"settings: engine {name!r} unknown; set config 'engine' to torch or verl")
