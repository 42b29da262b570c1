# Stage 0b — the tiny model's "pretraining" (model.source: scratch only): next-token training on
# Level-1 traces, the prior's nested traces and first-step compositions (fgx.workflow.pretrain_splits),
# the stand-in for what a pretrained LLM knows.


rule pretrain_base:
    input:
        data=expand("results/data/strings/{split}.parquet", split=wf.pretrain_splits(config)),
    output:
        model=directory("results/models/base"),
    params:
        settings=pretrain_params,
        work_dir="results/work/pretrain_base",
    log:
        "logs/pretrain_base/all.log",
    benchmark:
        "results/benchmarks/pretrain_base/all.tsv"
    threads: HEAVY_THREADS
    resources:
        mem_mb=4000,
        runtime=90,  # minutes; far above pretraining's time on a 2-core CPU (docs/research-log.md#default-7200)
        gpu=GPUS,
    conda:
        ENGINE_ENV
    shell:
        "pretrain.py --data {input.data:q} --settings {params.settings:q} --threads {threads} "
        "--out {output.model:q} --work-dir {params.work_dir:q} > {log:q} 2>&1"
