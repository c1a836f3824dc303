# Figures and the HTML report: per-experiment breakdowns, loop nests and memory hierarchy, and
# the energy-latency comparison of all experiments with its Pareto front.
#   snakemake --cores N                      (also draws the figures)
#   snakemake --report report.html          (self-contained HTML report of the figures)

PLOT_FORMAT = OUTPUTS.get("plot_format", "png")


report: "../report/workflow.rst"


#: every file of this module, for `rule all`
PLOT_TARGETS = expand(
    f"{RESULTS}/{{name}}/plots/{{file}}",
    name=EXPERIMENT_NAMES,
    file=[
        f"energy.{PLOT_FORMAT}",
        f"latency.{PLOT_FORMAT}",
        "loop_nests.txt",
        f"memory_hierarchy.{PLOT_FORMAT}",
    ],
) + [f"{RESULTS}/comparison.{PLOT_FORMAT}", f"{RESULTS}/pareto.csv"]


rule plot_experiment:
    input:
        plan=f"{RESULTS}/{{name}}/plan.json",
        summary=f"{RESULTS}/{{name}}/summary.json",
        layers=f"{RESULTS}/{{name}}/layers",
    output:
        energy=report(
            f"{RESULTS}/{{name}}/plots/energy.{PLOT_FORMAT}",
            caption="../report/energy.rst",
            category="Experiments",
            subcategory="{name}",
            labels={"experiment": "{name}", "figure": "energy per layer"},
        ),
        latency=report(
            f"{RESULTS}/{{name}}/plots/latency.{PLOT_FORMAT}",
            caption="../report/latency.rst",
            category="Experiments",
            subcategory="{name}",
            labels={"experiment": "{name}", "figure": "latency per layer"},
        ),
        loop_nests=report(
            f"{RESULTS}/{{name}}/plots/loop_nests.txt",
            caption="../report/loop_nests.rst",
            category="Experiments",
            subcategory="{name}",
            labels={"experiment": "{name}", "figure": "loop nests"},
        ),
        memory_hierarchy=report(
            f"{RESULTS}/{{name}}/plots/memory_hierarchy.{PLOT_FORMAT}",
            caption="../report/memory_hierarchy.rst",
            category="Experiments",
            subcategory="{name}",
            labels={"experiment": "{name}", "figure": "memory hierarchy"},
        ),
    log:
        f"{RESULTS}/{{name}}/logs/plot_experiment.log",
    conda:
        "../envs/zigzag.yaml"
    params:
        experiment_dir=lambda wildcards: f"{RESULTS}/{wildcards.name}",
        plots_dir=lambda wildcards: f"{RESULTS}/{wildcards.name}/plots",
        cache=CACHE,
        format=PLOT_FORMAT,
    shell:
        "python -m zigzag step plot-experiment {params.experiment_dir:q} --output {params.plots_dir:q}"
        " --format {params.format} --cache {params.cache:q} --log {log:q}"


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
            labels={"figure": "Pareto-optimal experiments"},
        ),
    log:
        f"{RESULTS}/logs/plot_comparison.log",
    conda:
        "../envs/zigzag.yaml"
    shell:
        "python -m zigzag step plot-comparison {input:q} --output {output.plot:q} --pareto {output.pareto:q}"
        " --log {log:q}"
