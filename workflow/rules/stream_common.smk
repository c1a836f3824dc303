# Multi-core (Stream) experiments: names, targets and input functions of rules/stream.smk.
from zigzag.steps.chunks import chunk_names
from zigzag.steps.stream import core_files

STREAM_RESULTS = f"{RESULTS}/stream"
STREAM_FIXED = [n for n, e in STREAM.items() if not e["search"]]
STREAM_SEARCHED = [
    n for n, e in STREAM.items() if e["search"] and e["search"]["method"] == "ga"
]
STREAM_CO = [
    n for n, e in STREAM.items() if e["search"] and e["search"]["method"] == "co"
]
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
    """The records of the stream_costs jobs computing the entries the experiment needs that were
    not cached when it was planned (their number is known once its plan is written)."""
    plan = checkpoints.stream_plan_costs.get(sname=wildcards.sname).output[0]
    with open(plan) as handle:
        chunks = json.load(handle).get("chunks", 0)
    return [
        f"{CACHE}/stream-cost/chunks/{wildcards.sname}/{c}.json"
        for c in chunk_names(chunks)
    ]


def _stream_picture(file, what):
    return report(
        f"{STREAM_RESULTS}/{{sname}}/plots/{file}",
        caption=f"../report/stream_{what}.rst",
        category="Multi-core (Stream)",
        subcategory="{sname}",
        labels={"experiment": "{sname}", "figure": what.replace("_", " ")},
    )
