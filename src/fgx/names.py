"""Names the DAG planner, the figures and the analyses share: figure targets, RL runs, model names.

Kept free of heavy imports (the Snakefile loads it through :mod:`fgx.workflow`)."""

from __future__ import annotations

import re

RL_RUNS = ("level1", "level2", "level1to2")
# the figure targets, one fgx.figures module each
FIGURES = ("passk_level_curve", "rl_level_accuracy", "rft_vs_rl", "model_contrasts", "failure_modes",
           "training_dynamics", "countdown_transfer", "function_transfer")
# the figure tables fgx.analysis.findings checks the paper's findings against
FINDINGS_TABLES = ("passk_level_curve", "model_contrasts", "rft_vs_rl", "countdown_transfer", "function_transfer")
RFT_ITER = re.compile(r"^rft_level2_iter(\d+)$")

# the pass@k table's two prompt sets (its "prompts" column): the whole test set, and the few prompts
# per level sampled many times (evaluate.many_samples)
PASSK_ALL_PROMPTS, PASSK_SUBSET_PROMPTS = "all", "subset, many samples"

# the contrast table's prompt sets (its "prompts" column): every test prompt, those of the test set only a
# full trace solves (no one-step wrong trace reaches the answer), and the full-trace test set (a set of
# its own, every prompt such a one: data.test_full_trace_per_level)
ALL_PROMPTS, FULL_TRACE_PROMPTS, FULL_TRACE_SET_PROMPTS = "all", "full trace only", "full-trace test set"
