"""Analyses of a run: failure modes of responses (paper Fig. 6), the paper's findings checked, paired
contrasts between models, where traces go wrong, and a sample browser.

- ``findings``: each of the paper's findings beside the run's number, with a verdict
  (``python -m fgx.analysis.findings figures/``).

- ``failure_modes``: ``classify`` / ``classify_detailed`` one response of the string task into
  Correct / Ignores Composition / Incomplete Trace / Incorrect Composition / Atomic Error,
  ``classify_eval`` every response of an evaluation parquet.
- ``step_funnel``: where along its trace a compact answer leaves the true computation
  (``python -m fgx.analysis.step_funnel --eval PARQUET``).
- ``contrast``: per-level pass@k of one model minus another's on the same prompts, paired bootstrap
  CIs (``python -m fgx.analysis.contrast --a PARQUET --b PARQUET``).
- ``sample_browser``: ``render_html`` a self-contained HTML page of example responses per
  model, level and category.
"""

from .failure_modes import (ATOMIC, CATEGORIES, CORRECT, FAILURES, IGNORES, INCOMPLETE, INCORRECT,
                            Classification, classify, classify_detailed, classify_eval)

__all__ = ["ATOMIC", "CATEGORIES", "CORRECT", "Classification", "FAILURES", "IGNORES", "INCOMPLETE",
           "INCORRECT", "classify", "classify_detailed", "classify_eval"]
