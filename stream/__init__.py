"""Stream's import paths (``stream.api``, ``stream.utils``, ``stream.visualization.*``,
``stream.stages.*``, ``stream.cost_model.cost_model``) as thin faces over :mod:`zigzag.multicore`,
so that Stream users' scripts run unchanged; see docs/compat/stream-users.md."""
