# Shared by the rules: config validation, conda envs, resources, and `plan` (fgx.dag.Plan), whose
# methods are the rules' input and params functions (fgx.plan and fgx.dag hold every decision, unit-tested).

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
from fgx.dag import Plan
from fgx.dag.targets import families_with_findings
from fgx.engines import engine_class
from fgx.inputs import check_model_path
from fgx.knobs import schema
from fgx.plan import paths
from fgx.plan.figures import figure_wildcard
from fgx.plan.models import RL_RUN_WILDCARD, SCRATCH_BASE, rl_metrics, rl_model_dir, rl_validation, rl_work
from fgx.plan.splits import TEST_MANY, TEST_MANY_DATA, check_external_files

# every job's scripts import this checkout's src/ (PYTHONPATH in the command: conda jobs drop the variable)
shell.prefix(job_shell_prefix(workflow.basedir))


# the schema the declarations make (schemas/config.schema.yaml is its published copy): a task family's
# config section is checked, and an engine is a config choice, as soon as its registry line is there
validate_config(config, source="the merged --configfile/config.yaml", schema=schema())
check_external_files(config)
check_model_path(config)
plan = Plan(config)
FIGURE_WILDCARD = figure_wildcard()
SFT_MODEL_WILDCARD = plan.sft_model_wildcard()
FAMILY_FINDINGS_WILDCARD = families_with_findings()

# Conda environments (used with --software-deployment-method conda): light CPU rules always run
# in the torch env; sampling and training rules in the env of the configured engine.
ENGINE = engine_class(config["engine"])  # fgx.engines: what the DAG asks of the engine that runs the jobs
TORCH_ENV = "../envs/torch.yaml"
ENGINE_ENV = f"../{ENGINE.env_file}"
HEAVY_THREADS = config["compute"]["torch_threads"]
GPUS = ENGINE.gpus_per_job(config)
# an engine whose RL jobs on one host take turns (verl's: fgx.engines.verl.environment.host_lock) counts each as one
# `verl_rl` resource, which profiles/default limits to 1, so that a job waiting for its turn does not hold a core
# the evaluations could use
RL_PER_HOST = int(ENGINE.one_rl_job_per_host)


wildcard_constraints:
    split=r"[a-z0-9_]+",
    model=r"[a-z0-9_]+",
    run=RL_RUN_WILDCARD,
