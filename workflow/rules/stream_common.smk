# Multi-core (Stream) experiments: names, targets and input functions of rules/stream.smk.
from zigzag.multicore.pipeline import allocation_of
from zigzag.steps.stream import core_files, cost_plan_keys

STREAM_RESULTS = f"{RESULTS}/stream"
# the experiments by allocation method (fixed, ga, co): which files their run folder holds
STREAM_METHOD = {n: allocation_of(e["search"]).method for n, e in STREAM.items()}
STREAM_FIXED = [n for n, method in STREAM_METHOD.items() if method == "fixed"]
STREAM_SEARCHED = [n for n, method in STREAM_METHOD.items() if method == "ga"]
STREAM_CO = [n for n, method in STREAM_METHOD.items() if method == "co"]
STREAM_PICTURES = [
    "gantt.html",
    f"gantt.{PLOT_FORMAT}",
    f"memory.{PLOT_FORMAT}",
    f"energy.{PLOT_FORMAT}",
    "perfetto.json",
]
STREAM_TARGETS = (
    expand(f"{STREAM_RESULTS}/{{sname}}/summary.json", sname=list(STREAM))
    + expand(
        f"{STREAM_RESULTS}/{{sname}}/plots/{{file}}",
        sname=list(STREAM),
        file=STREAM_PICTURES,
    )
    + (
        [
            f"{STREAM_RESULTS}/multicore.csv",
            f"{STREAM_RESULTS}/multicore.html",
            f"{STREAM_RESULTS}/multicore_pareto.{PLOT_FORMAT}",
            f"{STREAM_RESULTS}/multicore_metrics.{PLOT_FORMAT}",
        ]
        if STREAM
        else []
    )
    + expand(
        f"{STREAM_RESULTS}/{{sname}}/plots/pareto.{PLOT_FORMAT}", sname=STREAM_SEARCHED
    )
)


wildcard_constraints:
    sname="|".join(STREAM) or "no_stream_experiment",


def stream_experiment_spec(wildcards):
    return STREAM_SPECS[wildcards.sname]


def stream_hardware_files(wildcards):
    return core_files(STREAM[wildcards.sname]["accelerator"])


def stream_cost_entries(wildcards):
    """Every cost-table entry the experiment needs (known once its plan is written)."""
    plan = checkpoints.stream_plan_costs.get(sname=wildcards.sname).output[0]
    return [f"{CACHE}/stream-cost/entries/{key}.json" for key in cost_plan_keys(plan)]


def _stream_picture(file, what):
    return report(
        f"{STREAM_RESULTS}/{{sname}}/plots/{file}",
        caption=f"../report/stream_{what}.rst",
        category="Multi-core (Stream)",
        subcategory="{sname}",
        labels={"experiment": "{sname}", "figure": what.replace("_", " ")},
    )
