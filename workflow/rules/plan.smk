rule experiment_spec:
    # The resolved experiment as a file, so that the plan job's command line stays short.
    # Rewritten (and the experiment re-planned) only when the experiment's definition changes.
    output:
        f"{RESULTS}/{{name}}/experiment_spec.json",
    log:
        f"{RESULTS}/{{name}}/logs/experiment_spec.log",
    localrule: True
    params:
        experiment=experiment_json,
    run:
        write_text_atomic(output[0], params.experiment)
        write_text_atomic(log[0], f"{wildcards.name}: experiment written\n")


checkpoint plan:
    input:
        experiment=f"{RESULTS}/{{name}}/experiment_spec.json",
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
        cache=CACHE,
    shell:
        "python -m zigzag step plan --experiment {input.experiment:q}"
        " --cache {params.cache:q} --output {output.plan:q} --log {log:q}"
