# Parsing, as ZigZag's WorkloadParserStage and AcceleratorParserStage: input files -> normalised
# JSON read by the later rules. Once per distinct workload + mapping pair and per accelerator
# file, shared by every experiment using them. A file that cannot be used gives a failure record
# (--record-failure), passed on to the experiments' rows (see zigzag/steps/failures.py).


rule parse_workload:
    input:
        workload=lambda wildcards: WORKLOADS[wildcards.workload_id]["workload"],
        mapping=lambda wildcards: WORKLOADS[wildcards.workload_id]["mapping"],
        # the model configuration an LLM workload file names: a changed one parses the workload again
        model=lambda wildcards: llm_model_files(
            WORKLOADS[wildcards.workload_id]["workload"]
        ),
    output:
        f"{PARSED}/workloads/{{workload_id}}.json",
    log:
        f"{CACHE}/logs/parse_workload/{{workload_id}}.log",
    benchmark:
        f"{CACHE}/benchmarks/parse_workload/{{workload_id}}.tsv"
    conda:
        "../envs/zigzag.yaml"
    params:
        # a function of the output (its workload id includes the flag): not recorded apart
        all_operators=lambda wildcards, output: (
            "--evaluate-all-operators"
            if WORKLOADS[wildcards.workload_id]["evaluate_all_operators"]
            else ""
        ),
        operator_model=lambda wildcards, output: (
            "--operators all --causal-blocks {}".format(
                WORKLOADS[wildcards.workload_id]["causal_blocks"]
            )
            if WORKLOADS[wildcards.workload_id].get("operators", "zigzag") == "all"
            else ""
        ),
    shell:
        step(
            "parse-workload {input.workload:q} --mapping {input.mapping:q}"
            " {params.all_operators} {params.operator_model} --output {output:q} --record-failure --log {log:q}"
        )


rule parse_accelerator:
    input:
        accelerator=lambda wildcards: ACCELERATORS[wildcards.accelerator_id],
        # the memory tables it names (cost_table): a changed table parses the accelerator again
        tables=lambda wildcards: memory_tables(ACCELERATORS[wildcards.accelerator_id]),
    output:
        f"{PARSED}/accelerators/{{accelerator_id}}.json",
    log:
        f"{CACHE}/logs/parse_accelerator/{{accelerator_id}}.log",
    benchmark:
        f"{CACHE}/benchmarks/parse_accelerator/{{accelerator_id}}.tsv"
    conda:
        "../envs/zigzag.yaml"
    shell:
        step(
            "parse-accelerator {input.accelerator:q} --output {output:q} --record-failure --log {log:q}"
        )


# The files the jobs read that the config alone determines (SPEC_TEXTS, rules/common.smk): written
# by this job, not while the Snakefile loads, and written again when their content changes.
rule write_spec:
    output:
        f"{CACHE}/{{spec}}",
    log:
        f"{CACHE}/logs/write_spec/{{spec}}.log",
    wildcard_constraints:
        spec="|".join(re.escape(path[len(CACHE) + 1 :]) for path in SPEC_TEXTS)
        or "no_spec",
    localrule: True
    params:
        text=lambda wildcards: SPEC_TEXTS[f"{CACHE}/{wildcards.spec}"],
    run:
        write_text_atomic(output[0], params.text)
        write_text_atomic(log[0], f"wrote {output[0]}\n")
