"""Heuristic starting allocations for the allocation search.

Good allocations of a layer sequence on a few linked cores tend to be made of *blocks*: runs of
consecutive layers on one core (no transfer between them), each block on a core linked directly
to the previous block's core (one hop for the activations), several blocks at once working in a
pipeline in layer-fused mode. The search starts from such allocations (and random ones), so its
small budget goes into refining them rather than into finding the shape first:

* every gene on one core, one such allocation per kind of core (identical cores give one);
* the genes (in layer order) cut into 2, 3, ... ``n`` contiguous blocks, ``n`` the number of
  cores, of about equal compute (the genes' runtimes) and, separately, of equal gene counts, the
  blocks on the cores in the order of a walk along direct links;
* with layer-fused stacks of several genes: each stack's genes in ``n`` blocks (a pipeline over
  all cores), the genes outside them in ``n``, ``n - 1``, ... 1 blocks.

The search takes them in this order, at most three quarters of its population.
Each gene takes its block's core if valid for it, else its first valid core.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from zigzag.multicore.allocation.genes import AllocationProblem


def linked_walk(
    cores: Sequence[int], routes: Mapping[tuple[int, int], tuple[int, ...]]
) -> tuple[int, ...]:
    """``cores`` ordered as a walk that goes, where it can, to an unvisited core one link away.

    Starts at the lowest id; at each step takes the lowest-id unvisited core with a direct
    link (a one-link route) from the last one, or the lowest-id unvisited core when none has.
    """
    left = sorted(set(cores))
    if not left:
        return ()
    walk = [left.pop(0)]
    while left:
        linked = [c for c in left if len(routes.get((walk[-1], c), ())) == 1]
        walk.append(linked[0] if linked else left[0])
        left.remove(walk[-1])
    return tuple(walk)


def balanced_blocks(weights: Sequence[float], parts: int) -> list[int]:
    """Block index (0..parts-1) of each item when the sequence is cut into ``parts`` contiguous
    blocks of about equal total weight (an item goes where its weight's midpoint falls)."""
    total = float(sum(weights))
    if total <= 0:
        weights, total = [1.0] * len(weights), float(len(weights))
    out, before = [], 0.0
    for w in weights:
        out.append(min(parts - 1, int(parts * (before + w / 2) / total)))
        before += w
    return out


def seed_allocations(problem: AllocationProblem) -> list[tuple[int, ...]]:
    """The heuristic allocations of ``problem`` (distinct, valid, in the order listed above)."""
    genes = problem.genes
    if not genes:
        return []
    walk = linked_walk({c for g in genes for c in g.cores}, problem.base.hardware.routes)
    compute = [float(costs.runtime.sum(axis=1).mean()) for costs in problem.gene_costs]
    even = [1.0] * len(genes)

    def valid(cores: Sequence[int]) -> tuple[int, ...]:
        return tuple(c if c in g.cores else g.cores[0] for g, c in zip(genes, cores))

    def blocks(members: Sequence[int], weights: Sequence[float], parts: int) -> dict[int, int]:
        cut = balanced_blocks([weights[i] for i in members], parts)
        return {i: walk[b] for i, b in zip(members, cut)}

    candidates = [valid([core] * len(genes)) for core in distinct_cores(problem, walk)]
    for parts in range(2, len(walk) + 1):
        for weights in (compute, even):
            candidates.append(valid(list(blocks(range(len(genes)), weights, parts).values())))
    per_stack: dict[int, list[int]] = {}
    for i, gene in enumerate(genes):
        per_stack.setdefault(gene.stack, []).append(i)
    fused = [members for members in per_stack.values() if len(members) > 1]
    rest = [i for i, gene in enumerate(genes) if len(per_stack[gene.stack]) == 1]
    for parts in range(len(walk), 0, -1) if fused else ():
        for weights in (compute, even):
            chosen = blocks(rest, compute, parts)
            for members in fused:
                chosen.update(blocks(members, weights, len(walk)))
            candidates.append(valid([chosen[i] for i in range(len(genes))]))
    return list(dict.fromkeys(candidates))


def distinct_cores(problem: AllocationProblem, cores: Sequence[int]) -> list[int]:
    """``cores`` without those costing every gene exactly as an earlier one (identical cores)."""

    def cost(gene, costs, core):
        if core not in gene.cores:
            return None
        k = gene.cores.index(core)
        return (
            costs.runtime[k].tobytes(),
            costs.onchip_energy[k].tobytes(),
            costs.offchip_energy[k].tobytes(),
        )

    kept, signatures = [], set()
    for core in cores:
        signature = tuple(
            cost(gene, costs, core) for gene, costs in zip(problem.genes, problem.gene_costs)
        )
        if signature not in signatures:
            signatures.add(signature)
            kept.append(core)
    return kept
