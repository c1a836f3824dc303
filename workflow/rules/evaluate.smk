rule evaluate_layer:
    input:
        job=ancient(f"{CACHE}/jobs/{{key}}.json"),
    output:
        result=f"{CACHE}/results/{{key}}.json",
    log:
        f"{CACHE}/logs/{{key}}.log",
    conda:
        "../envs/zigzag.yaml"
    shell:
        "python -m zigzag step evaluate {input.job:q} --output {output.result:q} --log {log:q}"
