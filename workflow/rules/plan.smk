checkpoint plan:
    input:
        workload=experiment_file("workload"),
        accelerator=experiment_file("accelerator"),
        mapping=experiment_file("mapping"),
    output:
        plan=f"{RESULTS}/{{name}}/plan.json",
    log:
        f"{RESULTS}/{{name}}/logs/plan.log",
    conda:
        "../envs/zigzag.yaml"
    params:
        experiment=experiment_json,
        cache=CACHE,
    shell:
        "python -m zigzag step plan --experiment {params.experiment:q}"
        " --cache {params.cache:q} --output {output.plan:q} --log {log:q}"
