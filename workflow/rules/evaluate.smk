# ZigZag's WorkloadStage and the per-layer stages below it: split an experiment into one job
# per distinct layer (content-keyed: identical layers, across experiments too, share one job),
# then search each job: spatial mappings -> temporal mappings -> cost model -> best per criterion.
# A mapping that does not fit or a layer no mapping fits gives a failure record (--record-failure):
# the experiment becomes a failed row and check_experiments fails the run at the end.
# split_layers writes the job files (<cache>/jobs/<key>.json) besides its declared plan: that
# folder is a content-addressed store shared by every experiment (a job is written once, by the
# first experiment that needs it, and never rewritten), so it cannot be one job's output
# (Snakemake lets a file have one producing job, and deletes a directory output before rerunning
# its job). The plan lists the keys; evaluate_layer reads the job (ancient) and nothing else: it
# is asked for only through a finished split (layer_results), and its input set never depends on
# which experiment wrote the job first (an input naming that experiment's plan made unchanged
# layers rerun when two experiments raced to write a shared job, "Set of input files has changed").


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
            " --accelerator {input.accelerator:q} --cache {cache} --output {output.plan:q}"
            " --record-failure --log {log:q}",
            cache=CACHE,
        )


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
