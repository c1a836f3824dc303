import json
import os
import re
import shlex
import sys

from zigzag.config import load_config
from zigzag.errors import InputError
from zigzag.io.atomic import write_text_atomic, write_text_if_changed
from zigzag.io.yaml_files import load_yaml, with_strict_numbers
from zigzag.io.destinations import check_output_folder
from zigzag.io.memory_costs import memory_tables
from zigzag.io.llm_workloads import model_files as llm_model_files
import zigzag.steps.client
from snakemake.exceptions import WorkflowError
from zigzag.steps.experiments import (
    accelerator_id,
    check_input_files,
    distinct_inputs,
    expand_experiments,
    experiment_spec_text,
    workload_id,
)
from zigzag.steps.job_runner import prepare_job_environment, start_server_in_background
from zigzag.steps.folder_runs import check_single_run
from zigzag.steps.integrity import check_sealed_files, is_dry_run
from zigzag.steps.pipeline import plan_chunks
from zigzag.steps.multicore import resolve_multicore_experiments
from zigzag.sweep.workflow import (
    json_text,
    resolve_hardware_sweeps,
    write_point_files,
    write_search_files,
    write_sweep_settings,
)

# Jobs run `python`: the interpreter running Snakemake (and so the zigzag package installed beside
# it) comes first on PATH, unless a job's conda environment is activated.
os.environ["PATH"] = os.pathsep.join(
    [os.path.dirname(sys.executable), os.environ.get("PATH", "")]
)
prepare_job_environment(os.environ)
# The planning steps split an experiment's layer searches into as many chunks as this run has
# cores (zigzag/steps/chunks.py); a plan keeps its chunks when a later run has other --cores.
# (No --cores, e.g. a cluster executor with --jobs: one chunk each.)
try:
    os.environ["ZIGZAG_FLOW_CORES"] = str(workflow.cores)
except WorkflowError:
    os.environ["ZIGZAG_FLOW_CORES"] = "1"
# Jobs start the job client without the site module (`python -S`, half the start-up time; see
# zigzag/steps/client.py). Its path comes from the environment, so the rules' commands, which
# Snakemake compares to decide what to rerun, stay the same wherever the checkout is.
os.environ["ZIGZAG_FLOW_CLIENT"] = zigzag.steps.client.__file__
JOB_CLIENT = 'python -S "$ZIGZAG_FLOW_CLIENT"'


envvars:
    "PATH",
    "ZIGZAG_FLOW_CLIENT",
    "ZIGZAG_FLOW_CORES",


def step(arguments, **constants):
    """The shell command of a job: its step (a `zigzag step` sub-command) run by the job client,
    which hands it to a warm job server (forked from a process that has imported the package once)
    or runs it in its own process where no server can be used (ZIGZAG_FLOW_WARM=0, in a SLURM
    job). See zigzag/steps/client.py.

    ``constants`` fill their ``{name}`` in ``arguments`` now, shell-quoted. Unlike ``params:``
    they cost Snakemake nothing (recording any params value that is not derived from a job's
    input or output makes Snakemake import pandas, 0.3 s at every start), and changing one still
    reruns the rule's jobs: their command changed."""
    for name, value in constants.items():
        arguments = arguments.replace("{%s}" % name, shlex.quote(str(value)))
    return f"{JOB_CLIENT} {arguments}"


RESULTS = config.get("results", "results")
CACHE = config.get("cache", f"{RESULTS}/.cache")
PARSED = f"{CACHE}/parsed"

# A hardware sweep without its tables (its first run) is about to run jobs: the job server starts
# now, in the background, so that its imports (~3 s) overlap the reading of the config and the
# building of the DAG instead of delaying the first jobs (not for a dry run, a lint, a cluster:
# zigzag/steps/job_runner.py).
if workflow.is_main_process and any(
    not os.path.exists(f"{RESULTS}/hardware_sweeps/{entry.get('name')}/variants.csv")
    for entry in config.get("hardware_sweeps") or []
    if isinstance(entry, dict)
):
    start_server_in_background(sys.argv[1:])

# Damaged files (zigzag/io/sealed.py: cut short, emptied, garbage, altered) among the cached layer
# results and the intermediate files later steps read are reported, one warning line each, and
# removed before the DAG is built, so this run computes them again (a dry run only reports them).
# Files found sound are recorded and checked again only once written to (zigzag/steps/integrity.py);
# those a run writes are checked and recorded when it ends.
if workflow.is_main_process:
    for line in check_sealed_files(RESULTS, CACHE, dry_run=is_dry_run(sys.argv[1:])):
        print(line, file=sys.stderr)


onsuccess:
    if not is_dry_run(sys.argv[1:]):
        check_sealed_files(RESULTS, CACHE, remove=False)


# The files the jobs read that the config alone determines (each experiment's resolved spec, a
# hardware sweep's batches of points, settings and search): path -> content. The rule write_spec
# (rules/parse.smk) writes them, and rewrites one when its content (a params value Snakemake
# records) changes; only a sweep's batch files are written while the Snakefile loads, by a run that
# runs jobs (below), so a dry run or a lint still changes nothing.
SPEC_TEXTS = {}


def spec_text(path, text):
    SPEC_TEXTS[str(path)] = text
    return str(path)


def spec_json(path, data):
    return spec_text(path, json_text(data))


# The config is checked here, before the rules are built; a bad entry ends the run with its one-line
# error alone (a WorkflowError would add Snakemake's file, line and stack lines to it).
try:
    # Snakemake reads config files as YAML 1.1 (a key given twice: the last one, silently); read them
    # again strictly, so a duplicated key or a YAML 1.2 number is named as in every other input file
    for config_file in workflow.configfiles:
        config.update(with_strict_numbers(dict(config), load_yaml(config_file)))
    # whether this load writes a hardware sweep's batch files itself (below)
    BATCH_FILES_AT_LOAD = False
    # the results and the cache must be writable: said now in one line, before any job runs
    if workflow.is_main_process and not is_dry_run(sys.argv[1:]):
        check_output_folder(RESULTS, "results")
        check_output_folder(CACHE, "cache")
        # one run per folder: a second one is refused naming the first (zigzag/steps/folder_runs.py)
        if not {"--unlock", "--nolock"} & set(sys.argv):
            LOCK_NOTE = check_single_run()
            if LOCK_NOTE:
                print(LOCK_NOTE, file=sys.stderr)
            BATCH_FILES_AT_LOAD = "--lint" not in sys.argv
    # the config read once into typed sections (zigzag/config): every check of its shape, types
    # and defaults is made here; the resolvers below take the typed sections
    CONFIG = load_config(config)
    # how results are written: float_format, plot_format (with their defaults)
    OUTPUTS = CONFIG.outputs
    EXPERIMENTS = {e["name"]: e for e in expand_experiments(CONFIG)}
    check_input_files(list(EXPERIMENTS.values()))
    # multi-core experiments (rules/multicore.smk)
    MULTICORE = resolve_multicore_experiments(CONFIG)
    # hardware sweeps (rules/hardware_sweep.smk): name -> (sweep, its variants)
    HW_SWEEPS = resolve_hardware_sweeps(CONFIG)
    EXPERIMENT_NAMES = list(EXPERIMENTS)
    WORKLOADS, ACCELERATORS = distinct_inputs(list(EXPERIMENTS.values()))
    EXPERIMENT_SPECS = {
        name: spec_text(
            f"{CACHE}/experiments/{name}.json", experiment_spec_text(experiment)
        )
        for name, experiment in EXPERIMENTS.items()
    }
    HW_POINT_FILES = {
        name: write_point_files(sweep, variants, f"{CACHE}/sweeps", write=spec_json)
        for name, (sweep, variants) in HW_SWEEPS.items()
        if variants is not None
    }
    # A run that runs jobs (no other run in the folder: checked above) writes a sweep's batch
    # files now, each only when its content changed (its time stamp then reruns its batch job),
    # instead of by one write_spec job each: with tens of batch jobs, those jobs were half the
    # run's jobs, and each job that ends adds a round of Snakemake's scheduler every second until
    # the last batch job starts (docs/performance.md). A dry run still lists them as write_spec
    # jobs and writes nothing.
    if BATCH_FILES_AT_LOAD:
        for path in (
            path for files in HW_POINT_FILES.values() for path in files.values()
        ):
            os.makedirs(os.path.dirname(path), exist_ok=True)
            write_text_if_changed(path, SPEC_TEXTS[path])
    # hardware sweeps run as a guided search (their `search` key): one job each
    HW_SEARCH_FILES = write_search_files(CONFIG, f"{CACHE}/sweeps", write=spec_json)
    HW_BASES = {
        sweep.name: sweep.base
        for sweep in CONFIG.hardware_sweeps
        if sweep.name in HW_SEARCH_FILES
    }
    HW_SETTINGS = {
        name: write_sweep_settings(sweep, f"{CACHE}/sweeps", write=spec_json)
        for name, (sweep, _) in HW_SWEEPS.items()
    }
    MULTICORE_SPECS = {
        name: spec_text(
            f"{CACHE}/experiments/multicore/{name}.json",
            experiment_spec_text(experiment),
        )
        for name, experiment in MULTICORE.items()
    }
except InputError as exc:
    print(f"error: {exc}", file=sys.stderr)
    sys.exit(1)


wildcard_constraints:
    name="|".join(EXPERIMENT_NAMES) or "no_experiment",
    key="[0-9a-f]+",
    workload_id="[^/]+",
    accelerator_id="[^/]+",
    hsweep="|".join(HW_SWEEPS) or "no_sweep",
    batch="[^/]+",


def experiment_spec(wildcards):
    return EXPERIMENT_SPECS[wildcards.name]


def parsed_workload(wildcards):
    return f"{PARSED}/workloads/{workload_id(EXPERIMENTS[wildcards.name])}.json"


def parsed_accelerator(wildcards):
    return f"{PARSED}/accelerators/{accelerator_id(EXPERIMENTS[wildcards.name])}.json"


def layer_chunks(wildcards):
    """The records of the experiment's evaluate_layers jobs (their number is known once split)."""
    plan = checkpoints.split_layers.get(name=wildcards.name).output.plan
    return [f"{CACHE}/chunks/{wildcards.name}/{c}.json" for c in plan_chunks(plan)]


def sweep_batch_file(wildcards):
    return HW_POINT_FILES[wildcards.hsweep][wildcards.batch]


def sweep_inputs(wildcards):
    """The files a hardware sweep's batch job reads besides its batch file: workloads and mapping."""
    sweep = HW_SWEEPS[wildcards.hsweep][0]
    return [*sweep.workloads, *([sweep.mapping] if sweep.mapping else [])]


def search_inputs(wildcards):
    """The files a hardware sweep's search job reads besides its search file: the base
    accelerator, workloads and mapping."""
    return [HW_BASES[wildcards.hsweep], *sweep_inputs(wildcards)]
