"""The string-transformation task (paper Section 3): functions, generator, executor, reward.

Public API (see the submodules for details):

- functions: ``NAMES``, ``FUNCS``, ``TRAIN_FUNCS``, ``EVAL_FUNCS``, ``ALL_FUNCS``
- expressions (``expr``): ``Var Str Int Call Concat Method``, ``parse_code``, ``parse_chain``,
  ``parse_compact``, ``render_code``, ``render_chain``, ``render_compact``, ``compact_call_names``,
  ``evaluate``, ``trace_values``, ``reductions``, ``depth``, ``execute``, ``normalise_code``
- the compact answer format (``trace``): ``trace_lines``, ``solution_text``, ``written_steps``,
  ``parse_step``
- data (``generate``): ``generate`` (DataFrame), ``generate_problems``, ``make_row``,
  ``FORWARD_PROMPT``; ``parse_ground_truth`` (``ground_truth``)
- reward (``scoring``): ``compute_score(data_source, solution_str, ground_truth, extra_info=None)``; the
  answer it reads, ``extract_output`` (fgx.tasks.json_answer)
- the task family record (``family``): ``FAMILY``, its problem sets (``splits``), the expression keys the
  leakage check compares (``keys``); the failure-mode classifier (``failure_modes``, paper Fig. 6)
- CLI: ``python -m fgx.tasks.strings generate --stage {1,2} --split {train,test} ...``
"""

from fgx.tasks.json_answer import extract_output

from .expr import (DEFAULT_MAX_LEN, Call, Concat, Expr, Int, Method, Str, UnsupportedCode, ValueTooLong,
                   Var, X, compact_call_names, depth, evaluate, execute, functions_used, main_solution_code,
                   normalise_code, parse_chain, parse_code, parse_compact, reductions, render_chain, render_code,
                   render_compact, trace_values)
from .family import FAMILY
from .functions import ALL_FUNCS, EVAL_FUNCS, FUNCS, NAMES, TRAIN_FUNCS
from .generate import (DATA_SOURCE_PREFIX, FORWARD_PROMPT, Problem, data_source, definition_source, function_set,
                       generate, generate_problems, make_row, program_code)
from .ground_truth import parse_ground_truth
from .scoring import compute_score
from .trace import parse_step, solution_text, trace_lines, written_steps

__all__ = [
    "ALL_FUNCS", "Call", "Concat", "DATA_SOURCE_PREFIX", "DEFAULT_MAX_LEN", "EVAL_FUNCS", "Expr", "FAMILY",
    "FORWARD_PROMPT", "FUNCS", "Int", "Method", "NAMES", "Problem", "Str", "TRAIN_FUNCS", "UnsupportedCode",
    "ValueTooLong", "Var", "X", "compact_call_names", "compute_score", "data_source", "definition_source",
    "depth", "evaluate", "execute", "extract_output", "function_set", "functions_used", "generate",
    "generate_problems", "main_solution_code", "make_row", "normalise_code", "parse_chain", "parse_code",
    "parse_compact", "parse_ground_truth", "parse_step", "program_code", "reductions", "render_chain",
    "render_code", "render_compact", "solution_text", "trace_lines", "trace_values", "written_steps",
]
