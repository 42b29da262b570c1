# Evaluation (paper Section 4 / Fig. 5): every model sampled n times per held-out test prompt
# at T=1.0; per-level accuracy and unbiased pass@k with bootstrap confidence intervals.
# The same rule evaluates on Countdown ({split} = countdown{n}, paper Section 4.3) and on arithmetic chains
# ({split} = arithmetic_test).


rule evaluate:
    input:
        model=plan.model,
        data=plan.data,
    output:
        samples=paths.EVAL,
    params:
        settings=plan.eval_settings,
        work_dir=paths.work("evaluate", "{model}/{split}"),
    log:
        paths.log("evaluate", "{model}/{split}"),
    benchmark:
        paths.benchmark("evaluate", "{model}/{split}")
    threads: HEAVY_THREADS
    resources:
        mem_mb=8000,
        runtime=240,
        gpu=GPUS,
        # the torch sampler's GPU shapes: machine settings (config compute:, or a profile's set-resources),
        # passed as resources so that changing them reruns nothing
        gpu_slots=plan.gpu_slots,
        gpu_chunk_prompts=plan.gpu_chunk_prompts,
    conda:
        ENGINE_ENV
    shell:
        "sample.py --model {input.model:q} --data {input.data:q} "
        "--settings {params.settings:q} --threads {threads} --gpu-slots {resources.gpu_slots} --gpu-chunk-prompts {resources.gpu_chunk_prompts} --out {output.samples:q} --work-dir {params.work_dir:q} > {log:q} 2>&1"


rule metrics:
    input:
        paths.EVAL,
    output:
        paths.METRICS,
    params:
        settings=plan.metrics_settings,
    log:
        paths.log("metrics", "{model}/{split}"),
    benchmark:
        paths.benchmark("metrics", "{model}/{split}")
    threads: 1
    resources:
        mem_mb=2000,
        runtime=10,
        gpu=0,
    conda:
        TORCH_ENV
    shell:
        "metrics.py --samples {input:q} --model {wildcards.model} "
        "--settings {params.settings:q} --out {output:q} > {log:q} 2>&1"
