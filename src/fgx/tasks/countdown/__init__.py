"""The Countdown task (paper Section 4.3): reasoning-gym problems, upstream's prompt, a safe reward.

Public API (see the submodules for details):

- problems (``generate``): ``generate`` (DataFrame), ``sample_compact_problems`` (fgx's own sampler),
  ``compact_prompt``, ``prompt_text``, ``data_source``, ``in_partition``
- reference solutions (``solver``, ``trace``): ``solve``, ``Step``, ``solution_text``, ``parse_steps``,
  ``step_value``, ``trace_stats``
- reward (``scoring``): ``compute_score(data_source, solution_str, ground_truth, extra_info=None)``,
  ``extract_answer``, ``evaluate_answer``; ``parse_ground_truth`` (``ground_truth``)
- where a model stops (``shapes``): ``answer_shape``, ``shape_stats``, ``SHAPES``
- the task family record (``family``): ``FAMILY``, its problem sets (``splits``), the Multi-Base and its RL
  runs (``models``), its config section (``settings``), its finding (``findings``)
- CLI: ``python -m fgx.tasks.countdown generate --numbers N --num M --seed S --out FILE
  [--style paper|compact] [--partition none|train|test]``
"""

from .cli import main
from .family import FAMILY
from .generate import (COMPACT_PREFIX, DATA_SOURCE_PREFIX, PARTITIONS, STYLES, TEMPLATE, compact_prompt, data_source,
                       generate, in_partition, prompt_text, sample_compact_problems)
from .ground_truth import parse_ground_truth
from .scoring import MAX_ANSWER_CHARS, compute_score, evaluate_answer, extract_answer
from .shapes import SHAPES, answer_shape, shape_stats
from .solver import Step, format_value, solve
from .trace import TRACES, parse_steps, solution_text, step_value, trace_stats

__all__ = [
    "COMPACT_PREFIX", "DATA_SOURCE_PREFIX", "FAMILY", "MAX_ANSWER_CHARS", "PARTITIONS", "SHAPES", "STYLES", "Step",
    "TEMPLATE", "TRACES", "answer_shape", "compact_prompt", "compute_score", "data_source", "evaluate_answer",
    "extract_answer", "format_value", "generate", "in_partition", "main", "parse_ground_truth", "parse_steps",
    "prompt_text", "sample_compact_problems", "shape_stats", "solution_text", "solve", "step_value", "trace_stats",
]
