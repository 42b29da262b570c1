# Stage 0b — the tiny model's "pretraining" (model.source: scratch only): next-token training on
# Level-1 traces, the prior's nested traces and first-step compositions (fgx.plan.splits.pretrain_splits),
# the stand-in for what a pretrained LLM knows.


rule pretrain_base:
    input:
        data=plan.pretrain_data,
    output:
        model=directory(SCRATCH_BASE),
    params:
        settings=plan.pretrain_settings,
        work_dir=paths.work("pretrain_base"),
    log:
        paths.log("pretrain_base"),
    benchmark:
        paths.benchmark("pretrain_base")
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
