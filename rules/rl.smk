# Stage 2 (paper Section 3.2 / Fig. 2): RL with outcome reward only (GRPO by default) from the
# Stage-1 checkpoint, one run per train split; held-out accuracy per level is logged as it trains.
# Which model each run starts from: fgx.workflow.rl_sources.


rule rl:
    input:
        unpack(rl_inputs("string")),
    output:
        model=directory("results/models/rl_{run}"),
        metrics="results/rl/{run}/metrics.parquet",
    params:
        settings=rl_params,
        work_dir="results/rl/{run}/work",
    log:
        "logs/rl/{run}.log",
    benchmark:
        "results/benchmarks/rl/{run}.tsv"
    threads: HEAVY_THREADS
    # RL runs are the longest jobs after pretraining: started before the evaluations that could fill the
    # gaps, so that the last RL run does not run alone with a core idle
    priority: 10
    resources:
        mem_mb=16000,
        runtime=1440,
        gpu=GPUS,
    conda:
        ENGINE_ENV
    shell:
        "rl.py --model {input.init:q} --train {input.train:q} --val {input.val:q} "
        "--settings {params.settings:q} --threads {threads} --out {output.model:q} --metrics {output.metrics:q} "
        "--work-dir {params.work_dir:q} > {log:q} 2>&1"


# Countdown transfer (paper Section 4.3): the same string-task RL (the same data and rl: settings, for
# countdown.rl_steps steps), started from the Multi-Base (stage1_multi).
use rule rl as rl_multi with:
    input:
        unpack(rl_inputs("multi")),
    output:
        model=directory("results/models/rl_multi_{run}"),
        metrics="results/rl/multi_{run}/metrics.parquet",
    params:
        settings=rl_multi_params,
        work_dir="results/rl/multi_{run}/work",
    log:
        "logs/rl_multi/{run}.log",
    benchmark:
        "results/benchmarks/rl_multi/{run}.tsv"
