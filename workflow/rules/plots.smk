# The plot rules (plot_*): per experiment its layers' energy and latency and their loop nests;
# per accelerator its memory hierarchy; across experiments energy vs latency with a Pareto front
# per workload. (The tables' HTML views come from `save` and `compare`, the interactive report
# page from rules/report_page.smk; `snakemake --report` gathers the figures with the captions of
# workflow/report/.)
#   snakemake --cores N                      (also draws the figures)
#   snakemake --report report.html          (self-contained HTML report)

PLOT_FORMAT = OUTPUTS.plot_format


report: "../report/workflow.rst"


#: every file of this module, for `rule all`
PLOT_TARGETS = (
    expand(
        f"{RESULTS}/{{name}}/plots/{{file}}",
        name=EXPERIMENT_NAMES,
        file=[f"layers.{PLOT_FORMAT}", "loop_nests.txt"],
    )
    + expand(
        f"{RESULTS}/accelerators/{{accelerator_id}}/memory_hierarchy.{PLOT_FORMAT}",
        accelerator_id=list(ACCELERATORS),
    )
    + [
        f"{RESULTS}/comparison.{PLOT_FORMAT}",
        f"{RESULTS}/pareto.csv",
    ]
)


rule plot_experiment:
    input:
        f"{RESULTS}/{{name}}/results.json",
    output:
        layers=report(
            f"{RESULTS}/{{name}}/plots/layers.{PLOT_FORMAT}",
            caption="../report/layers.rst",
            category="Experiments",
            subcategory="{name}",
            labels={"experiment": "{name}", "figure": "energy and latency per layer"},
        ),
        loop_nests=report(
            f"{RESULTS}/{{name}}/plots/loop_nests.txt",
            caption="../report/loop_nests.rst",
            category="Experiments",
            subcategory="{name}",
            labels={"experiment": "{name}", "figure": "loop nests"},
        ),
    log:
        f"{RESULTS}/{{name}}/logs/plot_experiment.log",
    benchmark:
        f"{CACHE}/benchmarks/plot_experiment/{{name}}.tsv"
    # a figure is a leaf of the DAG: it waits for a free core, so the layer jobs run first and
    # the figures fill the cores while the last experiments are summed and compared
    priority: -1
    conda:
        "../envs/zigzag.yaml"
    params:
        plots_dir=lambda wildcards, output: os.path.dirname(output.layers),
    shell:
        step(
            "plot-experiment {input:q} --output {params.plots_dir:q}"
            " --format {format} --log {log:q}",
            format=PLOT_FORMAT,
        )


rule plot_accelerator:
    input:
        f"{PARSED}/accelerators/{{accelerator_id}}.json",
    output:
        report(
            f"{RESULTS}/accelerators/{{accelerator_id}}/memory_hierarchy.{PLOT_FORMAT}",
            caption="../report/memory_hierarchy.rst",
            category="Accelerators",
            labels={"accelerator": "{accelerator_id}", "figure": "memory hierarchy"},
        ),
    log:
        f"{RESULTS}/accelerators/{{accelerator_id}}/plot.log",
    benchmark:
        f"{CACHE}/benchmarks/plot_accelerator/{{accelerator_id}}.tsv"
    # a figure is a leaf of the DAG: it waits for a free core, so the layer jobs run first and
    # the figures fill the cores while the last experiments are summed and compared
    priority: -1
    conda:
        "../envs/zigzag.yaml"
    shell:
        step("plot-accelerator {input:q} --output {output:q} --log {log:q}")


rule plot_comparison:
    input:
        f"{RESULTS}/experiments.csv",
    output:
        plot=report(
            f"{RESULTS}/comparison.{PLOT_FORMAT}",
            caption="../report/comparison.rst",
            category="Comparison",
            labels={"figure": "energy vs latency"},
        ),
        pareto=report(
            f"{RESULTS}/pareto.csv",
            caption="../report/pareto.rst",
            category="Comparison",
            labels={"figure": "Pareto-optimal experiments (CSV)"},
        ),
    log:
        f"{RESULTS}/logs/plot_comparison.log",
    benchmark:
        f"{CACHE}/benchmarks/plot_comparison/all.tsv"
    conda:
        "../envs/zigzag.yaml"
    shell:
        step(
            "plot-comparison {input:q} --output {output.plot:q} --pareto {output.pareto:q}"
            " --log {log:q}"
        )
