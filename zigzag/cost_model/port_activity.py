"""ZigZag's name for one port activity (``zigzag.cost_model.port_activity.PortActivity``), as
found in ``cme.port_activity_collect``."""

from zigzag.cost.layer_result import PortActivityView as PortActivity

__all__ = ["PortActivity"]
