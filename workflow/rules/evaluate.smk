# ZigZag's WorkloadStage and the per-layer stages below it: split an experiment into one job
# per distinct layer (content-keyed: identical layers, across experiments too, share one job),
# then search each job: spatial mappings -> temporal mappings -> cost model -> best per criterion.
# A mapping that does not fit or a layer no mapping fits gives a failure record (--record-failure):
# the experiment becomes a failed row and check_experiments fails the run at the end.
# split_layers writes the experiment's plan, which holds its layer jobs; layer_job copies one job
# into the cache (<cache>/jobs/<key>.json), a content-addressed store shared by every experiment:
# a job file is written once, from the plan of the first experiment that needs it, and stays.


checkpoint split_layers:
    input:
        experiment=experiment_spec,
        workload=parsed_workload,
        accelerator=parsed_accelerator,
    output:
        plan=f"{RESULTS}/{{name}}/plan.json",
    log:
        f"{RESULTS}/{{name}}/logs/split_layers.log",
    benchmark:
        f"{CACHE}/benchmarks/split_layers/{{name}}.tsv"
    conda:
        "../envs/zigzag.yaml"
    shell:
        step(
            "split --experiment {input.experiment:q} --workload {input.workload:q}"
            " --accelerator {input.accelerator:q} --output {output.plan:q}"
            " --record-failure --log {log:q}"
        )


rule layer_job:
    input:
        plan=layer_job_plan,
    output:
        f"{CACHE}/jobs/{{key}}.json",
    log:
        f"{CACHE}/logs/layer_job/{{key}}.log",
    localrule: True
    run:
        write_plan_job(input.plan, wildcards.key, output[0])
        write_text_atomic(log[0], f"{output[0]}: from {input.plan}\n")


rule evaluate_layer:
    input:
        job=ancient(f"{CACHE}/jobs/{{key}}.json"),
    output:
        result=f"{CACHE}/results/{{key}}.json",
    log:
        f"{CACHE}/logs/{{key}}.log",
    benchmark:
        f"{CACHE}/benchmarks/evaluate_layer/{{key}}.tsv"
    conda:
        "../envs/zigzag.yaml"
    shell:
        step(
            "evaluate {input.job:q} --output {output.result:q} --record-failure --log {log:q}"
        )
