# Rejection fine-tuning (paper Section 3.2 Stage 1, and the iterative-RFT baseline of Fig. 3):
# keep correct rollouts, then supervised fine-tuning on them (loss on response tokens only).
# Models: stage1 (from base), stage1_multi (the Multi-Base of paper Section 4.3: from base, on
# Stage-1's string data merged with Countdown 2-number data) and rft_level2_iter{i} (from the
# previous iteration).


rule filter_rollouts:
    input:
        "results/rollouts/{model}/{split}.parquet",
    output:
        "results/rft/{model}/{split}.parquet",
    params:
        settings=filter_params,
    log:
        "logs/filter_rollouts/{model}/{split}.log",
    benchmark:
        "results/benchmarks/filter_rollouts/{model}/{split}.tsv"
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
        init=sft_init,
        data=sft_data,
    output:
        model=directory("results/models/{model}"),
    wildcard_constraints:
        model=r"stage1|stage1_multi|rft_level2_iter[0-9]+",
    params:
        settings=sft_params,
        work_dir="results/work/rft_sft/{model}",
    log:
        "logs/rft_sft/{model}.log",
    benchmark:
        "results/benchmarks/rft_sft/{model}.tsv"
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
        mix_inputs,
    output:
        "results/rft/mix/{model}.parquet",
    params:
        settings=mix_params,
    log:
        "logs/mix_sft_data/{model}.log",
    benchmark:
        "results/benchmarks/mix_sft_data/{model}.tsv"
    threads: 1
    resources:
        mem_mb=2000,
        runtime=10,
        gpu=0,
    conda:
        TORCH_ENV
    shell:
        "mix_sft_data.py --inputs {input:q} --settings {params.settings:q} --out {output:q} > {log:q} 2>&1"
