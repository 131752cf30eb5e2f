"""ForecastArray in the API's terms: the request read into the engine's array in service (every bad
field named), the telemetry documents parsed, the forecast run and written into the response, and
with ``create_replan`` the re-plan's spec. ``server/forecast.py`` runs it as a task and creates the
re-plan through the plan admission.
"""

from __future__ import annotations

import json
import time

from google.protobuf import duration_pb2, timestamp_pb2

from arrayplan.v1 import planner_pb2 as pb
from arrayplan_engine import forecast as fc
from arrayplan_engine.catalog import Catalog
from arrayplan_engine.errors import NON_NEGATIVE, REQUIRED, InvalidInputError, Range, Violation, check_range
from arrayplan_engine.layout import make_layout
from arrayplan_engine.smart import DriveSnapshot, TelemetryError, parse_document
from arrayplan_engine.units import DAY_S, YEAR_DAYS

from .arrayfile import ArrayFile, replan_options, replan_spec, run_forecast
from .convert import workload_from_proto
from .smart_io import CapacitySample

MAX_TELEMETRY_DOCUMENTS = 20_000


def _seconds(ts: timestamp_pb2.Timestamp) -> float:
    return ts.ToNanoseconds() / 1e9


def _ts(t: float | None) -> timestamp_pb2.Timestamp | None:
    if t is None:
        return None
    out = timestamp_pb2.Timestamp()
    out.FromNanoseconds(int(t * 1e9))
    return out


def _interval(d: fc.DateInterval) -> pb.DateInterval:
    out = pb.DateInterval()
    for name, t in (("time", d.time_s), ("earliest_time", d.earliest_s), ("latest_time", d.latest_s)):
        ts = _ts(t)
        if ts is not None:
            getattr(out, name).CopyFrom(ts)
    return out


def spec_from_proto(a: pb.ArrayInService, prefix: str = "array") -> fc.ArrayInService:
    v: list[Violation] = []
    if not a.layout:
        v.append(Violation(field=f"{prefix}.layout", code=REQUIRED, reason="is required (raid1, raid5, raid6, raid10 or ec:K+M)"))
    if not a.groups:
        v.append(Violation(field=f"{prefix}.groups", code=REQUIRED, reason="is required: at least one group of members"))
    groups = []
    for i, g in enumerate(a.groups):
        if not g.members:
            v.append(Violation(field=f"{prefix}.groups[{i}].members", code=REQUIRED, reason="is required: at least one member"))
        for j, m in enumerate(g.members):
            if not m.serial:
                v.append(Violation(field=f"{prefix}.groups[{i}].members[{j}].serial", code=REQUIRED, reason="is required"))
        groups.append(fc.GroupSpec(name=g.name or f"g{i + 1}", serials=tuple(m.serial for m in g.members),
                                   models=tuple(m.model or None for m in g.members)))
    if not a.HasField("start_time"):
        v.append(Violation(field=f"{prefix}.start_time", code=REQUIRED, reason="is required"))
    if a.layout and a.groups:
        try:
            make_layout(a.layout, max(len(g.members) for g in a.groups), field=f"{prefix}.layout")
        except InvalidInputError as exc:
            # the group width is the groups' member count: a width violation names the groups
            v.extend(Violation(field=f"{prefix}.groups" if x.field.startswith(f"{prefix}.layout.") else x.field,
                               reason=x.reason + (" (a group's width is its member count)" if x.field.startswith(f"{prefix}.layout.") else ""))
                     for x in exc.violations)
    NON_NEGATIVE.check(v, f"{prefix}.usable_capacity_bytes", a.usable_capacity_bytes)
    for name in ("full_fraction", "worn_threshold_fraction"):
        x = getattr(a, name)
        if x:  # 0 = unset: the default
            check_range(v, f"{prefix}.{name}", x, 0, 1, lo_open=True)
    if a.confidence and a.confidence not in (0.9, 0.95):
        v.append(Violation(field=f"{prefix}.confidence", reason=f"must be 0.9 or 0.95, got {a.confidence}"))
    window_days = fc.DEFAULT_LOCKSTEP_WINDOW_DAYS
    if a.HasField("lockstep_window"):
        window_days = a.lockstep_window.ToNanoseconds() / 1e9 / 86400.0
        if window_days <= 0:
            v.append(Violation(field=f"{prefix}.lockstep_window", reason="must be a positive duration"))
    workload = None
    if a.HasField("workload"):
        try:
            workload = workload_from_proto(a.workload, f"{prefix}.workload")
        except InvalidInputError as exc:
            v.extend(exc.violations)
    if v:
        raise InvalidInputError(v)
    return fc.ArrayInService(name=a.display_name or "array", layout=a.layout, groups=tuple(groups), start_time_s=_seconds(a.start_time),
                        usable_capacity_bytes=float(a.usable_capacity_bytes) or None, full_fraction=a.full_fraction or 1.0,
                        workload=workload, catalog_drive=a.catalog_drive or None, lockstep_window_days=window_days,
                        worn_threshold_fraction=a.worn_threshold_fraction or fc.DEFAULT_WORN_THRESHOLD_FRACTION,
                        confidence=a.confidence or fc.DEFAULT_CONFIDENCE)


def _snapshots(docs: list[pb.TelemetryDocument]) -> tuple[list[DriveSnapshot], list[str]]:
    snaps: list[DriveSnapshot] = []
    problems: list[str] = []
    for i, d in enumerate(docs):
        source = d.source or f"telemetry[{i}]"
        try:
            doc = json.loads(d.json_text)
        except json.JSONDecodeError as exc:
            problems.append(f"{source}: not valid JSON (truncated?): {exc.msg} at line {exc.lineno} column {exc.colno}")
            continue
        items = doc if isinstance(doc, list) else [doc]
        for k, item in enumerate(items):
            src = source if len(items) == 1 else f"{source}[{k}]"
            try:
                snaps.append(parse_document(item, src))
            except TelemetryError as exc:
                problems.append(f"{src}: {exc.reason}")
    return snaps, problems


def validate_forecast_request(request: pb.ForecastArrayRequest, catalog: Catalog) -> tuple[fc.ArrayInService, list[CapacitySample]]:
    """ForecastArray's checks of the request alone (the array, the document count, the capacity
    samples; the telemetry documents' JSON is read by the forecast itself): cheap, so the server
    refuses bad input before the call waits for a slot. Returns the array spec and the samples."""
    if not request.HasField("array"):
        raise InvalidInputError.one("array", "is required")
    if len(request.telemetry) > MAX_TELEMETRY_DOCUMENTS:
        raise InvalidInputError.one("telemetry", f"at most {MAX_TELEMETRY_DOCUMENTS} documents, got {len(request.telemetry)}")
    spec = spec_from_proto(request.array)
    if spec.catalog_drive:
        catalog.get(spec.catalog_drive, "array.catalog_drive")  # UnknownNameError names the field and the known drives
    capacity = []
    for i, c in enumerate(request.capacity_samples):
        NON_NEGATIVE.require(f"capacity_samples[{i}].used_bytes", c.used_bytes)
        capacity.append(CapacitySample(time_s=_seconds(c.time), used_bytes=c.used_bytes))
    if request.HasField("stale_after"):
        _STALE_AFTER_S.require("stale_after", request.stale_after.ToNanoseconds() / 1e9)
    if request.HasField("now_time"):
        _NOW_S.require("now_time", _seconds(request.now_time))
    return spec, capacity


# the staleness threshold (fc.stale_telemetry's range, in seconds) and the time it is judged at
_STALE_AFTER_S = Range(lo=0, lo_open=True, hi=100 * YEAR_DAYS * DAY_S, unit="s", note="(unset = 30 days)")
_NOW_S = Range(lo=0, unit="s", note="(Unix time; unset = the server's clock)")


def staleness(request: pb.ForecastArrayRequest, f: fc.ArrayForecast) -> fc.ArrayForecast:
    """The forecast judged at the request's now_time (default: this clock) against its
    stale_after (default ``fc.DEFAULT_STALE_AFTER_DAYS``)."""
    now_s = _seconds(request.now_time) if request.HasField("now_time") else time.time()
    days = request.stale_after.ToNanoseconds() / 1e9 / DAY_S if request.HasField("stale_after") else fc.DEFAULT_STALE_AFTER_DAYS
    return fc.stale_telemetry(f, now_s=now_s, stale_after_days=days)


def forecast_response(request: pb.ForecastArrayRequest, catalog: Catalog) -> tuple[pb.ForecastArrayResponse, pb.PlanSpec | None]:
    """Validate, forecast, convert: the response without ``replan_plan_name``, and with
    ``create_replan`` the spec of the re-plan to create (its notes are in the response)."""
    spec, capacity = validate_forecast_request(request, catalog)
    snaps, problems = _snapshots(list(request.telemetry))
    f = staleness(request, run_forecast(spec, snaps, capacity, catalog))
    array = ArrayFile(path="<request>", spec=spec, telemetry_paths=[], capacity=capacity,
                      workload_proto=request.array.workload if request.array.HasField("workload") else None,
                      replan=request.replan if request.HasField("replan") else None)
    out = pb.ForecastArrayResponse(display_name=f.name, warnings=list(f.warnings), problems=problems + list(f.problems))
    ts = _ts(f.as_of_s)
    if ts is not None:
        out.as_of_time.CopyFrom(ts)
    out.telemetry_stale = f.stale
    if f.as_of_age_days is not None:
        out.as_of_age.CopyFrom(duration_pb2.Duration(seconds=int(round(f.as_of_age_days * DAY_S))))
    out.wear_out.CopyFrom(_interval(f.wear_out))
    for d in f.drives:
        m = out.drives.add(group=d.group, serial=d.serial, model=d.model or "", sources=list(d.sources), catalog_drive=d.catalog_drive or "",
                           basis=d.basis, rate_basis=d.rate_basis, snapshot_count=d.snapshot_count,
                           write_amplification_source=d.write_amplification_source, passed_but_worn=d.passed_but_worn, notes=list(d.notes))
        for name, value in (("life_used_fraction", d.life_used_fraction), ("host_write_bytes_per_day", d.host_write_bytes_per_day),
                            ("write_amplification", d.write_amplification)):
            if value is not None:
                setattr(m, name, value)
        m.wear_out.CopyFrom(_interval(d.wear_out))
    for g in f.groups:
        gm = out.groups.add(name=g.name, member_count=g.members, failures_tolerated=g.failures_tolerated, lockstep=g.lockstep,
                            lockstep_member_count=g.lockstep_members)
        gm.wear_out.CopyFrom(_interval(g.wear_out))
    if f.fill is not None:
        fl = f.fill
        out.fill.usable_capacity_bytes = fl.usable_capacity_bytes
        out.fill.full_bytes = fl.full_bytes
        if fl.used_bytes is not None:
            out.fill.used_bytes = fl.used_bytes
        if fl.growth_per_year is not None:
            out.fill.growth_fraction_per_year = fl.growth_per_year
        out.fill.growth_source = fl.growth_source
        out.fill.full.CopyFrom(_interval(fl.full))
        out.fill.notes.extend(fl.notes)
    for o in replan_options(array, f, catalog):
        om = out.options.add(action=o.action, text=o.text)
        t = _ts(o.by_time_s)
        if t is not None:
            om.by_time.CopyFrom(t)
    if not request.create_replan:
        return out, None
    plan_spec, notes = replan_spec(array, f)
    out.replan_notes.extend(notes)
    return out, plan_spec
