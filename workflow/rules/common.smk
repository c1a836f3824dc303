import json
import os
import sys

from snakemake.exceptions import WorkflowError

from zigzag.errors import InputError
from zigzag.io.atomic import write_text_atomic
from zigzag.steps.experiments import expand_experiments
from zigzag.steps.pipeline import plan_keys


envvars:
    "PATH",


# Jobs run `python -m zigzag ...`: the interpreter running Snakemake (and so the zigzag package
# installed beside it) comes first on PATH, unless a job's conda environment is activated.
os.environ["PATH"] = os.pathsep.join(
    [os.path.dirname(sys.executable), os.environ.get("PATH", "")]
)
RESULTS = config.get("results", "results")
CACHE = config.get("cache", f"{RESULTS}/.cache")
OUTPUTS = config.get("outputs", {})

try:
    EXPERIMENTS = {e["name"]: e for e in expand_experiments(config)}
except InputError as exc:
    raise WorkflowError(str(exc)) from None
EXPERIMENT_NAMES = list(EXPERIMENTS)


wildcard_constraints:
    name="|".join(EXPERIMENT_NAMES),
    key="[0-9a-f]+",


def experiment_file(kind):
    """Input function: the experiment's workload, accelerator or mapping file."""
    return lambda wildcards: EXPERIMENTS[wildcards.name][kind]


def experiment_json(wildcards):
    return json.dumps(EXPERIMENTS[wildcards.name], sort_keys=True)


def layer_results(wildcards):
    """The cached results of every distinct layer job of the experiment (known once planned)."""
    plan = checkpoints.plan.get(name=wildcards.name).output.plan
    return [f"{CACHE}/results/{key}.json" for key in plan_keys(plan)]
