"""The ``arrayplan`` command.

Exit codes (what a CI pipeline gates on): 0 a recommendation meets every constraint, 3 none
does, 2 bad input (plan file, flags, or the server's INVALID_ARGUMENT / RESOURCE_EXHAUSTED /
NOT_FOUND), 1 anything else (server unreachable, internal error).
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import json
import logging
import os
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # imported lazily where used (startup time)
    from arrayplan.v1 import planner_pb2 as pb
    from arrayplan_engine.catalog import Catalog

EXIT_OK, EXIT_ERROR, EXIT_BAD_INPUT, EXIT_UNMET = 0, 1, 2, 3
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

# Subcommands contributed by other modules: each has register(subparsers).
_PLUGINS = ("arrayplan_services.cli.ssd_commands", "arrayplan_services.cli.fit_command", "arrayplan_services.cli.simulate_command",
            "arrayplan_services.cli.reliability_command", "arrayplan_services.cli.cluster_commands",
            "arrayplan_services.cli.forecast_commands", "arrayplan_services.cli.store_commands",
            "arrayplan_services.cli.servers_command")


def _err(msg: str) -> None:
    """Every CLI error goes out here: through the one redaction path (URL passwords, tokens) and
    capped at MAX_ERROR_LINES lines ("... and N more")."""
    from ..redaction import cap_text, redact_text, register_secrets, url_secrets

    register_secrets([os.environ.get("ARRAYPLAN_TOKEN", ""), *url_secrets(os.environ.get("ARRAYPLAN_STORE_URL", ""))])
    print(f"arrayplan: {cap_text(redact_text(msg))}", file=sys.stderr)


def grpc_error_exit(exc: object) -> int:
    """Print a gRPC error with its field violations; return the exit code."""
    import grpc

    from ..connection import field_violations

    assert isinstance(exc, grpc.RpcError)
    code = exc.code()
    from .render import rpc_error_lines

    first, *rest = rpc_error_lines(code.name, exc.details() or "", field_violations(exc))
    _err(first)
    for line in rest:
        print(line, file=sys.stderr)
    if code in (grpc.StatusCode.INVALID_ARGUMENT, grpc.StatusCode.RESOURCE_EXHAUSTED, grpc.StatusCode.NOT_FOUND,
                grpc.StatusCode.FAILED_PRECONDITION, grpc.StatusCode.OUT_OF_RANGE):
        return EXIT_BAD_INPUT
    if code == grpc.StatusCode.UNAVAILABLE:
        _err("is the server running? start it with `make run` or `arrayplan serve`, or pass --local")
    return EXIT_ERROR


@contextlib.contextmanager
def connect(args: argparse.Namespace) -> Iterator[Any]:
    """A stub to the server (``--server``), or to an in-process server started for this command
    (``--local``: the same server code on an ephemeral 127.0.0.1 port, same run store)."""

    from arrayplan.v1 import planner_pb2_grpc as pb_grpc

    server = None
    address = getattr(args, "server", None) or os.environ.get("ARRAYPLAN_SERVER", DEFAULT_SERVER)
    if getattr(args, "local", False):
        from ..server.app import build_server

        data_dir = args.data_dir or user_data_dir()
        server = build_server(port=0, data_dir=data_dir, executor_kind=args.executor, ray_address=args.ray_address,
                              num_cpus=args.num_cpus)
        args.local_store = Path(data_dir) / "runs.sqlite3"
        address = f"127.0.0.1:{server.port}"
    from ..connection import open_channel

    # --local: the in-process server has no TLS and no tokens.
    channel = open_channel(address, tls_ca=None if server is not None else getattr(args, "tls_ca", None),
                           token="" if server is not None else None)
    try:
        yield pb_grpc.PlannerServiceStub(channel)
    finally:
        channel.close()
        if server is not None:
            server.stop(grace_s=1.0)


def _add_connection(p: argparse.ArgumentParser) -> None:
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


# -- serve --------------------------------------------------------------------------------------

def cmd_serve(args: argparse.Namespace) -> int:
    from arrayplan_engine.catalog import builtin_catalog

    from ..redaction import install_log_filter, register_secrets, url_secrets
    from ..server.app import TlsConfig, build_server, serve_forever
    from ..server.auth import Authenticator, TokenFileError
    from ..server.leases import MAX_LEASE_S, MIN_LEASE_S
    from ..store import StoreConnectError, StoreDamagedError, StoreUrlError, check_data_dir

    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    register_secrets(url_secrets(args.store_url or ""))  # no message or log line carries the store's password
    install_log_filter()
    if args.max_running_plans < 1 or args.max_queued_plans < 0:
        _err("--max-running-plans must be >= 1 and --max-queued-plans >= 0")
        return EXIT_BAD_INPUT
    for flag, value, low, high in (("--max-running-heavy", args.max_running_heavy, 1, 1024),
                                   ("--max-queued-heavy", args.max_queued_heavy, 0, 10_000),
                                   ("--max-heavy-per-caller", args.max_heavy_per_caller, 1, 1024),
                                   ("--lease-s", args.lease_s, MIN_LEASE_S, MAX_LEASE_S)):
        if not low <= value <= high:  # NaN fails too
            _err(f"{flag} must be in [{low:g}, {high:g}], got {value:g}")
            return EXIT_BAD_INPUT
    store_url = (args.store_url or "").strip() or None
    if bool(args.tls_cert) != bool(args.tls_key) or (args.tls_client_ca and not args.tls_cert):
        _err("--tls-cert and --tls-key go together (and --tls-client-ca needs both)")
        return EXIT_BAD_INPUT
    problem = check_data_dir(Path(args.data_dir))
    if problem is not None:
        _err(f"the data dir cannot hold the run store: {problem}")
        return EXIT_BAD_INPUT
    catalog = _local_catalog(args)  # a malformed catalog file stops the server here, naming file, line and field
    if catalog is None:
        return EXIT_BAD_INPUT
    if args.catalog:
        logging.getLogger("arrayplan").info("catalog: %d drives (%s added from %s)", len(catalog),
                                            len(catalog) - len(builtin_catalog()), args.catalog)
    tls = None
    if args.tls_cert:
        tls = TlsConfig(cert_file=args.tls_cert, key_file=args.tls_key, client_ca_file=args.tls_client_ca)
        for flag, f in (("--tls-cert", args.tls_cert), ("--tls-key", args.tls_key), ("--tls-client-ca", args.tls_client_ca)):
            if f is not None and not Path(f).is_file():
                _err(f"{flag}: {f} is not a readable file")
                return EXIT_BAD_INPUT
    if args.auth_token_file:
        try:
            Authenticator(args.auth_token_file, allow_open_mode=args.allow_open_token_file)
        except TokenFileError as exc:
            _err(f"--auth-token-file: {exc}")
            return EXIT_BAD_INPUT
    try:
        server = build_server(host=args.host, port=args.port, data_dir=args.data_dir, executor_kind=args.executor,
                              ray_address=args.ray_address, num_cpus=args.num_cpus, candidate_limit=args.candidate_limit,
                              max_running_plans=args.max_running_plans, max_queued_plans=args.max_queued_plans,
                              tls=tls, auth_token_file=args.auth_token_file, reflection_enabled=not args.no_reflection,
                              health_port=args.health_port, catalog=catalog, shared_reads=args.shared_reads,
                              max_running_heavy=args.max_running_heavy, max_queued_heavy=args.max_queued_heavy,
                              max_heavy_per_caller=args.max_heavy_per_caller, store_url=store_url, lease_s=args.lease_s,
                              allow_open_token_file=args.allow_open_token_file)
    except (StoreDamagedError, StoreUrlError, StoreConnectError) as exc:  # one line: the file or URL (no password), what to do
        _err(str(exc))
        return EXIT_BAD_INPUT
    except OSError as exc:
        _err(str(exc).splitlines()[0] if str(exc) else type(exc).__name__)
        return EXIT_ERROR
    except Exception as exc:  # noqa: BLE001 - one line, not a traceback (TLS files, the store)
        from ..store import unavailable_condition

        condition = unavailable_condition(exc)
        _err(f"cannot start: {'the run store is ' + condition if condition else type(exc).__name__ + ': ' + str(exc).splitlines()[0]}")
        return EXIT_BAD_INPUT if condition else EXIT_ERROR
    from .. import numba_cache

    cold = numba_cache.cold_kernels()
    if cold:
        logging.getLogger("arrayplan").warning(
            "numba kernels not compiled yet in %s (%s): the first plan compiles them (about a minute); "
            "`make setup` or `python -m arrayplan_services.numba_cache --warm examples` does it ahead",
            numba_cache.default_cache_dir(), ", ".join(cold))
    where = f"{args.host}:{server.port}"
    msg = (f"arrayplan serving on {where} (run store {server.store.location}, "
           f"executor {args.executor}{' at ' + args.ray_address if args.ray_address else ''})\n"
           f"  try: arrayplan plan examples/oltp.yaml --server {where}\n"
           f"       bin/grpcurl {'-cacert CA.pem' if tls else '-plaintext'} {where} grpc.health.v1.Health/Check")
    serve_forever(server, msg)
    return EXIT_OK


# -- plan ---------------------------------------------------------------------------------------

def _progress_reporter(quiet: bool) -> tuple[Callable[[pb.PlanProgress], None], contextlib.AbstractContextManager[Any]]:
    """A callable taking PlanProgress: a rich bar on a terminal, a line a second otherwise."""
    if quiet:
        return lambda p: None, contextlib.nullcontext()
    if sys.stderr.isatty():
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

        bar = Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                       transient=True, console=_stderr_console())
        task = bar.add_task("simulating candidates", total=None)

        def update(p: pb.PlanProgress) -> None:
            bar.update(task, total=p.candidates_to_evaluate or None, completed=p.candidates_evaluated,
                       description=p.phase or "simulating candidates")
        return update, bar
    last = [0.0]
    last_phase = [""]

    def line(p: pb.PlanProgress) -> None:
        if not p.candidates_total:
            return
        if p.phase and p.phase != last_phase[0]:
            print(f"progress: {p.phase}", file=sys.stderr, flush=True)
        last_phase[0] = p.phase
        now = time.monotonic()
        if now - last[0] >= 1.0 or (p.candidates_to_evaluate and p.candidates_evaluated == p.candidates_to_evaluate):
            last[0] = now
            print(f"progress: {p.candidates_evaluated}/{p.candidates_to_evaluate} candidates simulated "
                  f"({p.candidates_pruned} of {p.candidates_total} pruned by bounds)", file=sys.stderr, flush=True)
    return line, contextlib.nullcontext()


def _stderr_console() -> Any:
    from rich.console import Console

    return Console(stderr=True)


def load_spec(args: argparse.Namespace) -> pb.PlanSpec | None:
    """The plan file named by ``args.plan_file`` with ``--seed`` applied, warnings printed; None
    (after printing the line-numbered errors) when the file is bad."""
    from ..api.planfile import PlanFileError, load_plan_file

    try:
        spec, warnings = load_plan_file(args.plan_file, allow_outside_paths=getattr(args, "allow_outside_paths", False))
    except PlanFileError as exc:
        _err(f"bad plan file: {exc}")  # one line per problem, each FILE:LINE: field: reason
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


def cmd_plan(args: argparse.Namespace) -> int:
    import grpc

    from arrayplan.v1 import planner_pb2 as pb

    started_s = time.monotonic()
    spec = load_spec(args)
    if spec is None:
        return EXIT_BAD_INPUT
    try:
        with connect(args) as stub:
            try:
                plan = stub.CreatePlan(pb.CreatePlanRequest(plan=pb.Plan(spec=spec), plan_id=args.plan_id or ""), timeout=60)
            except grpc.RpcError as exc:
                code = grpc_error_exit(exc)
                if exc.code() == grpc.StatusCode.INVALID_ARGUMENT:
                    _point_at_lines(exc, Path(args.plan_file))
                return code
            if not args.quiet:
                print(f"plan {plan.name} created (trace id {plan.trace_id})", file=sys.stderr)
            update, bar = _progress_reporter(args.quiet or args.format == "json" and not sys.stderr.isatty())
            final = None
            with bar:
                for event in stub.WatchPlan(pb.WatchPlanRequest(name=plan.name, cancel_on_disconnect=True), timeout=args.timeout):
                    if event.HasField("progress"):
                        update(event.progress)
                    else:
                        final = event.plan
    except grpc.RpcError as exc:
        if exc.code() == grpc.StatusCode.DEADLINE_EXCEEDED:
            _err(f"the plan did not finish within --timeout {args.timeout} s; it was cancelled")
            return EXIT_ERROR
        return grpc_error_exit(exc)
    assert final is not None
    if final.state != pb.Plan.STATE_SUCCEEDED:
        _err(f"plan {final.name} {pb.Plan.State.Name(final.state).removeprefix('STATE_').lower()}: {final.error_message}")
        return EXIT_ERROR
    _emit(final, args)
    if getattr(args, "local_store", None) and not args.quiet:
        print(f"run {final.name} stored in {args.local_store} (--data-dir or $ARRAYPLAN_DATA_DIR to change; "
              f"`arrayplan runs --local` lists it)", file=sys.stderr)
    if args.report:
        # the report's simulation gets what is left of the command's --timeout (at most its default budget)
        code = _write_report(final, args, timeout_s=max(0.0, args.timeout - (time.monotonic() - started_s)))
        if code != EXIT_OK:
            return code
    met = final.result.constraints_met
    if met and args.fail_if_headroom_below is not None:
        best = final.result.recommendations[0]
        if best.headroom_fraction * 100 < args.fail_if_headroom_below:
            _err(f"best recommendation's headroom {best.headroom_fraction:.1%} on {best.binding_constraint} is below "
                 f"--fail-if-headroom-below {args.fail_if_headroom_below}%")
            return EXIT_UNMET
    return EXIT_OK if met else EXIT_UNMET


def _write_report(plan: pb.Plan, args: argparse.Namespace, *, timeout_s: float) -> int:
    """``--report DIR`` of ``plan`` and ``runs NAME``: the same report from the same stored plan.
    Progress lines go to stderr (unless --quiet); a directory that cannot be written is exit 2."""
    from .. import report

    quiet = bool(getattr(args, "quiet", False))
    started_s = time.monotonic()

    def progress(line: str) -> None:
        if not quiet:
            print(f"report: [{time.monotonic() - started_s:5.1f} s] {line}", file=sys.stderr, flush=True)

    try:
        path = report.write_report(plan, Path(args.report), image_base_url=getattr(args, "report_image_base_url", None),
                                   simulation_timeout_s=min(report.DEFAULT_SIMULATION_TIMEOUT_S, timeout_s),
                                   progress=progress)
    except OSError as exc:
        _err(f"--report {args.report}: cannot write the report there ({exc.strerror or exc})")
        return EXIT_BAD_INPUT
    if not quiet:
        print(f"report written to {path}", file=sys.stderr)
    return EXIT_OK


def _point_at_lines(exc: object, plan_file: Path) -> None:
    """For server-side field violations, name the plan file line too."""
    from ..api.planfile import line_of
    from ..connection import field_violations

    violations = field_violations(exc)  # type: ignore[arg-type]
    if not violations:
        return
    text = plan_file.read_text(encoding="utf-8")
    for field, _reason in violations:
        line = line_of(text, field)
        if line:
            print(f"  {plan_file}:{line}: {field}", file=sys.stderr)


def _emit(plan: object, args: argparse.Namespace) -> None:
    from . import render

    if args.format == "json":
        print(render.plan_json(plan))  # type: ignore[arg-type]
    elif args.format == "markdown":
        print(render.plan_markdown(plan, getattr(args, "plan_warnings", ())), end="")  # type: ignore[arg-type]
    else:
        render.plan_table(plan, render.stdout_console())  # type: ignore[arg-type]


# -- drives / runs / trace ----------------------------------------------------------------------

def _local_catalog(args: argparse.Namespace) -> Catalog | None:
    """The built-in catalog plus ``--catalog DIR``; None (after printing the error) when bad."""
    from arrayplan_engine.catalog import CatalogFileError

    from ..drive_catalog import load_catalog_dir

    try:
        return load_catalog_dir(getattr(args, "catalog", None))
    except CatalogFileError as exc:
        _err(f"bad catalog file: {exc}")
        return None


def _drives_in_process(args: argparse.Namespace) -> int:
    """``arrayplan drives`` without a server: the built-in catalog (plus ``--catalog DIR``)."""
    from arrayplan_engine.errors import InvalidInputError

    from ..api.convert import drive_to_proto

    cat = _local_catalog(args)
    if cat is None:
        return EXIT_BAD_INPUT
    try:
        drives = [cat.get(args.name, "name")] if args.name else [d for d in cat if args.kind in ("all", d.kind)]
    except InvalidInputError as exc:
        _err(str(exc))
        return EXIT_BAD_INPUT
    protos = [drive_to_proto(d) for d in drives]
    if args.format == "json":
        print(_drives_json(protos))
        return EXIT_OK
    _drives_table(protos, bool(args.name))
    return EXIT_OK


def cmd_drives_export(args: argparse.Namespace) -> int:
    """``arrayplan drives export NAME``: one drive as a catalog file (TOML) on stdout."""
    from arrayplan_engine.catalog import drive_to_toml
    from arrayplan_engine.errors import InvalidInputError

    cat = _local_catalog(args)
    if cat is None:
        return EXIT_BAD_INPUT
    try:
        drive = cat.get(args.name, "name")
    except InvalidInputError as exc:
        _err(str(exc))
        return EXIT_BAD_INPUT
    print(drive_to_toml(drive), end="")
    return EXIT_OK


def cmd_drives(args: argparse.Namespace) -> int:
    import grpc

    from arrayplan.v1 import planner_pb2 as pb

    if not (args.server or os.environ.get("ARRAYPLAN_SERVER") or args.local):
        return _drives_in_process(args)
    try:
        with connect(args) as stub:
            if args.name:
                drives = [stub.GetDrive(pb.GetDriveRequest(name=args.name), timeout=30)]
            else:
                kind = {"ssd": pb.DRIVE_KIND_SSD, "hdd": pb.DRIVE_KIND_HDD, "all": pb.DRIVE_KIND_UNSPECIFIED}[args.kind]
                drives = list(stub.ListDrives(pb.ListDrivesRequest(kind=kind), timeout=30).drives)
    except grpc.RpcError as exc:
        return grpc_error_exit(exc)
    if args.format == "json":
        print(_drives_json(drives))
        return EXIT_OK
    _drives_table(drives, bool(args.name))
    return EXIT_OK


def _drives_json(drives: list[pb.Drive]) -> str:
    """The one JSON shape of ``arrayplan drives``, in-process or via a server: each drive in the
    output convention (``jsonout``), with ``kind`` as the catalog writes it (``ssd`` / ``hdd``, as
    catalog files and ``--kind`` do) and ``sources``, the documents its values are quoted from."""
    from arrayplan.v1 import planner_pb2 as pb

    from .. import jsonout
    from .render import drive_unknown_fields

    rows = []
    for d in drives:
        row = jsonout.to_json(d)
        row.update({f: None for f in drive_unknown_fields(d)})  # a value the catalog does not give: null, not 0
        row["kind"] = pb.DriveKind.Name(d.kind).removeprefix("DRIVE_KIND_").lower()
        row["sources"] = sorted({p.source for p in d.provenance if p.source})
        rows.append(row)
    return jsonout.dumps(rows)


def _drives_table(drives: list[pb.Drive], one: bool) -> None:
    from rich.table import Table

    from arrayplan.v1 import planner_pb2 as pb

    from . import render

    table = Table(title="arrayplan drive catalog", title_justify="left")
    for c in ("name", "kind", "interface", "capacity GB", "spare", "rand read IOPS", "rand write IOPS", "steady write", "endurance TBW", "$", "W active"):
        table.add_column(c, justify="left" if c in ("name", "kind", "interface") else "right")
    for d in drives:
        unknown = render.drive_unknown_fields(d)

        def cell(name: str, text: str, unknown: set[str] = unknown) -> str:
            return render.UNKNOWN if name in unknown else text
        table.add_row(d.name, pb.DriveKind.Name(d.kind).removeprefix("DRIVE_KIND_").lower(), d.interface, f"{d.capacity_bytes / 1e9:,.0f}",
                      f"{d.spare_bytes_per_user_byte:.1%}" if d.spare_bytes_per_user_byte else render.UNKNOWN,
                      cell("random_read_iops", f"{d.random_read_iops:,.0f}"), cell("random_write_iops", f"{d.random_write_iops:,.0f}"),
                      cell("steady_random_write_iops", f"{d.steady_random_write_iops:,.0f}"),
                      cell("endurance_bytes_written", f"{d.endurance_bytes_written / 1e12:,.0f}"),
                      cell("price_usd", f"{d.price_usd:,.0f}"), cell("active_power_w", f"{d.active_power_w:g}"))
    render.stdout_console().print(table)
    if one:
        for p in drives[0].provenance:
            src = f"assumed: {p.reason}" if p.assumed else f"{p.source}: \"{p.quote}\""
            print(f"  {p.field}: {src}")


def cmd_runs(args: argparse.Namespace) -> int:
    import grpc

    from arrayplan.v1 import planner_pb2 as pb

    from . import render

    try:
        with connect(args) as stub:
            if args.name:
                name = args.name if args.name.startswith("plans/") else f"plans/{args.name}"
                plan = stub.GetPlan(pb.GetPlanRequest(name=name), timeout=30)
                if plan.state == pb.Plan.STATE_SUCCEEDED:
                    _emit(plan, args)
                else:
                    print(render.plan_json(plan) if args.format == "json" else
                          f"{plan.name}: {pb.Plan.State.Name(plan.state)} {plan.error_reason} {plan.error_message}")
                if args.report:
                    if plan.state != pb.Plan.STATE_SUCCEEDED:
                        _err(f"no report for {plan.name}: it is {pb.Plan.State.Name(plan.state).removeprefix('STATE_').lower()}, "
                             "and a report needs a succeeded plan")
                        return EXIT_ERROR
                    return _write_report(plan, args, timeout_s=args.timeout)
                return EXIT_OK
            if args.report:
                _err("--report needs a run NAME (`arrayplan runs` lists them)")
                return EXIT_BAD_INPUT
            resp = stub.ListPlans(pb.ListPlansRequest(page_size=args.limit, page_token=args.page_token or ""), timeout=30)
    except grpc.RpcError as exc:
        return grpc_error_exit(exc)
    if args.format == "json":
        from .. import jsonout

        print(jsonout.dumps(resp))
        return EXIT_OK
    for p in resp.plans:
        created = p.create_time.ToDatetime().strftime("%Y-%m-%d %H:%M:%S")
        prog = p.progress
        print(f"{p.name:40s} {pb.Plan.State.Name(p.state).removeprefix('STATE_'):10s} {created}  "
              f"{prog.candidates_evaluated}/{prog.candidates_to_evaluate} evaluated  trace {p.trace_id}")
    if resp.next_page_token:
        print(f"(more: --page-token {resp.next_page_token})")
    return EXIT_OK


def _fetch_trace(args: argparse.Namespace) -> pb.GetPlanTraceResponse:
    """GetPlanTrace from the server (``--server``/``--local``), or straight from a run store file
    when only ``--data-dir`` is given (no server needed)."""
    name = args.name if args.name.startswith("plans/") else f"plans/{args.name}"
    if args.data_dir is not None and not args.local and not args.server:
        from ..plan.planner import trace_from_store
        from ..store import RunStore

        store_path = Path(args.data_dir) / "runs.sqlite3"
        if not store_path.exists():
            raise FileNotFoundError(f"no run store at {store_path}")
        return trace_from_store(RunStore(store_path), name)
    from arrayplan.v1 import planner_pb2 as pb

    with connect(args) as stub:
        trace: pb.GetPlanTraceResponse = stub.GetPlanTrace(pb.GetPlanTraceRequest(name=name), timeout=60)
        return trace


def _attr_text(v: object) -> str:
    if isinstance(v, float) and v.is_integer() and abs(v) < 2**53:
        return str(int(v))
    return str(v)


def cmd_trace(args: argparse.Namespace) -> int:
    """Print a run's spans as a tree with their attributes; optionally export OTLP/JSON."""

    import grpc
    from google.protobuf import json_format

    from arrayplan_engine.errors import ArrayplanError

    try:
        trace = _fetch_trace(args)
    except grpc.RpcError as exc:
        return grpc_error_exit(exc)
    except (FileNotFoundError, ArrayplanError) as exc:
        _err(str(exc))
        return EXIT_BAD_INPUT
    if not trace.spans:
        _err(f"no spans stored for {args.name!r}")
        return EXIT_BAD_INPUT
    if args.otlp_json:
        from ..telemetry.otlp_json import to_otlp_json

        text = json.dumps(to_otlp_json(trace))
        if args.otlp_json == "-":
            print(text)
            return EXIT_OK
        Path(args.otlp_json).write_text(text + "\n", encoding="utf-8")
        print(f"OTLP/JSON of {len(trace.spans)} spans written to {args.otlp_json} "
              "(POST it to an OTLP/HTTP /v1/traces endpoint; docs/tracing.md)", file=sys.stderr)
    if args.format == "json":
        from .. import jsonout

        print(jsonout.dumps(trace))
        return EXIT_OK
    spans = list(trace.spans)
    ids = {s.span_id for s in spans}
    children: dict[str, list[Any]] = {}
    for s in spans:
        children.setdefault(s.parent_span_id if s.parent_span_id in ids else "", []).append(s)

    def show(parent: str, depth: int) -> None:
        for s in children.get(parent, []):
            ms = (s.end_time.ToNanoseconds() - s.start_time.ToNanoseconds()) / 1e6
            status = "" if s.status in ("", "UNSET", "OK") else f", {s.status}"
            print(f"{'  ' * depth}{s.name} [{s.kind.lower()}, {s.process}{status}] {ms:.1f} ms")
            if not args.no_attributes and s.HasField("attributes"):
                for k, v in sorted(json_format.MessageToDict(s.attributes).items()):
                    print(f"{'  ' * depth}    {k} = {_attr_text(v)}")
            show(s.span_id, depth + 1)
    print(f"trace {trace.trace_id}: {len(spans)} spans")
    show("", 0)
    return EXIT_OK


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


# -- completion -----------------------------------------------------------------------------------

def _mark_paths(parser: argparse.ArgumentParser) -> None:
    """Tell shtab which arguments take paths (any ``type=Path``; a directory where the metavar is
    ``DIR`` or the flag ends in ``-dir``), in this parser and every subcommand's, so the shells
    complete file names there and nowhere else."""
    import shtab

    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for sub in action.choices.values():
                _mark_paths(sub)
        elif action.type is Path:
            is_dir = action.metavar == "DIR" or any(o.endswith("-dir") for o in action.option_strings)
            action.complete = shtab.DIRECTORY if is_dir else shtab.FILE  # type: ignore[attr-defined]


# Kept as the bash entry point: scripts that say `complete -F _arrayplan arrayplan` keep working.
_BASH_ALIAS = "_arrayplan() { _shtab_arrayplan \"$@\"; }\n"


def completion_script(shell: str, parser: argparse.ArgumentParser) -> str:
    """A bash or zsh completion script generated by shtab from the parser: subcommands (with their
    help in zsh), each one's flags, the choices of flags and positionals that have them, file
    names where an argument takes a path."""
    import shtab

    _mark_paths(parser)
    script = str(shtab.complete(parser, shell=shell)).rstrip("\n") + "\n"
    if shell == "bash":
        script += _BASH_ALIAS
    return script


def cmd_completion(args: argparse.Namespace) -> int:
    print(completion_script(args.shell, build_parser()), end="")
    return EXIT_OK


def build_parser() -> argparse.ArgumentParser:
    from ..api.planfile import seconds_arg

    parser = argparse.ArgumentParser(prog="arrayplan", description="Capacity planner for SSD and HDD arrays.",
                                     epilog="Shell completion: eval \"$(arrayplan completion bash)\" (or zsh). "
                                            "Units in flags and plan files: docs/units.md.")
    parser.add_argument("-v", "--verbose", action="store_true", help="log more")
    parser.add_argument("--version", action="version", version=version_string(), help="print the version and exit")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    p = sub.add_parser("completion", help="print a shell completion script (shtab): eval \"$(arrayplan completion bash)\"; "
                                          "zsh: eval \"$(arrayplan completion zsh)\" after compinit")
    p.add_argument("shell", choices=("bash", "zsh"), help="the shell to complete for")
    p.set_defaults(func=cmd_completion)

    p = sub.add_parser("serve", help="run the gRPC planning service")
    p.add_argument("--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1)")
    p.add_argument("--port", type=int, default=50051, help="port (default 50051; 0 = any free port)")
    p.add_argument("--data-dir", type=Path, default=DEFAULT_DATA_DIR, help="run store directory (default ./data)")
    p.add_argument("--ray-address", default=os.environ.get("RAY_ADDRESS"), help="existing Ray cluster (default: start a local one)")
    p.add_argument("--executor", choices=("ray", "local"), default="ray", help="where simulations run (default ray)")
    p.add_argument("--num-cpus", type=int, default=None, help="CPUs for a local Ray (default: all)")
    p.add_argument("--candidate-limit", type=int, default=20_000, help="largest candidate space a plan may have")
    p.add_argument("--catalog", type=Path, metavar="DIR",
                   help="add every drive catalog file (*.toml, docs/catalog.md) in DIR to the built-in drives")
    p.add_argument("--max-running-plans", type=int, default=4, help="plans that run at once; more wait PENDING in a queue (default 4)")
    p.add_argument("--max-queued-plans", type=int, default=64,
                   help="plans that may wait; beyond, CreatePlan answers RESOURCE_EXHAUSTED with a RetryInfo (default 64)")
    p.add_argument("--tls-cert", type=Path, help="serve TLS with this PEM certificate (chain) ...")
    p.add_argument("--tls-key", type=Path, help="... and this PEM private key")
    p.add_argument("--tls-client-ca", type=Path, help="mutual TLS: require client certificates signed by this PEM CA")
    p.add_argument("--auth-token-file", type=Path,
                   help="require bearer tokens: lines 'NAME TOKEN [admin]' (reloaded on SIGHUP; health stays open); a regular "
                        "file others cannot read or its group write (mode 600 or 640), each token under one name")
    p.add_argument("--allow-open-token-file", action="store_true",
                   help="accept a token file others may read or its group may write (refused by default, as ssh refuses such keys)")
    p.add_argument("--shared-reads", action="store_true",
                   help="with tokens: every token may read every plan, trace and spec (default: their creator and admin tokens only)")
    p.add_argument("--no-reflection", action="store_true", help="do not serve gRPC server reflection")
    p.add_argument("--health-port", type=int, help="also serve the health service alone, plaintext, on this port (for probes "
                                                     "that cannot speak TLS, e.g. the kubelet's)")
    p.add_argument("--store-url", default=os.environ.get("ARRAYPLAN_STORE_URL") or None, metavar="URL",
                   help="keep the run store in PostgreSQL (postgresql://USER:PASSWORD@HOST:PORT/DB; default $ARRAYPLAN_STORE_URL), "
                        "shared by several replicas; without it, SQLite in --data-dir")
    p.add_argument("--lease-s", type=float, default=30.0,
                   help="with --store-url: how long a replica's hold on a plan lasts without renewal; a dead replica's plans are "
                        "resumed by another after this (1-3600, default 30)")
    p.add_argument("--max-running-heavy", type=int, default=4,
                   help="SimulateArray/RunConsistencyTest/ForecastArray calls that run at once (1-1024, default 4)")
    p.add_argument("--max-queued-heavy", type=int, default=16,
                   help="heavy calls that may wait; beyond, RESOURCE_EXHAUSTED with a RetryInfo (0-10000, default 16)")
    p.add_argument("--max-heavy-per-caller", type=int, default=4,
                   help="heavy calls one caller may have running or waiting (1-1024, default 4)")
    p.set_defaults(func=cmd_serve)

    p = sub.add_parser("plan", help="plan an array for a plan file and print ranked recommendations")
    p.add_argument("plan_file", type=Path, help="YAML plan file (see examples/)")
    p.add_argument("--format", choices=("table", "json", "markdown"), default="table",
                   help="table for people, json (docs/json.md) or markdown for a pull-request comment (default %(default)s)")
    p.add_argument("--plan-id", help="name the run plans/PLAN_ID")
    p.add_argument("--allow-outside-paths", action="store_true",
                   help="trust the plan file: let it be a link to a file elsewhere and name fio/trace files outside its own "
                        "directory (default: both refused)")
    p.add_argument("--seed", type=int, help="override the plan file's seed")
    p.add_argument("--exhaustive", action="store_true",
                   help="simulate every candidate the cheap bounds keep (the plan file's exhaustive: true), not only those "
                        "the search needs: the same top recommendations, slower; to check the search")
    p.add_argument("--coordinated-reads", action="store_true",
                   help="coordinated reads on the parity candidates (the plan file's coordinated_reads: true): reads around a "
                        "member busy on its die; each such recommendation also shows its tail without them")
    p.add_argument("--discards", choices=("auto", "none", "passed"),
                   help="how the members' free space is kept (the plan file's discards): none = every LBA mapped once the "
                        "array is initialised (md raid456 passes no discards by default), passed = fstrim reaches the "
                        "members (RAID 0/1/10), auto = none for parity layouts, passed otherwise (default)")
    p.add_argument("--timeout", type=seconds_arg, default=3600.0, metavar="SECONDS",
                   help="cancel the plan if not done within this many seconds, or a duration: 90s, 30min (default 3600)")
    p.add_argument("--quiet", action="store_true",
                   help="print only the result (stdout) and, on stderr, errors and the plan file's warnings: no progress, "
                        "no 'plan created', 'run stored', report progress or 'report written' lines")
    p.add_argument("--report", metavar="DIR", help="write an HTML + Markdown report into this directory")
    p.add_argument("--report-image-base-url", metavar="URL",
                   help="report.md links its PNGs under URL (where CI publishes DIR) so they show in a pull-request comment")
    p.add_argument("--fail-if-headroom-below", type=float, metavar="PCT", help="exit 3 when the best headroom is below PCT percent")
    _add_connection(p)
    p.set_defaults(func=cmd_plan)

    p = sub.add_parser("drives", help="list the drive catalog (or one drive with provenance); drives export NAME; drives fit",
                       description="List the drive catalog: in-process (the built-in drives plus --catalog DIR) unless "
                                   "--server, $ARRAYPLAN_SERVER or --local names a server. Also: `arrayplan drives export NAME` "
                                   "prints one drive as a catalog file; `arrayplan drives fit --base FILE --fio-log FILE` fits "
                                   "a drive to a measured consistency run.")
    p.add_argument("name", nargs="?", help="a drive name: show it with the provenance of each value")
    p.add_argument("--kind", choices=("all", "ssd", "hdd"), default="all", help="only SSDs or only HDDs (default all)")
    p.add_argument("--format", choices=("table", "json"), default="table", help="table for people or json (docs/json.md)")
    p.add_argument("--catalog", type=Path, metavar="DIR", help="in-process: also the catalog files (*.toml) in DIR")
    _add_connection(p)
    p.set_defaults(func=cmd_drives)

    p = sub.add_parser("drives-export", prog="arrayplan drives export",
                       description="Print one drive as a catalog file (TOML) that loads back unchanged.")
    p.add_argument("name", help="a drive name (catalog key or display name)")
    p.add_argument("--catalog", type=Path, metavar="DIR", help="also the catalog files (*.toml) in DIR")
    p.set_defaults(func=cmd_drives_export)

    p = sub.add_parser("runs", help="list stored plan runs, or show one (and write its report: runs NAME --report DIR)")
    p.add_argument("name", nargs="?", help="a run name (plans/ID or ID) to show")
    p.add_argument("--report", metavar="DIR", help="with NAME: write the run's HTML + Markdown report into DIR "
                                                   "(the report `plan FILE --report DIR` writes)")
    p.add_argument("--report-image-base-url", metavar="URL",
                   help="report.md links its PNGs under URL (where CI publishes DIR) so they show in a pull-request comment")
    p.add_argument("--timeout", type=seconds_arg, default=600.0, metavar="SECONDS",
                   help="--report: wall-clock budget of the report's latency simulation (default %(default)s s; "
                        "at most the report's own budget)")
    p.add_argument("--quiet", action="store_true", help="--report: no progress or 'report written' lines")
    p.add_argument("--limit", type=int, default=20, help="runs per page (default 20)")
    p.add_argument("--page-token", help="the next page, as the previous page printed it")
    p.add_argument("--format", choices=("table", "json", "markdown"), default="table",
                   help="table for people, json (docs/json.md) or markdown for a pull-request comment (default %(default)s)")
    _add_connection(p)
    p.set_defaults(func=cmd_runs)

    p = sub.add_parser("trace", help="print a run's trace (server and worker spans, with attributes); export OTLP/JSON")
    p.add_argument("name", help="run name (plans/ID or ID)")
    p.add_argument("--no-attributes", action="store_true", help="span names and durations only")
    p.add_argument("--format", choices=("tree", "json"), default="tree", help="a span tree for people or json (docs/json.md)")
    p.add_argument("--otlp-json", metavar="FILE", help="also write the spans as OTLP/JSON to FILE ('-' = stdout only): "
                                                       "POST it to a collector's /v1/traces (docs/tracing.md)")
    _add_connection(p)
    p.set_defaults(func=cmd_trace)

    for module_name in _PLUGINS:
        try:
            module = importlib.import_module(module_name)
        except ModuleNotFoundError as exc:
            if exc.name != module_name:
                raise
            continue
        module.register(sub)
    return parser


#: ``arrayplan drives VERB ...`` -> the hidden ``drives-VERB`` subcommand.
_DRIVES_VERBS = ("export", "fit")


def main(argv: list[str] | None = None) -> int:
    from .. import numba_cache

    numba_cache.configure()  # before numba is imported: the server and its Ray workers share one kernel cache
    parser = build_parser()
    argv = list(sys.argv[1:] if argv is None else argv)
    for i, token in enumerate(argv):
        if not token.startswith("-"):
            if token == "drives" and i + 1 < len(argv) and argv[i + 1] in _DRIVES_VERBS:
                argv[i: i + 2] = [f"drives-{argv[i + 1]}"]
            break
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO if args.verbose else logging.WARNING)
    from ..store import StoreDamagedError

    try:
        return int(args.func(args))
    except StoreDamagedError as exc:  # --local: the in-process server does not serve over a damaged store
        _err(str(exc))
        return EXIT_BAD_INPUT
    except KeyboardInterrupt:
        _err("interrupted")
        return 130
    except Exception as exc:  # noqa: BLE001 - an input error a command left uncaught: one line, exit 2
        code = input_error_exit(exc)
        if args.verbose:
            raise
        if code is None:  # a fault: one redacted line (a traceback can carry a URL or a file's line); --verbose shows it
            first = str(exc).splitlines()[0] if str(exc) else ""
            _err(f"internal error: {type(exc).__name__}: {first} (--verbose shows the traceback)")
            return EXIT_ERROR
        return code


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
        _err(str(exc))
        return EXIT_BAD_INPUT
    return None


if __name__ == "__main__":
    sys.exit(main())
