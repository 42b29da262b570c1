"""Analyses of a run: the paper's findings checked, failure modes of responses (paper Fig. 6), paired
contrasts between models, where traces go wrong, and a sample browser.

- ``findings``: each of the paper's findings beside the run's number, with a verdict
  (``python -m fgx.analysis.findings figures/``); a task family adds rows of its own.
- ``failures``: the failure-mode classifier of an evaluation's task family (the string task's:
  ``fgx.tasks.strings.failure_modes``, five categories from Correct to Atomic Error).
- ``step_funnel``: where along its trace a compact answer leaves the true computation
  (``python -m fgx.analysis.step_funnel --eval PARQUET``).
- ``contrast``: per-level pass@k of one model minus another's on the same prompts, paired bootstrap
  CIs (``python -m fgx.analysis.contrast --a PARQUET --b PARQUET``).
- ``sample_browser``: ``render_html`` a self-contained HTML page of example responses per
  model, level and category.
"""
