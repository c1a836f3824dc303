"""A feasibility screen for the guided search: which variants of a grid cannot run, told without
a mapping search.

A variant fails for physical reasons that need no search to see: its document does not validate
(a port narrower than the memory's access granularity, an input error), or some layer has no loop
ordering that the memory allocator can place in its memories under some of the spatial mappings
the search would try (the mapping search's "fits no memory" error). The screen runs exactly those
checks, with the search's own functions: the variant's validation, the network's plan, the spatial
mappings the search would evaluate, and the first loop ordering the allocator accepts (it stops at
the first one; a layer that fits needs one allocation, not the search of all of them). So it never
calls a variant that runs infeasible: it rejects a variant only when the evaluation would raise
the same error. A variant it passes may still fail (a constraint, an error it does not check):
the search handles that as any failure.

The result of a layer depends only on the layer and on the accelerator without its costs and
areas, so it is kept per such pair (:class:`Screen`): a grid whose axes vary costs is screened
for the price of its distinct structures and sizes. Given the sweep's cache folder, the verdicts
are kept there too (:mod:`zigzag.sweep.guided_store`), for later searches, and so is each
position's verdict, keyed by the sweep's definition (its variants, mapping and workload files'
contents, options): a later search of the same sweep (another seed) reads it without building
the variant. Sweeps the screen
does not cover (multi-core, CACTI costs, ``workload_vary`` points, the ``salsa`` engine, LLM
steps) pass every variant.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import logging
import time
from collections.abc import Iterable
from pathlib import Path

from zigzag.errors import InputError, MappingError
from zigzag.hardware.vector import UNCOSTED, VECTOR_UNIT, compute_unit, on_vector_unit
from zigzag.io.accelerator_dict import accelerator_from_dict
from zigzag.io.legacy_hardware import upgrade_accelerator
from zigzag.io.loaders import checked_accelerator, checked_mapping
from zigzag.mapping.entry import MappingEntry
from zigzag.mapping_search import spatial_mapping
from zigzag.mapping_search.batched import DEFAULT_CHUNK, batched_enabled
from zigzag.mapping_search.batched.candidates import (
    LoopTable,
    Unsupported,
    constraint_mask,
    ordering_chunks,
)
from zigzag.mapping_search.batched.memory_levels import BatchLevelAssigner
from zigzag.mapping_search.capacity import CapacityError
from zigzag.mapping_search.jobs import signature_text, versioned_digest
from zigzag.mapping_search.loma import (
    complete_user_ordering,
    layer_temporal_loops,
    ordering_factors,
)
from zigzag.mapping_search.memory_levels import LevelAssignmentFailed, MemoryLevelAssigner
from zigzag.mapping_search.permutations import multiset_permutations, satisfies
from zigzag.mapping_search.network import plan_network
from zigzag.mapping_search.options import SearchOptions
from zigzag.mapping_search.spatial_generator import fitting_spatial_mappings
from zigzag.sweep.config import Sweep
from zigzag.sweep.guided_store import ScreenStore
from zigzag.sweep.point import load_point_workload, point_mapping, workload_points
from zigzag.variants import variant_at

_LOG = logging.getLogger(__name__)
#: fields of a memory or an array that change no fit (costs and areas): left out of the key
_COSTS = frozenset({"r_cost", "w_cost", "area", "unit_energy", "unit_area", "latency", "area_unit"})
#: and what the memory allocator does not read either (the spatial mappings do)
_BANDWIDTHS = _COSTS | {"bandwidth_min", "bandwidth_max"}


def covered(sweep: Sweep) -> bool:
    """Whether the screen can judge this sweep's variants (else it passes them all)."""
    options = sweep.options or {}
    return (
        sweep.kind == "single"
        and workload_points(sweep) == [{}]
        and options.get("temporal_mapping_search_engine", "loma") != "salsa"
        and not any(str(w).endswith((".llm.yaml", ".llm.yml")) for w in sweep.workloads)
    )


def _fit_key(document: dict, dropped: frozenset = _COSTS) -> str:
    """The accelerator document without its costs and areas (what a fit can depend on), or
    without the ``dropped`` fields."""

    def strip(value):
        if isinstance(value, dict):
            return {k: strip(v) for k, v in value.items() if k not in dropped}
        if isinstance(value, list):
            return [strip(v) for v in value]
        return value

    return json.dumps(strip(document), sort_keys=True, default=str)


def spatial_candidates(layer, accelerator, options: SearchOptions) -> list:
    """The layer (on the unit that runs it) and the spatial mappings its search evaluates; an
    :class:`InputError` when no unit runs it."""
    unit = compute_unit(layer, accelerator)
    if unit == UNCOSTED:
        raise InputError(None, f"layer '{layer.name}'", "its operation class runs on no unit")
    if unit == VECTOR_UNIT:
        layer, accelerator = on_vector_unit(layer, accelerator)
    return (
        layer,
        accelerator,
        fitting_spatial_mappings(
            layer,
            accelerator,
            nb_mappings=options.nb_spatial_mappings_generated,
            enable_mixing=options.enable_mix_spatial_mapping,
        ),
    )


def ordering_fits(layer, accelerator, array_mapping, options: SearchOptions) -> bool:
    """Whether some loop ordering LOMA enumerates for this spatial mapping is accepted by the
    memory allocator; an :class:`InputError` when a user ordering cannot be met, as the search
    raises it. The first ordering goes to the scalar allocator (a layer that fits is mostly
    placed by it), the others to the batched one, a table of orderings at a time
    (:func:`batched_fit`), or to the scalar one where the batched path does not cover them."""
    fractional, _ = spatial_mapping.convert(array_mapping, layer, accelerator)
    even = options.temporal_mapping_type == "even"
    assigner = MemoryLevelAssigner(layer, accelerator, fractional, even=even)
    temporal = layer_temporal_loops(layer, fractional)
    user = complete_user_ordering(layer, temporal)
    if user is not None:
        return _placed(assigner, [user])
    constraints, factors = ordering_factors(layer, temporal, options.lpf_limit)
    orderings = (
        o for o in multiset_permutations(factors) if not constraints or satisfies(o, constraints)
    )
    first = list(itertools.islice(orderings, 1))
    if _placed(assigner, first):
        return True
    if len(factors) < 2:  # one ordering at most, tried
        return False
    if batched_enabled():
        try:
            return batched_fit(layer, accelerator, fractional, factors, constraints, even)
        except Unsupported:
            pass
    return _placed(assigner, orderings)


def _placed(assigner: MemoryLevelAssigner, orderings: Iterable) -> bool:
    """Whether the scalar allocator accepts one of ``orderings`` (it stops at the first)."""
    for ordering in orderings:
        try:
            assigner.assign(list(ordering))
        except LevelAssignmentFailed:
            continue
        return True
    return False


def batched_fit(layer, accelerator, fractional, factors, constraints, even: bool) -> bool:
    """:func:`ordering_fits` over every ordering of ``factors`` that meets ``constraints``, with
    the batched allocator (the verdicts of the scalar one), a table at a time; it stops at the
    first table with an ordering placed. :class:`Unsupported` where its comparisons might not
    be exact (the scalar allocator decides there)."""
    loops = LoopTable(factors)
    assigner = BatchLevelAssigner(layer, accelerator, fractional, loops, even=even)
    if not assigner.exact:
        raise Unsupported("assigner costs too large for exact float64 integers")
    for ids in ordering_chunks(loops, DEFAULT_CHUNK):
        if constraints:
            ids = ids[constraint_mask(ids, loops, constraints)]
        if len(ids) and assigner.assign(ids)[0].any():
            return True
    return False


class Screen:
    """Screens the variants of one sweep; ``seconds`` is the CPU time it has spent so far. With
    ``cache`` (the sweep's cache folder), the layers' verdicts are read from and kept there."""

    def __init__(self, sweep: Sweep, cache=None):
        self.sweep = sweep
        self.active = covered(sweep)
        self.store = ScreenStore(cache) if cache is not None and self.active else None
        self.seconds = 0.0
        self._layers: dict[tuple[str, str], str | None] = {}
        self._orderings: dict[tuple[str, str, str], bool] = {}
        self._parsed: dict = {}
        self._digest: str | None = None

    def reason(self, position: tuple[int, ...]) -> str | None:
        """Why the variant at ``position`` cannot run, or None when the screen sees no reason."""
        started = time.process_time()
        quiet = logging.root.manager.disable
        logging.disable(
            logging.WARNING
        )  # the evaluation tells the notes of a variant, not the screen
        try:
            if not self.active:
                return None
            if self.store is None:
                return self._reason(position)
            where, key = self._definition(), ",".join(str(i) for i in position)
            known, found = self.store.get(where, key)
            if not known:
                found = self._reason(position)
                self.store.put(where, key, found)
            return found
        finally:
            if self.store is not None:
                self.store.flush()
            logging.disable(quiet)
            if self.store is not None:
                for message in self.store.damaged:
                    _LOG.warning(message)
                self.store.damaged.clear()
            self.seconds += time.process_time() - started

    def _definition(self) -> str:
        """The digest of what decides a position's verdict: the variants' definition (the base
        document with its changes), the mapping and workload files' contents, the options."""
        if self._digest is None:
            sweep = self.sweep
            files = [
                hashlib.sha256(Path(f).read_bytes()).hexdigest() if Path(f).is_file() else f
                for f in (*sweep.workloads, sweep.mapping or "")
            ]
            text = (sweep.spec, files, sweep.spatial_mapping, sweep.options, sweep.workload_options)
            self._digest = versioned_digest(f"variants\0{text!r}")
        return self._digest

    def passes(self, position: tuple[int, ...]) -> bool:
        """Whether the screen lets the variant at ``position`` be evaluated."""
        return self.reason(tuple(position)) is None

    def failing(self, positions: Iterable[tuple[int, ...]]) -> set[tuple[int, ...]]:
        """The positions the screen rejects."""
        return {tuple(p) for p in positions if self.reason(tuple(p)) is not None}

    def _reason(self, position: tuple[int, ...]) -> str | None:
        sweep = self.sweep
        # validated once, below (the evaluation's variant fails the same validation)
        variant = variant_at(sweep.spec, position)
        if variant.problem is not None:
            return variant.problem
        document, _ = upgrade_accelerator(variant.document, variant.name)
        memories = document.get("memories")
        if isinstance(memories, dict) and any(
            isinstance(m, dict) and m.get("auto_cost_extraction") for m in memories.values()
        ):
            return None  # CACTI's costs: not run for a screen
        try:
            data = checked_accelerator(document, variant.name)
            mapping = checked_mapping(
                point_mapping(sweep, variant, self._parsed), data, sweep.mapping or "mapping"
            )
            accelerator = accelerator_from_dict(data)
        except (InputError, MappingError, CapacityError) as exc:
            return " ".join(str(exc).split())
        fit = (_fit_key(data), _fit_key(data, _BANDWIDTHS))
        for workload in sweep.workloads:
            key = (workload, json.dumps(mapping, sort_keys=True))
            if key not in self._parsed:
                entries = [MappingEntry.from_dict(e) for e in mapping]
                self._parsed[key] = load_point_workload(
                    workload, {}, entries, sweep.workload_options
                )
            parsed = self._parsed[key]
            options = SearchOptions(**sweep.options).resolved(parsed.inference is not None)
            plan = plan_network(parsed.layers, accelerator, options, workload=parsed)
            done: set = set()
            for layer, layer_accelerator in plan.layers:
                # a layer's own view of the accelerator (data kept on chip) is judged anew
                view = "" if layer_accelerator is accelerator else str(id(layer_accelerator))
                memo = (signature_text(layer), fit[0] + view)
                if memo in done:
                    continue
                done.add(memo)
                found = self._layers.get(memo, ())
                if found == ():
                    found = self._kept_reason(
                        layer,
                        layer_accelerator,
                        options,
                        fit[1] + view,
                        fit[0] if not view else None,
                    )
                    if not view:  # kept across variants only for the accelerator itself
                        self._layers[memo] = found
                if found is not None:
                    return found
        return None

    def _kept_reason(self, layer, accelerator, options, sizes: str, structure: str | None):
        """:meth:`_layer_reason`, read from and kept in the store when there is one and the
        accelerator is the variant's own (``structure``: its text without costs)."""
        if self.store is None or structure is None:
            return self._layer_reason(layer, accelerator, options, sizes)
        where = versioned_digest(f"{structure}\0{options!r}")
        signature = versioned_digest(signature_text(layer))
        known, found = self.store.get(where, signature)
        if not known:
            found = self._layer_reason(layer, accelerator, options, sizes)
            self.store.put(where, signature, found)
        return found

    def _layer_reason(self, layer, accelerator, options, sizes: str) -> str | None:
        """Why ``layer`` cannot run on ``accelerator``, or None; the allocation's verdict kept
        per spatial mapping and accelerator without bandwidths (``sizes``: it reads none)."""
        try:
            layer, accelerator, candidates = spatial_candidates(layer, accelerator, options)
            for array_mapping in candidates:
                memo = (signature_text(layer), sizes, repr(array_mapping))
                if memo not in self._orderings:
                    self._orderings[memo] = ordering_fits(
                        layer, accelerator, array_mapping, options
                    )
                if not self._orderings[memo]:
                    return (
                        f"no loop ordering of layer {layer.name} fits the memories of "
                        f"{accelerator.name} (feasibility screen)"
                    )
        except (InputError, MappingError) as exc:
            return " ".join(str(exc).split())
        return None
