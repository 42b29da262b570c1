"""The string task as a task family (fgx.tasks.family): what the DAG and the analyses look up. Its
settings are fgx's own ``task:`` and ``data:`` sections, and the study's models, figures and findings
(fgx.plan, fgx.figures, fgx.analysis.findings) run on its problem sets."""

from fgx.tasks.family import TaskFamily

from . import ground_truth, keys, splits
from .generate import DATA_SOURCE_PREFIX

FAMILY = TaskFamily(
    name="strings",
    package="fgx.tasks.strings",
    data_source_prefix=DATA_SOURCE_PREFIX,
    splits=splits.splits,
    generate_args=splits.generate_args,
    generate_command="generate_strings.py",
    check_ground_truth=ground_truth.check,
    leakage_keys=keys.leakage_keys,
    external=splits.external,
    failure_modes="fgx.tasks.strings.failure_modes",
)
