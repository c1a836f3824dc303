# Multi-core experiments: names, targets and input functions of rules/multicore.smk.
from zigzag.multicore.pipeline import allocation_of
from zigzag.steps.chunks import chunk_names
from zigzag.steps.multicore import core_files

MULTICORE_RESULTS = f"{RESULTS}/multicore"
# the experiments by allocation method (fixed, ga, co): which files their run folder holds
MULTICORE_METHOD = {n: allocation_of(e["search"]).method for n, e in MULTICORE.items()}
MULTICORE_FIXED = [n for n, method in MULTICORE_METHOD.items() if method == "fixed"]
MULTICORE_SEARCHED = [n for n, method in MULTICORE_METHOD.items() if method == "ga"]
MULTICORE_CO = [n for n, method in MULTICORE_METHOD.items() if method == "co"]
MULTICORE_PICTURES = [
    "gantt.html",
    f"gantt.{PLOT_FORMAT}",
    f"memory.{PLOT_FORMAT}",
    f"energy.{PLOT_FORMAT}",
    "perfetto.json",
]
MULTICORE_TARGETS = (
    expand(f"{MULTICORE_RESULTS}/{{sname}}/summary.json", sname=list(MULTICORE))
    + expand(
        f"{MULTICORE_RESULTS}/{{sname}}/plots/{{file}}",
        sname=list(MULTICORE),
        file=MULTICORE_PICTURES,
    )
    + (
        [
            f"{MULTICORE_RESULTS}/multicore.csv",
            f"{MULTICORE_RESULTS}/multicore.html",
            f"{MULTICORE_RESULTS}/multicore_pareto.{PLOT_FORMAT}",
            f"{MULTICORE_RESULTS}/multicore_metrics.{PLOT_FORMAT}",
        ]
        if MULTICORE
        else []
    )
    + expand(
        f"{MULTICORE_RESULTS}/{{sname}}/plots/pareto.{PLOT_FORMAT}",
        sname=MULTICORE_SEARCHED,
    )
)


wildcard_constraints:
    sname="|".join(MULTICORE) or "no_multicore_experiment",


def multicore_experiment_spec(wildcards):
    return MULTICORE_SPECS[wildcards.sname]


def multicore_hardware_files(wildcards):
    return core_files(MULTICORE[wildcards.sname]["accelerator"])


def multicore_cost_entries(wildcards):
    """The records of the multicore_costs jobs computing the entries the experiment needs that
    were not cached when it was planned (their number is known once its plan is written).
    """
    plan = checkpoints.multicore_plan_costs.get(sname=wildcards.sname).output[0]
    with open(plan) as handle:
        chunks = json.load(handle).get("chunks", 0)
    return [
        f"{CACHE}/multicore-cost/chunks/{wildcards.sname}/{c}.json"
        for c in chunk_names(chunks)
    ]


def _multicore_picture(file, what):
    return report(
        f"{MULTICORE_RESULTS}/{{sname}}/plots/{file}",
        caption=f"../report/stream_{what}.rst",
        category="Multi-core (Stream)",
        subcategory="{sname}",
        labels={"experiment": "{sname}", "figure": what.replace("_", " ")},
    )
