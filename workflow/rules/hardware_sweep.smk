# Hardware sweeps, config key `hardware_sweeps` (docs/reference/sweeps.md): variants of one base
# accelerator. One job per batch of variants (`batch_size`, auto: at most 48 jobs per sweep; all
# the sweep's workloads; every layer goes through the shared per-layer cache), then one job per
# sweep for its tables (variants.csv, pareto.csv, best.csv) and figures. A variant that cannot
# run is a row with its status and reason, never a failed job. A sweep with `search` is one job:
# the guided search (NSGA-II, its `workers` as the job's threads) writes the same tables over the
# variants it evaluated, plus search_front.csv and plots/search_front.<format>.

HW_RESULTS = f"{RESULTS}/hardware_sweeps"
# Snakemake sets the BLAS thread counts of a job to its threads, and the job server's fingerprint
# includes them: the collect job (4 threads) would start a server of its own (~3 s of imports).
# Its processes use one BLAS thread each; with this, the batch jobs' server runs it.
ONE_BLAS_THREAD = "OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 MKL_NUM_THREADS=1"


rule sweep_batch:
    input:
        point=sweep_batch_file,
        files=sweep_inputs,
    output:
        f"{HW_RESULTS}/{{hsweep}}/points/{{batch}}.json",
    # no `benchmark:` (nor for sweep_collect): Snakemake samples a benchmarked job's processes
    # every 0.5 s by walking the machine's process table (~4 ms a sample in its own process, which
    # competes with the jobs for the cores); the step's log starts with its time, `[12.345 s]`
    log:
        f"{HW_RESULTS}/{{hsweep}}/logs/{{batch}}.log",
    conda:
        "../envs/zigzag.yaml"
    shell:
        step(
            "sweep-batch {input.point:q} --cache {cache} --output {output:q} --log {log:q}",
            cache=CACHE,
        )


rule sweep_collect:
    input:
        settings=lambda wildcards: HW_SETTINGS[wildcards.hsweep],
        points=lambda wildcards: expand(
            f"{HW_RESULTS}/{wildcards.hsweep}/points/{{batch}}.json",
            batch=list(HW_POINT_FILES[wildcards.hsweep]),
        ),
    output:
        variants=report(
            f"{HW_RESULTS}/{{hsweep}}/variants.csv",
            caption="../report/sweep_variants.rst",
            category="Hardware sweeps",
            subcategory="{hsweep}",
            labels={"sweep": "{hsweep}", "figure": "all variants (CSV)"},
        ),
        pareto=report(
            f"{HW_RESULTS}/{{hsweep}}/pareto.csv",
            caption="../report/sweep_pareto.rst",
            category="Hardware sweeps",
            subcategory="{hsweep}",
            labels={"sweep": "{hsweep}", "figure": "Pareto-optimal variants (CSV)"},
        ),
        best=report(
            f"{HW_RESULTS}/{{hsweep}}/best.csv",
            caption="../report/sweep_best.rst",
            category="Hardware sweeps",
            subcategory="{hsweep}",
            labels={"sweep": "{hsweep}", "figure": "best variant per objective (CSV)"},
        ),
        figures=report(
            directory(f"{HW_RESULTS}/{{hsweep}}/plots"),
            patterns=[f"{{figure}}.{PLOT_FORMAT}"],
            caption="../report/sweep_figures.rst",
            category="Hardware sweeps",
            subcategory="{hsweep}",
            labels={"sweep": "{hsweep}", "figure": "{figure}"},
        ),
        # what the report shows of the sweep: its parameters, per variant its layers
        description=f"{HW_RESULTS}/{{hsweep}}/sweep.json",
        details=directory(f"{HW_RESULTS}/{{hsweep}}/details"),
    log:
        f"{HW_RESULTS}/{{hsweep}}/logs/collect.log",
    wildcard_constraints:
        hsweep="|".join(HW_POINT_FILES) or "no_sweep",
    conda:
        "../envs/zigzag.yaml"
    # its batches are read and its figures drawn by as many processes (Snakemake gives it at most
    # --cores): the job runs alone at the end of a sweep, when the other cores have nothing to do
    threads: 4
    params:
        folder=lambda wildcards, output: os.path.dirname(output.variants),
    shell:
        " ".join(
            (
                ONE_BLAS_THREAD,
                step(
                    "sweep-collect {input.points:q} --settings {input.settings:q} --output {params.folder:q}"
                    " --format {format} --float-format {float_format} --workers {threads} --log {log:q}",
                    format=PLOT_FORMAT,
                    float_format=OUTPUTS.float_format,
                ),
            )
        )


rule sweep_search:
    input:
        search=lambda wildcards: HW_SEARCH_FILES[wildcards.hsweep],
        files=search_inputs,
    output:
        variants=report(
            f"{HW_RESULTS}/{{hsweep}}/variants.csv",
            caption="../report/sweep_variants.rst",
            category="Hardware sweeps",
            subcategory="{hsweep}",
            labels={
                "sweep": "{hsweep}",
                "figure": "variants evaluated by the search (CSV)",
            },
        ),
        pareto=f"{HW_RESULTS}/{{hsweep}}/pareto.csv",
        best=f"{HW_RESULTS}/{{hsweep}}/best.csv",
        front=report(
            f"{HW_RESULTS}/{{hsweep}}/search_front.csv",
            caption="../report/sweep_pareto.rst",
            category="Hardware sweeps",
            subcategory="{hsweep}",
            labels={"sweep": "{hsweep}", "figure": "front of the search (CSV)"},
        ),
        stats=f"{HW_RESULTS}/{{hsweep}}/search.json",
        figures=report(
            directory(f"{HW_RESULTS}/{{hsweep}}/plots"),
            patterns=[f"{{figure}}.{PLOT_FORMAT}"],
            caption="../report/sweep_figures.rst",
            category="Hardware sweeps",
            subcategory="{hsweep}",
            labels={"sweep": "{hsweep}", "figure": "{figure}"},
        ),
        description=f"{HW_RESULTS}/{{hsweep}}/sweep.json",
        details=directory(f"{HW_RESULTS}/{{hsweep}}/details"),
    log:
        f"{HW_RESULTS}/{{hsweep}}/logs/search.log",
    benchmark:
        f"{CACHE}/benchmarks/sweep_search/{{hsweep}}.tsv"
    wildcard_constraints:
        hsweep="|".join(HW_SEARCH_FILES) or "no_sweep",
    conda:
        "../envs/zigzag.yaml"
    threads: lambda wildcards: HW_SWEEPS[wildcards.hsweep][0].search.workers
    params:
        folder=lambda wildcards, output: os.path.dirname(output.variants),
    shell:
        step(
            "sweep-search {input.search:q} --cache {cache} --output {params.folder:q}"
            " --format {format} --float-format {float_format} --log {log:q}",
            cache=CACHE,
            format=PLOT_FORMAT,
            float_format=OUTPUTS.float_format,
        )


#: every file of this module, for `rule all`
HW_TARGETS = [f"{HW_RESULTS}/{name}/variants.csv" for name in HW_SWEEPS]
