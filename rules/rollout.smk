# Sampling for training data (paper Section 3.2, Stage 1 and the RFT baseline): n samples per
# prompt at T=1.0, each scored by the task's compute_score. Evaluation sampling is in
# evaluate.smk (same script, different settings and directory).


rule rollout:
    input:
        model=plan.model,
        data=plan.data,
    output:
        rollouts=paths.ROLLOUTS,
    params:
        settings=plan.rollout_settings,
        work_dir=paths.work("rollout", "{model}/{split}"),
    log:
        paths.log("rollout", "{model}/{split}"),
    benchmark:
        paths.benchmark("rollout", "{model}/{split}")
    threads: HEAVY_THREADS
    resources:
        mem_mb=8000,
        runtime=120,
        gpu=GPUS,
        # the torch sampler's GPU shapes: machine settings (config compute:, or a profile's set-resources),
        # passed as resources so that changing them reruns nothing
        gpu_slots=plan.gpu_slots,
        gpu_chunk_prompts=plan.gpu_chunk_prompts,
    conda:
        ENGINE_ENV
    shell:
        "sample.py --model {input.model:q} --data {input.data:q} "
        "--settings {params.settings:q} --threads {threads} --gpu-slots {resources.gpu_slots} --gpu-chunk-prompts {resources.gpu_chunk_prompts} --out {output.rollouts:q} --work-dir {params.work_dir:q} > {log:q} 2>&1"
