# Stage 0 — problem sets, one generate job kind per task family (fgx.tasks.registry), generate_<family>.
# The string task's (paper Section 3.1: Stage-1 Level-1 problems over all 25 functions, Stage-2 train splits
# over the train functions, the held-out test/val sets over the eval functions, Level-2 chunks for the
# iterative-RFT baseline), Countdown's (Section 4.3: 2-number training data, a held-out 2-number check,
# 3/4/5-number tests) and the arithmetic chains' (their study: experiments/arithmetic.yaml). Each family's
# generate job is declared in a function, so that its shell command (which Snakemake evaluates again when
# the job runs) sees that family, not the loop's last one (snakemake --lint keeps functions out of files
# whose rules have names of their own: these take theirs from the family).
def generate_rule(family):
    rule:
        name:
            f"generate_{family.name}"
        input:
            exclude=plan.generate_exclusions,
        output:
            paths.fill(paths.DATA, family=family.name),
        params:
            args=plan.generate_args,
        log:
            paths.log(f"generate_{family.name}", "{split}"),
        benchmark:
            paths.benchmark(f"generate_{family.name}", "{split}")
        threads: 1
        resources:
            mem_mb=2000,
            runtime=family.generate_minutes,
            gpu=0,
        conda:
            TORCH_ENV
        shell:
            family.command + " {params.args} --out {output:q} > {log:q} 2>&1"


for family in plan.task_families():
    generate_rule(family)
