# Stage 0 — problem sets (paper Section 3.1): Stage-1 Level-1 problems over all 25 functions,
# Stage-2 train splits over the train functions, the held-out test/val sets over the eval
# functions, Level-2 chunks for the iterative-RFT baseline, and a leakage check.


rule generate_strings:
    input:
        exclude=plan.generate_exclusions,
    output:
        paths.STRING_DATA,
    params:
        args=plan.generate_args,
    log:
        paths.log("generate_strings", "{split}"),
    benchmark:
        paths.benchmark("generate_strings", "{split}")
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
        test=plan.leakage_test,
        train=plan.leakage_train,
    output:
        paths.LEAKAGE,
    log:
        paths.log("check_leakage"),
    benchmark:
        paths.benchmark("check_leakage")
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
        paths.COUNTDOWN_DATA,
    params:
        args=plan.countdown_generate_args,
    log:
        paths.log("generate_countdown", "{split}"),
    benchmark:
        paths.benchmark("generate_countdown", "{split}")
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
        plan.test_data,
    output:
        TEST_MANY_DATA,
    params:
        settings=plan.many_samples_settings,
    log:
        paths.log("select_prompts", TEST_MANY),
    benchmark:
        paths.benchmark("select_prompts", TEST_MANY)
    threads: 1
    resources:
        mem_mb=2000,
        runtime=10,
        gpu=0,
    conda:
        TORCH_ENV
    shell:
        "select_prompts.py --data {input:q} --settings {params.settings:q} --out {output:q} > {log:q} 2>&1"
