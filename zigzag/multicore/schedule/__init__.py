"""The multi-core scheduler: a plain-data problem in, a schedule with its costs out."""

from zigzag.multicore.schedule.order import scheduling_order
from zigzag.multicore.schedule.problem import (
    I1,
    I2,
    MEMORY_OPERANDS,
    O,
    Link,
    ScheduleHardware,
    ScheduleProblem,
    TopMemory,
)
from zigzag.multicore.schedule.result import ScheduleResult, Totals, Transfer
from zigzag.multicore.schedule.scheduler import schedule

__all__ = [
    "I1",
    "I2",
    "O",
    "MEMORY_OPERANDS",
    "Link",
    "ScheduleHardware",
    "ScheduleProblem",
    "TopMemory",
    "ScheduleResult",
    "Totals",
    "Transfer",
    "schedule",
    "scheduling_order",
]
