"""``zigzag multicore ...`` (alias ``zigzag stream ...``): the multi-core commands.

``zigzag multicore nodes`` builds the computation-node graph of a workload on a multi-core
accelerator and writes it as ``cn_graph.npz`` (for the next steps), ``cn_graph.csv`` (one row
per CN) and ``cn_graph.png`` (small graphs). ``zigzag multicore run`` also costs and schedules the
CNs and writes ``summary.json`` and ``schedule.csv``. ``zigzag multicore search`` searches the
allocation of flexible layers to cores and writes the Pareto front (``front.csv``), the chosen
allocation as a fixed mapping (``allocation.yaml``) and its ``summary.json``/``schedule.csv``.

``parser`` declares the commands and their options, ``commands`` runs them, ``console`` writes
their lines on the terminal.
"""
