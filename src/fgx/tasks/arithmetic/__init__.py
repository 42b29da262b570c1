"""The arithmetic-chain task: a start value and a chain of atomic operations on integers, each step's value
feeding the next (a second compositional task family beside the string functions).

Public API (see the submodules for details):

- operations (``operations``): ``OPERATIONS``, ``NAMES``, ``TRAIN_OPS``, ``HELD_OUT_OPS``, ``ALL_OPS``,
  ``apply``
- chains (``chain``): ``render_chain``, ``parse_chain``, ``values``, ``evaluate``, ``DEFAULT_MAX_VALUE``
- the compact answer format (``trace``): ``trace_lines``, ``solution_text``, ``written_steps``, ``parse_step``
- data (``generate``): ``generate`` (DataFrame), ``generate_problems``, ``make_row``, ``DATA_SOURCE_PREFIX``
- reward (``scoring``): ``compute_score(data_source, solution_str, ground_truth, extra_info=None)``
- the task family record (``family``): ``FAMILY``: its problem sets (``splits``), models (``models``), config
  section (``settings``), leakage keys (``keys``) and findings (``findings``); its figures are
  fgx.figures.arithmetic_composition and fgx.figures.arithmetic_transfer
- CLI: ``python -m fgx.tasks.arithmetic generate --stage {1,2} --split {train,test} ...``
"""

from .chain import DEFAULT_MAX_VALUE, ValueOutOfRange, evaluate, parse_chain, render_chain, values
from .family import FAMILY
from .generate import DATA_SOURCE_PREFIX, Problem, data_source, generate, generate_problems, make_row
from .operations import ALL_OPS, HELD_OUT_OPS, NAMES, OPERATIONS, TRAIN_OPS, apply
from .scoring import compute_score
from .trace import parse_step, solution_text, trace_lines, written_steps

__all__ = [
    "ALL_OPS", "DATA_SOURCE_PREFIX", "DEFAULT_MAX_VALUE", "FAMILY", "HELD_OUT_OPS", "NAMES", "OPERATIONS", "Problem",
    "TRAIN_OPS", "ValueOutOfRange", "apply", "compute_score", "data_source", "evaluate", "generate",
    "generate_problems", "make_row", "parse_chain", "parse_step", "render_chain", "solution_text", "trace_lines",
    "values", "written_steps",
]
