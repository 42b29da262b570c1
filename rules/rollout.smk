# Sampling for training data (paper Section 3.2, Stage 1 and the RFT baseline): n samples per
# prompt at T=1.0, each scored by the task's compute_score. Evaluation sampling is in
# evaluate.smk (same script, different settings and directory).


rule rollout:
    input:
        model=rollout_model,
        data=split_data,
    output:
        rollouts="results/rollouts/{model}/{split}.parquet",
    params:
        settings=rollout_params,
        work_dir="results/work/rollout/{model}/{split}",
    log:
        "logs/rollout/{model}/{split}.log",
    benchmark:
        "results/benchmarks/rollout/{model}/{split}.tsv"
    threads: HEAVY_THREADS
    resources:
        mem_mb=8000,
        runtime=120,
        gpu=GPUS,
    conda:
        ENGINE_ENV
    shell:
        "sample.py --model {input.model:q} --data {input.data:q} "
        "--settings {params.settings:q} --threads {threads} --out {output.rollouts:q} --work-dir {params.work_dir:q} > {log:q} 2>&1"
