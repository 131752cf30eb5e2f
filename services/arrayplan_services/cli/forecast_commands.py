"""``arrayplan telemetry FILE_OR_DIR...`` (what the drives' own counters say) and ``arrayplan
forecast ARRAY_FILE`` (wear-out and full dates for an array in service, and a re-plan).

Exit codes: 0 everything read; 4 some files or drives could not be used (each named on stderr,
the rest processed); 2 bad input (nothing usable, a bad array file); 1 anything else.

``--format json`` prints through ``arrayplan_services.jsonout`` (docs/json.md): the forecast as
``jsonout.forecast_json`` (re-plan included), the telemetry records under the same convention.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import Any

from .common import EXIT_BAD_INPUT, EXIT_ERROR, EXIT_OK, EXIT_PARTIAL, add_connection_flags, connect, err, grpc_error_exit, print_json


def _gb(x: float | None) -> str:
    return "-" if x is None else f"{x / 1e9:,.0f}"


def _opt(x: Any, fmt: str = "{:g}") -> str:
    return "-" if x is None else fmt.format(x)


def cmd_telemetry(args: argparse.Namespace) -> int:
    from ..api.smart_io import read_telemetry

    snapshots, problems = read_telemetry(args.paths)
    for p in problems:
        err(str(p))
    for s in snapshots:
        for n in s.notes:
            if "wear unknown" in n:
                err(f"note: {s.source}: {s.model or '?'} serial {s.serial or '?'}: {n}")
    if args.format == "json":
        print_json([s.as_record() for s in snapshots])
    else:
        from rich.console import Console
        from rich.table import Table

        table = Table(title=f"drive telemetry: {len(snapshots)} snapshots", title_justify="left")
        for c in ("source", "model", "serial", "protocol", "capacity GB", "power-on h", "host written GB", "NAND written GB", "WA",
                  "used %", "spare %", "SMART"):
            table.add_column(c, justify="left" if c in ("source", "model", "serial", "protocol", "SMART") else "right")
        for s in snapshots:
            table.add_row(Path(s.source).name, s.model or "?", s.serial or "?", s.protocol + (" (RAID ctl)" if s.behind_raid_controller else ""),
                          _gb(s.capacity_bytes), _opt(s.power_on_hours, "{:,.0f}"), _gb(s.host_written_bytes), _gb(s.nand_written_bytes),
                          _opt(s.write_amplification, "{:.2f}"), _opt(s.percentage_used), _opt(s.available_spare_percent),
                          {True: "PASSED", False: "FAILED", None: "?"}[s.smart_passed])
        Console(width=None if sys.stdout.isatty() else 220).print(table)
        if args.verbose_notes:
            for s in snapshots:
                for n in s.notes:
                    print(f"  {Path(s.source).name}: {n}")
    if not snapshots:
        return EXIT_BAD_INPUT
    return EXIT_PARTIAL if problems else EXIT_OK


def _positive_days(text: str) -> float:
    """--stale-after-days: a number of days in (0, 36525]."""
    try:
        days = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a number of days in (0, 36525], got {text!r}") from None
    if not 0 < days <= 36525:
        raise argparse.ArgumentTypeError(f"must be a number of days in (0, 36525], got {text!r}")
    return days


def _date_arg(text: str) -> float:
    """--now: a date (YYYY-MM-DD, UTC midnight) or date and time (ISO 8601) as Unix seconds."""
    from datetime import UTC, datetime

    try:
        d = datetime.fromisoformat(text.strip())
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a date YYYY-MM-DD (or ISO 8601 date and time), got {text!r}") from None
    return (d if d.tzinfo else d.replace(tzinfo=UTC)).timestamp()


def _date(t: float | None) -> str:
    import datetime as dt

    return "-" if t is None else dt.datetime.fromtimestamp(t, tz=dt.UTC).strftime("%Y-%m-%d")


def _interval(w: Any) -> str:
    if w.time_s is None and w.earliest_s is None:
        return "not within 30 years"
    return f"{_date(w.time_s) if w.time_s else 'later'} [{_date(w.earliest_s)} .. {_date(w.latest_s) if w.latest_s else 'later'}]"


def print_forecast(f: Any, console: Any) -> None:
    from rich.table import Table

    t = Table(title=f"{f.name}: drives (as of {_date(f.as_of_s)})", title_justify="left")
    for c in ("group", "serial", "model", "basis", "snapshots", "life used", "host TB/day", "WA", "reaches rated endurance [90 % interval]", "flag"):
        t.add_column(c, justify="right" if c in ("snapshots", "life used", "host TB/day", "WA") else "left")
    for d in f.drives:
        t.add_row(d.group, d.serial, d.model or "?", d.basis + (f" ({d.catalog_drive})" if d.catalog_drive else ""), str(d.snapshot_count),
                  "-" if d.life_used_fraction is None else f"{d.life_used_fraction:.1%}",
                  "-" if d.host_write_bytes_per_day is None else f"{d.host_write_bytes_per_day / 1e12:.3f}",
                  "-" if d.write_amplification is None else f"{d.write_amplification:.2f}", _interval(d.wear_out),
                  "PASSED but worn" if d.passed_but_worn else "", style="red" if d.passed_but_worn else None)
    console.print(t)
    g = Table(title="groups", title_justify="left")
    for c in ("group", "layout", "members", "first member worn out [interval]", "lockstep"):
        g.add_column(c)
    for grp in f.groups:
        g.add_row(grp.name, grp.layout, str(grp.members), _interval(grp.wear_out),
                  f"YES: {grp.lockstep_members} within the window (survives {grp.failures_tolerated})" if grp.lockstep else "no")
    console.print(g)
    if f.fill is not None:
        fl = f.fill
        used = "-" if fl.used_bytes is None else f"{fl.used_bytes / 1e12:.2f} TB of {fl.usable_capacity_bytes / 1e12:.2f} TB"
        growth = "" if fl.growth_per_year is None else f", growing {fl.growth_per_year:.1%}/year ({fl.growth_source})"
        console.print(f"capacity: {used}{growth}; reaches {fl.full_bytes / fl.usable_capacity_bytes:.0%} full: {_interval(fl.full)}")
        for n in fl.notes:
            console.print(f"  {n}")
    for w in f.warnings:
        console.print(f"[bold red]warning:[/] {w}")
    for p in f.problems:
        console.print(f"[yellow]problem:[/] {p}")


def cmd_forecast(args: argparse.Namespace) -> int:
    from arrayplan_engine.catalog import builtin_catalog
    from arrayplan_engine.errors import ArrayplanError

    from ..api.arrayfile import forecast_file, load_array_file, replan_options
    from ..api.planfile import PlanFileError

    try:
        array = load_array_file(args.array_file)
    except PlanFileError as exc:
        err(f"bad array file\n{exc}")
        return EXIT_BAD_INPUT
    for w in array.warnings:
        print(f"warning: {w}", file=sys.stderr)
    catalog = builtin_catalog()
    try:
        f, problems = forecast_file(array, catalog, args.telemetry or ())
    except ArrayplanError as exc:
        err(f"{args.array_file}: {exc}")
        return EXIT_BAD_INPUT
    for p in problems:
        err(str(p))
    for text in f.problems:
        err(f"{args.array_file}: {text}")
    from arrayplan_engine.forecast import stale_telemetry

    # the first warning (table and JSON) when the latest snapshot is older than --stale-after-days
    f = stale_telemetry(f, now_s=args.now if args.now is not None else time.time(), stale_after_days=args.stale_after_days)
    options = replan_options(array, f, catalog)
    replan = None
    if args.replan:
        replan = _replan(args, array, f)
        if isinstance(replan, int):
            return replan
    if args.format == "json":
        from .. import jsonout

        rec = jsonout.forecast_json(f, options=options, file_problems=[str(p) for p in problems],
                                    replan=None if replan is None else replan[0], replan_notes=() if replan is None else replan[1])
        print(jsonout.dumps(rec))
    else:
        from rich.console import Console

        console = Console(width=None if sys.stdout.isatty() else 200)
        print_forecast(f, console)
        if options:
            console.print("to keep it serving:")
            for o in options:
                console.print(f"  {o.action}: {o.text}")
        if replan is not None:
            _print_replan(console, replan[0], replan[1], array, f)
    if args.report:
        from ..report.forecast import write_forecast_report

        path = write_forecast_report(f, Path(args.report), options=options, worn_threshold=array.spec.worn_threshold_fraction)
        print(f"report written to {path}", file=sys.stderr)
    if not f.drives:
        return EXIT_BAD_INPUT
    return EXIT_PARTIAL if (problems or f.problems) else EXIT_OK


def _replan(args: argparse.Namespace, array: Any, f: Any) -> Any:
    """Run the re-plan through the planner (a server, or --local in-process); (plan, notes) or an exit code."""
    import grpc

    from arrayplan.v1 import planner_pb2 as pb

    from ..api.arrayfile import replan_spec

    spec, notes = replan_spec(array, f, args.years)
    try:
        with connect(args) as stub:
            plan = stub.CreatePlan(pb.CreatePlanRequest(plan=pb.Plan(spec=spec)), timeout=60)
            final = None
            for event in stub.WatchPlan(pb.WatchPlanRequest(name=plan.name, cancel_on_disconnect=True), timeout=args.timeout):
                if event.HasField("plan"):
                    final = event.plan
    except grpc.RpcError as exc:
        return grpc_error_exit(exc)
    if final is None or final.state != pb.Plan.STATE_SUCCEEDED:
        err(f"re-plan {plan.name} did not succeed: {final.error_message if final else 'no result'}")
        return EXIT_ERROR
    return final, notes


def migrate_sentence(plan: Any, f: Any) -> str | None:
    """'or migrate to N x drive in layout by YYYY-MM' from the planner's best recommendation."""
    recs = [r for r in plan.result.recommendations if r.meets_constraints]
    if not recs:
        return None
    r = recs[0]
    dates = [x for x in ([f.fill.full.earliest_s or f.fill.full.time_s] if f.fill else []) + [f.wear_out.earliest_s or f.wear_out.time_s] if x]
    by = min(dates) if dates else None
    layout = r.layout if r.layout in ("raid0", "raid10") or r.layout.startswith("ec:") else f"{r.layout}({r.group_width})"
    return (f"migrate to {r.drive_count} x {r.drive_display_name or r.drive_model} in {layout} "
            f"(${r.total_cost_usd:,.0f} TCO, {r.life_used_fraction:.0%} of rated life over the plan)" + (f" by {_date(by)[:7]}" if by else ""))


def _print_replan(console: Any, plan: Any, notes: list[str], array: Any, f: Any) -> None:
    from . import render

    console.print(f"re-plan ({plan.name}) for the observed workload:")
    for n in notes:
        console.print(f"  {n}")
    render.plan_table(plan, console)
    s = migrate_sentence(plan, f)
    if s:
        console.print(f"  or {s}")


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("telemetry", help="read smartctl --json / nvme smart-log JSON files and show each drive's counters")
    p.add_argument("paths", nargs="+", type=Path, metavar="FILE_OR_DIR", help="telemetry files, or directories of *.json files")
    p.add_argument("--format", choices=("table", "json"), default="table", help="json: one record per drive snapshot")
    p.add_argument("--notes", dest="verbose_notes", action="store_true", help="table: also print each snapshot's notes")
    p.set_defaults(func=cmd_telemetry)

    from ..api.planfile import seconds_arg

    p = sub.add_parser("forecast", help="forecast wear-out and full dates of an array in service; --replan asks the planner what next")
    p.add_argument("array_file", type=Path, help="array-in-service YAML file (see examples/array-in-service/array.yaml)")
    p.add_argument("--telemetry", type=Path, action="append", help="more telemetry files or directories (besides the file's)")
    p.add_argument("--format", choices=("table", "json"), default="table", help="table for people or json (docs/json.md) (default %(default)s)")
    p.add_argument("--replan", action="store_true", help="run a plan for the observed workload through the planner (a server, or --local)")
    p.add_argument("--years", type=int, default=None, help="--replan: service life of the new plan (default the file's replan, else 5)")
    p.add_argument("--timeout", type=seconds_arg, default=3600.0, metavar="SECONDS",
                   help="--replan: give up after this many seconds, or a duration: 90s, 30min (default 3600)")
    p.add_argument("--report", help="write an HTML + Markdown forecast report into this directory")
    p.add_argument("--stale-after-days", type=_positive_days, default=30.0, metavar="DAYS",
                   help="telemetry whose latest snapshot is older than this is stale, and the forecast says so (default %(default)g)")
    p.add_argument("--now", type=_date_arg, default=None, metavar="YYYY-MM-DD",
                   help="judge the telemetry's age at this date (UTC) instead of today")
    add_connection_flags(p)
    p.set_defaults(func=cmd_forecast)
