"""SimulateArray: one explicit array under a workload."""

from __future__ import annotations

import dataclasses
import math
import threading
from collections.abc import Callable, Sequence
from typing import Any

from opentelemetry import trace

from arrayplan.v1 import planner_pb2 as pb
from arrayplan_engine import array, cost, endurance, fail_slow, simulation, ssd
from arrayplan_engine.catalog import Catalog, Drive
from arrayplan_engine.errors import InvalidInputError, Range, UnknownNameError, Violation, check_range, require_range
from arrayplan_engine.layout import Layout, group_count, make_layout, usable_capacity_bytes
from arrayplan_engine.workload import Workload

from .. import telemetry
from ..api.convert import reprefix, to_duration, workload_from_proto
from ..fanout import Cancelled, Executor, TaskCall
from ..fanout.tasks import consistency_run, simulate_window

MAX_ARRAY_DRIVES = 1_024
# SimulateArrayRequest.service_life_years when set (0 is proto3's unset: the default, 5).
SERVICE_LIFE_YEARS = Range(lo=1, hi=15, integer=True, note="(0 = the default, 5)")
DEFAULT_SERVICE_LIFE_YEARS = 5
# endurance_years when the simulated workload writes nothing (the proto carries no infinity)
NEVER_WEARS_OUT_YEARS = 1e9
MAX_SLOW_DRIVES = 64
# SimulateArrayRequest.replications when set (0 is proto3's unset: the default, 3 = the plan's
# first replications, simulation.FULL.initial_replications).
DEFAULT_REPLICATIONS = simulation.FULL.initial_replications
REPLICATIONS = Range(lo=1, hi=simulation.FULL.max_replications, integer=True, note=f"(0 = the default, {DEFAULT_REPLICATIONS})")
# The engine's ArraySpec fields -> the request fields a client set.
_SPEC_TO_REQUEST = {"drive_count": "drive_count", "duration_s": "duration", "failed_drives": "failed_drive_count", "layout": "layout",
                    "rebuild_rate_bytes_per_s": "rebuild_rate_bytes_per_second", "seed": "seed", "workload": "workload",
                    "service_models": "drive_model", "drive_capacity_bytes": "drive_model"}


def _validate(request: pb.SimulateArrayRequest, catalog: Catalog):  # type: ignore[no-untyped-def]
    v: list[Violation] = []
    drive = layout = workload = None
    if not request.drive_model:
        v.append(Violation(field="drive_model", reason="is required (a catalog drive name)"))
    else:
        try:
            drive = catalog.get(request.drive_model)
        except UnknownNameError as exc:
            v.append(Violation(field="drive_model", reason=exc.violations[0].reason))
    check_range(v, "drive_count", request.drive_count, 1, MAX_ARRAY_DRIVES)
    if not request.layout:
        v.append(Violation(field="layout", reason="is required: raid0, raid1, raid10, raid5, raid6 or ec:K+M"))
    else:
        try:
            width = request.group_width or (None if request.layout.startswith("ec:") else request.drive_count)
            layout = make_layout(request.layout, width, stripe_unit_bytes=request.stripe_unit_bytes or 64 * 1024, field="layout")
            if layout.group_width > request.drive_count >= 1:
                v.append(Violation(field="drive_count", reason=f"must be at least the group width {layout.group_width} of {layout.name}"))
            check_range(v, "failed_drive_count", request.failed_drive_count, 0, layout.failures_tolerated, note=f"for {layout.name}")
        except InvalidInputError as exc:
            # The layout's own options are fields of the request ("layout.group_width" -> "group_width").
            v.extend(Violation(field=x.field.removeprefix("layout."), reason=x.reason) for x in exc.violations)
    if not request.HasField("workload"):
        v.append(Violation(field="workload", reason="is required"))
    else:
        try:
            workload = workload_from_proto(request.workload, "workload")
        except InvalidInputError as exc:
            v.extend(reprefix(exc, "").violations)
    if request.service_life_years:  # 0 = unset: the default, 5 years
        SERVICE_LIFE_YEARS.check(v, "service_life_years", request.service_life_years)
    if request.HasField("duration"):
        check_range(v, "duration", request.duration.ToNanoseconds() / 1e9, 0, 3600, lo_open=True, unit="s")
    check_range(v, "seed", request.seed, 0, integer=True)
    if request.replications:  # 0 = unset: the default
        REPLICATIONS.check(v, "replications", request.replications)
    if request.coordinated_reads and layout is not None and not simulation.coordinated_reads_apply(layout):
        v.append(Violation(field="coordinated_reads", reason=f"applies to parity layouts (raid5, raid6, ec:K+M) only; {layout.name} "
                                                              "has no parity to read around a busy member (set it false)"))
    if v:
        raise InvalidInputError(v)
    return drive, layout, workload


def validate_simulate_request(request: pb.SimulateArrayRequest, catalog: Catalog):  # type: ignore[no-untyped-def]
    """SimulateArray's checks of the request alone (microseconds: no service model, no
    simulation), so the server refuses bad input before the call waits for a slot. Returns the
    drive, layout and workload; raises InvalidInputError naming the fields and their ranges."""
    drive, layout, workload = _validate(request, catalog)
    fill = request.fill_fraction if request.HasField("fill_fraction") else 1.0
    require_range("fill_fraction", fill, 0, 1, lo_open=True)
    if request.discards not in ("", *endurance.DISCARDS):
        raise InvalidInputError.one("discards", f"must be one of auto, none, passed (or empty: auto); got {request.discards!r}")
    require_range("rebuild_rate_bytes_per_second", request.rebuild_rate_bytes_per_second, 0, 1e12, unit="bytes/s", note="(a terabyte a second)")
    _slow_episodes(request, group_count(layout, request.drive_count) * layout.group_width, _duration_s(request))
    return drive, layout, workload


def _duration_s(request: pb.SimulateArrayRequest) -> float:
    return request.duration.ToNanoseconds() / 1e9 if request.HasField("duration") else 10.0


def _replications(results: Sequence[array.ArrayResult], specs: Sequence[array.ArraySpec]) -> simulation.Replications:
    """The windows' results merged per replication (their seeds), in replication order."""
    by_seed: dict[int, list[array.ArrayResult]] = {}
    for res in results:
        by_seed.setdefault(res.seed, []).append(res)
    return simulation.Replications(runs=tuple(array.merge_results(sorted(by_seed[s.seed], key=lambda x: x.window_start_s))
                                              for s in specs))


def simulate_array(request: pb.SimulateArrayRequest, catalog: Catalog, executor: Executor, *,
                   is_active: Callable[[], bool] = lambda: True) -> pb.SimulateArrayResponse:
    """The array simulation of one explicit array in independent replications
    (``simulation.replication_spec``: replication 0 is the request's seed, so one replication is
    the single run of old, bit for bit), each split into time windows that run as tasks on the
    executor (Ray) and merge exactly; a client that goes away cancels the tasks. The figures pool
    the replications with 95 % intervals (``simulation.Replications``). With coordinated reads,
    the same replications run again without them (the same seeds: common random numbers)."""
    drive, layout, workload = validate_simulate_request(request, catalog)
    fill = request.fill_fraction if request.HasField("fill_fraction") else 1.0
    discards = endurance.effective_discards(layout, request.discards or "auto")
    # the members' used state: every LBA mapped without discards (the array as initialised)
    mapped = 1.0 if discards == "none" and drive.kind == "ssd" else fill
    duration_s = _duration_s(request)
    replications = request.replications or DEFAULT_REPLICATIONS
    tracer = telemetry.tracer()
    with tracer.start_as_current_span("arrayplan.service_model", attributes={"arrayplan.drive_model": drive.name}):
        # the planner's factory: same drive, layout, workload, fill and seed -> the same simulation
        try:
            spec = simulation.array_spec(drive, layout, request.drive_count, workload, fill_fraction=mapped, duration_s=duration_s,
                                       seed=request.seed, failed_drives=request.failed_drive_count,
                                       rebuild_rate_bytes_per_s=request.rebuild_rate_bytes_per_second)
            if request.coordinated_reads:
                spec = dataclasses.replace(spec, coordinated_reads=True)
            workers = max(1, min(executor.worker_count, int(duration_s)))
            rep_specs = [simulation.replication_spec(spec, r) for r in range(replications)]
            parts = [p for s in rep_specs for p in array.split_simulation(s, workers)]
        except InvalidInputError as exc:
            raise InvalidInputError([Violation(field=_SPEC_TO_REQUEST.get(x.field.removeprefix("spec.").split(".")[0].split("[")[0], "workload"),
                                               reason=x.reason) for x in exc.violations]) from None
        episodes = _slow_episodes(request, spec.simulated_drive_count, spec.duration_s)
        if episodes:
            parts = [p for s in rep_specs for p in fail_slow.slow_specs(s, episodes)]
        # without the policy: the same windows of the same replications
        plain_parts = [dataclasses.replace(p, coordinated_reads=False) for p in parts] if request.coordinated_reads else []
        slow_parts: list[array.ArraySpec] = []
        if request.fail_slow_field_rates:
            # the same run with the first member of group 0 at the field study's 2x threshold
            slow_parts = array.split_simulation(fail_slow.with_slow_members(spec, {0: fail_slow.FIELD_SLOWDOWN}), workers)
    with tracer.start_as_current_span("arrayplan.simulate_fanout", kind=trace.SpanKind.PRODUCER,
                                      attributes={"arrayplan.task_count": len(parts), "arrayplan.array.drive_count": request.drive_count}):
        reps = _replications(_run_cancellable(executor, simulate_window, parts, is_active), rep_specs)
        plain = _replications(_run_cancellable(executor, simulate_window, plain_parts, is_active), rep_specs) if plain_parts else None
        slow_results: list[array.ArrayResult] = _run_cancellable(executor, simulate_window, slow_parts, is_active) if slow_parts else []
    r = reps.runs[0]
    pooled = reps.pooled
    iops = reps.achieved_iops()
    usable = usable_capacity_bytes(layout, request.drive_count, drive.capacity_bytes)
    years = simulated_endurance_years(drive, layout, request.drive_count, workload, achieved_iops=iops.value,
                                      fill_fraction=fill, usable_capacity_bytes=usable,
                                      service_life_years=request.service_life_years or DEFAULT_SERVICE_LIFE_YEARS,
                                      discards=discards)
    response = pb.SimulateArrayResponse(
        usable_capacity_bytes=int(usable),
        achieved_iops=iops.value, member_ios_per_host_io=float(pooled.member_ios_per_host_io),
        achieved_iops_low=iops.low if iops.known else 0.0, achieved_iops_high=iops.high if iops.known else 0.0,
        replications=replications,
        latency=_summary(reps, "all"), read_latency=_summary(reps, "read"), write_latency=_summary(reps, "write"),
        iops_per_second=[float(x) for x in r.iops_per_second],
        drive_utilization_fractions=[float(x) for x in r.drive_utilisation],
        endurance_years=years,
        # the drives and their bays (a bay is never free: docs/clusters.md, "A drive bay's cost and power")
        purchase_cost_usd=cost.purchase_cost_usd(drive.price_usd or 0.0, request.drive_count, usd_per_bay=cost.ENCLOSURE_USD_PER_BAY),
        models=[simulation.SIMULATION_MODEL, f"service-model:{'hdd' if drive.kind == 'hdd' else 'ssd-ftl-gc-profile'}"],
    )
    if plain is not None:
        response.coordinated_reads = True
        response.latency_without_coordinated_reads.CopyFrom(_summary(plain, "all"))
        response.read_latency_without_coordinated_reads.CopyFrom(_summary(plain, "read"))
        frac = reps.reconstructed_read_fraction()
        response.reconstructed_read_fraction = frac if math.isfinite(frac) else 0.0
    if slow_results:
        slow = array.merge_results(sorted(slow_results, key=lambda x: x.window_start_s))
        pi = fail_slow.slow_time_fraction("hdd" if drive.kind == "hdd" else "ssd", max(1, group_count(layout, request.drive_count)))
        response.fail_slow_time_fraction = pi
        # the normal state is the replications pooled, the distribution `latency` reports: the mixture
        # then differs from it only by the slow state's share (replication 0 alone made it a second sample)
        response.latency_with_fail_slow.CopyFrom(_mixture_summary(pooled, slow, pi))
    if r.rebuild_simulated and r.rebuild_done:
        d = to_duration(r.rebuild_duration_s)
        if d is not None:
            response.rebuild_duration.CopyFrom(d)
    return response


def simulated_endurance_years(drive: Drive, layout: Layout, drive_count: int, workload: Workload, *, achieved_iops: float,
                              fill_fraction: float, usable_capacity_bytes: float, service_life_years: int,
                              discards: str = "passed") -> float:
    """Years until the members' rated endurance is used up, by the planner's wear model
    (``endurance.service_life_wear``): host bytes per member x the layout's write factor x the
    FTL's write amplification at the array's fill and the workload's random share and skew,
    against the rating (TBW at the rating workload's write amplification, or raw NAND x P/E), with
    the workload's growth over ``service_life_years``. A closed loop (no target rate, no daily
    volume) writes at the simulated rate. 0 for a drive without a write-endurance limit (HDDs, or
    no rating); ``NEVER_WEARS_OUT_YEARS`` when nothing is written."""
    if drive.kind != "ssd" or not (drive.endurance_bytes_written or (drive.raw_nand_bytes and drive.pe_cycles)):
        return 0.0
    if workload.daily_write_bytes <= 0 and workload.target_iops <= 0:
        workload = dataclasses.replace(workload, target_iops=achieved_iops)
    wear = endurance.service_life_wear(drive, layout, drive_count, workload, years=service_life_years,
                                       data_bytes_year1=fill_fraction * usable_capacity_bytes,
                                       usable_capacity_bytes=usable_capacity_bytes, discards=discards)
    return min(wear.endurance_years, NEVER_WEARS_OUT_YEARS)


def _run_cancellable(executor: Executor, fn: Callable[..., Any], batches: Sequence[Any], is_active: Callable[[], bool]) -> list[Any]:
    """Run ``fn`` over ``batches`` on the executor under the current span (its results in
    completion order, the spans' records dropped); a client that goes away (``is_active`` false)
    cancels the tasks, and the current span then says ``arrayplan.cancelled``."""
    results: list[Any] = []
    cancel = threading.Event()

    def on_result(call: TaskCall, value: tuple[Any, list[dict[str, Any]]]) -> None:
        del call
        results.append(value[0])

    watcher = threading.Thread(target=_watch_client, args=(is_active, cancel), daemon=True)
    watcher.start()
    try:
        executor.run(fn, None, [TaskCall(batch=b, weight=1) for b in batches], telemetry.inject_carrier(), on_result=on_result,
                     cancel=cancel)
    except Cancelled:
        trace.get_current_span().set_attribute("arrayplan.cancelled", True)
        raise
    finally:
        cancel.set()
    return results


def _watch_client(is_active: Callable[[], bool], cancel: threading.Event) -> None:
    """Cancel the simulation's tasks when the client's deadline passes or it goes away."""
    while not cancel.wait(0.2):
        if not is_active():
            cancel.set()


def _slow_episodes(request: pb.SimulateArrayRequest, members: int, duration_s: float) -> tuple[fail_slow.SlowEpisode, ...]:
    """The request's fail-slow episodes, validated against the ``members`` simulated and the
    window (field paths are the request's)."""
    v: list[Violation] = []
    check_range(v, "slow_drives", len(request.slow_drives), 0, MAX_SLOW_DRIVES, note="entries")
    if v:
        raise InvalidInputError(v)
    episodes = tuple(fail_slow.SlowEpisode(
        drive_index=x.drive_index, factor=x.slowdown_factor, start_s=x.start.ToNanoseconds() / 1e9 if x.HasField("start") else 0.0,
        duration_s=x.duration.ToNanoseconds() / 1e9 if x.HasField("duration") else math.inf) for x in request.slow_drives)
    renamed = {"factor": "slowdown_factor", "start_s": "start", "duration_s": "duration"}
    v = [Violation(field=".".join([x.field.rsplit(".", 1)[0], renamed.get(x.field.rsplit(".", 1)[1], x.field.rsplit(".", 1)[1])]),
                   reason=x.reason) for x in fail_slow.validate_episodes(members, duration_s, episodes)]
    if episodes and request.rebuild_rate_bytes_per_second > 0:
        v.append(Violation(field="slow_drives", reason="cannot be combined with rebuild_rate_bytes_per_second > 0 (a rebuild is not split)"))
    if v:
        raise InvalidInputError(v)
    return episodes


def _mixture_summary(normal: array.ArrayResult, slow: array.ArrayResult, pi: float) -> pb.LatencySummary:
    out = pb.LatencySummary()
    for name, q in (("p50", 0.5), ("p90", 0.9), ("p99", 0.99), ("p999", 0.999), ("p9999", 0.9999), ("max", 1.0)):
        d = to_duration(float(fail_slow.mixture_percentile_s(normal, slow, pi, q)))
        if d is not None:
            getattr(out, name).CopyFrom(d)
    return out


def _summary(reps: simulation.Replications, kind: str) -> pb.LatencySummary:
    """The replications' latency percentiles of ``kind`` IOs, pooled, with their intervals (set
    when known: more than one replication)."""
    out = pb.LatencySummary()
    if not reps.pooled.latency_count(kind):
        return out
    figures = [(name, reps.percentile(q, kind)) for name, q in (("p50", 0.5), ("p90", 0.9), ("p99", 0.99), ("p999", 0.999),
                                                                 ("p9999", 0.9999))]
    if kind == "all":
        figures.append(("worst_second_p99", reps.worst_second_p99()))
    for name, iv in figures:
        for target, value in ((out, iv.value), (out.low, iv.low), (out.high, iv.high)):
            d = to_duration(float(value))
            if d is not None:
                getattr(target, name).CopyFrom(d)
    d = to_duration(reps.maximum_s(kind))
    if d is not None:
        out.max.CopyFrom(d)
    return out


def consistency_test(request: pb.RunConsistencyTestRequest, catalog: Catalog, executor: Executor, *,
                     is_active: Callable[[], bool] = lambda: True) -> pb.RunConsistencyTestResponse:
    """RunConsistencyTest: the engine's consistency experiment as one task on the executor,
    converted; a client that goes away cancels it."""
    drive, duration_s = validate_consistency_request(request, catalog)
    try:
        r: ssd.ConsistencyResult = _run_cancellable(executor, consistency_run,
                                                    [(drive, duration_s, request.over_provisioning_fraction, request.seed)], is_active)[0]
    except InvalidInputError as exc:
        raise InvalidInputError([Violation(field=_CONSISTENCY_FIELDS.get(x.field, x.field), reason=x.reason)
                                 for x in exc.violations]) from None
    resp = pb.RunConsistencyTestResponse(
        iops_per_second=[float(x) for x in r.iops], fresh_iops=r.fob_iops, steady_state_reached=r.steady is not None,
        steady_state_start_second=int(r.steady_start_s) if math.isfinite(r.steady_start_s) else max(0, len(r.iops) - 5 * 60),
        steady_state_iops=r.steady_iops_mean, first_percentile_over_mean=r.p1_over_mean, dip_depth_fraction=r.dip_depth,
        write_amplification=r.write_amplification, spare_factor=r.spare_factor, gc_policy=r.gc_policy,
    )
    for name, value in (("dip_period", r.dip_period_s), ("worst_second_latency", r.worst_second_latency_s)):
        d = to_duration(value)
        if d is not None:
            getattr(resp, name).CopyFrom(d)
    return resp


# The engine's consistency-run arguments -> the request fields a client set.
_CONSISTENCY_FIELDS = {"duration_s": "duration", "op": "over_provisioning_fraction"}


def validate_consistency_request(request: pb.RunConsistencyTestRequest, catalog: Catalog) -> tuple[Drive, float]:
    """RunConsistencyTest's checks of the request alone (an SSD of the catalog, the duration in
    [60 s, 86,400 s], the spare fraction, the seed): microseconds, so the server refuses bad input
    before the call waits for a slot. Returns the drive and the duration in seconds."""
    v: list[Violation] = []
    drive = None
    if not request.drive_model:
        v.append(Violation(field="drive_model", reason="is required (a catalog SSD name)"))
    else:
        try:
            drive = catalog.get(request.drive_model)
            if drive.kind != "ssd":
                v.append(Violation(field="drive_model", reason=f"{drive.name} is a {drive.kind}; the consistency test needs an SSD"))
        except UnknownNameError as exc:
            v.append(Violation(field="drive_model", reason=exc.violations[0].reason))
    duration_s = request.duration.ToNanoseconds() / 1e9 if request.HasField("duration") else 2000.0
    check_range(v, "seed", request.seed, 0, integer=True)
    try:
        ssd._validate_run(duration_s, request.over_provisioning_fraction)  # the engine's own limits, checked once
    except InvalidInputError as exc:
        v.extend(Violation(field=_CONSISTENCY_FIELDS.get(x.field, x.field), reason=x.reason) for x in exc.violations)
    if v:
        raise InvalidInputError(v)
    assert drive is not None  # a missing or unknown drive is in v
    return drive, duration_s
