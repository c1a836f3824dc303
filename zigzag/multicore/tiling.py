"""Layer stacks and the outer-CN loops of every layer (docs/models/multi-core.md#computation-nodes, docs/tutorials/multi-core.md#8-streams-stage-api-and-one-call-api).

A *layer stack* is a tuple of layer ids scheduled together (fused). A layer's *outer-CN loops*
``((dim, factor), ...)`` cut it into ``∏ factor`` computation nodes; the first loop varies fastest.
They come from the mapping's ``intra_core_tiling`` (sequential CNs on one core) followed by its
``inter_core_tiling`` (groups that may go to different cores; ignored while it holds a ``*``).

The seed's (2023) options are accepted as well, through ``SeedTiling``: ``cn_define_mode`` 1
(``hint_loops`` = outer-CN loops of every layer; a ``K`` or ``G`` hint loop cuts the layer into
groups, i.e. becomes inter-core tiling, as the seed's K chunks each had their own weights),
2 (``hint_loops`` = the *inner*-CN loops; every
other loop dim becomes an outer loop over its full size), 3 (one ``hint_loops`` list per id range
ending at each ``layer_cutoffs`` entry) and 4 (mode 1 plus a K split of every layer whose constant
operand exceeds ``split_W_percentage`` of its smallest candidate core's weight memory; the K
chunks are groups, i.e. an inter-core tiling ``(K, n)``). Stream at ed4e12e dropped these
options; they are implemented from the seed's description.
"""

from __future__ import annotations

import logging
import math
from dataclasses import dataclass, field, replace

from zigzag.errors import InputError
from zigzag.notes import warn_for_layer
from zigzag.multicore.mapping import Tiling
from zigzag.multicore.workload import FUSION_DIM, StreamLayer, StreamWorkload

logger = logging.getLogger(__name__)
GROUP_DIMS = ("K", "G")


def parse_layer_stacks(text: str) -> list[tuple[int, ...]]:
    """``"0-10;11-21;22"`` -> ``[(0..10), (11..21), (22,)]`` (inclusive ranges, ``;`` between stacks)."""
    stacks = []
    for part in text.split(";"):
        ids: list[int] = []
        for piece in part.split(","):
            piece = piece.strip()
            if not piece:
                continue
            lo, dash, hi = piece.partition("-")
            try:
                first, last = int(lo), int(hi) if dash else int(lo)
            except ValueError:
                raise InputError(
                    None, "--layer-stacks", f"'{piece}' is not a layer id or an 'a-b' id range"
                ) from None
            if last < first:
                raise InputError(
                    None, "--layer-stacks", f"range '{piece}' runs backwards; write it as low-high"
                )
            ids.extend(range(first, last + 1))
        if ids:
            stacks.append(tuple(ids))
    if not stacks:
        raise InputError(None, "--layer-stacks", "no layer ids given; write e.g. '0-10;11-21'")
    return stacks


def _ids_text(ids: list[int]) -> str:
    """``[7, 8, 9]`` -> ``layers 7-9``; ``[4]`` -> ``layer 4``; ``[2, 5]`` -> ``layers 2, 5``."""
    if len(ids) == 1:
        return f"layer {ids[0]}"
    if ids == list(range(ids[0], ids[-1] + 1)):
        return f"layers {ids[0]}-{ids[-1]}"
    return "layers " + ", ".join(map(str, ids))


def layer_stacks(
    workload: StreamWorkload,
    mode: str,
    given: list[tuple[int, ...]] | None = None,
    *,
    stack_cutoff: int | None = None,
    stack_cutoffs: list[int] | None = None,
    weight_capacity: int | None = None,
) -> list[tuple[int, ...]]:
    """The layer stacks (docs/models/multi-core.md#computation-nodes): one per layer in ``lbl``; given (completed) or derived in ``fused``.

    ``weight_capacity`` (total ``I2`` top-memory bits of the compute cores) is only needed in
    ``fused`` mode without ``given`` stacks or cutoffs.
    """
    layers = {layer.id: layer for layer in workload.layers}
    if mode == "lbl":
        stacks = [(i,) for i in sorted(layers)]
    elif mode == "fused":
        if given:
            stacks = [tuple(s) for s in given]
            seen = {i for s in stacks for i in s}
            duplicated = sorted(i for i in seen if sum(i in s for s in stacks) > 1)
            if duplicated:
                raise InputError(
                    None,
                    "layer_stacks",
                    f"layer {duplicated[0]} is in two stacks; give each id once",
                )
            unknown = sorted(i for i in seen if i not in workload.nodes)
            if unknown:  # Stream ignores them (its own scripts give ranges past the last layer)
                logger.warning(
                    "layer_stacks: %s not in the workload (its ids run %d-%d); ignored",
                    _ids_text(unknown),
                    min(workload.nodes),
                    max(workload.nodes),
                )
            stacks += [(i,) for i in workload.nodes if i not in seen]
        elif stack_cutoff is not None:
            stacks = [tuple(i for i in sorted(layers) if i <= stack_cutoff)]
            stacks += [(i,) for i in sorted(layers) if i > stack_cutoff]
        else:
            stacks = _fused_by_weight(layers, weight_capacity, stack_cutoffs)
    else:
        raise InputError(None, "mode", f"'{mode}' is not a layer mode; use lbl or fused")
    return [tuple(i for i in stack if i in layers) for stack in stacks]


def _fused_by_weight(
    layers: dict[int, StreamLayer], capacity: int | None, cutoffs: list[int] | None
):
    """Fused-single: fuse layers until their constant operands overflow ``capacity``, then go
    layer by layer; with ``cutoffs``, also close a stack after each cutoff id in turn."""
    if capacity is None:
        raise InputError(
            None,
            "layer_stacks",
            "fused mode needs --layer-stacks (or an accelerator for the weight "
            "capacity); give e.g. --layer-stacks '0-10;11-21'",
        )
    pending = list(cutoffs or [])
    limit = pending.pop(0) if pending else None
    stacks: list[tuple[int, ...]] = []
    current: list[int] = []
    total = 0
    layer_by_layer = False
    for layer_id in sorted(layers):
        if layer_by_layer:
            stacks.append(tuple(current))
            current = [layer_id]
            continue
        if limit is not None and layer_id > limit:
            stacks.append(tuple(current))
            current, total = [layer_id], 0
            limit, layer_by_layer = (pending.pop(0), False) if pending else (limit, True)
        constants = layers[layer_id].constant_operands
        if not constants:
            if layer_id not in current:
                current.append(layer_id)
            continue
        size = layers[layer_id].layer.operand_size_bit(constants[0])
        total += size
        if total / capacity > 1:
            stacks.append(tuple(current))
            current, total, layer_by_layer = [layer_id], size, True
        elif layer_id not in current:
            current.append(layer_id)
    stacks.append(tuple(current))
    return stacks


@dataclass(frozen=True)
class SeedTiling:
    """The seed's ``GenerateCNWorkloadHybridStage`` options (see the module docstring)."""

    cn_define_mode: int = 1
    hint_loops: list = field(default_factory=list)
    layer_cutoffs: list[int] = field(default_factory=list)
    split_W_percentage: float | None = None
    weight_capacities: dict[int, int] = field(default_factory=dict)

    def __post_init__(self):
        if self.cn_define_mode not in (1, 2, 3, 4):
            raise InputError(None, "cn_define_mode", f"{self.cn_define_mode} is not 1, 2, 3 or 4")
        if self.cn_define_mode == 3 and len(self.hint_loops) != len(self.layer_cutoffs):
            raise InputError(
                None, "layer_cutoffs", "mode 3 needs one hint_loops list per layer_cutoffs entry"
            )
        if self.cn_define_mode == 4 and not (
            self.split_W_percentage and self.split_W_percentage > 0
        ):
            raise InputError(
                None, "split_W_percentage", "mode 4 needs a split_W_percentage > 0 (e.g. 0.5)"
            )

    def with_capacities(self, weight_capacities: dict[int, int]) -> SeedTiling:
        """These options with ``weight_capacities`` (core id -> bits) filled in when mode 4 needs
        them and none were given; otherwise these options unchanged."""
        if self.cn_define_mode != 4 or self.weight_capacities:
            return self
        return replace(self, weight_capacities=dict(weight_capacities))

    def hints_for(self, layer: StreamLayer) -> list:
        if self.cn_define_mode != 3:
            return list(self.hint_loops)
        for cutoff, hints in zip(self.layer_cutoffs, self.hint_loops):
            if layer.id <= cutoff:
                return list(hints)
        return []

    def outer_loops(self, layer: StreamLayer) -> tuple[Tiling, Tiling]:
        """(intra-core, inter-core) tiling of ``layer`` under these options."""
        hints = [(str(d).upper(), f) for d, f in self.hints_for(layer)]
        sizes = layer.sizes
        if self.cn_define_mode == 2:
            inner = {d: (sizes[d] if f == "all" else int(f)) for d, f in hints if d in sizes}
            intra = tuple((d, s // inner[d]) if d in inner else (d, s) for d, s in sizes.items())
            intra = tuple((d, f) for d, f in intra if f > 1)
            inter: Tiling = ()
        else:
            # Seed K/G chunks had their own weights (their own group): they become inter-core tiling.
            intra = tuple((d, f) for d, f in hints if d in sizes and d not in GROUP_DIMS)
            inter = tuple(
                (d, sizes[d] if f == "all" else f)
                for d, f in hints
                if d in sizes and d in GROUP_DIMS
            )
        if self.cn_define_mode == 4:
            factor = self.k_split_factor(layer)
            if factor > 1:
                inter = (("K", factor),)
        return intra, inter

    def k_split_factor(self, layer: StreamLayer) -> int:
        """Smallest divisor of K that makes the first constant operand fit (mode 4)."""
        cores = layer.mapping.core_allocation
        if len(cores) == 1 or not layer.constant_operands:
            return 1
        missing = [c for c in cores if c not in self.weight_capacities]
        if missing:
            raise InputError(
                None,
                "split_W_percentage",
                f"no weight capacity known for core {missing[0]}; pass the accelerator",
            )
        capacity = min(self.weight_capacities[c] for c in cores)
        bits = layer.layer.operand_size_bit(layer.constant_operands[0])
        if bits == 0:
            return 1
        factor = math.ceil(bits / (self.split_W_percentage * capacity))
        if factor <= 1:
            return 1
        k = layer.sizes.get("K")
        if k is None:
            raise InputError(
                None, f"layer {layer.id} '{layer.name}'", "has no K loop to split its weights along"
            )
        while k % factor:
            factor += 1
        return factor


@dataclass(frozen=True)
class TiledLayer:
    """A layer with its final tiling and (possibly rounded-up) loop sizes (docs/models/multi-core.md#computation-nodes)."""

    layer: StreamLayer
    sizes: dict[str, int]
    intra_core_tiling: tuple[tuple[str, int], ...]
    inter_core_tiling: Tiling

    @property
    def inter_is_wildcard(self) -> bool:
        return any(f == "*" for _, f in self.inter_core_tiling)

    def outer_loops(self) -> tuple[tuple[str, int], ...]:
        """Intra-core tiling, then the inter-core tiling unless it has a ``*``; never empty."""
        loops = self.intra_core_tiling + (
            () if self.inter_is_wildcard else tuple(self.inter_core_tiling)
        )
        return loops or ((next(iter(self.sizes)), 1),)


def tile_layer(
    layer: StreamLayer, stack_size: int, mode: str, seed: SeedTiling | None = None
) -> TiledLayer:
    """Clean the mapping's tilings against the layer and apply the mode defaults (docs/models/multi-core.md#computation-nodes)."""
    sizes = dict(layer.sizes)
    where = f"layer {layer.id} '{layer.name}'"
    if seed is not None:
        intra_given, inter_given = seed.outer_loops(layer)
        inter_given = inter_given or layer.mapping.inter_core_tiling
    else:
        intra_given, inter_given = layer.mapping.intra_core_tiling, layer.mapping.inter_core_tiling
    intra = []
    defaulted = False
    for dim, factor in intra_given:
        if dim not in sizes:
            warn_for_layer(
                logger,
                layer.name,
                f"intra-core tiling ({dim}, {factor}) dropped: the layer has no {dim} loop",
            )
            continue
        if factor == "all":
            factor = sizes[dim]
        elif factor == "*":
            raise InputError(
                None,
                f"{where} intra_core_tiling",
                "'*' is only allowed in inter_core_tiling; give an integer or all",
            )
        elif factor > sizes[dim]:
            factor = sizes[dim]
        elif sizes[dim] % factor:
            rounded = -(-sizes[dim] // factor) * factor
            warn_for_layer(
                logger,
                layer.name,
                f"{dim} rounded up from {sizes[dim]} to {rounded} to split it {factor} ways",
            )
            sizes[dim] = rounded
        intra.append((dim, factor))
    if not intra and mode == "fused" and seed is None:
        dim = FUSION_DIM.get(layer.type, "D")
        if dim not in sizes:  # e.g. a vector layer without rows: its first loop
            dim = next(iter(sizes))
        intra = [(dim, sizes[dim])]
        defaulted = True
    if stack_size == 1 and seed is None:
        intra = []
    inter = []
    for dim, factor in inter_given:
        if dim not in sizes:
            warn_for_layer(
                logger,
                layer.name,
                f"inter-core tiling ({dim}, {factor}) dropped: the layer has no {dim} loop",
            )
            continue
        if isinstance(factor, int) and factor > sizes[dim]:
            factor = sizes[dim]
        if factor == "all":
            factor = sizes[dim]
        inter.append((dim, factor))
    if not inter:
        dim = default_split_dim(layer, sizes)
        if dim is None:
            warn_for_layer(
                logger,
                layer.name,
                "no output loop > 1 to split across cores: kept whole on one core",
            )
        else:
            inter = [(dim, "*")]
    intra = _fit_to_inter(layer, sizes, intra, inter, warn=not defaulted)
    return TiledLayer(layer, sizes, tuple(intra), tuple(inter))


def default_split_dim(layer: StreamLayer, sizes: dict[str, int]) -> str | None:
    """The dim a layer without an inter-core tiling is split along (``*``): G, else K (Stream's
    rule), else its largest other output loop > 1 (e.g. D of a batched MatMul whose weight-like
    operand comes first, such as gathered experts); None if every output loop is 1."""
    for dim in ("G", "K"):
        if sizes.get(dim, 1) > 1:
            return dim
    outputs = [d for d in layer.operand_dims.get("O", ()) if sizes.get(d, 1) > 1]
    return max(outputs, key=lambda d: sizes[d], default=None)


def _fit_to_inter(
    layer: StreamLayer, sizes: dict[str, int], intra: list, inter: list, warn: bool
) -> list:
    """Lower an intra-core factor that, with an inter-core split of the same dim, would cut the
    dim into more pieces than it has (CNs of size 0, which Stream's tiling makes silently): the
    factor becomes ``ceil(size / split)``, one unit per CN within each core's part, the size
    rounded up to a multiple of the split if needed. Sizes are updated in place. Tilings that
    still cut a dim into more pieces than it has are refused."""
    where = f"layer {layer.id} '{layer.name}' tiling"

    def pieces(loops: list, dim: str) -> int:
        return math.prod(f for d, f in loops if d == dim and isinstance(f, int))

    for dim in dict.fromkeys(d for d, _ in inter):
        if pieces(inter, dim) > sizes[dim]:
            raise InputError(
                None,
                where,
                f"the inter-core tiling cuts {dim} ({sizes[dim]}) into {pieces(inter, dim)} "
                f"parts; give factors whose product is at most {sizes[dim]}",
            )
    fitted = []
    for dim, factor in intra:
        split = pieces(inter, dim)
        alone = sum(d == dim for d, _ in intra) == 1
        if alone and split > 1 and factor * split > sizes[dim]:
            base = layer.sizes[dim]
            lowered = -(-base // split)
            if warn:
                warn_for_layer(
                    logger,
                    layer.name,
                    f"intra-core tiling ({dim}, {factor}) lowered to ({dim}, {lowered}): "
                    f"the inter-core tiling already cuts {dim} {split} ways",
                )
            if lowered * split != base:
                warn_for_layer(
                    logger,
                    layer.name,
                    f"{dim} rounded up from {base} to {lowered * split} to split it "
                    f"{split} x {lowered} ways",
                )
            sizes[dim], factor = lowered * split, lowered
        fitted.append((dim, factor))
    for dim in dict.fromkeys(d for d, _ in fitted):
        if pieces(fitted + inter, dim) > sizes[dim]:
            raise InputError(
                None,
                where,
                f"the intra- and inter-core tilings cut {dim} ({sizes[dim]}) into "
                f"{pieces(fitted + inter, dim)} parts; give factors whose product is at most "
                f"{sizes[dim]}",
            )
    return fitted
