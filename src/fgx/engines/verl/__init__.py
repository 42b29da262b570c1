"""The verl engine (paper scale, GPUs): vLLM sampling, verl SFT, verl GRPO, FSDP -> HF merge.

``fgx.engines.get_engine("verl")`` returns :class:`VerlEngine`. The command builders in
:mod:`fgx.engines.verl.commands` are pure and importable without verl or vLLM installed.
"""

from fgx.engines.verl.commands import (
    merge_command,
    ppo_command,
    ppo_overrides,
    rollout_command,
    sft_command,
    sft_overrides,
    verl_settings,
)
from fgx.engines.verl.engine import VerlEngine

__all__ = ["VerlEngine", "merge_command", "ppo_command", "ppo_overrides", "rollout_command",
           "sft_command", "sft_overrides", "verl_settings"]
