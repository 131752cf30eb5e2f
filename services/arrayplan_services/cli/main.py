"""The ``arrayplan`` command: the parser built from a static registry of commands, and dispatch.

Each command (or group of commands) lives in its own module with a ``register(subparsers)`` that
adds its parser(s), verbs nested beneath (``drives export``, ``store check``, ``servers search``)
and a ``func`` to run; what they share (exit codes, the one error path, connecting to a server,
output) is in ``common``. Command modules never import this module.

Exit codes (what a CI pipeline gates on; common.py): 0 a recommendation meets every constraint,
3 none does, 2 bad input (plan file, flags, or the server's INVALID_ARGUMENT / RESOURCE_EXHAUSTED /
NOT_FOUND), 4 some inputs unusable (``telemetry``, ``forecast``), 1 anything else (server
unreachable, internal error).
"""

from __future__ import annotations

import logging
import sys

from . import (
    cluster_commands,
    completion_command,
    drives_commands,
    forecast_commands,
    plan_commands,
    reliability_command,
    serve_command,
    servers_command,
    simulate_command,
    ssd_commands,
    store_commands,
    trace_command,
)
from .common import EXIT_BAD_INPUT, EXIT_ERROR, CommandParser, err, input_error_exit

#: The commands, in the order ``arrayplan --help`` lists them: each module's ``register`` adds its
#: command(s) to the ``arrayplan`` subparsers.
COMMANDS = (completion_command, serve_command, plan_commands, drives_commands, trace_command, ssd_commands,
            simulate_command, reliability_command, cluster_commands, forecast_commands, store_commands, servers_command)


def version_string() -> str:
    """``arrayplan X (engine Y, API arrayplan.v1)`` from the installed distributions (the engine's
    ``__version__`` when run from a checkout)."""
    from importlib import metadata

    import arrayplan_engine

    def dist(name: str, fallback: str) -> str:
        try:
            return metadata.version(name)
        except metadata.PackageNotFoundError:
            return fallback
    engine = getattr(arrayplan_engine, "__version__", "unknown")
    return f"arrayplan {dist('arrayplan-services', engine)} (engine {dist('arrayplan-engine', engine)}, API arrayplan.v1)"


def build_parser() -> CommandParser:
    """The ``arrayplan`` parser: global flags, then every registered command."""
    parser = CommandParser(prog="arrayplan", description="Capacity planner for SSD and HDD arrays.",
                           epilog="Shell completion: eval \"$(arrayplan completion bash)\" (or zsh). "
                                  "Units in flags and plan files: docs/units.md.")
    parser.add_argument("-v", "--verbose", action="store_true", help="log more")
    parser.add_argument("--version", action="version", version=version_string(), help="print the version and exit")
    parser.set_defaults(root_parser=parser)  # for `completion`, which describes the whole command line
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for command in COMMANDS:
        command.register(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)  # numba's kernel cache is set when the package is imported (__init__.py)
    logging.basicConfig(level=logging.INFO if args.verbose else logging.WARNING)
    from ..store import StoreDamagedError

    try:
        return int(args.func(args))
    except StoreDamagedError as exc:  # --local: the in-process server does not serve over a damaged store
        err(str(exc))
        return EXIT_BAD_INPUT
    except KeyboardInterrupt:
        err("interrupted")
        return 130
    except Exception as exc:  # noqa: BLE001 - an input error a command left uncaught: one line, exit 2
        code = input_error_exit(exc)
        if args.verbose:
            raise
        if code is None:  # a fault: one redacted line (a traceback can carry a URL or a file's line); --verbose shows it
            first = str(exc).splitlines()[0] if str(exc) else ""
            err(f"internal error: {type(exc).__name__}: {first} (--verbose shows the traceback)")
            return EXIT_ERROR
        return code


if __name__ == "__main__":
    sys.exit(main())
