"""The workflow config (``config.yaml``) as typed sections, each field with its type and default.

A field whose default is None may be left out but not written as ``null`` (as in the JSON schema,
where its type is not nullable).

:class:`WorkflowConfig` is the whole file: search-option ``defaults``, single-core
``experiments`` and grid ``sweeps``, ``multicore_experiments`` (or ``stream_experiments``, its
older name), ``hardware_sweeps``
(:mod:`zigzag.config.hardware_sweeps`) and ``outputs``. The JSON schema of the file is generated
from these classes (:mod:`zigzag.config.schema`); docs/reference/workflow-config.md documents them.
"""

from __future__ import annotations

from typing import Literal, Union

from pydantic import AliasChoices, Field, StrictBool, StrictStr

from zigzag.config.base import FileOrList, Name, Section, number, whole
from zigzag.config.hardware_sweeps import HardwareSweep
from zigzag.config.options import Options, SweepOptions
from zigzag.config.hardware_sweeps import SEARCH
from zigzag.multicore.pipeline.spec import CHOICES, LATENCY_MODELS, MODES, SEARCH_METHODS

#: a named parameter's value (a column of experiments.csv)
Scalar = Union[StrictBool, number(), StrictStr]


class Experiment(Options):
    """One single-core experiment: its files and the options it sets itself."""

    name: Name
    workload: StrictStr
    accelerator: StrictStr
    mapping: StrictStr
    parameters: dict[str, Scalar] = Field(
        default_factory=dict,
        description="named parameters of the experiment, one column each in experiments.csv, "
        "e.g. {sram_kib: 64}",
    )


class GridSweep(SweepOptions):
    """A grid of single-core experiments: every combination of its list-valued entries."""

    name: StrictStr = Field(
        None,
        description="a pattern over the swept keys (files by their stem), e.g. "
        "'{workload}-{accelerator}-{opt}' (default: the swept keys joined by '-')",
    )
    workload: FileOrList
    accelerator: FileOrList
    mapping: FileOrList
    parameters: dict[str, Scalar] = Field(
        default_factory=dict,
        description="named parameters, one column each in experiments.csv; text values are "
        "patterns as name, e.g. {array: '{accelerator}'}",
    )


class AllocationSearch(Section):
    """How a multi-core experiment searches the cores its mapping leaves open; the defaults are
    those of the multi-core run description (:func:`zigzag.multicore.pipeline.search_defaults`)."""

    method: Literal[tuple(SEARCH_METHODS)] = Field(
        SEARCH["method"],
        description="ga: genetic search (NSGA-II front); co: constraint optimisation "
        "(Stream's optimize_allocation_co)",
    )
    individuals: whole(ge=2) = SEARCH["individuals"]
    generations: whole(ge=1) = SEARCH["generations"]
    seed: whole() = SEARCH["seed"]
    choose: Literal[CHOICES] = SEARCH["choose"]
    time_limit: number(gt=0) = Field(
        SEARCH["time_limit"], description="co: seconds per layer stack's solve"
    )
    gap: number(ge=0, lt=1) = Field(SEARCH["gap"], description="co: relative optimality gap")


class MulticoreExperiment(Section):
    """One multi-core experiment: accelerator, ONNX workload, mapping and scheduling mode."""

    name: Name
    accelerator: StrictStr = Field(
        description="multi-core accelerator YAML (Stream format, late-2024 or 2.x)"
    )
    workload: StrictStr = Field(description="ONNX model")
    mapping: StrictStr = Field(
        None,
        description="Stream mapping YAML, either format (default: the automatic mapping, "
        "allocated by constraint optimisation unless search says otherwise)",
    )
    mode: Literal[MODES] = Field(
        None, description="default: fused for a Stream 2.x mapping with fused_groups, else lbl"
    )
    layer_stacks: StrictStr = Field(
        None,
        description="fused stacks of layer ids, e.g. '0-10;11-21' "
        "(default: fuse until the weights fill the cores)",
    )
    lpf_limit: whole(ge=1) = 6
    prefetch: list[Literal["I", "W", "O"]] = Field(
        default_factory=list, description="layer operands sent to their cores first"
    )
    clock_ghz: number(gt=0) = Field(
        None,
        description="clock frequency (GHz) for the latency in seconds of the multi-core results "
        "table (default: none, cycles only)",
    )
    clock_ns: number(gt=0) = Field(
        None,
        description="older spelling: a clock period in ns, read as clock_ghz = 1 / clock_ns "
        "with a warning",
    )
    latency_model: Literal[LATENCY_MODELS] = Field(
        "auto",
        description="auto: bandwidth_bound for an LLM step, zigzag otherwise; zigzag: Stream's "
        "link model; bandwidth_bound: a node streaming from DRAM lasts at least its DRAM bits "
        "over the link bandwidth it is granted",
    )
    search: AllocationSearch = Field(
        None,
        description="search the allocation of the layers the mapping leaves to several cores "
        "(NSGA-II, or constraint optimisation)",
    )


class Outputs(Section):
    """Options that only change how results are written (never trigger a re-evaluation)."""

    float_format: StrictStr = Field(
        "%.10g", description="printf-style format of floats in layers.csv"
    )
    plot_format: Literal["png", "svg", "pdf"] = Field("png", description="format of the figures")


#: the older name of ``multicore_experiments``, still read
MULTICORE_ALIAS = "stream_experiments"
#: the sections of which a config needs at least one
EXPERIMENT_SECTIONS = (
    "experiments",
    "sweeps",
    "multicore_experiments",
    MULTICORE_ALIAS,
    "hardware_sweeps",
)


class WorkflowConfig(Section):
    """The whole workflow config."""

    results: StrictStr = Field("results", description="folder of the per-experiment results")
    cache: StrictStr = Field(
        None, description="content-addressed per-layer cache (default: <results>/.cache)"
    )
    defaults: Options = Field(
        default_factory=Options,
        description="options applied to every experiment unless it sets them itself",
    )
    experiments: list[Experiment] = Field(default_factory=list)
    sweeps: list[GridSweep] = Field(
        default_factory=list,
        description="every combination of the list-valued entries becomes an experiment",
    )
    multicore_experiments: list[MulticoreExperiment] = Field(
        default_factory=list,
        validation_alias=AliasChoices("multicore_experiments", MULTICORE_ALIAS),
        description="multi-core experiments, scheduled layer by layer (lbl) or fused "
        f"(older name: {MULTICORE_ALIAS})",
    )
    hardware_sweeps: list[HardwareSweep] = Field(
        default_factory=list,
        description="variants of one base accelerator, each evaluated on every workload "
        "(docs/reference/sweeps.md)",
    )
    outputs: Outputs = Field(default_factory=Outputs)

    @property
    def multicore_section(self) -> str:
        """The name the config gave its multi-core experiments (for messages)."""
        return MULTICORE_ALIAS if MULTICORE_ALIAS in self._order else "multicore_experiments"
