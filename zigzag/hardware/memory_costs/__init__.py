"""Where a memory's energy per access and area come from when the accelerator file does not give them:
CACTI 7 (``cacti``: its input and output; ``cacti_build``: the executable, built once per user;
``extraction``: cached, parallel runs) or a user's memory table (``tables``).
See docs/reference/memory-costs.md."""
