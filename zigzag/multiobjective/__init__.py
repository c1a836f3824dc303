"""Multi-objective tools shared by every search and table: the non-dominated set of points
(:mod:`.pareto`, backed by moocore) and the NSGA-II loop with its memoised evaluations
(:mod:`.nsga2`, backed by DEAP's selection). They know nothing of hardware or workloads."""
