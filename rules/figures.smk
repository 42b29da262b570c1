# Figures (paper Figs. 2-6, Fig. 4 being countdown_transfer; training dynamics, model contrasts,
# function transfer): each a PDF, a PNG and a long-format CSV of exactly the plotted numbers, with
# provenance columns. What a figure reads is decided by
# fgx.workflow.figure_inputs; plot settings live in config `figures:`, and each figure receives
# only the keys it reads, so changing one reruns only that figure.


rule figure:
    input:
        figure_inputs,
    output:
        pdf=report("figures/{figure}.pdf", caption="../report/figure.rst", category="Figures"),
        csv="figures/{figure}.csv",
        png="figures/{figure}.png",
    wildcard_constraints:
        figure="|".join(wf.FIGURES),
    params:
        settings=figure_params,
    log:
        "logs/figure/{figure}.log",
    benchmark:
        "results/benchmarks/figure/{figure}.tsv"
    threads: 1
    resources:
        mem_mb=2000,
        runtime=10,
        gpu=0,
    conda:
        TORCH_ENV
    shell:
        "plot.py {wildcards.figure} --inputs {input:q} --settings {params.settings:q} "
        "--pdf {output.pdf:q} --csv {output.csv:q} --png {output.png:q} > {log:q} 2>&1"


rule sample_browser:
    input:
        expand("results/eval/{model}/test.parquet", model=wf.failure_mode_models(config)),
    output:
        report("results/analysis/samples.html", caption="../report/samples.rst", category="Analysis"),
    params:
        settings=browser_params,
    log:
        "logs/sample_browser/all.log",
    benchmark:
        "results/benchmarks/sample_browser/all.tsv"
    threads: 1
    resources:
        mem_mb=2000,
        runtime=10,
        gpu=0,
    conda:
        TORCH_ENV
    shell:
        "sample_browser.py --inputs {input:q} --settings {params.settings:q} --out {output:q} > {log:q} 2>&1"


rule findings:
    input:
        findings_inputs,
    output:
        report("results/analysis/findings.md", caption="../report/findings.rst", category="Analysis"),
    log:
        "logs/findings/all.log",
    benchmark:
        "results/benchmarks/findings/all.tsv"
    threads: 1
    resources:
        mem_mb=1000,
        runtime=5,
        gpu=0,
    conda:
        TORCH_ENV
    shell:
        "findings.py --tables {input:q} --out {output:q} > {log:q} 2>&1"
