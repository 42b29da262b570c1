# Shared by the rules: config validation, conda envs, resources, and `plan` (fgx.plan.Plan), whose
# methods are the rules' input and params functions (fgx.plan holds every decision, unit-tested).

import os
import sys
from pathlib import Path

# fgx importable here without installing (jobs get src/ on PYTHONPATH from the shell prefix below)
sys.path.insert(0, str(Path(workflow.basedir) / "src"))


envvars:
    "PATH",


# scripts/ on PATH: rules call `sample.py ...` and work from any --directory, locally and in SLURM jobs
# and, without conda, `python` is the interpreter running Snakemake (a venv need not be activated)
os.environ["PATH"] = os.pathsep.join(
    [str(Path(workflow.basedir) / "scripts"), str(Path(sys.executable).parent), os.environ["PATH"]])

from fgx.cli import job_shell_prefix
from fgx.config import validate_config
from fgx.inputs import check_model_path
from fgx.plan import Plan, paths
from fgx.plan.figures import FIGURE_WILDCARD
from fgx.plan.models import (RL_RUN_WILDCARD, SCRATCH_BASE, SFT_MODEL_WILDCARD, rl_metrics, rl_model_dir,
                             rl_validation, rl_work)
from fgx.plan.splits import TEST_MANY, TEST_MANY_DATA, check_external_files

# every job's scripts import this checkout's src/ (PYTHONPATH in the command: conda jobs drop the variable)
shell.prefix(job_shell_prefix(workflow.basedir))


validate_config(config, source="the merged --configfile/config.yaml",
                schema_path=Path(workflow.basedir) / "schemas" / "config.schema.yaml")
check_external_files(config)
check_model_path(config)
plan = Plan(config)

# Conda environments (used with --software-deployment-method conda): light CPU rules always run
# in the torch env; sampling and training rules in the env of the configured engine.
TORCH_ENV = "../envs/torch.yaml"
ENGINE_ENV = "../envs/verl.yaml" if config["engine"] == "verl" else TORCH_ENV
HEAVY_THREADS = config["compute"]["torch_threads"]
GPUS = 1 if config["engine"] == "verl" or config["device"] == "cuda" else 0
# verl RL jobs on one host take turns (fgx.engines.verl.engine.host_lock); profiles/default runs one at a time
# (`resources: verl_rl=1`), so that a job waiting for its turn does not hold a core the evaluations could use
VERL_RL = 1 if config["engine"] == "verl" else 0


wildcard_constraints:
    split=r"[a-z0-9_]+",
    model=r"[a-z0-9_]+",
    run=RL_RUN_WILDCARD,
