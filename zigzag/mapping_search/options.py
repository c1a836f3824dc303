"""Every option of a run, in one table: the command line, the config models and the API use it.

Names and meanings are those of ZigZag's API (``get_hardware_performance_zigzag``); ``salsa_seed``
and ``evaluate_all_operators`` are ours. :data:`OPTIONS` is the table; :class:`SearchOptions`
holds the options that decide a layer's search result (its fields are the table's ``search``
rows). ``evaluate_all_operators`` decides how an ONNX model is read, not how a layer is searched.
"""

from __future__ import annotations

import math
import numbers
from dataclasses import asdict, dataclass, fields, replace
from typing import Any

from zigzag.errors import InputError

OPTIMISATION_CRITERIA = ("energy", "latency", "EDP")
TEMPORAL_ENGINES = ("loma", "salsa")
TEMPORAL_MAPPING_TYPES = ("uneven", "even")
SALSA_CRITERIA = ("energy", "latency")
LATENCY_MODELS = (
    "zigzag",
    "bandwidth_bound",
)  # as zigzag.cost.model.LATENCY_MODELS (not imported: a light module)
#: the latency model by workload: bandwidth_bound for an LLM step, zigzag otherwise
AUTO_LATENCY = "auto"


@dataclass(frozen=True)
class Option:
    """One row of the option table."""

    name: str
    type: type  # bool, int, float or str
    default: Any
    help: str
    choices: tuple[str, ...] = ()
    minimum: float | None = None  # smallest allowed value
    above: float | None = None  # values must be greater than this
    scope: str = "search"  # "search": part of SearchOptions; "workload": how the workload is read

    def check(self, value: Any) -> Any:
        """``value`` as a plain Python value if allowed for this option, else a one-line InputError."""
        if not _is_type(value, self.type):
            raise InputError(
                None,
                self.name,
                f"{value!r} is not {_TYPE_WORDS[self.type]}; "
                f"give e.g. {self.name}: {_yaml(self.default)}",
            )
        value = self.type(value)  # numpy numbers -> int / float
        if self.type is float and not math.isfinite(value):
            raise InputError(None, self.name, f"must be a finite number, got {value}")
        if self.choices and value not in self.choices:
            raise InputError(None, self.name, f"'{value}' is not one of {', '.join(self.choices)}")
        if self.minimum is not None and value < self.minimum:
            raise InputError(
                None, self.name, f"must be at least {_yaml(self.minimum)}, got {value}"
            )
        if self.above is not None and value <= self.above:
            raise InputError(
                None, self.name, f"must be greater than {_yaml(self.above)}, got {value}"
            )
        return value


_TYPE_WORDS = {bool: "true or false", int: "a whole number", float: "a number", str: "text"}


def _is_type(value: Any, kind: type) -> bool:
    if isinstance(value, bool) or kind is bool:
        return isinstance(value, bool) and kind is bool
    return isinstance(value, {int: numbers.Integral, float: numbers.Real}.get(kind, kind))


def _yaml(value: Any) -> str:
    return str(value).lower() if isinstance(value, bool) else str(value)


#: The option table. Order: as listed by ``zigzag run --help``.
OPTIONS: tuple[Option, ...] = (
    Option(
        "opt",
        str,
        "latency",
        "what the best mapping minimises: energy, latency or EDP (energy x delay)",
        choices=OPTIMISATION_CRITERIA,
    ),
    Option(
        "lpf_limit",
        int,
        6,
        "LOMA: at most this many loop prime factors are permuted; higher = more loop "
        "orderings searched, slower",
        minimum=1,
    ),
    Option(
        "nb_spatial_mappings_generated",
        int,
        3,
        "how many of the best-ranked spatial mappings are searched per layer",
        minimum=1,
    ),
    Option(
        "temporal_mapping_search_engine",
        str,
        "loma",
        "loma: exhaustive loop-order search; salsa: simulated annealing",
        choices=TEMPORAL_ENGINES,
    ),
    Option(
        "temporal_mapping_type",
        str,
        "uneven",
        "uneven: operands sharing a memory may cut the loop nest at "
        "different places; even: they must cut it at the same place",
        choices=TEMPORAL_MAPPING_TYPES,
    ),
    Option(
        "exploit_data_locality",
        bool,
        False,
        "keep activations between layers in the lowest memory that "
        "holds them instead of going through the top memory",
    ),
    Option(
        "enable_mix_spatial_mapping",
        bool,
        False,
        "also generate spatial mappings unrolling several layer "
        "dims on one array dim (turns on exploit_data_locality "
        "unless that is set explicitly)",
    ),
    Option(
        "access_same_data_considered_as_no_access",
        bool,
        True,
        "an input word the MACs use for several "
        "cycles in a row is read from the innermost "
        "memory once, not once per cycle",
    ),
    Option(
        "latency_model",
        str,
        AUTO_LATENCY,
        "zigzag: ZigZag's latency (its on-loading estimate can credit a port with "
        "more bits than its bandwidth carries); bandwidth_bound: the same, but never "
        "below the cycles every memory port needs for the bits crossing it; auto: "
        "bandwidth_bound for an LLM step (a workload with inference metadata), zigzag otherwise",
        choices=(AUTO_LATENCY, *LATENCY_MODELS),
    ),
    Option("salsa_iteration_number", int, 1000, "SALSA: annealing iterations", minimum=1),
    Option("salsa_start_temperature", float, 0.05, "SALSA: initial annealing temperature", above=0),
    Option(
        "salsa_opt_criterion",
        str,
        "energy",
        "SALSA: what the annealing minimises",
        choices=SALSA_CRITERIA,
    ),
    Option("salsa_seed", int, 0, "SALSA: random seed; the same seed gives the same result"),
    Option(
        "evaluate_all_operators",
        bool,
        False,
        "ONNX: also evaluate pooling (MaxPool, AveragePool, "
        "GlobalAveragePool) and element-wise (Add, Sub, Mul) tensor "
        "operators as layers (ZigZag skips them; Conv, Gemm and MatMul "
        "are always evaluated)",
        scope="workload",
    ),
    Option(
        "operators",
        str,
        "zigzag",
        "ONNX: zigzag = the operators ZigZag evaluates (Conv, Gemm, MatMul; more with "
        "evaluate_all_operators); all = every operator as layers of the operator model "
        "(vector layers for element-wise, reductions, transcendental functions, gathers, "
        "KV-cache appends)",
        choices=("zigzag", "all"),
        scope="workload",
    ),
    Option(
        "causal_blocks",
        int,
        8,
        "ONNX with operators all: a causal attention's query rows are split into this many "
        "blocks, each attending only the keys up to its last row (0: masked work counted "
        "in full)",
        minimum=0,
        scope="workload",
    ),
)
OPTION_BY_NAME = {option.name: option for option in OPTIONS}


def _default(name: str) -> Any:
    return OPTION_BY_NAME[name].default


@dataclass(frozen=True)
class SearchOptions:
    """Everything besides the layer and the accelerator that decides a layer's result (see OPTIONS)."""

    opt: str = _default("opt")
    lpf_limit: int = _default("lpf_limit")
    nb_spatial_mappings_generated: int = _default("nb_spatial_mappings_generated")
    temporal_mapping_search_engine: str = _default("temporal_mapping_search_engine")
    temporal_mapping_type: str = _default("temporal_mapping_type")
    exploit_data_locality: bool = _default("exploit_data_locality")
    enable_mix_spatial_mapping: bool = _default("enable_mix_spatial_mapping")
    access_same_data_considered_as_no_access: bool = _default(
        "access_same_data_considered_as_no_access"
    )
    latency_model: str = _default("latency_model")
    salsa_iteration_number: int = _default("salsa_iteration_number")
    salsa_start_temperature: float = _default("salsa_start_temperature")
    salsa_opt_criterion: str = _default("salsa_opt_criterion")
    salsa_seed: int = _default("salsa_seed")

    def __post_init__(self):
        for field in fields(self):
            object.__setattr__(
                self, field.name, OPTION_BY_NAME[field.name].check(getattr(self, field.name))
            )

    def to_dict(self) -> dict:
        return asdict(self)

    @property
    def cost_latency_model(self) -> str:
        """The latency model the cost model applies: ``auto`` not resolved for a workload
        (:meth:`resolved`) is ZigZag's."""
        return "zigzag" if self.latency_model == AUTO_LATENCY else self.latency_model

    def resolved(self, llm: bool) -> "SearchOptions":
        """These options with ``auto`` resolved: ``bandwidth_bound`` for an LLM step (``llm``: the
        workload has inference metadata, i.e. it is generated from a model configuration or an
        ONNX export read with every operator), ``zigzag`` for anything else."""
        if self.latency_model != AUTO_LATENCY:
            return self
        return replace(self, latency_model="bandwidth_bound" if llm else "zigzag")

    def model_options(self) -> dict:
        """The keyword options of the cost model (``zigzag.cost.model.evaluate``) these options set."""
        return {
            "access_same_data_considered_as_no_access": self.access_same_data_considered_as_no_access,
            "latency_model": self.cost_latency_model,
        }


def resolve_options(given: dict) -> tuple[SearchOptions, dict]:
    """Split options given by name (any table option) into SearchOptions and the workload options.

    Options not given take the table's default, except that ``enable_mix_spatial_mapping`` turns
    on ``exploit_data_locality`` unless that is given. Unknown names and bad values raise a
    one-line InputError naming the option.
    """
    unknown = sorted(set(given) - set(OPTION_BY_NAME))
    if unknown:
        raise InputError(
            None, unknown[0], f"unknown option; known options: {', '.join(OPTION_BY_NAME)}"
        )
    values = {name: OPTION_BY_NAME[name].check(value) for name, value in given.items()}
    if values.get("enable_mix_spatial_mapping") and "exploit_data_locality" not in values:
        values["exploit_data_locality"] = True
    search = {k: v for k, v in values.items() if OPTION_BY_NAME[k].scope == "search"}
    workload = {o.name: values.get(o.name, o.default) for o in OPTIONS if o.scope == "workload"}
    return SearchOptions(**search), workload
