# Multi-core experiments, config key `multicore_experiments` (alias `stream_experiments`):
#   multicore_split (hardware + workload + mapping -> CN graph) -> multicore_plan_costs (checkpoint: the
#   distinct (CN shape, core) cost-table keys, the jobs of those not cached yet, in chunks) ->
#   multicore_costs (one job per chunk, entries content-cached in the shared cache, so identical
#   cores and experiments share them) -> multicore_schedule -> pictures;
#   multicore_results gathers every run into the multi-core results table and its figures.
# Editing one core file changes only the keys of that core: only its cost jobs run again, then
# the schedules and pictures of the experiments using it.


include: "multicore_common.smk"


rule multicore_split:
    input:
        experiment=multicore_experiment_spec,
        hardware=multicore_hardware_files,
        workload=lambda wildcards: MULTICORE[wildcards.sname]["workload"],
        mapping=lambda wildcards: MULTICORE[wildcards.sname]["mapping"] or [],  # none: automatic
    output:
        f"{MULTICORE_RESULTS}/{{sname}}/cn_graph.npz",
    log:
        f"{MULTICORE_RESULTS}/{{sname}}/logs/split.log",
    benchmark:
        f"{CACHE}/benchmarks/multicore_split/{{sname}}.tsv"
    conda:
        "../envs/zigzag.yaml"
    shell:
        step(
            "multicore-split --experiment {input.experiment:q} --output {output:q} --log {log:q}"
        )


checkpoint multicore_plan_costs:
    input:
        experiment=multicore_experiment_spec,
        graph=f"{MULTICORE_RESULTS}/{{sname}}/cn_graph.npz",
        hardware=multicore_hardware_files,
    output:
        f"{MULTICORE_RESULTS}/{{sname}}/cost_plan.json",
    log:
        f"{MULTICORE_RESULTS}/{{sname}}/logs/plan_costs.log",
    benchmark:
        f"{CACHE}/benchmarks/multicore_plan_costs/{{sname}}.tsv"
    conda:
        "../envs/zigzag.yaml"
    shell:
        step(
            "multicore-plan --experiment {input.experiment:q} --graph {input.graph:q}"
            " --cache {cache} --output {output:q} --log {log:q}",
            cache=CACHE,
        )


rule multicore_costs:
    input:
        f"{MULTICORE_RESULTS}/{{sname}}/cost_plan.json",
    output:
        f"{CACHE}/multicore-cost/chunks/{{sname}}/{{chunk}}.json",
    log:
        f"{MULTICORE_RESULTS}/{{sname}}/logs/costs/{{chunk}}.log",
    benchmark:
        f"{CACHE}/benchmarks/multicore_costs/{{sname}}/{{chunk}}.tsv"
    wildcard_constraints:
        chunk=r"\d+of\d+",
    conda:
        "../envs/zigzag.yaml"
    shell:
        step(
            "multicore-costs {input:q} --chunk {wildcards.chunk} --cache {cache}"
            " --output {output:q} --log {log:q}",
            cache=CACHE,
        )


rule multicore_schedule:
    input:
        experiment=multicore_experiment_spec,
        graph=f"{MULTICORE_RESULTS}/{{sname}}/cn_graph.npz",
        plan=f"{MULTICORE_RESULTS}/{{sname}}/cost_plan.json",
        entries=multicore_cost_entries,
    output:
        summary=f"{MULTICORE_RESULTS}/{{sname}}/summary.json",
        schedule=f"{MULTICORE_RESULTS}/{{sname}}/schedule.csv",
        trace=f"{MULTICORE_RESULTS}/{{sname}}/schedule_trace.json",
    log:
        f"{MULTICORE_RESULTS}/{{sname}}/logs/schedule.log",
    benchmark:
        f"{CACHE}/benchmarks/multicore_schedule/{{sname}}.tsv"
    wildcard_constraints:
        sname="|".join(MULTICORE_FIXED) or "no_fixed_experiment",
    conda:
        "../envs/zigzag.yaml"
    params:
        folder=lambda wildcards, output: os.path.dirname(output.summary),
    shell:
        step(
            "multicore-run --experiment {input.experiment:q} --graph {input.graph:q}"
            " --cache {cache} --output {params.folder:q} --log {log:q}",
            cache=CACHE,
        )


rule multicore_plots:
    input:
        summary=f"{MULTICORE_RESULTS}/{{sname}}/summary.json",
        trace=f"{MULTICORE_RESULTS}/{{sname}}/schedule_trace.json",
        plotly_js=f"{MULTICORE_RESULTS}/plotly.min.js",
    output:
        # loads the multicore folder's shared plotly.min.js, so it stays out of `snakemake --report`
        # (whose pages embed each file alone); the folder's report.html links to it
        html=f"{MULTICORE_RESULTS}/{{sname}}/plots/gantt.html",
        gantt=_multicore_picture(f"gantt.{PLOT_FORMAT}", "gantt"),
        memory=_multicore_picture(f"memory.{PLOT_FORMAT}", "memory"),
        perfetto=_multicore_picture("perfetto.json", "perfetto"),
        energy=_multicore_picture(f"energy.{PLOT_FORMAT}", "energy"),
    log:
        f"{MULTICORE_RESULTS}/{{sname}}/logs/plots.log",
    benchmark:
        f"{CACHE}/benchmarks/multicore_plots/{{sname}}.tsv"
    conda:
        "../envs/zigzag.yaml"
    params:
        folder=lambda wildcards, input: os.path.dirname(input.summary),
    shell:
        step(
            "multicore-plot {params.folder:q} --output {params.folder:q}/plots"
            " --format {format} --name {wildcards.sname:q} --no-pareto"
            " --plotly-js {input.plotly_js:q} --log {log:q}",
            format=PLOT_FORMAT,
        )


rule multicore_search:
    input:
        experiment=multicore_experiment_spec,
        graph=f"{MULTICORE_RESULTS}/{{sname}}/cn_graph.npz",
        plan=f"{MULTICORE_RESULTS}/{{sname}}/cost_plan.json",
        entries=multicore_cost_entries,
    output:
        summary=f"{MULTICORE_RESULTS}/{{sname}}/summary.json",
        schedule=f"{MULTICORE_RESULTS}/{{sname}}/schedule.csv",
        trace=f"{MULTICORE_RESULTS}/{{sname}}/schedule_trace.json",
        front=f"{MULTICORE_RESULTS}/{{sname}}/front.csv",
        allocation=f"{MULTICORE_RESULTS}/{{sname}}/allocation.yaml",
    log:
        f"{MULTICORE_RESULTS}/{{sname}}/logs/search.log",
    benchmark:
        f"{CACHE}/benchmarks/multicore_search/{{sname}}.tsv"
    wildcard_constraints:
        sname="|".join(MULTICORE_SEARCHED) or "no_searched_experiment",
    conda:
        "../envs/zigzag.yaml"
    threads: os.cpu_count() or 1  # scaled down to --cores
    params:
        folder=lambda wildcards, output: os.path.dirname(output.summary),
    shell:
        step(
            "multicore-run --experiment {input.experiment:q} --graph {input.graph:q}"
            " --cache {cache} --workers {threads} --output {params.folder:q} --log {log:q}",
            cache=CACHE,
        )


rule multicore_co:
    input:
        experiment=multicore_experiment_spec,
        graph=f"{MULTICORE_RESULTS}/{{sname}}/cn_graph.npz",
        plan=f"{MULTICORE_RESULTS}/{{sname}}/cost_plan.json",
        entries=multicore_cost_entries,
    output:
        summary=f"{MULTICORE_RESULTS}/{{sname}}/summary.json",
        schedule=f"{MULTICORE_RESULTS}/{{sname}}/schedule.csv",
        trace=f"{MULTICORE_RESULTS}/{{sname}}/schedule_trace.json",
        slots=f"{MULTICORE_RESULTS}/{{sname}}/co_slots.csv",
        allocation=f"{MULTICORE_RESULTS}/{{sname}}/allocation.yaml",
    log:
        f"{MULTICORE_RESULTS}/{{sname}}/logs/co.log",
    benchmark:
        f"{CACHE}/benchmarks/multicore_co/{{sname}}.tsv"
    wildcard_constraints:
        sname="|".join(MULTICORE_CO) or "no_co_experiment",
    conda:
        "../envs/zigzag.yaml"
    params:
        folder=lambda wildcards, output: os.path.dirname(output.summary),
    shell:
        step(
            "multicore-run --experiment {input.experiment:q} --graph {input.graph:q}"
            " --cache {cache} --output {params.folder:q} --log {log:q}",
            cache=CACHE,
        )


rule multicore_pareto:
    input:
        front=f"{MULTICORE_RESULTS}/{{sname}}/front.csv",
        summary=f"{MULTICORE_RESULTS}/{{sname}}/summary.json",
    output:
        _multicore_picture(f"pareto.{PLOT_FORMAT}", "pareto"),
    log:
        f"{MULTICORE_RESULTS}/{{sname}}/logs/pareto.log",
    benchmark:
        f"{CACHE}/benchmarks/multicore_pareto/{{sname}}.tsv"
    conda:
        "../envs/zigzag.yaml"
    params:
        folder=lambda wildcards, input: os.path.dirname(input.front),
    shell:
        step(
            "multicore-pareto {params.folder:q} --output {output:q} --name {wildcards.sname:q}"
            " --log {log:q}"
        )


rule multicore_results:
    input:
        specs=[MULTICORE_SPECS[name] for name in MULTICORE],
        summaries=expand(
            f"{MULTICORE_RESULTS}/{{sname}}/summary.json", sname=list(MULTICORE)
        ),
        traces=expand(
            f"{MULTICORE_RESULTS}/{{sname}}/schedule_trace.json", sname=list(MULTICORE)
        ),
    output:
        table=f"{MULTICORE_RESULTS}/multicore.csv",
        html=report(
            f"{MULTICORE_RESULTS}/multicore.html",
            caption="../report/stream_results_table.rst",
            category="Multi-core (Stream)",
            labels={"figure": "results table of all multi-core experiments"},
        ),
        pareto=report(
            f"{MULTICORE_RESULTS}/multicore_pareto.{PLOT_FORMAT}",
            caption="../report/stream_results_pareto.rst",
            category="Multi-core (Stream)",
            labels={"figure": "energy vs latency per workload, Pareto fronts"},
        ),
        metrics=report(
            f"{MULTICORE_RESULTS}/multicore_metrics.{PLOT_FORMAT}",
            caption="../report/stream_results_metrics.rst",
            category="Multi-core (Stream)",
            labels={"figure": "every metric of every multi-core experiment"},
        ),
    log:
        f"{MULTICORE_RESULTS}/logs/results.log",
    benchmark:
        f"{CACHE}/benchmarks/multicore_results/all.tsv"
    conda:
        "../envs/zigzag.yaml"
    params:
        runs=lambda wildcards, input: [
            f"{spec}={os.path.dirname(summary)}"
            for spec, summary in zip(input.specs, input.summaries)
        ],
    shell:
        step(
            "multicore-results {params.runs:q} --table {output.table:q} --html {output.html:q}"
            " --pareto {output.pareto:q} --metrics {output.metrics:q} --log {log:q}"
        )
