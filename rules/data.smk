# Stage 0 — the leakage check of the problem sets (generate.smk writes them), and the many-samples subset.


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
