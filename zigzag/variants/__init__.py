"""Hardware variants: a base document, what varies, and the resolved document of every variant.

This package works on YAML documents only (single-core or multi-core files alike) and knows
nothing of costs: :func:`read_spec` checks what a sweep varies, :func:`expand` makes the
variants, :func:`follow_hardware` sizes a mapping's unrollings for a variant's array;
:func:`read_core_files` reads the core files a multi-core sweep varies into its base (a multi-core
mapping's core roles follow a variant's cores in :mod:`zigzag.multicore.roles`). See
docs/reference/sweeps.md.
"""

from zigzag.variants.expansion import Variant, axis_sizes, expand, variant_at
from zigzag.variants.mappings import follow_hardware, without_spatial_mapping
from zigzag.variants.multicore import read_core_files
from zigzag.variants.spec import VariantSpec, read_spec

__all__ = [
    "Variant",
    "VariantSpec",
    "axis_sizes",
    "expand",
    "follow_hardware",
    "read_core_files",
    "read_spec",
    "variant_at",
    "without_spatial_mapping",
]
