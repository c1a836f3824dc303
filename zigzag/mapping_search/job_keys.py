"""The keys of many layer jobs, each part of a job encoded once instead of the whole job per layer.

A layer job (:func:`zigzag.mapping_search.jobs.layer_job`) is the layer's signature, the
accelerator, the options and the model version; its key hashes the JSON text of all four. A
hardware sweep needs, per layer of every variant, three keys: the job's, the job's without its
memories' costs (``zigzag.mapping_search.batched.shared.cost_free_job``: candidates shared) and
without their sizes and bandwidths either (``zigzag.mapping_search.batched.structural
.structure_free_job``: allocations shared). Encoding the whole job for each of them repeats the
accelerator's text for every layer and the layer's for every variant. :class:`JobKeys` encodes
the accelerator's three forms once per accelerator, the signature once per layer and the options
once per value, and hashes the texts put together: the same text, so the same keys
(tests/unit/mapping_search/test_job_keys.py).
"""

from __future__ import annotations

from collections import OrderedDict

from zigzag.io.accelerator_dict import accelerator_to_dict
from zigzag.memo import recent
from zigzag.mapping_search.jobs import (
    MODEL_VERSION,
    accelerator_text,
    encoded,
    key_of_texts,
    options_field,
    signature_text,
)


class JobKeys:
    """``(job key, cost-free key, structure-free key)`` of layer jobs, from their parts' texts
    kept for the last ``size`` accelerator objects and options (an accelerator is immutable: its
    texts never change) and the layers' (:func:`zigzag.mapping_search.jobs.signature_text`)."""

    def __init__(self, size: int = 256):
        self.size = size
        self._accelerators: OrderedDict = OrderedDict()  # accelerator -> its three texts
        self._options: OrderedDict = OrderedDict()  # options -> their text
        self._version = encoded(MODEL_VERSION)

    def keys(self, layer, accelerator, options) -> tuple[str, str, str]:
        """The keys of ``layer_job(layer, accelerator, options)``: as it is, without its memories'
        cost fields, and without their sizes and bandwidths too."""
        parts = {
            "model_version": self._version,
            "layer": signature_text(layer),
            "options": recent(
                self._options, options, lambda: encoded(options_field(options)), self.size
            ),
        }
        forms = recent(self._accelerators, accelerator, lambda: _forms(accelerator), self.size)
        return tuple(key_of_texts({**parts, "accelerator": form}) for form in forms)

    def __len__(self) -> int:
        return len(self._accelerators) + len(self._options)


def _forms(accelerator) -> tuple[str, str, str]:
    """The texts of the accelerator as it is, without its memories' costs, and without their
    sizes and bandwidths too."""
    from zigzag.mapping_search.batched.shared import COST_FIELDS, cost_free_job
    from zigzag.mapping_search.batched.structural import structure_free_job

    job = {"accelerator": accelerator_to_dict(accelerator)}
    return (
        accelerator_text(job["accelerator"]),
        accelerator_text(cost_free_job(job)["accelerator"]),
        accelerator_text(structure_free_job(job, COST_FIELDS)["accelerator"]),
    )
