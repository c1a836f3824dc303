"""Write tests/data/loma_oracle.json from the reference LOMA code (zigzag-dse 3.8.5).

Run with the reference venv (it imports the *reference* ``zigzag``), from the repository root:

    nice -n 10 /work/.venv-reference/bin/python tools/make_loma_oracle.py

Records, for random cases drawn with a fixed seed:
* ``temporal``: LomaEngine.get_temporal_loops (B.1);
* ``lpfs``: LomaEngine prime factorisation + merging (B.2, B.3, D.2 static sizes), with the
  reference's LPF list, ordering count, and whether the reference result is usable ("works");
* ``permutations`` / ``constrained``: the multipermute order (B.4) and its constrained filter
  (D.2) — full sequences when short, else a sha256 of the sequence;
* ``set_order``: iteration order of sets of LayerDim / OADimension built from random
  insertion sequences (A.9), which the LOMA tie-breaks upstream depend on.
"""

from __future__ import annotations

import hashlib
import json
import random
import sys
from collections import Counter
from math import prod
from pathlib import Path
from types import SimpleNamespace

from zigzag.datatypes import LayerDim, OADimension
from zigzag.opt.loma.engine import LomaEngine
from zigzag.opt.loma.multipermute import (
    StaticPositionsAndSizesConstraint,
    StaticPositionsConstraint,
    constrainded_permutations,
    permutations,
)

SEED = 20240611
DIMS = ["B", "K", "C", "OY", "OX", "FY", "FX", "G"]
OUT = Path(__file__).resolve().parent.parent / "tests" / "data" / "loma_oracle.json"
FULL_SEQUENCE_MAX = 24


def random_size(rng: random.Random) -> int:
    kind = rng.random()
    if kind < 0.3:
        return rng.randint(2, 128)
    if kind < 0.6:
        return prod(rng.choice([2, 2, 2, 3, 3, 5, 7]) for _ in range(rng.randint(1, 7)))
    if kind < 0.8:
        return 2 ** rng.randint(1, 8)
    return rng.choice([11, 13, 28, 56, 97, 112, 224, 1000, 210, 2310])


def random_sizes(rng: random.Random) -> dict[str, int]:
    return {dim: random_size(rng) for dim in rng.sample(DIMS, rng.randint(1, 6))}


def engine(
    sizes: dict[str, int], lpf_limit: int | None, constraints: list | None = None
) -> LomaEngine:
    eng = LomaEngine.__new__(LomaEngine)
    eng.lpf_limit = lpf_limit
    eng.layer = SimpleNamespace(layer_dims=[LayerDim("K")], layer_dim_sizes=None)
    eng.constraints = constraints or []
    eng.has_constraints = constraints is not None
    eng.temporal_loop_dim_size = {LayerDim(d): s for d, s in sizes.items()}
    return eng


def divisors(n: int) -> list[int]:
    return [d for d in range(2, n + 1) if n % d == 0]


def reference_lpfs(sizes: dict[str, int], lpf_limit: int | None, fixed: list[list]) -> dict:
    constraints = None
    if fixed:
        loops = {pos: (LayerDim(d), s) for pos, (d, s) in enumerate(fixed)}
        constraints = [StaticPositionsConstraint({}), StaticPositionsAndSizesConstraint(loops)]
    eng = engine(sizes, lpf_limit, constraints)
    case = {"sizes": list(map(list, sizes.items())), "lpf_limit": lpf_limit, "fixed": fixed}
    try:
        eng.update_min_lpf_factor(eng.temporal_loop_dim_size)
        eng.get_prime_factors()
    except Exception as exc:  # the reference crashes on some fixed sizes
        return case | {"works": False, "error": type(exc).__name__}
    lpfs = [[d.name, int(f)] for d, f in eng.lpfs]
    per_dim = {d: prod(f for dd, f in lpfs if dd == d) for d in sizes}
    counts_ok = all(c >= 0 for counts in eng.temporal_loop_pf_counts.values() for c in counts)
    fixed_kept = not Counter(map(tuple, fixed)) - Counter(map(tuple, lpfs))
    works = counts_ok and fixed_kept and per_dim == sizes
    return case | {"works": works, "lpfs": lpfs, "nb_orderings": int(eng.nb_permutations)}


def lpf_cases(rng: random.Random) -> list[dict]:
    cases = [
        reference_lpfs(random_sizes(rng), rng.choice([None, *range(1, 11)]), []) for _ in range(300)
    ]
    cases.append(reference_lpfs({}, 6, []))
    for _ in range(150):
        sizes = random_sizes(rng)
        fixed = []
        for _ in range(rng.randint(1, 2)):
            dim = rng.choice(list(sizes))
            pool = divisors(sizes[dim])
            primes = [d for d in pool if all(d % p for p in range(2, d))]
            powers = [d for d in pool if any(d == p**k for p in primes for k in range(2, 12))]
            choice = rng.random()
            source = primes if choice < 0.5 else powers if choice < 0.8 and powers else pool
            fixed.append([dim, rng.choice(source)])
        cases.append(reference_lpfs(sizes, rng.choice([None, *range(1, 11)]), fixed))
    return cases


def temporal_cases(rng: random.Random) -> list[dict]:
    cases = []
    for _ in range(100):
        loop_sizes = {
            d: rng.choice([1, *range(1, 65), 112, 224, 1000])
            for d in rng.sample(DIMS, rng.randint(1, 7))
        }
        unrollings = [
            [
                rng.choice(list(loop_sizes) + ["FY"]),
                rng.choice([2, 3, 4, 8, 16, 32, 31.25, 2.5, 28.0, 64]),
            ]
            for _ in range(rng.randint(0, 4))
        ]
        eng = engine({}, None)
        eng.layer = SimpleNamespace(layer_dim_sizes={LayerDim(d): s for d, s in loop_sizes.items()})
        eng.spatial_mapping = SimpleNamespace(
            spatial_loop_dim_size=[(LayerDim(d), f) for d, f in unrollings]
        )
        temporal = eng.get_temporal_loops()
        cases.append(
            {
                "loop_sizes": list(map(list, loop_sizes.items())),
                "unrollings": unrollings,
                "temporal": [[d.name, int(s)] for d, s in temporal.items()],
            }
        )
    return cases


def random_multiset(rng: random.Random) -> list:
    n = rng.randint(1, 7)
    if rng.random() < 0.4:
        return [rng.randint(1, 4) for _ in range(n)]
    return [[rng.choice(DIMS[:4]), rng.choice([2, 3, 4, 7])] for _ in range(n)]


def to_json(ordering: list) -> list:
    return [[x[0].name, x[1]] if isinstance(x, tuple) else x for x in ordering]


def sequence_record(sequence: list) -> dict:
    text = json.dumps(sequence, separators=(",", ":"))
    record = {"count": len(sequence), "sha256": hashlib.sha256(text.encode()).hexdigest()}
    if len(sequence) <= FULL_SEQUENCE_MAX:
        record["sequence"] = sequence
    return record


def to_items(multiset: list) -> list:
    return [(LayerDim(x[0]), x[1]) if isinstance(x, list) else x for x in multiset]


def permutation_cases(rng: random.Random) -> list[dict]:
    cases = []
    for _ in range(300):
        multiset = random_multiset(rng)
        sequence = [to_json(p) for p in permutations(to_items(multiset))]
        cases.append({"items": multiset} | sequence_record(sequence))
    return cases


def constrained_cases(rng: random.Random) -> list[dict]:
    cases = []
    while len(cases) < 100:
        multiset = random_multiset(rng)
        if not isinstance(multiset[0], list):
            continue
        n = len(multiset)
        dim_at, loop_at = {}, {}
        for pos in rng.sample([*range(n), *range(-n, 0)], rng.randint(1, min(3, n))):
            item = rng.choice(multiset)
            if rng.random() < 0.5:
                dim_at[pos] = item[0]
            else:
                loop_at[pos] = tuple(item)
        constraints = [
            StaticPositionsConstraint({p: LayerDim(d) for p, d in dim_at.items()}),
            StaticPositionsAndSizesConstraint(
                {p: (LayerDim(d), s) for p, (d, s) in loop_at.items()}
            ),
        ]
        sequence = [to_json(p) for p in constrainded_permutations(to_items(multiset), constraints)]
        cases.append(
            {
                "items": multiset,
                "dim_at": [[p, d] for p, d in dim_at.items()],
                "loop_at": [[p, list(loop)] for p, loop in loop_at.items()],
            }
            | sequence_record(sequence)
        )
    return cases


LAYER_DIM_NAMES = [*DIMS, "IX", "IY", "D", "H", "D0", "D1", "D2", "OZ", "FZ", "R"]
OA_DIM_NAMES = [f"D{i}" for i in range(1, 10)]


def set_order_cases(rng: random.Random) -> list[dict]:
    cases = []
    for _ in range(100):
        kind = rng.choice(["layer_dim", "oa_dim"])
        cls, pool = (
            (LayerDim, LAYER_DIM_NAMES) if kind == "layer_dim" else (OADimension, OA_DIM_NAMES)
        )
        names = [rng.choice(pool) for _ in range(rng.randint(1, 12))]
        order = [x.name for x in set(cls(name) for name in names)]
        cases.append({"kind": kind, "names": names, "order": order})
    return cases


def main() -> None:
    rng = random.Random(SEED)
    data = {
        "seed": SEED,
        "temporal": temporal_cases(rng),
        "lpfs": lpf_cases(rng),
        "permutations": permutation_cases(rng),
        "constrained": constrained_cases(rng),
        "set_order": set_order_cases(rng),
    }
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text(json.dumps(data, separators=(",", ":")) + "\n")
    print(f"wrote {OUT} ({OUT.stat().st_size} bytes)", file=sys.stderr)


if __name__ == "__main__":
    main()
