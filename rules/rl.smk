# Stage 2 (paper Section 3.2 / Fig. 2): RL with outcome reward only (GRPO by default), one run per train
# split; held-out accuracy per level is logged as it trains. One RL job kind per lineage (fgx.plan.models),
# named as the lineage says: rl, from the Stage-1 checkpoint; and each task family's own: rl_multi, the same
# RL (the same data and rl: settings, for countdown.rl_steps steps) from the Countdown transfer's Multi-Base
# (stage1_multi, paper Section 4.3); rl_arithmetic and rl_arithmetic_multi, the arithmetic study's. Which
# model each run starts from: fgx.plan.models.rl_sources. Each lineage's job kind is
# declared in a function, so that what Snakemake evaluates again when a job runs sees that lineage, not the
# loop's last one.
def rl_rule(lineage):
    rule:
        name:
            lineage.rule
        input:
            unpack(plan.rl_inputs(lineage.name)),
        output:
            model=directory(rl_model_dir(lineage=lineage.name)),
            metrics=rl_metrics(lineage=lineage.name),
            validation=rl_validation(lineage=lineage.name),
        params:
            settings=plan.rl_settings(lineage.name),
            work_dir=rl_work(lineage=lineage.name),
        log:
            paths.log(lineage.rule, "{run}"),
        benchmark:
            paths.benchmark(lineage.rule, "{run}")
        threads: HEAVY_THREADS
        # RL runs are the longest jobs after pretraining: started before the evaluations that could fill the
        # gaps, so that the last RL run does not run alone with a core idle
        priority: 10
        resources:
            mem_mb=16000,
            runtime=1440,
            gpu=GPUS,
            verl_rl=RL_PER_HOST,
            # the torch sampler's GPU shapes: machine settings (config compute:, or a profile's set-resources),
            # passed as resources so that changing them reruns nothing
            gpu_slots=plan.gpu_slots,
            gpu_chunk_prompts=plan.gpu_chunk_prompts,
        conda:
            ENGINE_ENV
        shell:
            "rl.py --model {input.init:q} --train {input.train:q} --val {input.val:q} "
            "--settings {params.settings:q} --threads {threads} --gpu-slots {resources.gpu_slots} --gpu-chunk-prompts {resources.gpu_chunk_prompts} --out {output.model:q} --metrics {output.metrics:q} "
            "--validation {output.validation:q} --work-dir {params.work_dir:q} > {log:q} 2>&1"


for lineage in plan.rl_lineages():
    rl_rule(lineage)
