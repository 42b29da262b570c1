"""Every artifact path of the DAG, written once.

A pattern's wildcards are the rules' wildcards (``{model}``, ``{split}``, ``{run}``, ``{figure}``; ``{family}``,
a task family's name, each family's generate rule fills):
the rules take their ``input:``/``output:``/``log:``/``benchmark:`` from here, and the planner fills
the same patterns with names. ``parse`` is the one inverse: the names a path's wildcards took, for
the figures and analyses that receive artifacts as paths.
"""

from __future__ import annotations

import re
from functools import lru_cache
from pathlib import Path

# problem sets, one directory per task family (fgx.tasks.registry)
DATA = "results/data/{family}/{split}.parquet"
SUBSET_DATA = "results/data/subsets/{split}.parquet"  # a few test prompts, sampled many times
LEAKAGE = "results/data/strings/leakage.json"
# models: Hugging Face directories (checkpoint outputs, so the rules wrap them in directory())
MODEL = "results/models/{model}"
# sampling and rejection fine-tuning data
ROLLOUTS = "results/rollouts/{model}/{split}.parquet"
RFT = "results/rft/{model}/{split}.parquet"
RFT_MIX = "results/rft/mix/{model}.parquet"
# evaluation
EVAL = "results/eval/{model}/{split}.parquet"
METRICS = "results/metrics/{model}/{split}.parquet"
# RL: one directory per run, named by models.rl_dir
RL_METRICS = "results/rl/{rl_dir}/metrics.parquet"
RL_VALIDATION = "results/rl/{rl_dir}/validation.parquet"
RL_WORK = "results/rl/{rl_dir}/work"
# figures and analyses
FIGURE_PDF = "figures/{figure}.pdf"
FIGURE_PNG = "figures/{figure}.png"
FIGURE_CSV = "figures/{figure}.csv"
SAMPLE_BROWSER = "results/analysis/samples.html"
FINDINGS = "results/analysis/findings.md"
FAMILY_FINDINGS = "results/analysis/findings_{family}.md"  # one task family's findings alone: a target of its own
# per job: a log, a benchmark and a scratch directory outside the job's outputs
LOG = "logs/{rule}/{job}.log"
BENCHMARK = "results/benchmarks/{rule}/{job}.tsv"
WORK = "results/work/{rule}"  # then the job's wildcards, if any


def fill(pattern: str, **names: str) -> str:
    """``pattern`` with some wildcards filled; the others stay wildcards (``{run}``)."""
    return re.sub(r"\{(\w+)\}", lambda m: str(names.get(m[1], m[0])), pattern)


def log(rule: str, job: str = "all") -> str:
    """logs/{rule}/{job}.log, ``job`` a wildcard path such as ``{model}/{split}`` (greppable logs)."""
    return fill(LOG, rule=rule, job=job)


def benchmark(rule: str, job: str = "all") -> str:
    return fill(BENCHMARK, rule=rule, job=job)


def work(rule: str, job: str = "") -> str:
    return "/".join(filter(None, [fill(WORK, rule=rule), job]))


@lru_cache(maxsize=None)
def _inverse(pattern: str) -> re.Pattern:
    # the pattern from the path component of its first wildcard on: a copy of results/ (or a test's
    # scratch directory) parses as the DAG's own paths do
    parts = pattern.split("/")
    first = next(i for i, part in enumerate(parts) if "{" in part)
    regex = "/".join(re.sub(r"\\\{(\w+)\\\}", r"(?P<\1>[^/]+?)", re.escape(part)) for part in parts[first:])
    return re.compile(rf"(?:^|/){regex}$")


def parse(pattern: str, path: str | Path) -> dict[str, str]:
    """The names ``path``'s wildcards took in ``pattern`` (``parse(EVAL, "results/eval/stage1/test.parquet")``
    is ``{"model": "stage1", "split": "test"}``); a ValueError names the pattern a path does not match."""
    m = _inverse(pattern).search(Path(path).as_posix())
    if not m:
        raise ValueError(f"{path} is not a path of the form {pattern}")
    return m.groupdict()
