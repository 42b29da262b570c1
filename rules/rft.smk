# Rejection fine-tuning (paper Section 3.2 Stage 1, and the iterative-RFT baseline of Fig. 3):
# keep correct rollouts, then supervised fine-tuning on them (loss on response tokens only).
# Models: stage1 (from base), stage1_multi (the Multi-Base of paper Section 4.3: from base, on
# Stage-1's string data merged with Countdown 2-number data), rft_level2_iter{i} (from the
# previous iteration), and the models a task family adds (the arithmetic study's arithmetic_stage1 and
# rft_arithmetic_iter{i}).


rule filter_rollouts:
    input:
        paths.ROLLOUTS,
    output:
        paths.RFT,
    params:
        settings=plan.filter_settings,
    log:
        paths.log("filter_rollouts", "{model}/{split}"),
    benchmark:
        paths.benchmark("filter_rollouts", "{model}/{split}")
    threads: 1
    resources:
        mem_mb=2000,
        runtime=10,
        gpu=0,
    conda:
        TORCH_ENV
    shell:
        "filter_rollouts.py --rollouts {input:q} --settings {params.settings:q} "
        "--out {output:q} > {log:q} 2>&1"


rule rft_sft:
    input:
        init=plan.sft_init,
        data=plan.sft_data,
    output:
        model=directory(paths.MODEL),
    wildcard_constraints:
        model=SFT_MODEL_WILDCARD,
    params:
        settings=plan.sft_settings,
        work_dir=paths.work("rft_sft", "{model}"),
    log:
        paths.log("rft_sft", "{model}"),
    benchmark:
        paths.benchmark("rft_sft", "{model}")
    threads: HEAVY_THREADS
    resources:
        mem_mb=8000,
        runtime=240,
        gpu=GPUS,
    conda:
        ENGINE_ENV
    shell:
        "sft.py --model {input.init:q} --data {input.data:q} "
        "--settings {params.settings:q} --threads {threads} --out {output.model:q} --work-dir {params.work_dir:q} > {log:q} 2>&1"


rule mix_sft_data:
    input:
        plan.mix_sources,
    output:
        paths.RFT_MIX,
    params:
        settings=plan.mix_settings,
    log:
        paths.log("mix_sft_data", "{model}"),
    benchmark:
        paths.benchmark("mix_sft_data", "{model}")
    threads: 1
    resources:
        mem_mb=2000,
        runtime=10,
        gpu=0,
    conda:
        TORCH_ENV
    shell:
        "mix_sft_data.py --inputs {input:q} --settings {params.settings:q} --out {output:q} > {log:q} 2>&1"
