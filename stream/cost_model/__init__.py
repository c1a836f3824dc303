"""Stream's ``stream.cost_model`` package: the schedule object (:mod:`.cost_model`)."""
