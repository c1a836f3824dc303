"""The workflow config as typed models: read once (:func:`load_config`), JSON schema generated.

:mod:`zigzag.config.models` holds the sections of ``config.yaml`` with their defaults,
:mod:`zigzag.config.check` reads a config into them (a problem as one line),
:mod:`zigzag.config.schema` writes the JSON schema shipped beside them (``config.schema.json``).
"""

from zigzag.config.check import load_config
from zigzag.config.models import WorkflowConfig

__all__ = ["WorkflowConfig", "load_config"]
