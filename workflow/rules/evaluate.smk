# ZigZag's WorkloadStage and the per-layer stages below it: split an experiment into its distinct
# layers (content-keyed: identical layers, across experiments too, are searched once), then search
# them: spatial mappings -> temporal mappings -> cost model -> best per criterion.
# split_layers (a checkpoint) writes the experiment's jobs (<cache>/layer-jobs/<name>.json) and its
# plan: the layers not in the result store yet, in chunks (zigzag/steps/chunks.py: as many as the
# run's --cores, at least 8 layers each). One evaluate_layers job per chunk searches its layers
# into the result store (<cache>/results/<key>.json, zigzag/mapping_search/result_store.py: shared with
# hardware sweeps; a layer two jobs need at once is searched by one while the other waits), so a
# job's start-up is paid per chunk, and the chunks of an experiment run in parallel.
# A layer no mapping fits gives a failure record: the experiment becomes a failed row and
# check_experiments fails the run at the end.


checkpoint split_layers:
    input:
        experiment=experiment_spec,
        workload=parsed_workload,
        accelerator=parsed_accelerator,
    output:
        plan=f"{RESULTS}/{{name}}/plan.json",
        jobs=f"{CACHE}/layer-jobs/{{name}}.json",
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


rule evaluate_layers:
    input:
        plan=f"{RESULTS}/{{name}}/plan.json",
        jobs=f"{CACHE}/layer-jobs/{{name}}.json",
    output:
        f"{CACHE}/chunks/{{name}}/{{chunk}}.json",
    log:
        f"{RESULTS}/{{name}}/logs/evaluate_layers/{{chunk}}.log",
    benchmark:
        f"{CACHE}/benchmarks/evaluate_layers/{{name}}/{{chunk}}.tsv"
    wildcard_constraints:
        chunk=r"\d+of\d+",
    conda:
        "../envs/zigzag.yaml"
    shell:
        step(
            "evaluate-layers {input.plan:q} --chunk {wildcards.chunk} --cache {cache}"
            " --output {output:q} --log {log:q}",
            cache=CACHE,
        )
