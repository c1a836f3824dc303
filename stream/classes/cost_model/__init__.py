"""Stream's 2023 ``stream.classes.cost_model``."""
