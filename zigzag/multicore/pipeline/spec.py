"""What a multi-core run is: a frozen description, and the one place of its defaults.

A :class:`MulticoreRun` names the hardware, the workload, the mapping (a file, a parsed mapping,
or ``None`` for an automatic one), the mode, how layers get their cores (:data:`Allocation`:
:class:`FixedAllocation`, :class:`GeneticSearch` or :class:`ConstraintOptimisation`), the latency
model and the clock. The CLI, the one-call and Stage APIs, the workflow and the sweeps all build
one and hand it to :mod:`zigzag.multicore.pipeline` (docs/models/multi-core.md#one-pipeline).

The allocation options' defaults are the workflow's and the sweeps' (``search:`` of a
``multicore_experiments`` entry, ``allocation_search:`` of a multi-core sweep); Stream's own
entry points (``zigzag multicore search``, ``optimize_allocation_ga``, the Stage API) use
:data:`STREAM_GENETIC_SEARCH`, Stream's population and generation counts. This module imports
nothing heavy, so configuration code can read the defaults from it.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, fields
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, Union

from zigzag.errors import InputError

if TYPE_CHECKING:
    from zigzag.multicore.hardware import MultiCoreAccelerator
    from zigzag.multicore.mapping import StreamMapping
    from zigzag.multicore.tiling import SeedTiling

MODES = ("lbl", "fused")
"""``lbl``: layer by layer; ``fused``: the layers of a stack cut into rows and interleaved."""
LATENCY_MODELS = ("auto", "zigzag", "bandwidth_bound")
"""``auto``: ``bandwidth_bound`` for an LLM step, Stream's ``zigzag`` otherwise."""
CHOICES = ("latency", "energy", "edp")
"""Which point of a genetic search's front is the run's allocation."""


@dataclass(frozen=True)
class FixedAllocation:
    """Every layer runs on the one core its mapping entry gives."""

    method: ClassVar[str] = "fixed"


@dataclass(frozen=True)
class GeneticSearch:
    """The seeded NSGA-II search of the layer-to-core allocation on (energy, latency)."""

    individuals: int = 16
    generations: int = 8
    seed: int = 0
    choose: str = "latency"

    method: ClassVar[str] = "ga"

    def __post_init__(self) -> None:
        if self.choose not in CHOICES:
            raise InputError(None, "choose", f"'{self.choose}' is not one of {', '.join(CHOICES)}")


@dataclass(frozen=True)
class ConstraintOptimisation:
    """Stream's constraint-optimisation allocation: each stack's steady state solved by CP-SAT
    within ``time_limit`` seconds down to the relative optimality ``gap``."""

    time_limit: float = 600
    gap: float = 1e-4

    method: ClassVar[str] = "co"


Allocation = Union[FixedAllocation, GeneticSearch, ConstraintOptimisation]

STREAM_GENETIC_SEARCH = GeneticSearch(individuals=32, generations=100)
"""Stream's own search size: the default of ``zigzag multicore search`` and of Stream's APIs."""

SEARCH_METHODS = {
    GeneticSearch.method: GeneticSearch,
    ConstraintOptimisation.method: ConstraintOptimisation,
}


def search_defaults() -> dict[str, Any]:
    """A config ``search:`` / ``allocation_search:`` section with every key at its default:
    ``method`` (``ga`` or ``co``) and the options of both methods."""
    return {
        "method": GeneticSearch.method,
        **asdict(GeneticSearch()),
        **asdict(ConstraintOptimisation()),
    }


def allocation_of(section: dict[str, Any] | None) -> Allocation:
    """The allocation a config's (checked) search section asks for; ``None``: the fixed one."""
    if section is None:
        return FixedAllocation()
    method = SEARCH_METHODS[section.get("method", GeneticSearch.method)]
    names = {f.name for f in fields(method)}
    return method(**{k: v for k, v in section.items() if k in names})


@dataclass(frozen=True)
class MulticoreRun:
    """One multi-core run. ``accelerator``: a multi-core YAML file (core files found from ``cwd``,
    as Stream) or a built accelerator; ``mapping``: a Stream mapping file, a parsed mapping, or
    ``None`` (an automatic mapping); ``name``: the schedule's name (default: the workload file's
    stem); ``clock_ghz``: the clock of a transformer step's per-token seconds (default: the
    accelerator file's). ``lpf_limit`` and ``prefetch`` are the cost table's LOMA limit and the
    operands sent to their cores first; ``seed_tiling``, ``layer_splits`` and ``split_W_fraction``
    shape the CN graph (``zigzag multicore nodes``)."""

    accelerator: str | Path | MultiCoreAccelerator
    workload: str | Path
    mapping: str | Path | StreamMapping | None
    mode: str
    allocation: Allocation = FixedAllocation()
    layer_stacks: tuple[tuple[int, ...], ...] | None = None
    latency_model: str = "auto"
    clock_ghz: float | None = None
    lpf_limit: int = 6
    prefetch: tuple[str, ...] = ()
    name: str | None = None
    cwd: str | None = None
    seed_tiling: SeedTiling | None = None
    layer_splits: tuple[tuple[str, int], ...] = ()
    split_W_fraction: float | None = None

    def __post_init__(self) -> None:
        if self.mode not in MODES:
            raise InputError(None, "mode", f"'{self.mode}' is not one of {', '.join(MODES)}")
        if self.latency_model not in LATENCY_MODELS:
            raise InputError(
                None,
                "latency_model",
                f"{self.latency_model!r} is not one of {', '.join(LATENCY_MODELS)}",
            )
        if self.layer_stacks is not None:  # lists from the caller: kept as tuples
            object.__setattr__(self, "layer_stacks", tuple(tuple(s) for s in self.layer_stacks))
        object.__setattr__(self, "prefetch", tuple(self.prefetch))
        object.__setattr__(self, "layer_splits", tuple(dict(self.layer_splits).items()))

    @property
    def schedule_name(self) -> str:
        """The schedule's name: ``name``, else the workload file's stem."""
        return self.name if self.name is not None else Path(str(self.workload)).stem

    @property
    def mapping_file(self) -> str:
        """The mapping's file name (for messages and the written allocation's header)."""
        return str(getattr(self.mapping, "file", None) or self.mapping)
