# The run's last rule: the interactive HTML report of every results folder (docs/getting-started.md):
# results/report.html for the experiments, results/stream/report.html for the multi-core
# experiments and results/hardware_sweeps/<name>/report.html per hardware sweep, each beside one
# copy of plotly.js. Every table and figure is written first; the page works offline.

REPORT_INPUTS = (
    ([f"{RESULTS}/experiments.csv", *PLOT_TARGETS] if EXPERIMENT_NAMES else [])
    + list(STREAM_TARGETS)
    + list(HW_TARGETS)
)


rule report_page:
    input:
        REPORT_INPUTS,
    output:
        f"{RESULTS}/report.html",
    log:
        f"{RESULTS}/logs/report_page.log",
    benchmark:
        f"{CACHE}/benchmarks/report_page/all.tsv"
    conda:
        "../envs/zigzag.yaml"
    shell:
        step("report {results} --log {log:q}", results=RESULTS)
