"""Array-in-service files (YAML) -> forecasts and re-plans.

An array file names the drives of each redundancy group by serial, the layout, the start date,
where the telemetry is, the capacity used over time (a CSV or Prometheus text samples) and,
optionally, the workload as plan files take it and the question for a re-plan::

    name: db-array-1
    layout: raid5
    start_date: 2024-01-15
    telemetry: [telemetry/]                 # smartctl --json / nvme smart-log files or directories
    groups:
      - name: g1
        drives: [BTWL0001, BTWL0002, {serial: BTWL0003, model: INTEL SSDSC2BB480G4}]
    capacity_used: {csv: capacity.csv}      # or {prometheus: [scrape.prom], metric: ..., labels: {...}}
    workload: {read_fraction: 0.7, ...}     # optional; as in plan files
    # a drive read with nvme-cli (its smart log names no drive): {serial: S, model: M, nvme_smart_log: [files]}
    replan: {service_life_years: 5, candidate_space: {...}, constraints: {...}}   # optional

Paths are relative to the file. Errors name the YAML line and field (``PlanFileError``, as plan
files do). Reading is here; the forecast itself is ``arrayplan_engine.forecast``.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from arrayplan.v1 import planner_pb2 as pb
from arrayplan_engine import forecast as fc
from arrayplan_engine import smart
from arrayplan_engine.catalog import Catalog
from arrayplan_engine.errors import InvalidInputError, Range
from arrayplan_engine.layout import make_layout
from arrayplan_engine.units import DAY_S, YEAR_DAYS, parse_size_bytes
from arrayplan_engine.workload import Workload

from .planfile import PlanFileError, _Builder, _Doc, load_yaml, read_yaml_file
from .smart_io import CapacityFileError, CapacitySample, Problem, parse_timestamp_s, read_capacity_csv, read_prometheus_samples, read_telemetry

_TOP_KEYS = ("name", "layout", "start_date", "telemetry", "groups", "capacity_used", "usable_capacity_bytes", "full_fraction", "workload",
             "catalog_drive", "lockstep_window_days", "worn_threshold_fraction", "confidence", "replan")


@dataclass
class ArrayFile:
    """A loaded array file: the engine's spec, where its data is, and the re-plan question."""

    path: str
    spec: fc.ArrayInService
    telemetry_paths: list[Path]
    capacity: list[CapacitySample]
    workload_proto: pb.Workload | None
    replan: pb.PlanSpec | None
    warnings: list[str] = field(default_factory=list)
    # (serial, model, files) of drives read with ``nvme smart-log -o json``, which names no drive.
    nvme_smart_logs: list[tuple[str, str | None, list[Path]]] = field(default_factory=list)


def _as_list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else [value]


def load_array_file(path: Path) -> ArrayFile:
    """Parse and check an array file; raises ``PlanFileError`` listing every problem with its line."""
    spath = str(path)
    text = read_yaml_file(Path(path), "array file")  # a regular file of at most MAX_YAML_BYTES
    doc = load_yaml(text, spath)
    return array_from_doc(doc, spath, Path(path).resolve().parent)


_NUMBERS = {  # the array file's numbers
    "full_fraction": Range(lo=0, hi=1, lo_open=True),
    "lockstep_window_days": Range(lo=0, hi=3650, lo_open=True),
    "worn_threshold_fraction": Range(lo=0, hi=1, lo_open=True),
}


def array_from_doc(doc: _Doc, spath: str, base: Path) -> ArrayFile:
    """The array file in ``doc`` checked field by field (every problem with its line, in the
    file's order: groups, dates and layout, numbers, workload, catalog drive, re-plan, capacity)."""
    b = _Builder(doc, spath, base)
    data = doc.data
    if not isinstance(data, Mapping):
        raise PlanFileError(spath, [(1, "", "an array file is a mapping with name, layout, start_date, telemetry, groups")])
    for k in data:
        if k not in _TOP_KEYS:
            b.fail((k,), f"unknown field; allowed: {', '.join(_TOP_KEYS)}")
    for k in ("name", "layout", "start_date", "groups"):
        if k not in data:
            b.problems.append((1, k, "is required"))
    groups, nvme_logs = _groups(b, data, base)
    start_s = 0.0
    if "start_date" in data:
        try:
            start_s = parse_timestamp_s(data["start_date"])
        except ValueError as exc:
            b.fail(("start_date",), str(exc))
    layout = str(data.get("layout", "raid5"))
    if groups and "layout" in data:
        try:
            make_layout(layout, max(len(g.serials) for g in groups))
        except InvalidInputError as exc:
            for v in exc.violations:
                b.fail(("layout",), f"{v.reason} (the group width is the drives per group)")
    numbers, confidence, usable = _numbers(b, data)
    workload_proto, workload = _workload(b, data)
    if data.get("catalog_drive"):
        from arrayplan_engine.catalog import builtin_catalog

        try:
            builtin_catalog().get(str(data["catalog_drive"]), "catalog_drive")
        except InvalidInputError as exc:
            for v in exc.violations:
                b.fail(("catalog_drive",), v.reason)
    replan = _replan(b, data)
    telemetry_paths = [(base / str(p)) for p in _as_list(data.get("telemetry", []))]
    capacity = _capacity(b, data, base)
    if b.problems:
        raise PlanFileError(spath, b.problems)
    spec = fc.ArrayInService(name=str(data["name"]), layout=layout, groups=tuple(groups), start_time_s=start_s, usable_capacity_bytes=usable,
                        full_fraction=numbers.get("full_fraction", 1.0), workload=workload,
                        catalog_drive=str(data["catalog_drive"]) if data.get("catalog_drive") else None,
                        lockstep_window_days=numbers.get("lockstep_window_days", fc.DEFAULT_LOCKSTEP_WINDOW_DAYS),
                        worn_threshold_fraction=numbers.get("worn_threshold_fraction", fc.DEFAULT_WORN_THRESHOLD_FRACTION), confidence=confidence)
    return ArrayFile(path=spath, spec=spec, telemetry_paths=telemetry_paths, capacity=capacity, workload_proto=workload_proto,
                     replan=replan, warnings=b.warnings, nvme_smart_logs=nvme_logs)


def _groups(b: _Builder, data: Mapping[str, Any], base: Path) -> tuple[list[fc.GroupSpec], list[tuple[str, str | None, list[Path]]]]:
    """The redundancy groups (their drives by serial, with a model where given) and the drives
    read with nvme-cli, whose smart logs name no drive."""
    groups: list[fc.GroupSpec] = []
    nvme_logs: list[tuple[str, str | None, list[Path]]] = []
    for gi, g in enumerate(_as_list(data.get("groups", []))):
        at = ("groups", gi)
        if not isinstance(g, Mapping) or "drives" not in g:
            b.fail(at, "each group is a mapping with name and drives (a list of serials)")
            continue
        serials, models = [], []
        for di, d in enumerate(_as_list(g["drives"])):
            if isinstance(d, Mapping) and "serial" in d:
                serials.append(str(d["serial"]))
                models.append(str(d["model"]) if d.get("model") else None)
                if "nvme_smart_log" in d:
                    # nvme-cli's smart log names no drive: the array file says whose it is.
                    nvme_logs.append((str(d["serial"]), models[-1], [base / str(x) for x in _as_list(d["nvme_smart_log"])]))
            elif isinstance(d, (str, int)) and not isinstance(d, bool):
                serials.append(str(d))
                models.append(None)
            else:
                b.fail(at + ("drives", di), "a drive is a serial, or {serial: ..., model: ...}")
        if len(set(zip(serials, models))) != len(serials):
            b.fail(at + ("drives",), "a drive appears twice in the group")
        groups.append(fc.GroupSpec(name=str(g.get("name", f"g{gi + 1}")), serials=tuple(serials), models=tuple(models)))
    return groups, nvme_logs


def _numbers(b: _Builder, data: Mapping[str, Any]) -> tuple[dict[str, float], float, float | None]:
    """The file's bounded numbers, the forecast's confidence and the usable capacity (None: not given)."""
    numbers: dict[str, float] = {}
    for key, allowed in _NUMBERS.items():
        if key in data:
            v = data[key]
            if (reason := allowed.reason(v)) is not None:
                b.fail((key,), reason)
            else:
                numbers[key] = float(v)
    confidence = 0.9
    if "confidence" in data:
        if data["confidence"] not in (0.9, 0.95):
            b.fail(("confidence",), f"must be 0.9 or 0.95, got {data['confidence']!r}")
        else:
            confidence = float(data["confidence"])
    usable = None
    if "usable_capacity_bytes" in data:
        try:
            usable = float(parse_size_bytes(data["usable_capacity_bytes"]))
            if usable <= 0:
                raise ValueError(f"must be > 0 B, got {data['usable_capacity_bytes']!r}")
        except ValueError as exc:
            b.fail(("usable_capacity_bytes",), str(exc))
    return numbers, confidence, usable


def _workload(b: _Builder, data: Mapping[str, Any]) -> tuple[pb.Workload | None, Workload | None]:
    """The workload as plan files take it (its proto) and, when the file has no problem so far,
    the engine's ``Workload``."""
    workload_proto = None
    workload = None
    if "workload" in data:
        workload_proto = pb.Workload()
        b.fill(workload_proto, data["workload"], ("workload",))
        if not b.problems:
            from .convert import workload_from_proto

            try:
                workload = workload_from_proto(workload_proto, "workload")
            except InvalidInputError as exc:
                for v in exc.violations:
                    b.fail(tuple(p for p in v.field.split(".")), v.reason)
    return workload_proto, workload


def _replan(b: _Builder, data: Mapping[str, Any]) -> pb.PlanSpec | None:
    """The re-plan question (plan-file fields without a workload: the array's is used)."""
    replan = None
    if "replan" in data:
        replan = pb.PlanSpec()
        if not isinstance(data["replan"], Mapping):
            b.fail(("replan",), "must be a mapping of plan-file fields (service_life_years, constraints, candidate_space, ...)")
        else:
            b.fill(replan, {k: v for k, v in data["replan"].items() if k != "workload"}, ("replan",))
            if "workload" in data["replan"]:
                b.fail(("replan", "workload"), "the re-plan's workload is the array's (top-level workload) with the observed write rate")
    return replan


def _capacity(b: _Builder, data: Mapping[str, Any], base: Path) -> list[CapacitySample]:
    """The capacity used over time, from a CSV or Prometheus text samples."""
    capacity: list[CapacitySample] = []
    cu = data.get("capacity_used")
    if cu is not None:
        try:
            if isinstance(cu, Mapping) and "csv" in cu:
                capacity = read_capacity_csv(base / str(cu["csv"]))
            elif isinstance(cu, Mapping) and "prometheus" in cu:
                if "metric" not in cu:
                    b.fail(("capacity_used", "metric"), "is required with prometheus (e.g. node_filesystem_size_bytes minus avail: give a used-bytes metric)")
                else:
                    labels = cu.get("labels") or {}
                    capacity = read_prometheus_samples([base / str(p) for p in _as_list(cu["prometheus"])], str(cu["metric"]),
                                                       {str(k): str(v) for k, v in labels.items()})
            else:
                b.fail(("capacity_used",), "must be {csv: FILE} or {prometheus: [FILES], metric: NAME, labels: {...}}")
        except CapacityFileError as exc:
            b.fail(("capacity_used",), str(exc))
    return capacity


def run_forecast(spec: fc.ArrayInService, snapshots: Sequence[smart.DriveSnapshot], capacity: Sequence[CapacitySample],
                 catalog: Catalog) -> fc.ArrayForecast:
    series = smart.series_from_snapshots(snapshots)
    points = [fc.CapacityPoint(time_s=c.time_s, used_bytes=c.used_bytes) for c in capacity]
    return fc.forecast_array(spec, series, points, catalog)


def forecast_file(array: ArrayFile, catalog: Catalog, extra_telemetry: Sequence[Path] = ()) -> tuple[fc.ArrayForecast, list[Problem]]:
    """Read the array's telemetry and forecast; file problems are returned, not raised."""
    snapshots, problems = read_telemetry([*array.telemetry_paths, *extra_telemetry])
    for serial, model, files in array.nvme_smart_logs:
        more, bad = read_telemetry(files, model=model, serial=serial)
        snapshots += more
        problems += bad
    return run_forecast(array.spec, snapshots, array.capacity, catalog), problems


# -- re-plan --------------------------------------------------------------------------------------

@dataclass(frozen=True, slots=True, kw_only=True)
class ReplanOption:
    """One way to keep the array serving, with the date it must be done by."""

    action: str                      # expand | replace | migrate
    by_time_s: float | None
    text: str


def observed_host_write_bytes_per_day(forecast: fc.ArrayForecast, spec: fc.ArrayInService) -> float | None:
    """Array host writes per day from the members' own counters: the sum over members divided by
    the layout's member bytes per host byte (engine ``Layout.write_bytes_factor`` at the
    workload's IO size and random share; 4 KiB random without a workload)."""
    rates = [d.host_write_bytes_per_day for d in forecast.drives if d.host_write_bytes_per_day]
    if not rates:
        return None
    width = max(len(g.serials) for g in spec.groups)
    layout = make_layout(spec.layout, width)
    io = spec.workload.mean_io_bytes if spec.workload else 4096.0
    rnd = spec.workload.random_fraction if spec.workload else 1.0
    members = sum(len(g.serials) for g in spec.groups)
    return sum(rates) / len(rates) * members / layout.write_bytes_factor(io, rnd)


def replan_spec(array: ArrayFile, forecast: fc.ArrayForecast, years: int | None = None) -> tuple[pb.PlanSpec, list[str]]:
    """The re-plan as a plan: the array's workload with the observed write rate, capacity for the
    used data grown over the service life, the question's constraints and candidate space."""
    spec = pb.PlanSpec()
    notes: list[str] = []
    if array.replan is not None:
        spec.CopyFrom(array.replan)
    if years:
        spec.service_life_years = years
    life = spec.service_life_years or 5
    if array.workload_proto is not None:
        spec.workload.CopyFrom(array.workload_proto)
    else:
        spec.workload.read_fraction = 0.7
        notes.append("no workload in the array file: the re-plan assumes 70 % reads, 4 KiB random (the engine's defaults)")
    observed = observed_host_write_bytes_per_day(forecast, array.spec)
    if observed:
        spec.workload.daily_write_bytes = observed
        notes.append(f"host writes {observed / 1e12:.2f} TB/day observed from the drives' counters")
    fill = forecast.fill
    if spec.workload.growth_fraction_per_year == 0 and forecast.growth_per_year == 0 and fill is not None and fill.growth_per_year:
        spec.workload.growth_fraction_per_year = max(fill.growth_per_year, 0.0)
        notes.append(f"growth {spec.workload.growth_fraction_per_year:.1%}/year fitted to the capacity samples")
    if not spec.constraints.usable_capacity_bytes and fill is not None and fill.used_bytes:
        # The planner's capacity is year 1's, before growth (it grows it by the workload's growth).
        need = fill.used_bytes / array.spec.full_fraction
        spec.constraints.usable_capacity_bytes = int(math.ceil(need))
        notes.append(f"usable capacity {need / 1e12:.2f} TB in year 1 ({fill.used_bytes / 1e12:.2f} TB used now, kept under "
                     f"{array.spec.full_fraction:.0%} full), grown {spec.workload.growth_fraction_per_year:.0%}/year by the planner "
                     f"over {life} years")
    if not spec.constraints.usable_capacity_bytes:
        usable = fill.usable_capacity_bytes if fill else 0.0
        spec.constraints.usable_capacity_bytes = int(usable)
    return spec, notes


def _month(t: float | None) -> str:
    import datetime as dt

    if t is None:
        return "beyond the horizon"
    return dt.datetime.fromtimestamp(t, tz=dt.UTC).strftime("%Y-%m")


MAX_EXPAND_GROUPS = 1_000_000  # beyond this an expansion is no answer: the option says so instead of a number


def replan_options(array: ArrayFile, forecast: fc.ArrayForecast, catalog: Catalog) -> list[ReplanOption]:
    """Expand before full; replace groups before they wear out (the earliest date of the interval)."""
    out: list[ReplanOption] = []
    spec = array.spec
    fill = forecast.fill
    width = max((len(g.serials) for g in spec.groups), default=0)
    if fill is not None and fill.full.time_s is not None and width:
        layout = make_layout(spec.layout, width)
        per_drive = fill.usable_capacity_bytes / max(sum(len(g.serials) for g in spec.groups), 1) / layout.usable_fraction
        g = forecast.growth_per_year if forecast.growth_per_year > 0 else (fill.growth_per_year or 0.0)
        horizon_years = (array.replan.service_life_years if array.replan and array.replan.service_life_years else 5)
        try:  # any accepted growth, fill target and size: a growth of 1e308/year overflows the power, 5e-324 full divides to inf
            need = (fill.used_bytes or 0.0) * (1 + max(g, 0.0)) ** horizon_years / spec.full_fraction
        except OverflowError:
            need = math.inf
        extra = max(need - fill.usable_capacity_bytes, 0.0)
        group_usable = per_drive * layout.data_drives
        ratio = extra / group_usable if group_usable > 0 else 0.0
        by = fill.full.earliest_s if fill.full.earliest_s is not None else fill.full.time_s
        if not ratio <= MAX_EXPAND_GROUPS:  # inf and NaN too
            out.append(ReplanOption(action="expand", by_time_s=by,
                                    text=f"no expansion keeps up: {horizon_years} years at {max(g, 0.0):.3g}/year growth to "
                                         f"{spec.full_fraction:.3g} full needs over {MAX_EXPAND_GROUPS:,} more {layout.name} groups; "
                                         f"full {_month(fill.full.time_s)}: plan a new array"))
        groups_needed = math.ceil(ratio) if ratio <= MAX_EXPAND_GROUPS else 0
        if groups_needed:
            out.append(ReplanOption(action="expand", by_time_s=by,
                                    text=f"{groups_needed * width} more drives ({groups_needed} {layout.name} groups) by {_month(by)} "
                                         f"(full {_month(fill.full.time_s)}, interval {_month(fill.full.earliest_s)} .. {_month(fill.full.latest_s)}; "
                                         f"enough for {horizon_years} years at {max(g, 0.0):.0%}/year)"))
    for grp in forecast.groups:
        w = grp.wear_out
        if w.time_s is None:
            continue
        by = w.earliest_s if w.earliest_s is not None else w.time_s
        stage = " in stages (lockstep wear)" if grp.lockstep else ""
        out.append(ReplanOption(action="replace", by_time_s=by,
                                text=f"replace group {grp.name}{stage} by {_month(by)} (first member reaches its rated endurance "
                                     f"{_month(w.time_s)}, interval {_month(w.earliest_s)} .. {_month(w.latest_s)})"))
    out.sort(key=lambda o: o.by_time_s if o.by_time_s is not None else math.inf)
    return out


def years_until(t: float | None, now_s: float) -> float | None:
    return None if t is None else (t - now_s) / DAY_S / YEAR_DAYS
