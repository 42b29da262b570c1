# Stage 2 (paper Section 3.2 / Fig. 2): RL with outcome reward only (GRPO by default) from the
# Stage-1 checkpoint, one run per train split; held-out accuracy per level is logged as it trains.


rule rl:
    input:
        init="results/models/stage1",
        train="results/data/strings/{run}.parquet",
        val="results/data/strings/val.parquet",
    output:
        model=directory("results/models/rl_{run}"),
        metrics="results/rl/{run}/metrics.parquet",
    params:
        settings=rl_params,
    log:
        "logs/rl/{run}.log",
    benchmark:
        "results/benchmarks/rl/{run}.tsv"
    threads: HEAVY_THREADS
    resources:
        mem_mb=16000,
        runtime=1440,
        gpu=GPUS,
    conda:
        ENGINE_ENV
    shell:
        "rl.py --model {input.init} --train {input.train} --val {input.val} "
        "--settings {params.settings:q} --out {output.model} --metrics {output.metrics} "
        "--work-dir results/rl/{wildcards.run}/work > {log} 2>&1"
