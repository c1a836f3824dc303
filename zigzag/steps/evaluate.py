"""``python -m zigzag.steps.evaluate JOB --output RESULT [--log LOG] [--record-failure]``: one layer job.

The entry point of the workflow's ``evaluate_layer`` rule, kept apart from the full command line
(``zigzag step ...``) so that a job starts quickly: it imports the search and the model types
only (no argparse sub-commands, YAML, ONNX, pandas, matplotlib or networkx). Same outcome and
messages as ``zigzag step evaluate``.
"""

from __future__ import annotations

import sys

from zigzag.steps.logged import evaluate_logged


def main(argv: list[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    usage = (
        "usage: python -m zigzag.steps.evaluate JOB --output RESULT [--log LOG] [--record-failure]"
    )
    options = {"--output": None, "--log": None}
    positional = []
    record_failure = False
    while args:
        arg = args.pop(0)
        if arg == "--record-failure":
            record_failure = True
        elif arg in options and args:
            options[arg] = args.pop(0)
        elif arg.startswith("-"):
            print(f"{usage}\nerror: unknown or incomplete option {arg}", file=sys.stderr)
            return 2
        else:
            positional.append(arg)
    if len(positional) != 1 or options["--output"] is None:
        print(usage, file=sys.stderr)
        return 2
    return evaluate_logged(
        positional[0], options["--output"], options["--log"], record_failure=record_failure
    )


if __name__ == "__main__":
    sys.exit(main())
