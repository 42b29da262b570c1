"""The arithmetic-chain task as a task family (fgx.tasks.family): what the DAG and the analyses look up."""

from fgx.tasks.family import ConfigSection, Findings, TaskFamily

from . import findings, ground_truth, keys, models, splits
from .generate import DATA_SOURCE_PREFIX
from .settings import Arithmetic, check_config

FAMILY = TaskFamily(
    name="arithmetic",
    package="fgx.tasks.arithmetic",
    data_source_prefix=DATA_SOURCE_PREFIX,
    splits=splits.splits,
    generate_args=splits.generate_args,
    check_ground_truth=ground_truth.check,
    leakage_keys=keys.leakage_keys,
    config=ConfigSection("arithmetic", Arithmetic, "arithmetic chains: findings 1-3 and the transfer of string "
                         "composition on a second task family"),
    models=models.models,
    rl_lineages=(models.ARITHMETIC, models.MULTI),
    figures={"arithmetic_composition": "fgx.figures.arithmetic_composition",
             "arithmetic_transfer": "fgx.figures.arithmetic_transfer"},
    findings=Findings(f"{findings.__name__}:check", tables=findings.TABLES, readme=findings.README),
    check_config=check_config,
)
