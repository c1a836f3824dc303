"""Search options, named as in ZigZag's API (``get_hardware_performance_zigzag``)."""

from __future__ import annotations

from dataclasses import asdict, dataclass, fields

from zigzag.errors import InputError

OPTIMISATION_CRITERIA = ("energy", "latency", "EDP")
TEMPORAL_ENGINES = ("loma", "salsa")
TEMPORAL_MAPPING_TYPES = ("uneven", "even")


@dataclass(frozen=True)
class SearchOptions:
    """Everything besides the layer and the accelerator that decides a layer's result."""

    opt: str = "latency"
    lpf_limit: int = 6
    nb_spatial_mappings_generated: int = 3
    temporal_mapping_search_engine: str = "loma"
    temporal_mapping_type: str = "uneven"
    enable_mix_spatial_mapping: bool = False
    exploit_data_locality: bool = False
    access_same_data_considered_as_no_access: bool = True
    salsa_iteration_number: int = 1000
    salsa_start_temperature: float = 0.05
    salsa_opt_criterion: str = "energy"
    salsa_seed: int = 0

    def __post_init__(self):
        _choice("opt", self.opt, OPTIMISATION_CRITERIA)
        _choice("temporal_mapping_search_engine", self.temporal_mapping_search_engine, TEMPORAL_ENGINES)
        _choice("temporal_mapping_type", self.temporal_mapping_type, TEMPORAL_MAPPING_TYPES)
        _choice("salsa_opt_criterion", self.salsa_opt_criterion, ("energy", "latency"))
        if self.nb_spatial_mappings_generated < 1:
            raise InputError(None, "nb_spatial_mappings_generated", "must be at least 1")
        if self.lpf_limit < 1:
            raise InputError(None, "lpf_limit", "must be at least 1")

    def to_dict(self) -> dict:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict) -> "SearchOptions":
        known = {f.name for f in fields(cls)}
        unknown = sorted(set(data) - known)
        if unknown:
            raise InputError(None, unknown[0], f"unknown search option; known options: {', '.join(sorted(known))}")
        return cls(**data)


def _choice(name: str, value, allowed: tuple) -> None:
    if value not in allowed:
        raise InputError(None, name, f"'{value}' is not one of {', '.join(allowed)}")
