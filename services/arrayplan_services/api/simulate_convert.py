"""SimulateArray and RunConsistencyTest in the API's terms: the request read into engine values
(every bad field named with its allowed range), the engine's results written into the response.
``plan/simulate.py`` runs the simulations between the two; the command line builds its request
here too (``simulate_request``), so ``arrayplan simulate`` and the service read one message.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from arrayplan.v1 import planner_pb2 as pb
from arrayplan_engine import array, endurance, fail_slow, simulation, ssd
from arrayplan_engine.catalog import Catalog, Drive
from arrayplan_engine.errors import REQUIRED, InvalidInputError, Range, UnknownNameError, Violation, check_range, require_range
from arrayplan_engine.layout import Layout, group_count, make_layout
from arrayplan_engine.units import KiB
from arrayplan_engine.workload import Workload

from .convert import reprefix, workload_from_proto
from .figures import to_duration

MAX_ARRAY_DRIVES = 1_024
# SimulateArrayRequest.service_life_years when set (0 is proto3's unset: the default, 5).
SERVICE_LIFE_YEARS = Range(lo=1, hi=15, integer=True, note="(0 = the default, 5)")
DEFAULT_SERVICE_LIFE_YEARS = 5
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
        v.append(Violation(field="drive_model", code=REQUIRED, reason="is required (a catalog drive name)"))
    else:
        try:
            drive = catalog.get(request.drive_model)
        except UnknownNameError as exc:
            v.append(exc.violations[0].at("drive_model"))
    check_range(v, "drive_count", request.drive_count, 1, MAX_ARRAY_DRIVES)
    if not request.layout:
        v.append(Violation(field="layout", code=REQUIRED, reason="is required: raid0, raid1, raid10, raid5, raid6 or ec:K+M"))
    else:
        try:
            width = request.group_width or (None if request.layout.startswith("ec:") else request.drive_count)
            layout = make_layout(request.layout, width, stripe_unit_bytes=request.stripe_unit_bytes or 64 * 1024, field="layout")
            if layout.group_width > request.drive_count >= 1:
                v.append(Violation(field="drive_count", reason=f"must be at least the group width {layout.group_width} of {layout.name}"))
            check_range(v, "failed_drive_count", request.failed_drive_count, 0, layout.failures_tolerated, note=f"for {layout.name}")
        except InvalidInputError as exc:
            # The layout's own options are fields of the request ("layout.group_width" -> "group_width").
            v.extend(x.at(x.field.removeprefix("layout.")) for x in exc.violations)
    if not request.HasField("workload"):
        v.append(Violation(field="workload", code=REQUIRED, reason="is required"))
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
    slow_episodes(request, group_count(layout, request.drive_count) * layout.group_width, duration_s(request))
    return drive, layout, workload


def duration_s(request: pb.SimulateArrayRequest) -> float:
    """The request's window in seconds (unset: 10 s)."""
    return request.duration.ToNanoseconds() / 1e9 if request.HasField("duration") else 10.0


def spec_violations(exc: InvalidInputError) -> InvalidInputError:
    """The engine's ArraySpec violations under the request fields a client set (``_SPEC_TO_REQUEST``)."""
    return InvalidInputError([x.at(_SPEC_TO_REQUEST.get(x.field.removeprefix("spec.").split(".")[0].split("[")[0], "workload"))
                              for x in exc.violations])


def slow_episodes(request: pb.SimulateArrayRequest, members: int, duration_s: float) -> tuple[fail_slow.SlowEpisode, ...]:
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
    v = [x.at(".".join([x.field.rsplit(".", 1)[0], renamed.get(x.field.rsplit(".", 1)[1], x.field.rsplit(".", 1)[1])]))
         for x in fail_slow.validate_episodes(members, duration_s, episodes)]
    if episodes and request.rebuild_rate_bytes_per_second > 0:
        v.append(Violation(field="slow_drives", reason="cannot be combined with rebuild_rate_bytes_per_second > 0 (a rebuild is not split)"))
    if v:
        raise InvalidInputError(v)
    return episodes


def mixture_summary(normal: array.ArrayResult, slow: array.ArrayResult, pi: float) -> pb.LatencySummary:
    out = pb.LatencySummary()
    for name, q in (("p50", 0.5), ("p90", 0.9), ("p99", 0.99), ("p999", 0.999), ("p9999", 0.9999), ("max", 1.0)):
        d = to_duration(float(fail_slow.mixture_percentile_s(normal, slow, pi, q)))
        if d is not None:
            getattr(out, name).CopyFrom(d)
    return out


def latency_summary(reps: simulation.Replications, kind: str) -> pb.LatencySummary:
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


def simulate_response(*, drive: Drive, layout: Layout, request: pb.SimulateArrayRequest, reps: simulation.Replications,
                      plain: simulation.Replications | None, slow: array.ArrayResult | None, replications: int,
                      usable_capacity_bytes: float, endurance_years: float, purchase_cost_usd: float) -> pb.SimulateArrayResponse:
    """SimulateArray's answer from the engine's results: the replications pooled with 95 %
    intervals (set when known), the same replications without coordinated reads (``plain``), the
    run with a fail-slow member (``slow``, mixed at the field rates), replication 0's time series
    and rebuild."""
    r = reps.runs[0]
    pooled = reps.pooled
    iops = reps.achieved_iops()
    response = pb.SimulateArrayResponse(
        usable_capacity_bytes=int(usable_capacity_bytes),
        achieved_iops=iops.value, member_ios_per_host_io=float(pooled.member_ios_per_host_io),
        achieved_iops_low=iops.low if iops.known else 0.0, achieved_iops_high=iops.high if iops.known else 0.0,
        replications=replications,
        latency=latency_summary(reps, "all"), read_latency=latency_summary(reps, "read"), write_latency=latency_summary(reps, "write"),
        iops_per_second=[float(x) for x in r.iops_per_second],
        drive_utilization_fractions=[float(x) for x in r.drive_utilisation],
        endurance_years=endurance_years,
        purchase_cost_usd=purchase_cost_usd,
        models=[simulation.SIMULATION_MODEL, f"service-model:{'hdd' if drive.kind == 'hdd' else 'ssd-ftl-gc-profile'}"],
    )
    if plain is not None:
        response.coordinated_reads = True
        response.latency_without_coordinated_reads.CopyFrom(latency_summary(plain, "all"))
        response.read_latency_without_coordinated_reads.CopyFrom(latency_summary(plain, "read"))
        frac = reps.reconstructed_read_fraction()
        response.reconstructed_read_fraction = frac if math.isfinite(frac) else 0.0
    if slow is not None:
        pi = fail_slow.slow_time_fraction("hdd" if drive.kind == "hdd" else "ssd", max(1, group_count(layout, request.drive_count)))
        response.fail_slow_time_fraction = pi
        # the normal state is the replications pooled, the distribution `latency` reports: the mixture
        # then differs from it only by the slow state's share (replication 0 alone made it a second sample)
        response.latency_with_fail_slow.CopyFrom(mixture_summary(pooled, slow, pi))
    if r.rebuild_simulated and r.rebuild_done:
        d = to_duration(r.rebuild_duration_s)
        if d is not None:
            response.rebuild_duration.CopyFrom(d)
    return response


def simulate_request(*, drive_model: str, drive_count: int, layout: str, workload: Workload, group_width: int = 0,
                     failed_drive_count: int = 0, duration_s: float = 10.0, seed: int = 0, fill_fraction: float = 1.0,
                     stripe_unit_bytes: int = 64 * KiB, rebuild_rate_bytes_per_s: float = 0.0, fail_slow_field_rates: bool = False,
                     coordinated_reads: bool = False, replications: int = 0, discards: str = "auto",
                     slow_drives: Sequence[fail_slow.SlowEpisode] = ()) -> pb.SimulateArrayRequest:
    """A SimulateArrayRequest from engine values (what ``arrayplan simulate`` sends, to a server
    or to the same code in-process)."""
    wl = pb.Workload(read_fraction=workload.read_fraction, random_fraction=workload.random_fraction,
                     queue_depth=workload.queue_depth, target_iops=workload.target_iops,
                     hot_write_fraction=workload.hot_write_fraction, hot_space_fraction=workload.hot_space_fraction,
                     io_size_mix=[pb.IoSizeShare(io_bytes=int(b), weight=float(w)) for b, w in workload.io_size_mix],
                     display_name=workload.name)
    request = pb.SimulateArrayRequest(
        drive_model=drive_model, drive_count=drive_count, layout=layout, group_width=group_width,
        workload=wl, failed_drive_count=failed_drive_count, seed=seed, fill_fraction=fill_fraction,
        stripe_unit_bytes=stripe_unit_bytes, rebuild_rate_bytes_per_second=rebuild_rate_bytes_per_s,
        fail_slow_field_rates=fail_slow_field_rates, coordinated_reads=coordinated_reads,
        replications=replications, discards=discards)
    request.duration.FromNanoseconds(round(duration_s * 1e9))
    for e in slow_drives:
        sd = request.slow_drives.add(drive_index=e.drive_index, slowdown_factor=e.factor)
        sd.start.FromNanoseconds(round(e.start_s * 1e9))
        if math.isfinite(e.duration_s):
            sd.duration.FromNanoseconds(round(e.duration_s * 1e9))
    return request


def consistency_response(r: ssd.ConsistencyResult) -> pb.RunConsistencyTestResponse:
    """RunConsistencyTest's answer from the engine's consistency run."""
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


def consistency_violations(exc: InvalidInputError) -> InvalidInputError:
    """The engine's consistency-run violations under the request fields a client set."""
    return InvalidInputError([x.at(_CONSISTENCY_FIELDS.get(x.field, x.field)) for x in exc.violations])


# The engine's consistency-run arguments -> the request fields a client set.
_CONSISTENCY_FIELDS = {"duration_s": "duration", "op": "over_provisioning_fraction"}


def validate_consistency_request(request: pb.RunConsistencyTestRequest, catalog: Catalog) -> tuple[Drive, float]:
    """RunConsistencyTest's checks of the request alone (an SSD of the catalog, the duration in
    [60 s, 86,400 s], the spare fraction, the seed): microseconds, so the server refuses bad input
    before the call waits for a slot. Returns the drive and the duration in seconds."""
    v: list[Violation] = []
    drive = None
    if not request.drive_model:
        v.append(Violation(field="drive_model", code=REQUIRED, reason="is required (a catalog SSD name)"))
    else:
        try:
            drive = catalog.get(request.drive_model)
            if drive.kind != "ssd":
                v.append(Violation(field="drive_model", reason=f"{drive.name} is a {drive.kind}; the consistency test needs an SSD"))
        except UnknownNameError as exc:
            v.append(exc.violations[0].at("drive_model"))
    duration_s = request.duration.ToNanoseconds() / 1e9 if request.HasField("duration") else 2000.0
    check_range(v, "seed", request.seed, 0, integer=True)
    try:
        ssd._validate_run(duration_s, request.over_provisioning_fraction)  # the engine's own limits, checked once
    except InvalidInputError as exc:
        v.extend(x.at(_CONSISTENCY_FIELDS.get(x.field, x.field)) for x in exc.violations)
    if v:
        raise InvalidInputError(v)
    assert drive is not None  # a missing or unknown drive is in v
    return drive, duration_s
