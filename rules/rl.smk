# Stage 2 (paper Section 3.2 / Fig. 2): RL with outcome reward only (GRPO by default) from the
# Stage-1 checkpoint, one run per train split; held-out accuracy per level is logged as it trains.
# Which model each run starts from: fgx.plan.models.rl_sources.


rule rl:
    input:
        unpack(plan.rl_inputs),
    output:
        model=directory(rl_model_dir()),
        metrics=rl_metrics(),
        validation=rl_validation(),
    params:
        settings=plan.rl_settings,
        work_dir=rl_work(),
    log:
        paths.log("rl", "{run}"),
    benchmark:
        paths.benchmark("rl", "{run}")
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


# Countdown transfer (paper Section 4.3): the same string-task RL (the same data and rl: settings, for
# countdown.rl_steps steps), started from the Multi-Base (stage1_multi).
use rule rl as rl_multi with:
    input:
        unpack(plan.rl_multi_inputs),
    output:
        model=directory(rl_model_dir(lineage="multi")),
        metrics=rl_metrics(lineage="multi"),
        validation=rl_validation(lineage="multi"),
    params:
        settings=plan.rl_multi_settings,
        work_dir=rl_work(lineage="multi"),
    log:
        paths.log("rl_multi", "{run}"),
    benchmark:
        paths.benchmark("rl_multi", "{run}")
