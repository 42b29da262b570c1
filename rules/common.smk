# Helpers shared by the rules: config validation and thin adapters from wildcards to the
# pure functions in fgx.workflow (which hold every decision and are unit-tested).

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

from fgx import workflow as wf
from fgx.cli import job_shell_prefix
from fgx.config import validate_config

# every job's scripts import this checkout's src/ (PYTHONPATH in the command: conda jobs drop the variable)
shell.prefix(job_shell_prefix(workflow.basedir))


validate_config(config, source="the merged --configfile/config.yaml",
                schema_path=Path(workflow.basedir) / "schemas" / "config.schema.yaml")
wf.check_external_files(config)

# Conda environments (used with --software-deployment-method conda): light CPU rules always run
# in the torch env; sampling and training rules in the env of the configured engine.
TORCH_ENV = "../envs/torch.yaml"
ENGINE_ENV = "../envs/verl.yaml" if config["engine"] == "verl" else TORCH_ENV
HEAVY_THREADS = config["compute"]["torch_threads"]
GPUS = 1 if config["engine"] == "verl" or config["device"] == "cuda" else 0


wildcard_constraints:
    split=r"[a-z0-9_]+",
    model=r"[a-z0-9_]+",
    run="|".join(wf.RL_RUNS),


def log_path(rule_name, pattern=""):
    """logs/{rule}/{wildcards}.log (literal wildcard paths keep logs greppable)."""
    return f"logs/{rule_name}/{pattern or 'all'}.log"


def bench_path(rule_name, pattern=""):
    return f"results/benchmarks/{rule_name}/{pattern or 'all'}.tsv"


def all_figures():
    return wf.figure_targets(config)


def model_input(name):
    return wf.model_dir(config, name)


# params functions: each returns canonical JSON so a changed setting reruns exactly its jobs
def generate_params(wildcards):
    return wf.generate_args(config, wildcards.split)


def generate_inputs(wildcards):
    return wf.generate_exclusions(config, wildcards.split)


def rollout_params(wildcards):
    return wf.sampling_settings(config, "rollout", wildcards.model, wildcards.split)


def eval_params(wildcards):
    return wf.sampling_settings(config, "eval", wildcards.model, wildcards.split)


def filter_params(wildcards):
    return wf.filter_settings(config, wildcards.split)


def sft_params(wildcards):
    return wf.sft_settings(config, wildcards.model)


def sft_init(wildcards):
    return wf.sft_sources(config, wildcards.model)["init"]


def sft_data(wildcards):
    return wf.sft_sources(config, wildcards.model)["data"]


def rl_params(wildcards):
    return wf.rl_settings(config, wildcards.run)


def rl_multi_params(wildcards):
    return wf.rl_settings(config, wildcards.run, "multi")


def rl_inputs(lineage):
    """Input function of an RL rule: init model, train and held-out splits of rl_<lineage>_{run}."""
    return lambda wildcards: wf.rl_sources(config, wf.rl_model(wildcards.run, lineage))


def split_data(wildcards):
    return wf.data_path(config, wildcards.split)


def countdown_generate_params(wildcards):
    return wf.countdown_generate_args(config, wildcards.split)


def mix_inputs(wildcards):
    return wf.sft_mix_sources(config, wildcards.model)


def mix_params(wildcards):
    return wf.sft_mix_settings(config, wildcards.model)


def rollout_model(wildcards):
    return model_input(wildcards.model)


def pretrain_params(wildcards):
    return wf.pretrain_settings(config)


def metrics_params(wildcards):
    return wf.metrics_settings(config, wildcards.split)


def figure_params(wildcards):
    return wf.figure_settings(config, wildcards.figure)


def figure_inputs(wildcards):
    return wf.figure_inputs(config, wildcards.figure)


def findings_inputs(wildcards):
    return wf.findings_inputs(config)


def select_params(wildcards):
    return wf.many_samples_settings(config)


def test_data(wildcards):
    return wf.data_path(config, "test")


def browser_params(wildcards):
    return wf.browser_settings(config)
