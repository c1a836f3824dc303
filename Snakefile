# ZigZag as a Snakemake workflow: parse -> per-layer mapping search and cost -> collect -> compare.
# Run:  snakemake --cores N          (experiments are defined in config.yaml)
from snakemake.utils import min_version, validate

min_version("8.0")


configfile: "config.yaml"


# common.smk resolves the experiments first: its messages name the entry and the fix in one line.
include: "workflow/rules/common.smk"


validate(config, "workflow/schemas/config.schema.yaml")


include: "workflow/rules/plan.smk"
include: "workflow/rules/evaluate.smk"
include: "workflow/rules/collect.smk"
include: "workflow/rules/report.smk"


rule all:
    default_target: True
    input:
        expand(f"{RESULTS}/{{name}}/summary.json", name=EXPERIMENT_NAMES),
        f"{RESULTS}/experiments.csv",
        PLOT_TARGETS,
