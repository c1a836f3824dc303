# The run's last rules: the interactive HTML report of every results folder (docs/getting-started.md):
# results/report.html for the experiments, results/multicore/report.html for the multi-core
# experiments and results/hardware_sweeps/<name>/report.html per hardware sweep, each beside one
# copy of plotly.js. Every table and figure is written first; the page works offline. Then
# check_experiments, which fails the run naming the experiments that did not run.

REPORT_INPUTS = (
    ([f"{RESULTS}/experiments.csv", *PLOT_TARGETS] if EXPERIMENT_NAMES else [])
    + list(MULTICORE_TARGETS)
    + list(HW_TARGETS)
)


#: each folder's plotly.js: packed (plotly.gz.js) beside a report page, as is (plotly.min.js) in
#: the multi-core folder, whose Gantt pages load it too
PLOTLY_SCRIPTS = (
    ([f"{RESULTS}/plotly.gz.js"] if EXPERIMENT_NAMES else [])
    + ([f"{MULTICORE_RESULTS}/plotly.min.js"] if MULTICORE else [])
    + [f"{HW_RESULTS}/{name}/plotly.gz.js" for name in HW_SWEEPS]
)
REPORT_PAGES = (
    [f"{RESULTS}/report.html"]
    + ([f"{MULTICORE_RESULTS}/report.html"] if MULTICORE else [])
    + [f"{HW_RESULTS}/{name}/report.html" for name in HW_SWEEPS]
)


rule plotly_script:
    output:
        "{folder}/plotly.{packing}.js",
    log:
        f"{CACHE}/logs/plotly_script/{{folder}}/plotly.{{packing}}.log",
    wildcard_constraints:
        folder="|".join(re.escape(os.path.dirname(path)) for path in PLOTLY_SCRIPTS)
        or "no_folder",
        packing="min|gz",
    localrule: True
    run:
        # imported here: zigzag.plots imports matplotlib, a second at each Snakemake start
        from zigzag.plots.plotlyjs import ensure_plotly, ensure_plotly_packed

        if wildcards.packing == "min":
            ensure_plotly(output[0])
        else:
            ensure_plotly_packed(wildcards.folder)
        write_text_atomic(log[0], f"wrote {output[0]}\n")


rule report_page:
    input:
        REPORT_INPUTS,
        PLOTLY_SCRIPTS,
    output:
        REPORT_PAGES,
    log:
        f"{RESULTS}/logs/report_page.log",
    benchmark:
        f"{CACHE}/benchmarks/report_page/all.tsv"
    conda:
        "../envs/zigzag.yaml"
    shell:
        step("report {results} --log {log:q}", results=RESULTS)


rule check_experiments:
    """The run's last job: fails, naming them, when experiments did not run (their rows in
    experiments.csv have status failed and the reason); every table, figure and the HTML report
    (report_page above) are written first.
    """
    input:
        experiments=f"{RESULTS}/experiments.csv",
        figures=PLOT_TARGETS,
        report=f"{RESULTS}/report.html",
    output:
        f"{CACHE}/status/experiments.ok",
    log:
        f"{RESULTS}/logs/check_experiments.log",
    benchmark:
        f"{CACHE}/benchmarks/check_experiments/all.tsv"
    conda:
        "../envs/zigzag.yaml"
    shell:
        step(
            "check-experiments {input.experiments:q} --output {output:q} --log {log:q}"
        )
