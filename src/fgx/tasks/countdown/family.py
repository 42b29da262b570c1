"""Countdown as a task family (fgx.tasks.family): what the DAG and the analyses look up."""

from fgx.tasks.family import ConfigSection, Findings, TaskFamily

from . import findings, ground_truth, models, splits
from .generate import DATA_SOURCE_PREFIX
from .settings import Countdown

FAMILY = TaskFamily(
    name="countdown",
    package="fgx.tasks.countdown",
    data_source_prefix=DATA_SOURCE_PREFIX,
    splits=splits.splits,
    generate_args=splits.generate_args,
    generate_command="generate_countdown.py",
    seed_name="countdown",
    check_ground_truth=ground_truth.check,
    leakage_keys=ground_truth.leakage_keys,
    # its held-out sets cannot share a problem with its training set: a hash partition keeps the 2-number
    # sets apart, and the other number counts differ
    checks_leakage=False,
    config=ConfigSection("countdown", Countdown, "transfer to Countdown (paper Section 4.3, Table 1)"),
    models=models.models,
    rl_lineages=(models.MULTI,),
    figures={"countdown_transfer": "fgx.figures.countdown_transfer"},
    findings=Findings(f"{findings.__name__}:check", tables=("countdown_transfer",),
                      readme=(("5. Countdown: Multi-Base + RL L1+2 best on 3 numbers", "35 % vs 17–20 %"),)),
    generate_minutes=30,
)
