# ZigZag as a Snakemake workflow, rule by rule as ZigZag's stage list:
#   parse_workload, parse_accelerator -> split_layers -> evaluate_layer (per distinct layer)
#   -> sum -> save -> compare, plots and the report.
# Run:  snakemake --cores N                       (the default experiments, config.yaml)
#       snakemake --cores N --configfile my.yaml  (only the experiments of my.yaml)
from snakemake.utils import min_version

min_version("8.0")


# config.yaml holds the default experiments; a config file given with --configfile replaces it
# (it is not merged with it), so a one-experiment config runs one experiment.
if not workflow.config_settings.configfiles:

    configfile: "config.yaml"


# common.smk reads the config once into its typed models (zigzag/config; the JSON schema
# zigzag/config/config.schema.json is generated from them) and resolves the experiments; a
# problem stops the run with one line naming the entry and the fix.
include: "workflow/rules/common.smk"
include: "workflow/rules/parse.smk"
include: "workflow/rules/evaluate.smk"
include: "workflow/rules/save.smk"
include: "workflow/rules/plots.smk"
include: "workflow/rules/multicore.smk"
include: "workflow/rules/hardware_sweep.smk"
include: "workflow/rules/report_page.smk"


rule all:
    default_target: True
    input:
        expand(f"{RESULTS}/{{name}}/summary.json", name=EXPERIMENT_NAMES),
        (
            [
                f"{RESULTS}/experiments.csv",
                *PLOT_TARGETS,
                f"{CACHE}/status/experiments.ok",
            ]
            if EXPERIMENT_NAMES
            else []
        ),
        MULTICORE_TARGETS,
        HW_TARGETS,
        [f"{RESULTS}/report.html"] if REPORT_INPUTS else [],
