"""The arithmetic-chain family's config section (``arithmetic:``), declared as fgx.settings declares the
others: a field per key, its type, limits and description (``python -m fgx.knobs`` writes them into the
schema and docs)."""

from __future__ import annotations

from dataclasses import dataclass

from fgx.settings import RL_RUNS, SFT, Sampling, knob, levels


@dataclass(frozen=True)
class Arithmetic:
    """config ``arithmetic``: findings 1-3 on arithmetic chains, and the transfer of string composition to them."""

    enabled: bool = knob("false: no arithmetic problem sets, models, evaluations or figures")
    max_value: int = knob("every value of a chain stays in 0..max_value", ge=9)
    stage1_problems: int = knob("Level-1 problems of all twelve operations with step traces: the atomic skills",
                                ge=1)
    stage1_repeats: int = knob("times each of them appears in one epoch of the arithmetic Stage 1", ge=1)
    stage1_chain_problems: int = knob("Level-2 chains of train operations with their full traces in the arithmetic "
                                      "Stage 1 (0: none): a small exposure to composition, as an LLM's "
                                      "pretraining gives one", ge=0)
    string_repeats: int = knob("times each Stage-1 string example appears there (the Multi-Base of the transfer)",
                               ge=0)
    sft: SFT = knob("the arithmetic Stage 1's fine-tuning of the base")
    train_problems: int = knob("problems per RL train split (level1, level2, level1to2), train operations", ge=1)
    rl_runs: list[str] = knob("RL runs on arithmetic (rl: settings) from the arithmetic Stage-1 model",
                              each={"choices": RL_RUNS}, unique=True)
    rl_steps: int = knob("their RL steps", ge=1)
    rft_chunks: int = knob("iterative-RFT baseline on arithmetic: iterations, one fresh Level-2 chunk each",
                           ge=0)
    rft_chunk_problems: int = knob("problems per chunk", ge=1)
    test_per_level: int = knob("held-out test prompts per level (held-out operations)", ge=1)
    val_per_level: int = knob("held-out prompts per level that the arithmetic RL runs validate on", ge=1)
    test_levels: list[int] = levels("[min, max] depth of the test and validation sets")
    transfer_runs: list[str] = knob("string-task RL runs (rl: settings) from the arithmetic Stage-1 model: the "
                                    "transfer", each={"choices": RL_RUNS}, unique=True)
    transfer_rl_steps: int = knob("their RL steps", ge=1)
    transfer_levels: list[int] = levels("[min, max] arithmetic test levels the transfer is measured on")
    evaluate: Sampling = knob("sampling of every arithmetic evaluation (pass@1 of n samples per prompt)")


def check_config(config) -> list[str]:
    """The section's cross-key rules (fgx.tasks.family.TaskFamily.check_config): level ranges in order, the
    transfer's levels among the test set's."""
    a = config["arithmetic"]
    problems = [f"key 'arithmetic.{key}': got {a[key]}; write [min, max] with min <= max"
                for key in ("test_levels", "transfer_levels") if _range(a.get(key)) and a[key][0] > a[key][1]]
    test, transfer = a.get("test_levels"), a.get("transfer_levels")
    if not problems and _range(test) and _range(transfer) and not test[0] <= transfer[0] <= transfer[1] <= test[1]:
        problems.append(f"key 'arithmetic.transfer_levels': got {transfer}; the transfer is measured on the test set, "
                        f"so keep them within arithmetic.test_levels {test}")
    return problems


def _range(levels) -> bool:
    return isinstance(levels, list) and len(levels) == 2 and all(isinstance(v, int) for v in levels)
