"""Dump the ZigZag-named attributes of the reference's per-layer results to JSON (oracle data for
tests/compat/test_compat_main.py). Run with the reference ZigZag installed, outside this checkout (so that
`import zigzag` finds the reference), e.g.:

    cd /tmp && /path/to/reference-venv/bin/python /path/to/tools/make_compat_oracle.py \
        --workload W --accelerator A --mapping M --opt energy --output out.json
    ... --pickle list_of_cmes.pickle        # dump an existing pickle of the reference's results

Values are written in plain JSON: directions by their long names, ports by name, operands as text.
"""

from __future__ import annotations

import argparse
import json
import pickle
import tempfile

ATTRIBUTES_PER_OPERAND = (
    "mem_utili_individual",
    "mem_utili_shared",
    "effective_mem_utili_individual",
    "effective_mem_utili_shared",
    "double_buffer_true",
    "data_loading_individual_part",
    "data_loading_half_shared_part",
    "data_loading_shared_part",
    "data_loading_cc_pair_combined_per_op",
    "active_mem_level",
)
MAPPING_NAMES = (
    "data_elem_per_level_unrolled",
    "data_bit_per_level_unrolled",
    "data_elem_per_level",
    "data_bit_per_level",
    "effective_data_bit",
)
SCALARS = (
    "energy_total",
    "mac_energy",
    "mem_energy",
    "latency_total0",
    "latency_total1",
    "latency_total2",
    "ideal_cycle",
    "ideal_temporal_cycle",
    "stall_slack_comb",
    "data_onloading_cycle",
    "data_offloading_cycle",
    "cycles_per_op",
    "access_same_data_considered_as_no_access",
    "mac_spatial_utilization",
    "mac_utilization0",
    "mac_utilization1",
    "mac_utilization2",
    "cumulative_layer_ids",
)


def plain(value):
    """JSON form of the reference's values (enums by value, keys as text, four-way data by direction)."""
    if (
        hasattr(value, "data")
        and isinstance(value.data, dict)
        and type(value).__name__ in ("FourWayDataMoving", "MemoryAccesses", "AccessEnergy")
    ):
        return {str(k.value): plain(v) for k, v in value.data.items()}
    if isinstance(value, dict):
        return {str(getattr(k, "value", k)): plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [plain(v) for v in value]
    if hasattr(value, "value") and not isinstance(value, (int, float, str, bool)):
        return plain(value.value)
    if isinstance(value, (int, float, str, bool)) or value is None:
        return value
    return str(value)


def dump(cme) -> dict:
    data = {name: plain(getattr(cme, name)) for name in SCALARS}
    data.update({name: plain(dict(getattr(cme, name))) for name in ATTRIBUTES_PER_OPERAND})
    data["layer"] = cme.layer.name
    data["mem_level_list"] = [level.memory_instance.name for level in cme.mem_level_list]
    data["mem_hierarchy_dict"] = {
        str(op): [lv.name for lv in levels] for op, levels in cme.mem_hierarchy_dict.items()
    }
    data["mem_size_dict"] = plain(cme.mem_size_dict)
    data["mem_sharing_tuple"] = plain(cme.mem_sharing_tuple)
    data["stall_slack_comb_collect"] = plain(cme.stall_slack_comb_collect)
    data["mem_updating_window_union_collect"] = plain(cme.mem_updating_window_union_collect)
    data["port_activity_collect"] = [
        {
            port: [
                [
                    a.real_cycle,
                    a.allowed_cycle,
                    a.period,
                    a.period_count,
                    plain(a.served_op_lv_dir),
                    a.stall_or_slack,
                    a.mem_updating_window,
                ]
                for a in acts
            ]
            for port, acts in ports.items()
        }
        for ports in cme.port_activity_collect
    ]
    data["real_data_trans_cycle"] = plain(cme.real_data_trans_cycle)
    data["allowed_mem_update_cycle"] = plain(cme.allowed_mem_update_cycle)
    data["data_loading_cc_per_op"] = plain(cme.data_loading_cc_per_op)
    data["data_offloading_cc_per_op"] = plain(cme.data_offloading_cc_per_op)
    data["data_offloading_cc_pair_combined"] = plain(cme.data_offloading_cc_pair_combined)
    data["memory_word_access"] = plain(cme.memory_word_access)
    data["mem_energy_breakdown"] = plain(cme.mem_energy_breakdown)
    data["mem_energy_breakdown_further"] = plain(cme.mem_energy_breakdown_further)
    data["spatial_mapping_dict_int"] = {
        str(op): [[[str(dim), size] for dim, size in level] for level in levels]
        for op, levels in cme.spatial_mapping_dict_int.items()
    }
    data["temporal_mapping.mapping_dic_origin"] = {
        str(op): [[[str(dim), size] for dim, size in level] for level in levels]
        for op, levels in cme.temporal_mapping.mapping_dic_origin.items()
    }
    data["data_loading_per_mem_inst"] = [
        {
            str(port): [
                [a.real_cycle, a.data_in_charge, a.mem_bw, plain(a.served_op_lv_dir)] for a in acts
            ]
            for port, acts in ports.items()
        }
        for ports in cme.data_loading_per_mem_inst
    ]
    data["data_offloading_per_mem_inst"] = plain(cme.data_offloading_per_mem_inst)
    # ports are keyed by object in the reference: written as "<memory name>/<port name>"
    owner = {port: level.name for level in cme.mem_level_list for port in level.ports}
    for name in (
        "loading_cycles_during_computation",
        "loading_bw_during_computation",
        "total_loading_cycles_during_computation",
        "total_loading_bw_during_computation",
    ):
        data[name] = {
            f"{owner[port]}/{port}": plain(value) for port, value in getattr(cme, name).items()
        }
    for name in (
        "loading_offloading_cycles_borrowed_from_computation",
        "loading_offloading_bandwidth_borrowed_from_computation",
    ):
        data[name] = plain(getattr(cme, name))
    for name in MAPPING_NAMES:
        data[f"mapping.{name}"] = plain(getattr(cme.mapping, name))
        data[f"mapping_int.{name}"] = plain(getattr(cme.mapping_int, name))
    data["mapping.mem_level"] = plain(cme.mapping.mem_level)
    data["mapping_int.mem_level"] = plain(cme.mapping_int.mem_level)
    data["memory_operand_links"] = {
        str(k): str(v) for k, v in cme.memory_operand_links.data.items()
    }
    return data


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pickle")
    parser.add_argument("--workload")
    parser.add_argument("--accelerator")
    parser.add_argument("--mapping")
    parser.add_argument("--opt", default="latency")
    parser.add_argument("--lpf-limit", type=int, default=6)
    parser.add_argument("--output", required=True)
    args = parser.parse_args()
    if args.pickle:
        with open(args.pickle, "rb") as handle:
            cmes = pickle.load(handle)
    else:
        from zigzag.api import get_hardware_performance_zigzag

        with tempfile.TemporaryDirectory() as folder:
            _, _, results = get_hardware_performance_zigzag(
                args.workload,
                args.accelerator,
                args.mapping,
                opt=args.opt,
                lpf_limit=args.lpf_limit,
                dump_folder=folder,
                pickle_filename=f"{folder}/cmes.pickle",
            )
        cmes = [cme for cme, _ in results[0][1]]
    with open(args.output, "w", encoding="utf-8") as handle:
        json.dump([dump(cme) for cme in cmes], handle, indent=1)


if __name__ == "__main__":
    main()
