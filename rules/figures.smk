# Figures (paper Figs. 2-6, Fig. 4 being countdown_transfer; training dynamics, model contrasts,
# function transfer): each a PDF, a PNG and a long-format CSV of exactly the plotted numbers, with
# provenance columns. What a figure reads and which settings it receives, its module in
# fgx.figures declares (SPEC, read by fgx.dag.targets); plot settings live in config `figures:`, and
# each figure receives only the keys it reads, so changing one reruns only that figure.


rule figure:
    input:
        plan.figure_inputs,
    output:
        pdf=report(paths.FIGURE_PDF, caption="../report/figure.rst", category="Figures"),
        csv=paths.FIGURE_CSV,
        png=paths.FIGURE_PNG,
    wildcard_constraints:
        figure=FIGURE_WILDCARD,
    params:
        settings=plan.figure_settings,
    log:
        paths.log("figure", "{figure}"),
    benchmark:
        paths.benchmark("figure", "{figure}")
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
        plan.browser_inputs,
    output:
        report(paths.SAMPLE_BROWSER, caption="../report/samples.rst", category="Analysis"),
    params:
        settings=plan.browser_settings,
    log:
        paths.log("sample_browser"),
    benchmark:
        paths.benchmark("sample_browser")
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
        plan.findings_inputs,
    output:
        report(paths.FINDINGS, caption="../report/findings.rst", category="Analysis"),
    log:
        paths.log("findings"),
    benchmark:
        paths.benchmark("findings")
    threads: 1
    resources:
        mem_mb=1000,
        runtime=5,
        gpu=0,
    conda:
        TORCH_ENV
    shell:
        "findings.py --tables {input:q} --out {output:q} > {log:q} 2>&1"


# One task family's findings alone (paths.FAMILY_FINDINGS, findings_<family>.md): its figures and only what
# they need, the target of a family's study (the arithmetic study: experiments/arithmetic.yaml).
rule findings_family:
    input:
        plan.family_findings_inputs,
    output:
        report(paths.FAMILY_FINDINGS, caption="../report/findings.rst", category="Analysis"),
    wildcard_constraints:
        family=FAMILY_FINDINGS_WILDCARD,
    log:
        paths.log("findings_family", "{family}"),
    benchmark:
        paths.benchmark("findings_family", "{family}")
    threads: 1
    resources:
        mem_mb=1000,
        runtime=5,
        gpu=0,
    conda:
        TORCH_ENV
    shell:
        "findings.py --tables {input:q} --family {wildcards.family} --out {output:q} > {log:q} 2>&1"
