# Multi-core experiments (Stream), config key `stream_experiments`:
#   stream_split (hardware + workload + mapping -> CN graph) -> stream_plan_costs (checkpoint: the
#   distinct (CN shape, core) cost-table keys, the jobs of those not cached yet, in chunks) ->
#   stream_costs (one job per chunk, entries content-cached in the shared cache, so identical
#   cores and experiments share them) -> stream_schedule -> pictures;
#   stream_results gathers every run into the multi-core results table and its figures.
# Editing one core file changes only the keys of that core: only its cost jobs run again, then
# the schedules and pictures of the experiments using it.


include: "stream_common.smk"


rule stream_split:
    input:
        experiment=stream_experiment_spec,
        hardware=stream_hardware_files,
        workload=lambda wildcards: STREAM[wildcards.sname]["workload"],
        mapping=lambda wildcards: STREAM[wildcards.sname]["mapping"],
    output:
        f"{STREAM_RESULTS}/{{sname}}/cn_graph.npz",
    log:
        f"{STREAM_RESULTS}/{{sname}}/logs/split.log",
    benchmark:
        f"{CACHE}/benchmarks/stream_split/{{sname}}.tsv"
    conda:
        "../envs/zigzag.yaml"
    shell:
        step(
            "stream-split --experiment {input.experiment:q} --output {output:q} --log {log:q}"
        )


checkpoint stream_plan_costs:
    input:
        experiment=stream_experiment_spec,
        graph=f"{STREAM_RESULTS}/{{sname}}/cn_graph.npz",
        hardware=stream_hardware_files,
    output:
        f"{STREAM_RESULTS}/{{sname}}/cost_plan.json",
    log:
        f"{STREAM_RESULTS}/{{sname}}/logs/plan_costs.log",
    benchmark:
        f"{CACHE}/benchmarks/stream_plan_costs/{{sname}}.tsv"
    conda:
        "../envs/zigzag.yaml"
    shell:
        step(
            "stream-plan --experiment {input.experiment:q} --graph {input.graph:q}"
            " --cache {cache} --output {output:q} --log {log:q}",
            cache=CACHE,
        )


rule stream_costs:
    input:
        f"{STREAM_RESULTS}/{{sname}}/cost_plan.json",
    output:
        f"{CACHE}/stream-cost/chunks/{{sname}}/{{chunk}}.json",
    log:
        f"{STREAM_RESULTS}/{{sname}}/logs/costs/{{chunk}}.log",
    benchmark:
        f"{CACHE}/benchmarks/stream_costs/{{sname}}/{{chunk}}.tsv"
    wildcard_constraints:
        chunk=r"\d+of\d+",
    conda:
        "../envs/zigzag.yaml"
    shell:
        step(
            "stream-costs {input:q} --chunk {wildcards.chunk} --cache {cache}"
            " --output {output:q} --log {log:q}",
            cache=CACHE,
        )


rule stream_schedule:
    input:
        experiment=stream_experiment_spec,
        graph=f"{STREAM_RESULTS}/{{sname}}/cn_graph.npz",
        plan=f"{STREAM_RESULTS}/{{sname}}/cost_plan.json",
        entries=stream_cost_entries,
    output:
        summary=f"{STREAM_RESULTS}/{{sname}}/summary.json",
        schedule=f"{STREAM_RESULTS}/{{sname}}/schedule.csv",
        trace=f"{STREAM_RESULTS}/{{sname}}/schedule_trace.json",
    log:
        f"{STREAM_RESULTS}/{{sname}}/logs/schedule.log",
    benchmark:
        f"{CACHE}/benchmarks/stream_schedule/{{sname}}.tsv"
    wildcard_constraints:
        sname="|".join(STREAM_FIXED) or "no_fixed_experiment",
    conda:
        "../envs/zigzag.yaml"
    params:
        folder=lambda wildcards, output: os.path.dirname(output.summary),
    shell:
        step(
            "stream-schedule --experiment {input.experiment:q} --graph {input.graph:q}"
            " --cache {cache} --output {params.folder:q} --log {log:q}",
            cache=CACHE,
        )


rule stream_plots:
    input:
        summary=f"{STREAM_RESULTS}/{{sname}}/summary.json",
        trace=f"{STREAM_RESULTS}/{{sname}}/schedule_trace.json",
        plotly_js=f"{STREAM_RESULTS}/plotly.min.js",
    output:
        # loads the stream folder's shared plotly.min.js, so it stays out of `snakemake --report`
        # (whose pages embed each file alone); the folder's report.html links to it
        html=f"{STREAM_RESULTS}/{{sname}}/plots/gantt.html",
        gantt=_stream_picture(f"gantt.{PLOT_FORMAT}", "gantt"),
        memory=_stream_picture(f"memory.{PLOT_FORMAT}", "memory"),
        perfetto=_stream_picture("perfetto.json", "perfetto"),
        energy=_stream_picture(f"energy.{PLOT_FORMAT}", "energy"),
    log:
        f"{STREAM_RESULTS}/{{sname}}/logs/plots.log",
    benchmark:
        f"{CACHE}/benchmarks/stream_plots/{{sname}}.tsv"
    conda:
        "../envs/zigzag.yaml"
    params:
        folder=lambda wildcards, input: os.path.dirname(input.summary),
    shell:
        step(
            "stream-plot {params.folder:q} --output {params.folder:q}/plots"
            " --format {format} --name {wildcards.sname:q} --no-pareto"
            " --plotly-js {input.plotly_js:q} --log {log:q}",
            format=PLOT_FORMAT,
        )


rule stream_search:
    input:
        experiment=stream_experiment_spec,
        plan=f"{STREAM_RESULTS}/{{sname}}/cost_plan.json",
        entries=stream_cost_entries,
    output:
        summary=f"{STREAM_RESULTS}/{{sname}}/summary.json",
        schedule=f"{STREAM_RESULTS}/{{sname}}/schedule.csv",
        trace=f"{STREAM_RESULTS}/{{sname}}/schedule_trace.json",
        front=f"{STREAM_RESULTS}/{{sname}}/front.csv",
        allocation=f"{STREAM_RESULTS}/{{sname}}/allocation.yaml",
    log:
        f"{STREAM_RESULTS}/{{sname}}/logs/search.log",
    benchmark:
        f"{CACHE}/benchmarks/stream_search/{{sname}}.tsv"
    wildcard_constraints:
        sname="|".join(STREAM_SEARCHED) or "no_searched_experiment",
    conda:
        "../envs/zigzag.yaml"
    threads: os.cpu_count() or 1  # scaled down to --cores
    params:
        folder=lambda wildcards, output: os.path.dirname(output.summary),
    shell:
        step(
            "stream-search --experiment {input.experiment:q} --cache {cache}"
            " --workers {threads} --output {params.folder:q} --log {log:q}",
            cache=CACHE,
        )


rule stream_co:
    input:
        experiment=stream_experiment_spec,
        plan=f"{STREAM_RESULTS}/{{sname}}/cost_plan.json",
        entries=stream_cost_entries,
    output:
        summary=f"{STREAM_RESULTS}/{{sname}}/summary.json",
        schedule=f"{STREAM_RESULTS}/{{sname}}/schedule.csv",
        trace=f"{STREAM_RESULTS}/{{sname}}/schedule_trace.json",
        slots=f"{STREAM_RESULTS}/{{sname}}/co_slots.csv",
        allocation=f"{STREAM_RESULTS}/{{sname}}/allocation.yaml",
    log:
        f"{STREAM_RESULTS}/{{sname}}/logs/co.log",
    benchmark:
        f"{CACHE}/benchmarks/stream_co/{{sname}}.tsv"
    wildcard_constraints:
        sname="|".join(STREAM_CO) or "no_co_experiment",
    conda:
        "../envs/zigzag.yaml"
    params:
        folder=lambda wildcards, output: os.path.dirname(output.summary),
    shell:
        step(
            "stream-co --experiment {input.experiment:q} --cache {cache}"
            " --output {params.folder:q} --log {log:q}",
            cache=CACHE,
        )


rule stream_pareto:
    input:
        front=f"{STREAM_RESULTS}/{{sname}}/front.csv",
        summary=f"{STREAM_RESULTS}/{{sname}}/summary.json",
    output:
        _stream_picture(f"pareto.{PLOT_FORMAT}", "pareto"),
    log:
        f"{STREAM_RESULTS}/{{sname}}/logs/pareto.log",
    benchmark:
        f"{CACHE}/benchmarks/stream_pareto/{{sname}}.tsv"
    conda:
        "../envs/zigzag.yaml"
    params:
        folder=lambda wildcards, input: os.path.dirname(input.front),
    shell:
        step(
            "stream-pareto {params.folder:q} --output {output:q} --name {wildcards.sname:q}"
            " --log {log:q}"
        )


rule stream_results:
    input:
        specs=[STREAM_SPECS[name] for name in STREAM],
        summaries=expand(f"{STREAM_RESULTS}/{{sname}}/summary.json", sname=list(STREAM)),
        traces=expand(
            f"{STREAM_RESULTS}/{{sname}}/schedule_trace.json", sname=list(STREAM)
        ),
    output:
        table=f"{STREAM_RESULTS}/multicore.csv",
        html=report(
            f"{STREAM_RESULTS}/multicore.html",
            caption="../report/stream_results_table.rst",
            category="Multi-core (Stream)",
            labels={"figure": "results table of all multi-core experiments"},
        ),
        pareto=report(
            f"{STREAM_RESULTS}/multicore_pareto.{PLOT_FORMAT}",
            caption="../report/stream_results_pareto.rst",
            category="Multi-core (Stream)",
            labels={"figure": "energy vs latency per workload, Pareto fronts"},
        ),
        metrics=report(
            f"{STREAM_RESULTS}/multicore_metrics.{PLOT_FORMAT}",
            caption="../report/stream_results_metrics.rst",
            category="Multi-core (Stream)",
            labels={"figure": "every metric of every multi-core experiment"},
        ),
    log:
        f"{STREAM_RESULTS}/logs/results.log",
    benchmark:
        f"{CACHE}/benchmarks/stream_results/all.tsv"
    conda:
        "../envs/zigzag.yaml"
    params:
        runs=lambda wildcards, input: [
            f"{spec}={os.path.dirname(summary)}"
            for spec, summary in zip(input.specs, input.summaries)
        ],
    shell:
        step(
            "stream-results {params.runs:q} --table {output.table:q} --html {output.html:q}"
            " --pareto {output.pareto:q} --metrics {output.metrics:q} --log {log:q}"
        )
