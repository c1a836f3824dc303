"""The schedule's views under their earlier path (saved ``scme.pickle`` files name it):
:mod:`zigzag.multicore.evaluation.views`."""

from zigzag.multicore.evaluation.views import (
    CommunicationManagerView,
    LinkEventView,
    LinkView,
    MemoryManagerView,
    ScheduledAccelerator,
    ScheduledNode,
    ScheduledWorkload,
)

__all__ = [
    "CommunicationManagerView",
    "LinkEventView",
    "LinkView",
    "MemoryManagerView",
    "ScheduledAccelerator",
    "ScheduledNode",
    "ScheduledWorkload",
]
