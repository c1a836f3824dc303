"""Stream's cost table: the best single-core mapping of each computation node (CN) on each core.

One *entry* = one CN shape on one core: our single-core search (minimum latency, the core's
``dataflows`` as spatial mapping, LOMA) on the core, with the operands that do not fit its top
memories streamed from an off-chip DRAM level (docs/models/multi-core.md#cost-table). Inputs:

* :class:`NodeKey` -- what of a CN determines its cost (loop sizes, equation, dimension relations,
  input sizes, precisions, and the bits its in-edges bring per operand for the too-large test);
* the core (an :class:`~zigzag.hardware.accelerator.Accelerator` with ``dataflows``), the off-chip
  memory and the search options.

An entry is identified by the hash of its *job*: the single-core layer job (layer signature, the
core with its DRAM level, options, model version, see :mod:`zigzag.mapping_search.jobs`) plus the
streamed operands. Entries live in the content-addressed cache as
``<cache>/multicore-cost/jobs/<key>.json`` and ``<cache>/multicore-cost/entries/<key>.json``, so they are
shared by identical CNs, cores, experiments and allocations, and an input change gives a new key
(never a stale entry). :class:`CostTable` also reads and writes all its entries as one file
(Stream's ``cost_lut_path``).

Modules: :mod:`.entries` (what a CN's cost depends on, the entry), :mod:`.jobs` (the job that
identifies an entry, and computing it), :mod:`.cache` (entries in the content-addressed cache),
:mod:`.table` (the table of one accelerator), :mod:`.lut` (the table as one file).
"""

from zigzag.multicore.cost_table.cache import cost_of
from zigzag.multicore.cost_table.entries import CostEntry, NodeKey
from zigzag.multicore.cost_table.table import CostTable, offchip_memory

__all__ = ["CostEntry", "CostTable", "NodeKey", "cost_of", "offchip_memory"]
