"""``arrayplan plan`` (plan an array for a plan file and wait for its recommendations) and
``arrayplan runs`` (list the stored runs, show one, write its report).

Both print a plan the same way (``--format table|json|markdown``) and write the same report
(``--report DIR``) from the same stored plan. ``plan`` exits 0 when a recommendation meets every
constraint, 3 when none does (or the best headroom is below ``--fail-if-headroom-below``).
"""

from __future__ import annotations

import argparse
import contextlib
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .common import EXIT_BAD_INPUT, EXIT_ERROR, EXIT_OK, EXIT_UNMET, add_connection_flags, connect, err, grpc_error_exit, load_spec, plan_name, print_json

if TYPE_CHECKING:
    from arrayplan.v1 import planner_pb2 as pb


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
            err(f"the plan did not finish within --timeout {args.timeout} s; it was cancelled")
            return EXIT_ERROR
        return grpc_error_exit(exc)
    assert final is not None
    if final.state != pb.Plan.STATE_SUCCEEDED:
        err(f"plan {final.name} {pb.Plan.State.Name(final.state).removeprefix('STATE_').lower()}: {final.error_message}")
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
            err(f"best recommendation's headroom {best.headroom_fraction:.1%} on {best.binding_constraint} is below "
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
        err(f"--report {args.report}: cannot write the report there ({exc.strerror or exc})")
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


def cmd_runs(args: argparse.Namespace) -> int:
    import grpc

    from arrayplan.v1 import planner_pb2 as pb

    from . import render

    try:
        with connect(args) as stub:
            if args.name:
                name = plan_name(args.name)
                plan = stub.GetPlan(pb.GetPlanRequest(name=name), timeout=30)
                if plan.state == pb.Plan.STATE_SUCCEEDED:
                    _emit(plan, args)
                else:
                    print(render.plan_json(plan) if args.format == "json" else
                          f"{plan.name}: {pb.Plan.State.Name(plan.state)} {plan.error_reason} {plan.error_message}")
                if args.report:
                    if plan.state != pb.Plan.STATE_SUCCEEDED:
                        err(f"no report for {plan.name}: it is {pb.Plan.State.Name(plan.state).removeprefix('STATE_').lower()}, "
                             "and a report needs a succeeded plan")
                        return EXIT_ERROR
                    return _write_report(plan, args, timeout_s=args.timeout)
                return EXIT_OK
            if args.report:
                err("--report needs a run NAME (`arrayplan runs` lists them)")
                return EXIT_BAD_INPUT
            resp = stub.ListPlans(pb.ListPlansRequest(page_size=args.limit, page_token=args.page_token or ""), timeout=30)
    except grpc.RpcError as exc:
        return grpc_error_exit(exc)
    if args.format == "json":
        print_json(resp)
        return EXIT_OK
    for p in resp.plans:
        created = p.create_time.ToDatetime().strftime("%Y-%m-%d %H:%M:%S")
        prog = p.progress
        print(f"{p.name:40s} {pb.Plan.State.Name(p.state).removeprefix('STATE_'):10s} {created}  "
              f"{prog.candidates_evaluated}/{prog.candidates_to_evaluate} evaluated  trace {p.trace_id}")
    if resp.next_page_token:
        print(f"(more: --page-token {resp.next_page_token})")
    return EXIT_OK


def register(sub: Any) -> None:
    """Add ``plan`` and ``runs``."""
    from ..api.planfile import seconds_arg

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
    add_connection_flags(p)
    p.set_defaults(func=cmd_plan)

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
    add_connection_flags(p)
    p.set_defaults(func=cmd_runs)
