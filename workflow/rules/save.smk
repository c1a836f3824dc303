# ZigZag's SumStage and save stages: network totals, then the experiment's tables and JSON;
# then the tables of all experiments together.


rule sum:
    input:
        plan=f"{RESULTS}/{{name}}/plan.json",
        jobs=f"{CACHE}/layer-jobs/{{name}}.json",
        chunks=layer_chunks,
    output:
        f"{RESULTS}/{{name}}/results.json",
    log:
        f"{RESULTS}/{{name}}/logs/sum.log",
    benchmark:
        f"{CACHE}/benchmarks/sum/{{name}}.tsv"
    conda:
        "../envs/zigzag.yaml"
    shell:
        step(
            "sum {input.plan:q} --cache {cache} --output {output:q} --log {log:q}",
            cache=CACHE,
        )


rule save:
    input:
        results=f"{RESULTS}/{{name}}/results.json",
        jobs=f"{CACHE}/layer-jobs/{{name}}.json",
    output:
        summary=f"{RESULTS}/{{name}}/summary.json",
        row=f"{RESULTS}/{{name}}/summary.csv",
        table=f"{RESULTS}/{{name}}/layers.csv",
        view=report(
            f"{RESULTS}/{{name}}/layers.html",
            caption="../report/layers_table.rst",
            category="Experiments",
            subcategory="{name}",
            labels={"experiment": "{name}", "figure": "layer table"},
        ),
        levels=f"{RESULTS}/{{name}}/memory_levels.csv",
        details=directory(f"{RESULTS}/{{name}}/layers"),
        experiment=f"{RESULTS}/{{name}}/experiment.json",
    log:
        f"{RESULTS}/{{name}}/logs/save.log",
    benchmark:
        f"{CACHE}/benchmarks/save/{{name}}.tsv"
    conda:
        "../envs/zigzag.yaml"
    params:
        folder=lambda wildcards, output: os.path.dirname(output.summary),
    shell:
        step(
            "save {input.results:q} --cache {cache} --output {params.folder:q}"
            " --float-format {float_format} --log {log:q}",
            cache=CACHE,
            float_format=OUTPUTS.float_format,
        )


rule compare:
    input:
        summaries=expand(f"{RESULTS}/{{name}}/summary.csv", name=EXPERIMENT_NAMES),
        layers=expand(f"{RESULTS}/{{name}}/layers.csv", name=EXPERIMENT_NAMES),
        levels=expand(f"{RESULTS}/{{name}}/memory_levels.csv", name=EXPERIMENT_NAMES),
    output:
        experiments=f"{RESULTS}/experiments.csv",
        view=report(
            f"{RESULTS}/experiments.html",
            caption="../report/experiments_table.rst",
            category="Comparison",
            labels={"figure": "experiment table"},
        ),
        layers=f"{RESULTS}/layers.csv",
        levels=f"{RESULTS}/memory_levels.csv",
    log:
        f"{RESULTS}/logs/compare.log",
    benchmark:
        f"{CACHE}/benchmarks/compare/all.tsv"
    conda:
        "../envs/zigzag.yaml"
    params:
        folders=lambda wildcards, input: [os.path.dirname(p) for p in input.summaries],
        results=lambda wildcards, output: os.path.dirname(output.experiments),
    shell:
        step("compare {params.folders:q} --output {params.results:q} --log {log:q}")
