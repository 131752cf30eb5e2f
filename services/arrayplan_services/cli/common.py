"""What every ``arrayplan`` command shares: exit codes, the one error path, connecting to a
server, the parser class with nested verbs, and the small output helpers.

Exit codes (what a CI pipeline gates on): 0 a recommendation meets every constraint (or the
command did what it was asked), 3 none does (``plan``, ``submit``, ``servers search``), 2 bad
input (a file, a flag, or the server's INVALID_ARGUMENT / RESOURCE_EXHAUSTED / NOT_FOUND /
FAILED_PRECONDITION / OUT_OF_RANGE), 4 some inputs were unusable and the rest processed
(``telemetry``, ``forecast``), 1 anything else (server unreachable, internal error).

Command modules import this module and nothing of ``main``: ``main`` imports them (its registry),
never the other way round.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # imported lazily where used (startup time)
    from arrayplan.v1 import planner_pb2 as pb
    from arrayplan_engine.catalog import Catalog
    from arrayplan_engine.errors import ArrayplanError

EXIT_OK, EXIT_ERROR, EXIT_BAD_INPUT, EXIT_UNMET, EXIT_PARTIAL = 0, 1, 2, 3, 4
DEFAULT_SERVER = "127.0.0.1:50051"
DEFAULT_DATA_DIR = Path(os.environ.get("ARRAYPLAN_DATA_DIR", "data"))


def user_data_dir() -> Path:
    """Where ``--local`` keeps its run store when not told: ``$ARRAYPLAN_DATA_DIR``, else the
    per-user data directory (``$XDG_DATA_HOME/arrayplan``, default ``~/.local/share/arrayplan``),
    never the directory the command happens to run in."""
    if os.environ.get("ARRAYPLAN_DATA_DIR"):
        return Path(os.environ["ARRAYPLAN_DATA_DIR"])
    xdg = os.environ.get("XDG_DATA_HOME", "").strip()
    return (Path(xdg) if xdg and Path(xdg).is_absolute() else Path.home() / ".local" / "share") / "arrayplan"


# -- errors -------------------------------------------------------------------------------------

def err(msg: str, command: str = "") -> None:
    """Every CLI error goes out here: ``arrayplan[ COMMAND]: MSG`` on stderr, through the one
    redaction path (URL passwords, tokens) and capped at MAX_ERROR_LINES lines ("... and N more")."""
    from ..redaction import cap_text, redact_text, register_secrets, url_secrets

    register_secrets([os.environ.get("ARRAYPLAN_TOKEN", ""), *url_secrets(os.environ.get("ARRAYPLAN_STORE_URL", ""))])
    print(f"arrayplan{' ' + command if command else ''}: {cap_text(redact_text(msg))}", file=sys.stderr)


def engine_error(exc: ArrayplanError, command: str, flags: Mapping[str, str]) -> None:
    """An engine error of an in-process command: one line per violated field, naming the flag the
    field came from (``flags``: engine field -> flag) where there is one."""
    from arrayplan_engine.errors import InvalidInputError

    if not isinstance(exc, InvalidInputError):
        err(str(exc), command)
        return
    for v in exc.violations:
        flag = flags.get(v.field)
        err(f"{v.field}: {v.reason}" + (f" (flag {flag})" if flag else ""), command)


def grpc_error_exit(exc: object) -> int:
    """Print a gRPC error with its field violations; return the exit code."""
    import grpc

    from ..connection import field_violations
    from .render import rpc_error_lines

    assert isinstance(exc, grpc.RpcError)
    code = exc.code()
    first, *rest = rpc_error_lines(code.name, exc.details() or "", field_violations(exc))
    err(first)
    for line in rest:
        print(line, file=sys.stderr)
    if code in (grpc.StatusCode.INVALID_ARGUMENT, grpc.StatusCode.RESOURCE_EXHAUSTED, grpc.StatusCode.NOT_FOUND,
                grpc.StatusCode.FAILED_PRECONDITION, grpc.StatusCode.OUT_OF_RANGE):
        return EXIT_BAD_INPUT
    if code == grpc.StatusCode.UNAVAILABLE:
        err("is the server running? start it with `make run` or `arrayplan serve`, or pass --local")
    return EXIT_ERROR


def input_error_exit(exc: BaseException) -> int | None:
    """Bad input a command did not catch (a plan, array, catalog, workload or YAML file; a
    field): print it as ``arrayplan: FILE:LINE: ...`` (no traceback) and return EXIT_BAD_INPUT;
    None for anything else (a fault, which keeps its traceback)."""
    from arrayplan_engine.catalog import CatalogFileError
    from arrayplan_engine.errors import ArrayplanError

    from ..api.planfile import PlanFileError
    from ..api.safe_yaml import YamlError
    from ..api.smart_io import CapacityFileError

    if isinstance(exc, (PlanFileError, YamlError, CatalogFileError, CapacityFileError, ArrayplanError)):
        err(str(exc))
        return EXIT_BAD_INPUT
    return None


# -- connecting ---------------------------------------------------------------------------------

def server_address(args: argparse.Namespace) -> str:
    """``--server``, else ``$ARRAYPLAN_SERVER``, else the default address."""
    return getattr(args, "server", None) or os.environ.get("ARRAYPLAN_SERVER", DEFAULT_SERVER)


@contextlib.contextmanager
def connect(args: argparse.Namespace) -> Iterator[Any]:
    """A stub to the server (``--server``), or to an in-process server started for this command
    (``--local``: the same server code on an ephemeral 127.0.0.1 port, same run store)."""
    from arrayplan.v1 import planner_pb2_grpc as pb_grpc

    from ..connection import open_channel

    server = None
    address = server_address(args)
    if getattr(args, "local", False):
        from ..server.app import build_server

        data_dir = args.data_dir or user_data_dir()
        server = build_server(port=0, data_dir=data_dir, executor_kind=args.executor, ray_address=args.ray_address,
                              num_cpus=args.num_cpus)
        args.local_store = Path(data_dir) / "runs.sqlite3"
        address = f"127.0.0.1:{server.port}"
    # --local: the in-process server has no TLS and no tokens.
    channel = open_channel(address, tls_ca=None if server is not None else getattr(args, "tls_ca", None),
                           token="" if server is not None else None)
    try:
        yield pb_grpc.PlannerServiceStub(channel)
    finally:
        channel.close()
        if server is not None:
            server.stop(grace_s=1.0)


def add_connection_flags(p: argparse.ArgumentParser) -> None:
    """``--server``/``--tls-ca`` to call a server, ``--local`` and its options to run one in-process."""
    p.add_argument("--server", help=f"server address (default $ARRAYPLAN_SERVER or {DEFAULT_SERVER})")
    p.add_argument("--local", action="store_true", help="run an in-process server for this command instead of calling one")
    p.add_argument("--data-dir", type=Path, default=None,
                   help="run store directory for --local (default $ARRAYPLAN_DATA_DIR, else $XDG_DATA_HOME/arrayplan or ~/.local/share/arrayplan)")
    p.add_argument("--executor", choices=("ray", "local"), default="ray", help="--local: fan out on Ray (default) or run in-process")
    p.add_argument("--ray-address", default=None, help="--local: existing Ray cluster (default: start a local one)")
    p.add_argument("--num-cpus", type=int, default=None, help="--local: CPUs for a local Ray")
    p.add_argument("--tls-ca", type=Path, default=os.environ.get("ARRAYPLAN_TLS_CA") or None,
                   help="connect with TLS, trusting this CA's PEM file (default $ARRAYPLAN_TLS_CA); the bearer token comes "
                        "from $ARRAYPLAN_TOKEN")


# -- inputs -------------------------------------------------------------------------------------

def local_catalog(args: argparse.Namespace) -> Catalog | None:
    """The built-in catalog plus ``--catalog DIR``; None (after printing the error) when bad."""
    from arrayplan_engine.catalog import CatalogFileError

    from ..drive_catalog import load_catalog_dir

    try:
        return load_catalog_dir(getattr(args, "catalog", None))
    except CatalogFileError as exc:
        err(f"bad catalog file: {exc}")
        return None


def load_spec(args: argparse.Namespace) -> pb.PlanSpec | None:
    """The plan file named by ``args.plan_file`` with ``--seed`` (and the plan flags a command
    has) applied, warnings printed; None (after printing the line-numbered errors) when the file
    is bad."""
    from ..api.planfile import PlanFileError, load_plan_file

    try:
        spec, warnings = load_plan_file(args.plan_file, allow_outside_paths=getattr(args, "allow_outside_paths", False))
    except PlanFileError as exc:
        err(f"bad plan file: {exc}")  # one line per problem, each FILE:LINE: field: reason
        return None
    for w in warnings:
        print(f"warning: {w}", file=sys.stderr)
    args.plan_warnings = list(warnings)  # carried into --format markdown
    if args.seed is not None:
        spec.seed = args.seed
    if getattr(args, "exhaustive", False):
        spec.exhaustive = True
    if getattr(args, "coordinated_reads", False):
        spec.coordinated_reads = True
    if getattr(args, "discards", None):
        spec.discards = args.discards
    return spec


def plan_name(name: str) -> str:
    """A run name as the server names it: ``plans/ID`` (``ID`` alone is accepted)."""
    return name if name.startswith("plans/") else f"plans/{name}"


# -- output -------------------------------------------------------------------------------------

def print_json(payload: Any) -> None:
    """``payload`` under the one JSON convention (``jsonout``, docs/json.md): NaN and infinity as
    null, every key kept."""
    from .. import jsonout

    print(jsonout.dumps(payload))


def print_fields(fields: Mapping[str, Any], *, skip_none: bool = False) -> None:
    """A flat answer for people: one ``key  value`` line each, keys aligned, floats to 6
    significant digits, a list's items one per line under its key."""
    width = max(len(k) for k in fields)
    for k, v in fields.items():
        if v is None and skip_none:
            continue
        if isinstance(v, list):
            for i, item in enumerate(v):
                print(f"{k if i == 0 else '':<{width}}  {item}")
            continue
        shown = f"{v:.6g}" if isinstance(v, float) else str(v)
        print(f"{k:<{width}}  {shown}")


def add_format_flag(p: argparse.ArgumentParser, choices: Sequence[str] = ("json", "text"), default: str | None = None) -> None:
    """``--format``: ``json`` (one convention, docs/json.md) or a view for people."""
    people = {"text": "text for people", "table": "table for people", "tree": "a span tree for people",
              "markdown": "markdown for a pull-request comment"}
    views = ", ".join(people[c] for c in choices if c != "json")
    p.add_argument("--format", choices=tuple(choices), default=default or choices[0],
                   help=f"json (one convention, docs/json.md) or {views} (default %(default)s)")


# -- parsing ------------------------------------------------------------------------------------

class CommandParser(argparse.ArgumentParser):
    """argparse's parser, with one addition for commands that have verbs (nested subparsers): a
    default verb, taken when the first argument is not one of the verbs. ``drives [NAME] [flags]``
    is ``drives list [NAME] [flags]`` and ``servers --servers 16 ...`` is ``servers pool ...``, so
    a command keeps its command line when it grows verbs. Subparsers inherit the class."""

    default_verb: str | None = None

    def parse_known_args(self, args: Sequence[str] | None = None,  # type: ignore[override]
                         namespace: argparse.Namespace | None = None) -> tuple[argparse.Namespace, list[str]]:
        if self.default_verb is not None:
            args = list(sys.argv[1:] if args is None else args)
            verbs = next(a.choices for a in self._actions if isinstance(a, argparse._SubParsersAction))
            if not args or (args[0] not in verbs and args[0] not in ("-h", "--help")):
                args.insert(0, self.default_verb)
        return super().parse_known_args(args, namespace)


def add_verbs(p: argparse.ArgumentParser, dest: str, default: str | None = None) -> Any:
    """The verbs of command ``p`` (``store check``, ``drives export``): nested subparsers, one
    required, or ``default`` when the first argument is not a verb (CommandParser)."""
    verbs = p.add_subparsers(dest=dest, required=True, metavar="VERB")
    if default is not None:
        assert isinstance(p, CommandParser), "a default verb needs the CommandParser class (main.build_parser)"
        p.default_verb = default
    return verbs
