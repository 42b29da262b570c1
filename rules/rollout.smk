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
    conda:
        ENGINE_ENV
    shell:
        "sample.py --model {input.model:q} --data {input.data:q} "
        "--settings {params.settings:q} --threads {threads} --machine {plan.machine:q} --out {output.rollouts:q} --work-dir {params.work_dir:q} > {log:q} 2>&1"
