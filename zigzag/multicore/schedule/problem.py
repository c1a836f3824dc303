"""The scheduler's input: a plain-data description of one scheduling problem.

Everything the scheduler needs is here as small immutable records and numpy arrays indexed by
computation node (CN), tensor, top memory and link; nothing refers back to workload, cost-table
or hardware objects. Builders (the reference dumps, the CN graph + cost table + hardware adapter)
fill it in; :func:`ScheduleProblem.validated` checks its consistency once.

Conventions: sizes in bits, bandwidths in bits/cycle, times in cycles, energies in pJ.
Memory operands are the integers :data:`I1`, :data:`I2`, :data:`O` (Stream's fixed links
``I→I1, W→I2, O→O``).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from zigzag.errors import InputError

I1, I2, O = 0, 1, 2
MEMORY_OPERANDS = ("I1", "I2", "O")
#: the multi-core latency models (the single-core option's names)
LATENCY_MODELS = ("zigzag", "bandwidth_bound")


def memory_operand_index(name: str) -> int:
    """``'I1'``/``'I2'``/``'O'`` → 0/1/2."""
    try:
        return MEMORY_OPERANDS.index(name)
    except ValueError:
        raise InputError(
            None, None, f"unknown memory operand {name!r}; use one of I1, I2, O"
        ) from None


@dataclass(frozen=True)
class TopMemory:
    """One top-level memory instance (shared memories appear once, with all their cores)."""

    name: str
    capacity: int  # bits
    r_bw: float  # bits/cycle of one read access (energy granularity of a transfer)
    w_bw: float
    r_cost: float  # energy per read access
    w_cost: float
    cores: tuple[int, ...]  # the cores whose top level this is; the first one sends its data

    @property
    def label(self) -> str:
        return f"{self.name}@core{self.cores[0]}"


@dataclass(frozen=True)
class Link:
    """A communication link object; one object may serve several (sender, receiver) pairs."""

    sender: str
    receiver: str
    bandwidth: float  # bits/cycle
    unit_energy: float  # energy per cycle of activity
    bidirectional: bool = False

    @property
    def label(self) -> str:
        arrow = "<->" if self.bidirectional else "->"
        return f"{self.sender} {arrow} {self.receiver}"


@dataclass(frozen=True)
class ScheduleHardware:
    """The multi-core facts the scheduler uses.

    ``top_memory[core, m]`` is the index in ``memories`` of the first top memory of ``core``
    holding memory operand ``m`` (-1: none). ``routes[(sender, receiver)]`` lists the link
    indices of the path, in order (empty for ``sender == receiver``).
    """

    cores: tuple[int, ...]  # core ids, the off-chip core included
    offchip_core: int
    memories: tuple[TopMemory, ...]
    top_memory: np.ndarray  # int, shape (max core id + 1, 3)
    links: tuple[Link, ...]
    routes: dict[tuple[int, int], tuple[int, ...]]

    def top(self, core: int, m: int) -> int:
        """Index of the top memory of ``core`` for memory operand ``m``."""
        idx = int(self.top_memory[core, m]) if 0 <= core < len(self.top_memory) else -1
        if idx < 0:
            raise InputError(
                None, f"core {core}", f"has no top memory for operand {MEMORY_OPERANDS[m]}"
            )
        return idx


@dataclass(frozen=True)
class ScheduleProblem:
    """One scheduling problem: CNs with their cost, tensors, dependencies and the priority order.

    Per CN ``n`` (index = the CN graph's node order):

    * ``layer[n]``, ``sub[n]``: the CN's ``(layer id, sub id)``;
    * ``core[n]``: the core it runs on; ``runtime[n]`` cycles;
    * ``onchip_energy[n]``, ``offchip_energy[n]``: ZigZag energy split (off-chip = the DRAM
      level's energy of the too-large operands);
    * ``too_large[n]``: memory operands streamed from DRAM, in Stream's order (equation order);
    * ``bw_to_offchip[n]`` (``wr_in_by_low``), ``bw_from_offchip[n]`` (``rd_out_to_low``): DRAM link
      bandwidth a streaming CN reserves while it runs (a rate: Stream's link model);
    * ``dram_bits[n]``: (bits read from, bits written to) DRAM per operand of ``too_large[n]``, the
      cost model's accesses of the DRAM level (None: not known, e.g. a problem from reference dumps);
    * ``final_output[n]``: the CN produces final outputs (``produces_final_output``);
    * ``operand_tensor[n, m]``: the CN's tensor in memory operand ``m`` (-1: none);
    * ``constants[n]``: memory operands of its constant operands, in constant-operand order;
    * ``cache_constants[n]``: those of them that are a KV cache (the past keys or values a decode
      step reads where the cache lives); empty where none is (or no CN has one: ``()``).

    Per tensor ``t``: ``tensor_size`` (bits), ``tensor_operand`` (its own memory operand; ``O``
    marks an output tensor), ``tensor_origin`` (the first CN owning it), ``tensor_base_priority``
    (number of CNs reusing a constant; 0 where Stream has none). Tensors with equal identity
    (layer, layer operand, ranges) within a layer must be one tensor.

    Edges (the CN graph's edges, one per CN pair): ``edge_src``, ``edge_dst``, ``edge_operand``
    (the consumer's memory operand; -1 for intra-layer edges), ``edge_bits``.

    ``latency_model``: ``zigzag`` (Stream's link model: a streaming CN runs ``runtime`` cycles
    whatever its DRAM bits) or ``bandwidth_bound`` (it runs at least its DRAM bits over the
    link bandwidth it is granted, so no link carries more than its width).

    ``order``: CN indices by scheduling priority (first = scheduled first among ready CNs).
    ``prefetch``: ``(tensor, core, memory operand)`` transfers made before scheduling.
    ``layer_names``: layer id → name, for pictures only.
    """

    hardware: ScheduleHardware
    layer: np.ndarray
    sub: np.ndarray
    core: np.ndarray
    runtime: np.ndarray
    onchip_energy: np.ndarray
    offchip_energy: np.ndarray
    too_large: tuple[tuple[int, ...], ...]
    bw_to_offchip: np.ndarray
    bw_from_offchip: np.ndarray
    final_output: np.ndarray
    operand_tensor: np.ndarray
    constants: tuple[tuple[int, ...], ...]
    tensor_size: np.ndarray
    tensor_operand: np.ndarray
    tensor_origin: np.ndarray
    tensor_base_priority: np.ndarray
    edge_src: np.ndarray
    edge_dst: np.ndarray
    edge_operand: np.ndarray
    edge_bits: np.ndarray
    order: np.ndarray
    prefetch: tuple[tuple[int, int, int], ...] = ()
    name: str = field(default="schedule")
    dram_bits: tuple[tuple[tuple[float, float], ...] | None, ...] | None = None
    latency_model: str = "zigzag"
    layer_names: dict[int, str] = field(default_factory=dict, compare=False)
    cache_constants: tuple[tuple[int, ...], ...] = ()

    @property
    def nb_cns(self) -> int:
        return len(self.layer)

    @property
    def nb_tensors(self) -> int:
        return len(self.tensor_size)

    @property
    def nb_edges(self) -> int:
        return len(self.edge_src)

    def data_role(self, cn: int, m: int) -> str:
        """What CN ``cn``'s memory operand ``m`` holds: ``weights`` (a constant operand),
        ``kv_cache`` (a constant that is a KV cache) or ``activations`` (everything else)."""
        if m not in self.constants[cn]:
            return "activations"
        return "kv_cache" if self.cache_constants and m in self.cache_constants[cn] else "weights"

    def tensor_role(self, tensor: int) -> str:
        """:meth:`data_role` of a tensor's own operand at its first CN (an output is an
        activation, whatever it feeds)."""
        origin = int(self.tensor_origin[tensor])
        if origin >= self.nb_cns:  # no CN owns it
            return "activations"
        return self.data_role(origin, int(self.tensor_operand[tensor]))

    def validated(self) -> "ScheduleProblem":
        """Check shapes and cross-references; return self or raise :class:`InputError`."""
        n, nt = self.nb_cns, self.nb_tensors
        where = f"schedule problem {self.name!r}"
        for attr in (
            "sub",
            "core",
            "runtime",
            "onchip_energy",
            "offchip_energy",
            "bw_to_offchip",
            "bw_from_offchip",
            "final_output",
        ):
            if len(getattr(self, attr)) != n:
                raise InputError(
                    None,
                    where,
                    f"{attr} has {len(getattr(self, attr))} entries, expected {n} (one per CN)",
                )
        if (
            len(self.too_large) != n
            or len(self.constants) != n
            or len(self.cache_constants) not in (0, n)
            or self.operand_tensor.shape != (n, 3)
        ):
            raise InputError(
                None, where, "too_large, constants and operand_tensor need one entry per CN"
            )
        for attr in ("tensor_operand", "tensor_origin", "tensor_base_priority"):
            if len(getattr(self, attr)) != nt:
                raise InputError(None, where, f"{attr} needs one entry per tensor ({nt})")
        if self.operand_tensor.size and (
            self.operand_tensor.max() >= nt or self.operand_tensor.min() < -1
        ):
            raise InputError(None, where, "operand_tensor refers to an unknown tensor")
        ne = self.nb_edges
        if not (len(self.edge_dst) == len(self.edge_operand) == len(self.edge_bits) == ne):
            raise InputError(None, where, "edge arrays differ in length")
        if ne and (
            min(self.edge_src.min(), self.edge_dst.min()) < 0
            or max(self.edge_src.max(), self.edge_dst.max()) >= n
        ):
            raise InputError(None, where, "an edge refers to an unknown CN")
        if ne and len(np.unique(self.edge_src * n + self.edge_dst)) != ne:
            raise InputError(
                None, where, "an edge is listed twice (the CN graph has one edge per CN pair)"
            )
        hw = self.hardware
        for c in np.unique(self.core):
            if int(c) not in hw.cores or int(c) == hw.offchip_core:
                raise InputError(
                    None, where, f"CN core {int(c)} is not a compute core of the hardware"
                )
        for c in hw.cores:
            for m in (I1, I2, O):
                hw.top(
                    c, m
                )  # every core (and the off-chip one) stores every operand somewhere on top
        if self.latency_model not in LATENCY_MODELS:
            raise InputError(
                None,
                "latency_model",
                f"unknown latency model {self.latency_model!r}; "
                f"use one of {', '.join(LATENCY_MODELS)}",
            )
        if len(set(self.order.tolist())) != len(self.order):
            raise InputError(None, where, "the scheduling order lists a CN twice")
        return self
