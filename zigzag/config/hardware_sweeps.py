"""A ``hardware_sweeps`` entry of the workflow config: variants of one base accelerator.

The fields' types and defaults, and the checks of the entry alone: the keys its ``kind`` allows,
a mapping or a generated spatial mapping, one clock spelling, expressions that parse. The
workflow, the command line and the API all read a sweep into this model
(:func:`zigzag.sweep.config.read_sweep`), which then checks what needs the files (paths into the
base accelerator, constraints over its parameters, workload points). docs/reference/sweeps.md
documents every field.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal, Optional, Union

from pydantic import Field, StrictBool, StrictStr, field_validator, model_validator

from zigzag.config.base import FileOrList, Name, Section, number, problem, said, whole
from zigzag.config.options import Options
from zigzag.errors import InputError
from zigzag.mapping_search.options import OPTIONS
from zigzag.variants import expressions
from zigzag.multicore.pipeline.spec import CHOICES, MODES, SEARCH_METHODS, search_defaults

#: an allocation search section's defaults, from the one place (the multi-core run description)
SEARCH = search_defaults()

#: the fields of an ``llm:`` workload section a sweep may vary (``workload_vary``)
WORKLOAD_FIELDS = (
    "context",
    "batch",
    "tokens",
    "phase",
    "layers",
    "precision",
    "precision.weights",
    "precision.activations",
    "precision.kv_cache",
    "logits",
)
#: keys of a multi-core sweep only
MULTICORE_ONLY = ("modes", "layer_stacks", "allocation_search")
#: keys of a single-core sweep only: its search options (but the latency model), and these
SINGLE_ONLY = ("spatial_mapping", "search", "workload_vary")
Values = Annotated[
    list[Any],
    Field(min_length=1),
    said(
        "{value!r} is not a list; write the values as a list, e.g. [32KiB, 64KiB]",
        when=lambda value: not isinstance(value, list),
    ),
]


def _entries(kind: Any) -> Any:
    """A mapping of parameters or paths to ``kind`` (vary, derive, params)."""
    return Annotated[
        dict[str, kind],
        said(
            "{value!r} is not a mapping; write '<parameter or path>: ...' entries",
            when=lambda value: not isinstance(value, dict),
        ),
    ]


class FragmentAddition(Section):
    """A key or list entry a fragment adds."""

    path: StrictStr
    value: Any = Field(description="the value added")
    before: StrictStr = Field(None, description="the sibling key it goes before (default: last)")


class Fragment(Section):
    """The edits of one fragment option."""

    remove: list[StrictStr] = Field(default_factory=list, description="paths to remove")
    add: list[FragmentAddition] = Field(
        default_factory=list, description="keys or list entries to add"
    )
    set: dict[str, Any] = Field(default_factory=dict, description="path -> new value")


class MulticoreAllocationSearch(Section):
    """A multi-core sweep's allocation search budget (a mapping that leaves cores to choose);
    same defaults as a multi-core experiment's ``search``."""

    method: Literal[tuple(SEARCH_METHODS)] = Field(
        SEARCH["method"], description="ga: genetic search; co: constraint optimisation"
    )
    time_limit: number(gt=0) = Field(
        SEARCH["time_limit"], description="co: seconds per layer stack's solve"
    )
    gap: number(gt=0, lt=1) = Field(SEARCH["gap"], description="co: relative optimality gap")
    individuals: whole(ge=2) = SEARCH["individuals"]
    generations: whole(ge=0) = SEARCH["generations"]
    seed: whole() = SEARCH["seed"]
    choose: Literal[CHOICES] = SEARCH["choose"]


class Ranking(Section):
    """How the HTML report ranks the variants across the workloads."""

    method: Literal["geomean", "sum"] = "geomean"
    objective: Literal["energy", "latency", "edp", "area"] = "energy"
    weights: dict[str, number(ge=0)] = Field(
        default_factory=dict, description="workload name -> weight (default 1 each)"
    )


class GuidedSearch(Section):
    """A guided search over the grid instead of every variant."""

    method: Literal["guided", "nsga2"] = Field(
        "guided",
        description="guided: models of feasibility and objectives choose each batch; "
        "nsga2: a genetic search",
    )
    population: whole(ge=4) = Field(16, description="candidates kept and children per generation")
    generations: whole(ge=1) = 8
    seed: whole() = 0
    workers: whole(ge=1) = Field(2, description="processes evaluating candidates")
    screen: StrictBool = Field(
        True,
        description="guided: skip the variants a feasibility screen (validation, and per layer "
        "whether any allocation fits) shows cannot run",
    )


class HardwareSweep(Options):
    """One hardware sweep (its single-core search options are those of :class:`Options`)."""

    name: Name = Field(description="the sweep's name (its results folder)")
    kind: Literal["single", "multicore"] = Field(
        "single",
        description="single: a single-core accelerator; multicore: a multi-core accelerator "
        "file, each variant scheduled",
    )
    base: StrictStr = Field(description="accelerator YAML the variants start from")
    modes: Annotated[
        list[Literal[MODES]],
        Field(min_length=1),
        said("{value!r} is not a list of lbl and fused; e.g. [lbl, fused]"),
    ] = Field(
        ["lbl"],
        description="multicore: the scheduling modes, one row per variant, workload and mode",
    )
    layer_stacks: Annotated[
        str, Field(min_length=1), said("give stacks of layer ids such as '0-10;11-21'")
    ] = Field(None, description="multicore, fused mode: stacks of layer ids, e.g. '0-10;11-21'")
    allocation_search: MulticoreAllocationSearch = Field(
        None,
        description="multicore: the budget of the allocation search run when the mapping "
        "leaves cores to choose",
    )
    params: _entries(StrictStr) = Field(
        default_factory=dict,
        description="short names for paths, e.g. {D1: 'operational_array.sizes[0]'}",
    )
    vary: _entries(Values) = Field(
        default_factory=dict,
        description="parameter or path -> list of values; every combination is a variant",
    )
    zip: list[dict[str, Values]] = Field(
        default_factory=list,
        description="groups of parameters varied in step (lists of the same length)",
    )
    derive: _entries(Union[StrictStr, number()]) = Field(
        default_factory=dict,
        description="parameter or path -> arithmetic expression over parameters and paths, "
        "e.g. 'D1 * 8'",
    )
    fragments: dict[str, dict[str, Optional[Fragment]]] = Field(
        default_factory=dict,
        description="group -> option -> edits (remove, add, set); each group is one more axis",
    )
    name_format: Annotated[
        StrictStr, said("{value!r} is not a text; give a text such as 'tpu{{D1}}x{{D2}}-ub{{ub}}'")
    ] = Field(
        None,
        description="variant names, e.g. 'tpu{D1}x{D2}-ub{ub}' (default: base name and parameters)",
    )
    workloads: Annotated[
        FileOrList,
        said("{value!r} is not a workload file or a list of them; give a list of workload files"),
    ]
    mapping: StrictStr = Field(
        None,
        description="mapping YAML; unrolling sizes may be expressions such as 'K, D1' "
        "(multicore: a multi-core mapping, cores may be roles)",
    )
    spatial_mapping: Literal["given", "generate"] = "given"
    constraints: Annotated[
        list[StrictStr],
        said(
            "{value!r} is not a list; write e.g. ['area <= 5 mm2']",
            when=lambda value: not isinstance(value, list),
        ),
    ] = Field(default_factory=list, description="e.g. 'area <= 5 mm2', 'latency <= 2 ms'")
    clock_ghz: Union[number(), StrictStr] = Field(
        None,
        description="clock frequency in GHz (a number or an expression over parameters)",
    )
    clock_ns: Union[number(gt=0), StrictStr] = Field(
        None,
        description="older spelling: a clock period in ns, read as clock_ghz = 1 / clock_ns "
        "with a warning",
    )
    batch_size: Annotated[
        Union[whole(ge=1), Literal["auto"]],
        said("{value!r} is neither a positive whole number nor 'auto'"),
    ] = Field("auto", description="variants per workflow job; auto: at most 48 jobs per sweep")
    workload_vary: dict[Literal[WORKLOAD_FIELDS], Values] = Field(
        default_factory=dict,
        description="LLM workload fields varied beside the hardware (workloads generated from "
        "a model configuration only), each with a list of values; every combination is "
        "evaluated on every variant",
    )
    ranking: Annotated[
        Ranking,
        said(
            "{value!r} is not a mapping; write e.g. {{method: geomean, weights: {{resnet18: 2}}}}",
            when=lambda value: not isinstance(value, dict),
        ),
    ] = Field(
        None,
        description="how the HTML report ranks the variants across the workloads "
        "(default: geometric mean of energy, equal weights)",
    )
    search: GuidedSearch = Field(
        None, description="a guided search (over energy, latency and area) instead of every variant"
    )

    @field_validator("clock_ghz", "clock_ns")
    @classmethod
    def _parses(cls, value):
        if isinstance(value, str):
            try:
                expressions.parse(value)
            except expressions.ExpressionError as exc:
                raise problem(str(exc)) from None
        return value

    @field_validator("layer_stacks")
    @classmethod
    def _stacks(cls, value: str) -> str:
        from zigzag.multicore.tiling import parse_layer_stacks

        try:
            parse_layer_stacks(value)
        except InputError as exc:
            raise problem(exc.message) from None
        return value

    @model_validator(mode="after")
    def _fits_kind(self) -> "HardwareSweep":
        given = [key for key in type(self).model_fields if key in self.model_fields_set]
        if self.kind == "multicore":
            options = {o.name for o in OPTIONS if o.name != "latency_model"}
            extra = next((k for k in given if k in options or k in SINGLE_ONLY), None)
            if extra is not None:
                what = "a single-core option" if extra in options else "a key of single-core sweeps"
                raise problem(f"{what}, not used by multi-core sweeps; remove it", extra)
        else:
            extra = next((k for k in given if k in MULTICORE_ONLY), None)
            if extra is not None:
                raise problem(
                    "is a key of multi-core sweeps only; add 'kind: multicore' or remove it", extra
                )
            if self.mapping is None and self.spatial_mapping == "given":
                raise problem(
                    "missing; give a mapping file, or spatial_mapping: generate", "mapping"
                )
        if self.clock_ns is not None and self.clock_ghz is not None:
            raise problem("give clock_ghz only (clock_ns is its older spelling)", "clock_ns")
        return self
