"""Analyses of model behaviour: failure modes of responses (paper Fig. 6) and a sample browser.

- ``failure_modes``: ``classify`` / ``classify_detailed`` one response of the string task into
  Correct / Ignores Composition / Incomplete Trace / Incorrect Composition / Atomic Error,
  ``classify_eval`` every response of an evaluation parquet.
- ``step_ceiling``: the accuracy perfect composition would reach with a model's atomic skill
  (``python -m fgx.analysis.step_ceiling --model DIR --eval PARQUET``).
- ``first_lines``: how compact-trace answers start (innermost call, root first, ...), per level.
- ``context_penalty``: a first step's accuracy inside the composition against the same step alone
  (``python -m fgx.analysis.context_penalty --model DIR --eval PARQUET``).
- ``contrast``: per-level pass@k of one model minus another's on the same prompts, paired bootstrap
  CIs (``python -m fgx.analysis.contrast --a PARQUET --b PARQUET``).
- ``sample_browser``: ``render_html`` a self-contained HTML page of example responses per
  model, level and category.
"""

from .failure_modes import (ATOMIC, CATEGORIES, CORRECT, FAILURES, IGNORES, INCOMPLETE, INCORRECT,
                            Classification, classify, classify_detailed, classify_eval)

__all__ = ["ATOMIC", "CATEGORIES", "CORRECT", "Classification", "FAILURES", "IGNORES", "INCOMPLETE",
           "INCORRECT", "classify", "classify_detailed", "classify_eval"]
