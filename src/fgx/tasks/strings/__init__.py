"""The string-transformation task (paper Section 3): functions, generator, executor, reward.

Public API (see the submodules for details):

- functions: ``NAMES``, ``FUNCS``, ``TRAIN_FUNCS``, ``EVAL_FUNCS``, ``ALL_FUNCS``
- expressions: ``Var Str Int Call Concat Method``, ``parse_code``, ``parse_compact``,
  ``render_code``, ``render_compact``, ``compact_call_names``, ``evaluate``, ``trace_values``,
  ``trace_lines``, ``solution_text``, ``reductions``, ``depth``, ``execute``, ``normalise_code``,
  ``render_arg_first``, ``arg_first_to_compact`` (the ``redex_arg_first`` step form),
  ``render_chain``, ``render_expr``, ``parse_chain``, ``chain_to_compact`` (the ``task.render: chain``
  form, ``"dcba".f3().f17()``)
- data: ``generate`` (DataFrame), ``generate_problems``, ``make_row``, ``parse_ground_truth``,
  ``FORWARD_PROMPT``
- reward: ``compute_score(data_source, solution_str, ground_truth, extra_info=None)``
- CLI: ``python -m fgx.tasks.strings generate --stage {1,2} --split {train,test} ...``
"""

from .expr import (DEFAULT_MAX_LEN, Call, Concat, Expr, Int, Method, Str, UnsupportedCode, ValueTooLong,
                   Var, X, arg_first_to_compact, chain_to_compact, compact_call_names, depth, evaluate, execute,
                   functions_used, main_solution_code, normalise_code, parse_chain, parse_code, parse_compact,
                   reductions, render_arg_first, render_chain, render_code, render_compact, render_expr,
                   solution_text, trace_lines, trace_values)
from .functions import ALL_FUNCS, EVAL_FUNCS, FUNCS, NAMES, TRAIN_FUNCS
from .generate import (FORWARD_PROMPT, Problem, data_source, definition_source, function_set, generate,
                       generate_problems, make_row, parse_ground_truth, program_code)
from .scoring import compute_score, extract_output

DATA_SOURCE_PREFIX = "codeio"

__all__ = [
    "ALL_FUNCS", "Call", "Concat", "DATA_SOURCE_PREFIX", "DEFAULT_MAX_LEN", "EVAL_FUNCS", "Expr",
    "FORWARD_PROMPT", "FUNCS", "Int", "Method", "NAMES", "Problem", "Str", "TRAIN_FUNCS", "UnsupportedCode",
    "ValueTooLong", "Var", "X", "arg_first_to_compact", "chain_to_compact", "compact_call_names",
    "compute_score", "data_source", "definition_source", "depth", "evaluate", "execute", "extract_output",
    "function_set", "functions_used", "generate", "generate_problems", "main_solution_code", "make_row",
    "normalise_code", "parse_chain", "parse_code", "parse_compact", "parse_ground_truth", "program_code",
    "reductions", "render_arg_first", "render_chain", "render_code", "render_compact", "render_expr",
    "solution_text", "trace_lines", "trace_values",
]
