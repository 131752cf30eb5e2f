"""``arrayplan simulate``: simulate one array under a workload and print its figures.

    arrayplan simulate --drive intel-dc-s3500-480gb --drives 24 --layout raid6 \\
        --workload oltp-8k-70-30 --format json [--failed 1 --rebuild-rate-mb-s 100] [--plot out.png]

The drive comes from the catalog; ``--layout`` is raid0|raid1|raid5|raid6|raid10|ec:K+M with
``--group-width`` (default: all drives in one group, at most 64; K+M for ec). ``--workload`` is a
preset name or a workload file (fio job ``.fio``, block trace, or YAML/JSON with Workload fields);
``--read-fraction``, ``--io-bytes``, ``--queue-depth``, ``--target-iops`` and ``--random-fraction``
build one or override the preset's values. By default the server's SimulateArray runs it;
``--local`` runs the same SimulateArray code in this process, with one JSON shape either way: the
service's ``SimulateArrayResponse`` (docs/json.md). Options only this process can honour go with
``--local``: ``--plot`` (latency CDF and IOPS over time of replication 0), ``--parts`` (time
windows per replication, merged exactly, as the planner's fan-out splits them), ``--reorder-window``
(disks' SATF queue), ``--warmup-s``, and ``--compare-hdd NAME``, which adds one key,
``hdd_equivalence``: how many disks of that model, same layout, carry the array's achieved IOPS at
``--latency-quantile`` under ``--latency-target-ms``. ``--replications N`` (default 3, 1 to 12)
runs N independent replications (replication 0 is ``--seed`` itself): the figures pool them with
95 % intervals (the JSON's ``achieved_iops_low``/``_high`` and ``latency.low``/``latency.high``
beside the figures; the text shows them in brackets). ``--coordinated-reads`` (parity layouts)
reads around members busy on a read's die and also reports the same array without the policy (the
same seeds) and the share of reads read around. Exit 0 ok, 2 bad input, 1 anything else.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from dataclasses import replace
from pathlib import Path
from typing import Any

from arrayplan_engine import simulation
from arrayplan_engine.errors import ArrayplanError, InvalidInputError, Violation, check_range
from arrayplan_engine.fail_slow import SlowEpisode
from arrayplan_engine.units import MB, KiB
from arrayplan_engine.workload import Workload

from ..api.planfile import seconds_arg, size_arg
from .common import EXIT_BAD_INPUT, EXIT_ERROR, EXIT_OK, err

_LAYOUTS = "raid0|raid1|raid5|raid6|raid10|ec:K+M"


def _workload(args: argparse.Namespace) -> Workload:
    overrides: dict[str, Any] = {}
    if args.read_fraction is not None:
        overrides["read_fraction"] = args.read_fraction
    if args.random_fraction is not None:
        overrides["random_fraction"] = args.random_fraction
    if args.io_bytes is not None:
        overrides["io_size_mix"] = ((args.io_bytes, 1.0),)
    if args.queue_depth is not None:
        overrides["queue_depth"] = args.queue_depth
    if args.target_iops is not None:
        overrides["target_iops"] = args.target_iops
    if args.workload is None:
        if "read_fraction" not in overrides:
            raise InvalidInputError.one("workload", "give --workload PRESET|FILE or at least --read-fraction")
        overrides.setdefault("io_size_mix", ((4 * KiB, 1.0),))
        return Workload(name="cli", **overrides)
    path = Path(args.workload)
    if path.exists():
        spec: dict[str, Any]
        base_dir = Path.cwd()  # a .fio or trace path is relative to where the command runs: joined once
        suffix = path.suffix.lower()
        if suffix == ".fio":
            spec = {"fio": str(path)}
        elif suffix in (".yaml", ".yml", ".json"):
            from ..api.planfile import PlanFileError, read_yaml_file
            from ..api.safe_yaml import YamlError, load_data

            try:  # a regular file of at most 1 MiB, YAML through the one bounded loader (api/safe_yaml.py)
                text = read_yaml_file(path, "workload file")
                loaded = json.loads(text) if suffix == ".json" else load_data(text, str(path))
            except (PlanFileError, ValueError, RecursionError) as exc:  # JSON's errors do not name the file
                where = "" if isinstance(exc, (PlanFileError, YamlError)) else f"{path}: "
                raise InvalidInputError.one("workload", where + (str(exc).splitlines() or [type(exc).__name__])[0]) from None
            if not isinstance(loaded, dict):
                raise InvalidInputError.one("workload", f"{path}: must hold a mapping of workload fields")
            spec = dict(loaded.get("workload", loaded))
            base_dir = path.resolve().parent  # paths inside a workload file are relative to that file
        else:
            spec = {"trace": str(path)}
        from ..api.workloads import load_workload

        wl, warnings = load_workload(spec, base_dir, allow_outside_paths=True)
        for w in warnings:
            print(f"arrayplan simulate: workload: {w}", file=sys.stderr)
    else:
        try:
            from arrayplan_engine.presets import get_preset
        except ImportError:  # presets not available: only the flags describe the workload
            raise InvalidInputError.one("workload", f"{args.workload!r} is not a file and presets are not available") from None
        wl = get_preset(args.workload, "workload")
    if "target_iops" in overrides:
        from ..api.workloads import rescaled_daily_write_bytes

        overrides["daily_write_bytes"], note = rescaled_daily_write_bytes(wl, overrides["target_iops"])
        if note:
            print(f"arrayplan simulate: workload: {note}", file=sys.stderr)
    if overrides:
        wl = replace(wl, **overrides)
    return wl


def slow_drive_arg(text: str) -> SlowEpisode:
    """``--slow-drive INDEX:FACTOR[:START_S[:DURATION_S]]``: member INDEX (0-based) runs FACTOR
    times slower from START_S (default 0) for DURATION_S seconds (default: to the end)."""
    parts = text.split(":")
    try:
        if not 2 <= len(parts) <= 4:
            raise ValueError
        return SlowEpisode(drive_index=int(parts[0]), factor=float(parts[1]), start_s=float(parts[2]) if len(parts) > 2 else 0.0,
                           duration_s=float(parts[3]) if len(parts) > 3 else math.inf)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected INDEX:FACTOR[:START_S[:DURATION_S]] (e.g. 3:2.5 or 3:4:10:30), got {text!r}") from None


def _text(summary: dict[str, Any]) -> str:
    """People's view: a ``_s`` figure is shown with its unit (µs, ms, s), its key without the
    suffix; a figure with a 95 % interval shows it in brackets."""
    from .render import text_lines

    return "\n".join(text_lines(_fold_intervals(summary)))


def _fold_intervals(d: dict[str, Any]) -> dict[str, Any]:
    """SimulateArray's JSON with each interval folded into its figure's line: ``achieved_iops``
    with ``achieved_iops_low``/``_high``, a latency summary's ``p99_s`` with ``low.p99_s`` and
    ``high.p99_s`` (figures without a known interval are left as they are)."""
    from .render import seconds

    out: dict[str, Any] = {}
    for key, val in d.items():
        if isinstance(val, dict) and isinstance(val.get("low"), dict) and isinstance(val.get("high"), dict):
            lo, hi = val["low"], val["high"]
            inner: dict[str, Any] = {}
            for k, v in val.items():
                if k in ("low", "high"):
                    continue
                if k.endswith("_s") and v is not None and lo.get(k) is not None and hi.get(k) is not None:
                    inner[k[:-2]] = f"{seconds(v)} (95 %: {seconds(lo[k])} to {seconds(hi[k])})"
                else:
                    inner[k] = v
            out[key] = inner
        elif key in ("achieved_iops_low", "achieved_iops_high") and "achieved_iops" in d:
            continue
        elif key == "achieved_iops" and d.get("achieved_iops_high"):
            out[key] = f"{val:.6g} (95 %: {d['achieved_iops_low']:.6g} to {d['achieved_iops_high']:.6g})"
        else:
            out[key] = val
    return out


def _request(args: argparse.Namespace) -> Any:
    """The SimulateArrayRequest the flags describe (``api/simulate_convert.simulate_request``)."""
    from ..api.simulate_convert import simulate_request

    return simulate_request(
        drive_model=args.drive, drive_count=args.drives, layout=args.layout, group_width=args.group_width or 0,
        workload=_workload(args), failed_drive_count=args.failed, duration_s=args.duration_s, seed=args.seed,
        fill_fraction=args.fill_fraction, stripe_unit_bytes=args.stripe_unit_kib * KiB,
        rebuild_rate_bytes_per_s=(args.rebuild_rate_mb_s or 0.0) * MB, fail_slow_field_rates=args.fail_slow_field_rates,
        coordinated_reads=args.coordinated_reads, replications=args.replications or 0, discards=args.discards,
        slow_drives=tuple(args.slow_drive or ()))


def _remote(args: argparse.Namespace) -> int:
    """Call SimulateArray on a server (``--server``) and print its answer."""
    import os

    import grpc

    from arrayplan.v1 import planner_pb2_grpc as pb_grpc

    from .common import DEFAULT_SERVER, grpc_error_exit

    try:
        request = _request(args)
    except ArrayplanError as exc:
        err(str(exc), "simulate")
        return EXIT_BAD_INPUT
    address = args.server or os.environ.get("ARRAYPLAN_SERVER", DEFAULT_SERVER)
    try:
        from ..connection import open_channel

        with open_channel(address, tls_ca=getattr(args, "tls_ca", None)) as channel:
            response = pb_grpc.PlannerServiceStub(channel).SimulateArray(request, timeout=args.timeout)
    except grpc.RpcError as exc:
        return grpc_error_exit(exc)
    _print(args, response, {})
    return EXIT_OK


def _local(args: argparse.Namespace) -> int:
    """SimulateArray's own code in this process (the server's, on the local executor: the same
    answer as a server with ``--executor local``), plus what only this process can do: the plot,
    the time windows, the SATF queue, the warm-up and the HDD comparison."""
    from arrayplan_engine.catalog import builtin_catalog

    from ..fanout import LocalExecutor
    from ..plan.simulate import simulate_array

    reps: list[simulation.Replications] = []
    extra: dict[str, Any] = {}
    try:
        bad: list[Violation] = []
        check_range(bad, "parts", args.parts, 1, 1024, integer=True)
        if bad:
            raise InvalidInputError(bad)
        request = _request(args)
    except ArrayplanError as exc:
        err(str(exc), "simulate")
        return EXIT_BAD_INPUT
    try:
        response = simulate_array(request, builtin_catalog(), LocalExecutor(), windows=args.parts,
                                  reorder_window=args.reorder_window, warmup_s=args.warmup_s, on_replications=reps.append)
    except ArrayplanError as exc:
        return _status_exit(exc)
    try:
        results = {f"{args.drive} x{args.drives} {args.layout}": reps[0].runs[0]}
        if args.compare_hdd:
            eq = _hdd_equivalence(args, request, response.achieved_iops)
            extra["hdd_equivalence"] = eq.summary()
            if eq.result is not None:
                results[f"{eq.drive_name} x{eq.drive_count} {args.layout}"] = eq.result
    except ArrayplanError as exc:
        err(str(exc), "simulate")
        return EXIT_BAD_INPUT
    if args.plot:
        from ..report.array_plots import plot_array

        plot_array(results, args.plot)
    _print(args, response, extra)
    return EXIT_OK


def _status_exit(exc: ArrayplanError) -> int:
    """SimulateArray's error as a server reports it (the status ``server/errors.status_for``
    builds: its code, message and field violations), printed as a server's error is, so a bad
    request reads the same with or without ``--local``."""
    from google.rpc import code_pb2, error_details_pb2

    from ..server.errors import status_for
    from .render import rpc_error_lines

    status = status_for(exc)
    violations: list[tuple[str, str]] = []
    for detail in status.details:
        if detail.Is(error_details_pb2.BadRequest.DESCRIPTOR):
            bad = error_details_pb2.BadRequest()
            detail.Unpack(bad)
            violations.extend((v.field, v.description) for v in bad.field_violations)
    first, *rest = rpc_error_lines(code_pb2.Code.Name(status.code), status.message, violations)
    err(first)
    for line in rest:
        print(line, file=sys.stderr)
    return EXIT_BAD_INPUT if status.code in (code_pb2.INVALID_ARGUMENT, code_pb2.NOT_FOUND, code_pb2.RESOURCE_EXHAUSTED) else EXIT_ERROR


def _hdd_equivalence(args: argparse.Namespace, request: Any, achieved_iops: float) -> simulation.Equivalence:
    """How many disks of ``--compare-hdd``, in the request's layout, carry its achieved IOPS at the
    latency target (the planner's search, one search, one cap, through the same factory)."""
    from arrayplan_engine.catalog import builtin_catalog, get_drive

    from ..api.simulate_convert import validate_simulate_request

    hdd_drive = get_drive(args.compare_hdd)
    if hdd_drive.kind != "hdd":
        raise InvalidInputError.one("compare_hdd", f"{hdd_drive.name} is a {hdd_drive.kind}; name a catalog HDD")
    _, layout, workload = validate_simulate_request(request, builtin_catalog())
    return simulation.equivalent_drive_count(
        hdd_drive, layout, workload, target_iops=achieved_iops, latency_quantile=args.latency_quantile,
        latency_target_s=args.latency_target_ms * 1e-3, duration_s=min(args.duration_s, 10.0), seed=args.seed,
        reorder_window=args.reorder_window, max_drive_count=args.max_hdd_count, max_host_ios=10**9)


def _print(args: argparse.Namespace, response: Any, extra: dict[str, Any]) -> None:
    """SimulateArray's answer under the one JSON convention (docs/json.md), with ``extra`` keys
    (``hdd_equivalence``) after it; the text view folds each interval into its figure's line."""
    from .. import jsonout

    if args.format == "json":
        print(jsonout.dumps(response, **extra))
        return
    print(_text(jsonout.to_json(response)))
    eq_s = extra.get("hdd_equivalence")
    if eq_s is None:
        return
    target = f"p{eq_s['latency_quantile'] * 100:g} <= {eq_s['latency_target_s'] * 1e3:g} ms at {eq_s['target_iops']:.0f} IOPS"
    if eq_s["drive_count"]:
        print(f"{'hdd_equivalent_drive_count':42s} {eq_s['drive_count']} x {eq_s['drive_name']} ({target})")
    elif eq_s["no_number_holds_latency"]:
        print(f"{'hdd_equivalent_drive_count':42s} none: no number of {eq_s['drive_name']} holds {target} "
              f"(one group nearly idle: {eq_s['unloaded_latency_s'] * 1e3:.3g} ms)")
    else:
        print(f"{'hdd_equivalent_drive_count':42s} none up to {eq_s['max_drive_count']} x {eq_s['drive_name']} ({target})")


_LOCAL_ONLY = ("--plot", "--compare-hdd", "--parts", "--reorder-window", "--warmup-s")


def handler(args: argparse.Namespace) -> int:
    """One route per place: ``--local`` runs SimulateArray's code here, otherwise a server runs it;
    the answer has one shape either way."""
    if args.local:
        return _local(args)
    used = [flag for flag, on in zip(_LOCAL_ONLY, (args.plot, args.compare_hdd, args.parts != 1, args.reorder_window != 1,
                                                   args.warmup_s is not None)) if on]
    if used:
        err(f"{', '.join(used)} need --local (options of the in-process simulation the service does not take)", "simulate")
        return EXIT_BAD_INPUT
    return _remote(args)


def register(subparsers: Any) -> None:
    """Add ``simulate`` to the ``arrayplan`` command."""
    p = subparsers.add_parser("simulate", help="simulate one array under a workload (latency tail, IOPS over time, rebuild)")
    p.add_argument("--drive", required=True, help="catalog drive name (arrayplan drives)")
    p.add_argument("--drives", type=int, required=True, help="number of drives (whole groups are simulated, the rest are spares)")
    p.add_argument("--layout", required=True, help=_LAYOUTS)
    p.add_argument("--group-width", type=int, help="drives per group (default: all, up to 64; K+M for ec)")
    p.add_argument("--stripe-unit-kib", type=int, default=64, help="stripe unit in KiB (default 64)")
    p.add_argument("--workload", help="preset name or workload file (.fio, trace, .yaml/.json)")
    p.add_argument("--read-fraction", type=float, help="reads / all IOs, in [0, 1]")
    p.add_argument("--random-fraction", type=float, help="random / all IOs, in [0, 1]")
    p.add_argument("--io-bytes", type=size_arg, metavar="SIZE", help="IO size (one size): 4096, 8k or 8KiB (8,192 B), 8KB (8,000 B); docs/units.md")
    p.add_argument("--queue-depth", type=int, help="closed-loop queue depth")
    p.add_argument("--target-iops", type=float, help="open-loop arrival rate (0 = closed loop at the queue depth)")
    p.add_argument("--fill-fraction", type=float, default=1.0,
                   help="share of each SSD's user capacity holding data, in (0, 1] (service model at this fill, rounded up to 0.1)")
    p.add_argument("--discards", choices=("auto", "none", "passed"), default="auto",
                   help="how the members' free space is kept: none = every LBA mapped whatever the fill (the array as "
                        "initialised; md raid456's default), passed = only the data mapped (fstrim through RAID 0/1/10), "
                        "auto = none for parity layouts, passed otherwise (default %(default)s)")
    p.add_argument("--failed", type=int, default=0, help="failed members in the first group (degraded mode)")
    p.add_argument("--rebuild-rate-mb-s", type=float, help="rebuild the failed members at this rate (MB/s) from the window start")
    p.add_argument("--slow-drive", type=slow_drive_arg, action="append", metavar="INDEX:FACTOR[:START_S[:DURATION_S]]",
                   help="fail-slow episode: member INDEX (0-based) runs FACTOR times slower from START_S for DURATION_S "
                        "(whole seconds; default the whole run); repeatable")
    p.add_argument("--fail-slow-field-rates", action="store_true",
                   help="also report the latency with fail-slow drives at The Tail at Store's field rates (FAST'16)")
    p.add_argument("--coordinated-reads", action="store_true",
                   help="parity layouts: read around a member busy on the read's die from the rest of its stripe (after IODA), "
                        "and also report the same array without it (the same seeds)")
    p.add_argument("--replications", type=int, metavar="N",
                   help="independent replications pooled into the figures with 95 %% intervals, 1 to 12 (default 3; 1 = one run)")
    p.add_argument("--reorder-window", type=int, default=1, help="HDDs: SATF reordering over up to this many queued IOs (1 = FCFS)")
    p.add_argument("--seed", type=int, default=0, help="seed of the random streams: the same inputs and seed give the same figures (default %(default)s)")
    p.add_argument("--duration-s", type=float, default=10.0, help="simulated window (s)")
    p.add_argument("--warmup-s", type=float, help="with --local: unrecorded warm-up before the window (s; default the service's, 0.25)")
    p.add_argument("--parts", type=int, default=1, help="with --local: split each replication into this many time windows (merged exactly)")
    p.add_argument("--compare-hdd", metavar="HDD", help="also find how many disks of this catalog HDD match the array")
    p.add_argument("--latency-quantile", type=float, default=0.99, help="quantile for --compare-hdd (default 0.99)")
    p.add_argument("--latency-target-ms", type=float, default=50.0, help="latency bound for --compare-hdd (default 50 ms)")
    p.add_argument("--max-hdd-count", type=int, default=4096, help="largest HDD array --compare-hdd tries")
    p.add_argument("--format", choices=("json", "text"), default="text", help="json (one convention, docs/json.md) or text for people (default %(default)s)")
    p.add_argument("--plot", metavar="FILE.png", help="write latency CDF + IOPS-vs-time figure")
    p.add_argument("--local", action="store_true",
                   help="run SimulateArray's code in this process instead of calling a server (the same answer and JSON shape)")
    p.add_argument("--server", help="server address (default $ARRAYPLAN_SERVER or 127.0.0.1:50051)")
    p.add_argument("--timeout", type=seconds_arg, default=600.0, metavar="SECONDS",
                   help="deadline of the SimulateArray call in seconds, or a duration: 90s, 10min (its tasks stop)")
    p.set_defaults(func=handler)
