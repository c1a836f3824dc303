"""The cost model's set-up shared by hardware variants of one structure (zigzag/cost/model/setup.py:
frames, levels and ports kept; zigzag/cost/model/quantities.py: spatial quantities kept by frame):
the kept parts give the set-ups, spatial quantities and results that fresh ones give."""

from __future__ import annotations

import dataclasses

import yaml

from support import DATA, REPO
from zigzag.cost.model import quantities, setup
from zigzag.cost.model.quantities import normalise_levels, spatial_analysis, spatial_quantities_of
from zigzag.cost.model.setup import layer_setup
from zigzag.io.accelerator_dict import accelerator_from_dict
from zigzag.io.loaders import load_workload
from zigzag.io.validation import validate_accelerator
from zigzag.mapping.entry import MappingEntry
from zigzag.mapping_search import spatial_mapping
from zigzag.mapping_search.layer_search import search_layer
from zigzag.mapping_search.options import SearchOptions
from zigzag.mapping_search.spatial_generator import fitting_spatial_mappings

BASE = REPO / "inputs" / "hardware" / "flow_tpu_32x32.yaml"
MAPPING = REPO / "inputs" / "mapping" / "flow_tpu_32x32.yaml"
WORKLOAD = DATA / "workflow" / "small_convs.yaml"


def variant(buffer: int, bandwidth: int, cost: float, edge: int = 32):
    """The 32x32 example with another array edge, unified buffer size, port bandwidth and cost."""
    document = yaml.safe_load(BASE.read_text())
    document["operational_array"]["sizes"] = [edge, edge]
    memory = document["memories"]["unified_buffer"]
    memory["size"], memory["r_cost"], memory["w_cost"] = buffer, cost, cost / 2
    for port in memory["ports"]:
        port["bandwidth_max"] = bandwidth
    return accelerator_from_dict(validate_accelerator(document, "variant"))


def forget() -> None:
    """Empty every cache of the set-up and of the spatial quantities."""
    layer_setup.cache_clear()
    setup._FRAMES.clear()
    setup._level.cache_clear()
    setup._ports.cache_clear()
    setup.structure.cache_clear()
    quantities._SPATIAL.clear()


def described(s) -> dict:
    """Everything a set-up holds, as plain values (memories by name, checked to be its own)."""
    for operand in s.operands.values():
        for level in operand.levels:
            assert level.memory is s.accelerator.memory[level.memory.name]
    return {
        "operands": {
            op: (
                o.name,
                o.mem_op,
                o.is_output,
                o.precision,
                o.final_precision,
                o.relevant,
                o.irrelevant,
                o.relevant_dec,
                o.irrelevant_dec,
                o.pr_relations,
                [(lv.memory.name, *lv[1:]) for lv in o.levels],
            )
            for op, o in s.operands.items()
        },
        "ports": [
            (p.memory, p.name, p.bw_max, p.duties, p.loading_duties, p.shared_by_two_inputs)
            for p in s.ports
        ],
        "rest": (s.pr_sizes, s.sharing_groups, s.memory_names, s.total_units, s.cycles_per_op),
    }


def test_variants_of_one_structure_share_frames_and_equal_fresh_set_ups():
    entries = [MappingEntry.from_dict(e) for e in yaml.safe_load(MAPPING.read_text())]
    layers = load_workload(str(WORKLOAD), entries).layers
    accelerators = [
        variant(2**23, 512, 1567.67),
        variant(2**20, 128, 200.0),  # sizes, bandwidths and costs: the same structure
        variant(2**23, 512, 1567.67, edge=16),  # another array: another structure
    ]
    options = SearchOptions(lpf_limit=2)
    kept, spatial, results = {}, {}, {}
    for layer in layers:
        first, second, other = (layer_setup(layer, a) for a in accelerators)
        assert second.frame is first.frame and other.frame is not first.frame
        assert [p.bw_max for p in second.ports] != [p.bw_max for p in first.ports]
        for n, s in enumerate((first, second, other)):
            kept[layer.id, n] = described(s)
            array_mapping = fitting_spatial_mappings(
                layer, accelerators[n], nb_mappings=1, enable_mixing=False
            )[0]
            fractional = normalise_levels(
                spatial_mapping.convert(array_mapping, layer, accelerators[n])[0]
            )
            levels = tuple((op, fractional[op]) for op in s.operands)
            spatial[layer.id, n] = levels, spatial_analysis(s, levels)
            assert spatial[layer.id, n][1] == spatial_quantities_of(s, levels)
            results[layer.id, n] = search_layer(layer, accelerators[n], options)[0].to_dict()
        assert spatial[layer.id, 1][1] is spatial[layer.id, 0][1]  # kept by the frame
    forget()
    for layer in layers:
        for n, accelerator in enumerate(accelerators):
            fresh = layer_setup(layer, accelerator)
            assert described(fresh) == kept[layer.id, n]
            levels, quantities_kept = spatial[layer.id, n]
            assert spatial_analysis(fresh, levels) == quantities_kept
            assert search_layer(layer, accelerator, options)[0].to_dict() == results[layer.id, n]


def test_set_ups_made_at_once_hold_every_field():
    """``layer_setup`` makes its Operand and Setup without the dataclasses' ``__init__``
    (``setup.made``): every field set, nothing else, equal to what the constructor gives."""
    entries = [MappingEntry.from_dict(e) for e in yaml.safe_load(MAPPING.read_text())]
    layer = load_workload(str(WORKLOAD), entries).layers[0]
    s = layer_setup(layer, variant(2**23, 512, 1567.67))
    assert set(vars(s)) == {f.name for f in dataclasses.fields(setup.Setup)}
    for operand in s.operands.values():
        assert vars(operand) == vars(setup.Operand(**vars(operand)))
