# Figures (paper Figs. 2, 3, 5): each a PDF plus a long-format CSV of exactly the plotted
# numbers, with provenance columns. Plot settings live in config `figures:`; changing them
# reruns only these rules.


rule figure_passk_level_curve:
    input:
        expand("results/metrics/{model}/test.parquet", model=wf.passk_models(config)),
    output:
        pdf=report(
            "figures/passk_level_curve.pdf",
            caption="../report/passk_level_curve.rst",
            category="Figures",
        ),
        csv="figures/passk_level_curve.csv",
    params:
        settings=figure_params,
    log:
        "logs/figures/passk_level_curve.log",
    benchmark:
        "results/benchmarks/figures/passk_level_curve.tsv"
    threads: 1
    resources:
        mem_mb=2000,
        runtime=10,
        gpu=0,
    conda:
        TORCH_ENV
    shell:
        "plot.py passk_level_curve --inputs {input} --settings {params.settings:q} "
        "--pdf {output.pdf} --csv {output.csv} > {log} 2>&1"


rule figure_rl_level_accuracy:
    input:
        expand("results/rl/{run}/metrics.parquet", run=config["rl"]["runs"]),
    output:
        pdf=report(
            "figures/rl_level_accuracy.pdf",
            caption="../report/rl_level_accuracy.rst",
            category="Figures",
        ),
        csv="figures/rl_level_accuracy.csv",
    params:
        settings=figure_params,
    log:
        "logs/figures/rl_level_accuracy.log",
    benchmark:
        "results/benchmarks/figures/rl_level_accuracy.tsv"
    threads: 1
    resources:
        mem_mb=2000,
        runtime=10,
        gpu=0,
    conda:
        TORCH_ENV
    shell:
        "plot.py rl_level_accuracy --inputs {input} --settings {params.settings:q} "
        "--pdf {output.pdf} --csv {output.csv} > {log} 2>&1"


rule figure_rft_vs_rl:
    input:
        expand("results/metrics/{model}/test.parquet", model=wf.rft_vs_rl_models(config)),
    output:
        pdf=report(
            "figures/rft_vs_rl.pdf",
            caption="../report/rft_vs_rl.rst",
            category="Figures",
        ),
        csv="figures/rft_vs_rl.csv",
    params:
        settings=figure_params,
    log:
        "logs/figures/rft_vs_rl.log",
    benchmark:
        "results/benchmarks/figures/rft_vs_rl.tsv"
    threads: 1
    resources:
        mem_mb=2000,
        runtime=10,
        gpu=0,
    conda:
        TORCH_ENV
    shell:
        "plot.py rft_vs_rl --inputs {input} --settings {params.settings:q} "
        "--pdf {output.pdf} --csv {output.csv} > {log} 2>&1"
