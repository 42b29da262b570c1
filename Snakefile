# fgx: "From f(x) and g(x) to f(g(x))" (arXiv 2509.25123) as a Snakemake DAG.
#   snakemake --cores all figures/passk_level_curve.pdf      # one figure, only stale stages
#   snakemake --cores all                                    # every figure
#   snakemake --profile profiles/slurm --configfile config.paper.yaml
# Stage table, layout and artifacts: README.md. Logic lives in src/fgx; rules only wire files.

from snakemake.utils import min_version

min_version("9.0")


configfile: "config.yaml"


include: "rules/common.smk"
include: "rules/generate.smk"
include: "rules/data.smk"
include: "rules/base.smk"
include: "rules/rollout.smk"
include: "rules/rft.smk"
include: "rules/rl.smk"
include: "rules/evaluate.smk"
include: "rules/figures.smk"


rule all:
    input:
        plan.all_targets,
    default_target: True
