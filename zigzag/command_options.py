"""The command-line pieces every command shares: the search options as flags, ``--quiet``, and
running a parsed command (bad input: one ``error: ...`` line and exit status 2; Ctrl-C: one line
and exit status 130, see :mod:`zigzag.interrupts`).

Below every command's module (``zigzag.cli``, ``zigzag.sweep.cli``, ``zigzag.steps.cli`` ...), so
that they share these without importing one another.
"""

from __future__ import annotations

import argparse
import difflib
import logging
import re
import sys

from zigzag.errors import InputError, MappingError
from zigzag.interrupts import INTERRUPTED, interrupted_line
from zigzag.mapping_search.options import OPTIONS, Option, SearchOptions, resolve_options

WORKLOAD_OPTIONS = [o.name for o in OPTIONS if o.scope == "workload"]


class ArgumentParser(argparse.ArgumentParser):
    """argparse's parser whose usage errors are one line, with the closest valid choice or flag
    ("did you mean ...?") and where to read the rest, instead of the whole usage text."""

    def error(self, message: str):
        self.exit(
            2,
            f"{self.prog}: error: {message}{self._suggestion(message)}; see '{self.prog} --help'\n",
        )

    def _suggestion(self, message: str) -> str:
        choice = re.search(r"invalid choice: '(.*?)' \(choose from (.*)\)", message)
        if choice:
            return _closest(choice.group(1), re.findall(r"'([^']*)'", choice.group(2)))
        unknown = re.search(r"unrecognized arguments: (\S+)", message)
        if unknown:
            return _closest(unknown.group(1).split("=")[0], sorted(_option_strings(self)))
        return ""


def at_least(least: int):
    """An argparse ``type``: a whole number of at least ``least`` (the error names the flag)."""

    def whole_number(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            value = None
        if value is None or value < least:
            raise argparse.ArgumentTypeError(
                f"must be a whole number of at least {least}, got '{text}'"
            )
        return value

    return whole_number


def _closest(given: str, valid: list[str]) -> str:
    """`` (did you mean 'x'?)`` for the valid value nearest ``given``, or nothing."""
    near = difflib.get_close_matches(given, valid, n=1, cutoff=0.6)
    if not near:
        near = [v for v in valid if v.lower() == given.lower()]
    return f" (did you mean '{near[0]}'?)" if near else ""


def _option_strings(parser: argparse.ArgumentParser) -> set[str]:
    """Every flag of ``parser`` and of its sub-commands."""
    flags = {s for s in parser._option_string_actions if s.startswith("--")}
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for sub in action.choices.values():
                flags |= _option_strings(sub)
    return flags


def add_option(parser, option: Option) -> None:
    """One row of the option table as a command-line flag (``--lpf-limit 6``, ``--[no-]exploit-data-locality``).

    Flags default to None (not given), so that only what the user gives overrides the table.
    """
    flag = "--" + option.name.replace("_", "-")
    help_text = f"{option.help} (default {str(option.default).lower() if option.type is bool else option.default})"
    if option.type is bool:
        parser.add_argument(
            flag, action=argparse.BooleanOptionalAction, default=None, help=help_text
        )
    else:
        parser.add_argument(
            flag,
            type=option.type,
            choices=option.choices or None,
            default=None,
            help=help_text,
            metavar=None if option.choices else option.type.__name__.upper(),
        )


def add_search_options(parser: argparse.ArgumentParser) -> None:
    """Every option of the option table (zigzag.mapping_search.options.OPTIONS) as a command-line flag."""
    group = parser.add_argument_group(
        "options (names as in get_hardware_performance_zigzag and the config)"
    )
    for option in OPTIONS:
        add_option(group, option)
    group.add_argument(
        "--in-memory-compute",
        action="store_true",
        help="search as get_hardware_performance_zigzag_imc does for in-memory-computing "
        "accelerators: turns on --enable-mix-spatial-mapping and --exploit-data-locality",
    )


#: the help of ``--quiet``, the same on every command
QUIET_HELP = "no progress output (progress bars, per-item lines); results, warnings and errors are still printed"


def add_quiet(parser: argparse.ArgumentParser) -> None:
    """The ``--quiet`` flag every command takes."""
    parser.add_argument("--quiet", action="store_true", help=QUIET_HELP)


def options_from_args(args: argparse.Namespace) -> tuple[SearchOptions, dict]:
    """The search options and workload options given on the command line (others: defaults)."""
    given = {o.name: getattr(args, o.name) for o in OPTIONS if getattr(args, o.name) is not None}
    if getattr(args, "in_memory_compute", False):
        given |= {"enable_mix_spatial_mapping": True, "exploit_data_locality": True}
    return resolve_options(given)


def run_command(parser: argparse.ArgumentParser, argv: list[str] | None) -> int:
    """Parse ``argv`` with ``parser`` and run the chosen command's ``func(args)``; its exit status."""
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s")
    try:
        return args.func(args)
    except (InputError, MappingError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except OSError as exc:  # a file the command could not read or write: one line, no traceback
        print(
            f"error: {exc.filename or ''}: {exc.strerror or exc}".replace("error: : ", "error: "),
            file=sys.stderr,
        )
        return 2
    except KeyboardInterrupt:
        print(interrupted_line(args), file=sys.stderr)
        return INTERRUPTED
