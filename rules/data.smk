# Stage 0 — problem sets (paper Section 3.1): Stage-1 Level-1 problems over all 25 functions,
# Stage-2 train splits over the train functions, the held-out test/val sets over the eval
# functions, Level-2 chunks for the iterative-RFT baseline, and a leakage check.


rule generate_strings:
    input:
        exclude=generate_inputs,
    output:
        "results/data/strings/{split}.parquet",
    params:
        args=generate_params,
    log:
        "logs/generate_strings/{split}.log",
    benchmark:
        "results/benchmarks/generate_strings/{split}.tsv"
    threads: 1
    resources:
        mem_mb=2000,
        runtime=10,
        gpu=0,
    conda:
        TORCH_ENV
    shell:
        "generate_strings.py {params.args} --out {output:q} > {log:q} 2>&1"


rule check_leakage:
    input:
        test=[wf.data_path(config, s) for s in wf.eval_splits(config)],
        train=[wf.data_path(config, s) for s in wf.training_splits(config)],
    output:
        "results/data/strings/leakage.json",
    log:
        "logs/check_leakage/all.log",
    benchmark:
        "results/benchmarks/check_leakage/all.tsv"
    threads: 1
    resources:
        mem_mb=2000,
        runtime=10,
        gpu=0,
    conda:
        TORCH_ENV
    shell:
        "check_leakage.py --test {input.test:q} --train {input.train:q} --out {output:q} > {log:q} 2>&1"


# Countdown (paper Section 4.3): 2-number training data (the atomic skill, with step-by-step
# reference solutions in the compact style), a held-out 2-number check, 3/4/5-number tests.
rule generate_countdown:
    output:
        "results/data/countdown/{split}.parquet",
    params:
        args=countdown_generate_params,
    log:
        "logs/generate_countdown/{split}.log",
    benchmark:
        "results/benchmarks/generate_countdown/{split}.tsv"
    threads: 1
    resources:
        mem_mb=2000,
        runtime=30,
        gpu=0,
    conda:
        TORCH_ENV
    shell:
        "generate_countdown.py {params.args} --out {output:q} > {log:q} 2>&1"


# The first prompts of each test level (evaluate.many_samples), sampled many times for pass@k at large k.
rule select_prompts:
    input:
        test_data,
    output:
        "results/data/subsets/test_many.parquet",
    params:
        settings=select_params,
    log:
        "logs/select_prompts/test_many.log",
    benchmark:
        "results/benchmarks/select_prompts/test_many.tsv"
    threads: 1
    resources:
        mem_mb=2000,
        runtime=10,
        gpu=0,
    conda:
        TORCH_ENV
    shell:
        "select_prompts.py --data {input:q} --settings {params.settings:q} --out {output:q} > {log:q} 2>&1"
