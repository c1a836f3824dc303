rule collect:
    input:
        plan=f"{RESULTS}/{{name}}/plan.json",
        results=layer_results,
    output:
        summary=f"{RESULTS}/{{name}}/summary.json",
        table=f"{RESULTS}/{{name}}/layers.csv",
        details=directory(f"{RESULTS}/{{name}}/layers"),
        experiment=f"{RESULTS}/{{name}}/experiment.json",
    log:
        f"{RESULTS}/{{name}}/logs/collect.log",
    conda:
        "../envs/zigzag.yaml"
    params:
        cache=CACHE,
        float_format=OUTPUTS.get("float_format", "%.10g"),
        folder=lambda wildcards: f"{RESULTS}/{wildcards.name}",
    shell:
        "python -m zigzag step collect {input.plan:q} --cache {params.cache:q}"
        " --output {params.folder:q} --float-format {params.float_format:q} --log {log:q}"


rule compare:
    input:
        expand(f"{RESULTS}/{{name}}/summary.json", name=EXPERIMENT_NAMES),
    output:
        f"{RESULTS}/experiments.csv",
    log:
        f"{RESULTS}/logs/compare.log",
    conda:
        "../envs/zigzag.yaml"
    shell:
        "python -m zigzag step compare {input:q} --output {output:q} --log {log:q}"
