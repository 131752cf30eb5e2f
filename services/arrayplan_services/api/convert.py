"""Conversion between the public API (arrayplan.v1 protobuf) and the engine's dataclasses.

Validation lives in the engine; this module only renames: engine field paths become the API's
(``workload.growth_per_year`` -> ``plan.spec.workload.growth_fraction_per_year``) so a client
sees the name it sent.
"""

from __future__ import annotations

import dataclasses
import math
from typing import Any

from google.protobuf import duration_pb2

from arrayplan.v1 import planner_pb2 as pb
from arrayplan_engine import cost, plan_request, ranking, simulation
from arrayplan_engine.catalog import USER_PROVENANCE, Catalog, Drive, builtin_catalog, drive_from_fields, with_user_drives
from arrayplan_engine.drive_checks import drive_model_violations
from arrayplan_engine.errors import DUPLICATE, POSITIVE, REQUIRED, TOO_LONG, TOO_MANY, InvalidInputError, Range, Violation, check_range
from arrayplan_engine.workload import Workload, workload_from_mapping

from .figures import add_checks, set_interval_durations, to_duration
from .figures import finite as _finite

_ENGINE_TO_API = {
    "workload.growth_per_year": "workload.growth_fraction_per_year",
    "workload.name": "workload.display_name",
    "constraints.latency_target_s": "constraints.latency_target",
    "constraints.worst_second_latency_target_s": "constraints.worst_second_latency_target",
    "constraints.worst_second_horizon_s": "constraints.worst_second_horizon",
}

_OBJECTIVES = {
    pb.OBJECTIVE_UNSPECIFIED: plan_request.Objective.TOTAL_COST_OF_OWNERSHIP,
    pb.OBJECTIVE_TOTAL_COST_OF_OWNERSHIP: plan_request.Objective.TOTAL_COST_OF_OWNERSHIP,
    pb.OBJECTIVE_PURCHASE_COST: plan_request.Objective.PURCHASE_COST,
    pb.OBJECTIVE_POWER: plan_request.Objective.POWER,
    pb.OBJECTIVE_HEADROOM: plan_request.Objective.HEADROOM,
}
OBJECTIVE_NAMES = {o.value: k for k, o in _OBJECTIVES.items() if k != pb.OBJECTIVE_UNSPECIFIED}


def api_field(engine_field: str, prefix: str) -> str:
    for old, new in _ENGINE_TO_API.items():
        if engine_field == old or engine_field.startswith(old + "."):
            engine_field = new + engine_field[len(old):]
            break
    return f"{prefix}.{engine_field}" if prefix else engine_field


def reprefix(exc: InvalidInputError, prefix: str) -> InvalidInputError:
    return InvalidInputError([v.at(api_field(v.field, prefix)) for v in exc.violations])


def duration_s(d: duration_pb2.Duration) -> float:
    return d.ToNanoseconds() / 1e9


# -- request bounds: checked before anything in a request is expanded ---------------------------
# Repeated fields are bounded and free of duplicates, strings are bounded, every number is finite
# and inside a range no real array reaches (so no later arithmetic overflows or divides by zero).
MAX_DRIVE_MODELS = 256
MAX_LAYOUTS = 16
MAX_GROUP_WIDTHS = 64
MAX_OP_FRACTIONS = 16
MAX_IO_SIZES = 64
MAX_CUSTOM_DRIVES = 64
MAX_NAME_CHARS = 128
MAX_DISPLAY_NAME_CHARS = 200
MAX_DURATION_S = 3600
_WORKLOAD_RANGES = {  # field -> what is allowed, and why the top
    "target_iops": Range(lo=0, hi=1e9, note="(a billion host IOs per second)"),
    "daily_write_bytes": Range(lo=0, hi=1e18, note="(an exabyte a day)"),
}
_FINITE = Range()  # any finite number
_CONSTRAINT_RANGES = {
    "usable_capacity_bytes": Range(lo=0, hi=1e18, note="(an exabyte)"),
    "min_iops": Range(lo=0, hi=1e9, note="(a billion IOs per second)"),
    "max_purchase_cost_usd": Range(lo=0, hi=1e12, note="(a trillion dollars)"),
    "max_power_w": Range(lo=0, hi=1e9, note="(a gigawatt)"),
}


# The fill target when set: the engine's range (unset = plan_request.DEFAULT_MAX_FILL_FRACTION).
_FILL = Range(lo=0, hi=1, lo_open=True)


def fill_target_violations(c: pb.Constraints, prefix: str) -> list[Violation]:
    """``max_fill_fraction`` outside (0, 1] when set (unset = the engine's default)."""
    v: list[Violation] = []
    if c.HasField("max_fill_fraction"):
        _FILL.check(v, f"{prefix}.max_fill_fraction", c.max_fill_fraction)
    return v


def bay_violations(cs: pb.CandidateSpace, prefix: str) -> list[Violation]:
    """``bay_cost_usd`` / ``bay_power_w`` outside their ranges when set (unset = cost.py's sourced
    defaults)."""
    v: list[Violation] = []
    if cs.HasField("bay_cost_usd"):
        check_range(v, f"{prefix}.bay_cost_usd", cs.bay_cost_usd, 0, cost.MAX_BAY_COST_USD, unit="USD")
    if cs.HasField("bay_power_w"):
        check_range(v, f"{prefix}.bay_power_w", cs.bay_power_w, 0, cost.MAX_BAY_POWER_W, unit="W")
    return v


def _duration(v: list[Violation], path: str, d: duration_pb2.Duration, max_s: float = MAX_DURATION_S) -> None:
    """A Duration in (0, max_s]: a well-formed one (nanos in [0, 1e9); a negative one fails the range)."""
    if not 0 <= d.nanos < 1_000_000_000:
        v.append(Violation(field=path, reason=f"must have nanos in [0, 999999999], got seconds={d.seconds} nanos={d.nanos}"))
    else:
        check_range(v, path, d.ToNanoseconds() / 1e9, 0, max_s, lo_open=True, unit="s")


def _unique(v: list[Violation], path: str, items: list[Any], limit: int, key=lambda x: x) -> None:  # type: ignore[no-untyped-def]
    if len(items) > limit:
        v.append(Violation(field=path, code=TOO_MANY, reason=f"holds {len(items)} entries; at most {limit} are allowed"))
        return
    seen: dict[Any, int] = {}
    for i, item in enumerate(items):
        k = key(item)
        if k in seen:
            v.append(Violation(field=f"{path}[{i}]", code=DUPLICATE, reason=f"repeats {path.rsplit('.', 1)[-1]}[{seen[k]}]; list each value once"))
        else:
            seen[k] = i


def workload_bound_violations(w: pb.Workload, prefix: str) -> list[Violation]:
    v: list[Violation] = []
    if len(w.preset) > MAX_NAME_CHARS:
        v.append(Violation(field=f"{prefix}.preset", code=TOO_LONG, reason=f"is {len(w.preset)} characters long; at most {MAX_NAME_CHARS}"))
    if len(w.display_name) > MAX_DISPLAY_NAME_CHARS:
        v.append(Violation(field=f"{prefix}.display_name", code=TOO_LONG, reason=f"is {len(w.display_name)} characters long; at most {MAX_DISPLAY_NAME_CHARS}"))
    if len(w.io_size_mix) > MAX_IO_SIZES:
        v.append(Violation(field=f"{prefix}.io_size_mix", code=TOO_MANY, reason=f"holds {len(w.io_size_mix)} entries; at most {MAX_IO_SIZES} are allowed"))
    else:
        for i, share in enumerate(w.io_size_mix):
            POSITIVE.check(v, f"{prefix}.io_size_mix[{i}].weight", share.weight)
    for name in ("read_fraction", "random_fraction", "hot_write_fraction", "hot_space_fraction", "working_set_fraction",
                 "growth_fraction_per_year"):
        if w.HasField(name):  # finite here; the engine checks the range of the merged workload
            _FINITE.check(v, f"{prefix}.{name}", getattr(w, name))
    for name, allowed in _WORKLOAD_RANGES.items():
        if w.HasField(name):
            allowed.check(v, f"{prefix}.{name}", getattr(w, name))
    return v


def check_plan_request_bounds(spec: pb.PlanSpec, prefix: str = "plan.spec") -> None:
    """Size and range checks on a PlanSpec that run before any candidate is enumerated."""
    v: list[Violation] = []
    if spec.HasField("workload"):
        v.extend(workload_bound_violations(spec.workload, f"{prefix}.workload"))
    c = spec.constraints
    for name, allowed in _CONSTRAINT_RANGES.items():
        allowed.check(v, f"{prefix}.constraints.{name}", getattr(c, name))
    for name in ("latency_percentile", "endurance_margin_fraction", "max_data_loss_probability", "max_array_loss_probability"):
        _FINITE.check(v, f"{prefix}.constraints.{name}", getattr(c, name))
    v.extend(fill_target_violations(c, f"{prefix}.constraints"))
    for name in ("latency_target", "worst_second_latency_target"):
        if c.HasField(name):
            _duration(v, f"{prefix}.constraints.{name}", getattr(c, name))
    if c.HasField("worst_second_horizon"):
        d = c.worst_second_horizon
        if d.nanos < 0 or d.nanos >= 1_000_000_000:
            v.append(Violation(field=f"{prefix}.constraints.worst_second_horizon", reason=f"nanos must be in [0, 1e9), got {d.nanos}"))
        else:
            check_range(v, f"{prefix}.constraints.worst_second_horizon", duration_s(d), 2, simulation.MAX_HORIZON_S, unit="s")
    check_range(v, f"{prefix}.electricity_usd_per_kwh", spec.electricity_usd_per_kwh, 0, 100)
    cs = spec.candidate_space
    cp = f"{prefix}.candidate_space"
    for i, name in enumerate(cs.drive_models[:MAX_DRIVE_MODELS]):
        if len(name) > MAX_NAME_CHARS:
            v.append(Violation(field=f"{cp}.drive_models[{i}]", code=TOO_LONG, reason=f"is {len(name)} characters long; at most {MAX_NAME_CHARS}"))
    for i, name in enumerate(cs.layouts[:MAX_LAYOUTS]):
        if len(name) > 32:
            v.append(Violation(field=f"{cp}.layouts[{i}]", code=TOO_LONG, reason=f"is {len(name)} characters long; a layout is raid0..raid6 or ec:K+M"))
    _unique(v, f"{cp}.drive_models", list(cs.drive_models), MAX_DRIVE_MODELS)
    _unique(v, f"{cp}.layouts", list(cs.layouts), MAX_LAYOUTS, key=lambda x: x.strip().lower())
    _unique(v, f"{cp}.group_widths", list(cs.group_widths), MAX_GROUP_WIDTHS)
    _unique(v, f"{cp}.over_provisioning_fractions", list(cs.over_provisioning_fractions), MAX_OP_FRACTIONS)
    for i, x in enumerate(cs.over_provisioning_fractions[:MAX_OP_FRACTIONS]):
        check_range(v, f"{cp}.over_provisioning_fractions[{i}]", x, 0, 0.9, hi_open=True)
    v.extend(bay_violations(cs, cp))
    _unique(v, f"{prefix}.custom_drives", [d.name for d in spec.custom_drives], MAX_CUSTOM_DRIVES)
    if v:
        raise InvalidInputError(v)


_WORKLOAD_FIELDS = (
    ("read_fraction", "read_fraction"), ("random_fraction", "random_fraction"), ("queue_depth", "queue_depth"),
    ("target_iops", "target_iops"), ("daily_write_bytes", "daily_write_bytes"), ("hot_write_fraction", "hot_write_fraction"),
    ("hot_space_fraction", "hot_space_fraction"), ("working_set_fraction", "working_set_fraction"),
    ("growth_fraction_per_year", "growth_per_year"),
)


def workload_mapping(w: pb.Workload) -> dict[str, Any]:
    """The workload message as the plain mapping the engine builds a Workload from."""
    out: dict[str, Any] = {}
    for api_name, engine_name in _WORKLOAD_FIELDS:
        if w.HasField(api_name):
            out[engine_name] = getattr(w, api_name)
    if w.io_size_mix:
        out["io_size_mix"] = [(s.io_bytes, s.weight) for s in w.io_size_mix]
    if w.display_name:
        out["name"] = w.display_name
    return out


def workload_from_proto(w: pb.Workload, prefix: str = "workload") -> Workload:
    """A Workload from a preset and/or explicit fields; errors name ``prefix.field``."""
    bounds = workload_bound_violations(w, prefix)
    if bounds:
        raise InvalidInputError(bounds)
    fields = workload_mapping(w)
    if w.preset:
        from arrayplan_engine import presets

        try:
            base = presets.get_preset(w.preset)
        except InvalidInputError as exc:
            raise InvalidInputError([v.at(f"{prefix}.preset") for v in exc.violations]) from None
        merged = {f: getattr(base, f) for f in ("name", "read_fraction", "random_fraction", "io_size_mix", "queue_depth",
                                                   "target_iops", "daily_write_bytes", "hot_write_fraction", "hot_space_fraction",
                                                   "working_set_fraction", "growth_per_year", "source")}
        merged.update(fields)
        fields = merged
    try:
        return workload_from_mapping(fields, "workload")
    except InvalidInputError as exc:
        raise reprefix(exc, prefix.rsplit("workload", 1)[0].rstrip(".")) from None


def plan_request_from_proto(spec: pb.PlanSpec, prefix: str = "plan.spec", catalog: Catalog | None = None) -> plan_request.PlanRequest:
    violations: list[Violation] = []
    workload: Workload | None = None
    custom: tuple[Drive, ...] = ()
    try:
        custom = custom_drives_from_proto(spec.custom_drives, prefix, catalog)
    except InvalidInputError as exc:
        violations.extend(exc.violations)
    if not spec.HasField("workload"):
        violations.append(Violation(field=f"{prefix}.workload", code=REQUIRED, reason="is required (a preset or read_fraction and friends)"))
    else:
        try:
            workload = workload_from_proto(spec.workload, f"{prefix}.workload")
        except InvalidInputError as exc:
            violations.extend(exc.violations)
    if not spec.HasField("constraints"):
        violations.append(Violation(field=f"{prefix}.constraints", code=REQUIRED, reason="is required (at least usable_capacity_bytes)"))
    c = spec.constraints
    try:  # the bounds include durations in (0, 3600 s] when set
        check_plan_request_bounds(spec, prefix)
    except InvalidInputError as exc:
        violations.extend(x for x in exc.violations if x not in violations)
    if violations:
        raise InvalidInputError(violations)
    assert workload is not None
    cs = spec.candidate_space
    req = plan_request.PlanRequest(
        workload=workload,
        constraints=plan_request.Constraints(
            usable_capacity_bytes=float(c.usable_capacity_bytes), min_iops=c.min_iops,
            latency_percentile=c.latency_percentile or 99.0,
            latency_target_s=duration_s(c.latency_target) if c.HasField("latency_target") else 0.0,
            worst_second_latency_target_s=duration_s(c.worst_second_latency_target) if c.HasField("worst_second_latency_target") else 0.0,
            max_purchase_cost_usd=c.max_purchase_cost_usd,
            max_drive_count=c.max_drive_count, max_power_w=c.max_power_w, max_data_loss_probability=c.max_data_loss_probability,
            fail_slow_field_rates=c.fail_slow_field_rates,
            **({"worst_second_horizon_s": duration_s(c.worst_second_horizon)} if c.HasField("worst_second_horizon") else {}),
            # Unset: the engine's default margin applies (the planner writes it into the stored spec).
            **({"endurance_margin_fraction": c.endurance_margin_fraction} if c.HasField("endurance_margin_fraction") else {}),
            **({"max_array_loss_probability": c.max_array_loss_probability} if c.HasField("max_array_loss_probability") else {}),
            **({"max_fill_fraction": c.max_fill_fraction} if c.HasField("max_fill_fraction") else {}),
        ),
        service_life_years=spec.service_life_years or 5,
        objective=_OBJECTIVES.get(spec.objective, plan_request.Objective.TOTAL_COST_OF_OWNERSHIP),
        candidate_space=plan_request.CandidateSpace(
            drive_models=tuple(cs.drive_models), layouts=tuple(cs.layouts), group_widths=tuple(cs.group_widths),
            min_drive_count=cs.min_drive_count or 1, max_drive_count=cs.max_drive_count or plan_request.DEFAULT_MAX_DRIVE_COUNT,
            over_provisioning_fractions=tuple(cs.over_provisioning_fractions),
            **({"bay_cost_usd": cs.bay_cost_usd} if cs.HasField("bay_cost_usd") else {}),
            **({"bay_power_w": cs.bay_power_w} if cs.HasField("bay_power_w") else {}),
        ),
        seed=spec.seed,
        max_recommendations=spec.max_recommendations or 10,
        electricity_usd_per_kwh=spec.electricity_usd_per_kwh if spec.electricity_usd_per_kwh else 0.12,
        drives_per_hot_spare=spec.drives_per_hot_spare if spec.HasField("drives_per_hot_spare") else 24,
        custom_drives=custom,
        exhaustive=spec.exhaustive,
        coordinated_reads=spec.coordinated_reads,
        discards=spec.discards or "auto",
    )
    if cs.HasField("servers"):  # arrays that span servers: cluster candidates beside the boxes
        from .cluster_convert import cluster_space_from_proto

        req = dataclasses.replace(req, cluster=cluster_space_from_proto(cs, prefix))
    if spec.objective not in _OBJECTIVES:
        raise InvalidInputError.one(f"{prefix}.objective", f"unknown objective {spec.objective}; known: {', '.join(pb.Objective.keys())}")
    try:
        plan_request.validate_request(req, catalog)
    except InvalidInputError as exc:
        raise reprefix(exc, prefix) from None
    return req


def recommendation_to_proto(r: ranking.Recommendation) -> pb.Recommendation:
    e = r.evaluation
    c = e.candidate
    msg = pb.Recommendation(
        rank=r.rank, drive_model=c.drive_model, drive_display_name=e.drive_display_name, drive_count=c.drive_count,
        layout=c.layout, group_width=c.group_width, usable_capacity_bytes=int(e.usable_capacity_bytes),
        predicted_iops=_finite(e.predicted_iops.value), endurance_years=e.endurance_years if math.isfinite(e.endurance_years) else 1e9,
        life_used_fraction=_finite(e.life_used_fraction), purchase_cost_usd=e.purchase_cost_usd, power_cost_usd=e.power_cost_usd,
        replacement_cost_usd=e.replacement_cost_usd, total_cost_usd=e.total_cost_usd, power_w=e.power_w,
        meets_constraints=e.meets_constraints, binding_constraint=e.binding_constraint,
        headroom_fraction=_finite(e.headroom_fraction), explanation=r.explanation, warnings=list(r.warnings),
        member_ios_per_host_io=e.member_ios_per_host_io, data_loss_probability=e.data_loss_probability,
        array_loss_probability=e.array_loss_probability, unreadable_after_rebuild_probability=e.unreadable_after_rebuild_probability,
        over_provisioning_fraction=c.over_provisioning_fraction, wear_out_year=e.wear_out_year or 0,
        replacement_drive_count=e.replacement_drive_count, hot_spare_count=e.hot_spare_count, cost_per_usable_tb_usd=_finite(e.cost_per_usable_tb_usd),
        cost_per_iops_usd=_finite(e.cost_per_iops_usd), pareto_optimal=e.pareto_optimal,
        mttdl_hours=e.mttdl_hours if math.isfinite(e.mttdl_hours) else 1e300, stripe_unit_bytes=c.stripe_unit_bytes,
        predicted_iops_low=_finite(e.predicted_iops.low), predicted_iops_high=_finite(e.predicted_iops.high),
        simulation_converged=e.simulation_converged, simulation_replications=e.simulation_replications,
        simulation_precision=e.simulation_precision,
        coordinated_reads_applied=e.coordinated_reads, reconstructed_read_fraction=_finite(e.reconstructed_read_fraction),
    )
    rebuild = to_duration(e.rebuild_s)
    if rebuild is not None:
        msg.rebuild_duration.CopyFrom(rebuild)
    for y in e.years:
        ym = msg.years.add(year=y.year, fill_fraction=y.fill_fraction, required_iops=y.required_iops,
                           write_amplification=y.write_amplification, life_used_fraction=_finite(y.life_used_fraction),
                           cumulative_life_used_fraction=_finite(y.cumulative_life_used_fraction), predicted_iops=_finite(y.predicted_iops.value))
        ym.predicted_iops_low = _finite(y.predicted_iops.low)
        ym.predicted_iops_high = _finite(y.predicted_iops.high)
        ym.replications = y.replications
        ym.simulation_stop_reason = y.stop_reason
        ym.mapped_fraction = _finite(y.mapped_fraction)
        set_interval_durations(ym, "latency_at_percentile", y.latency_at_percentile_s)
    # each interval as the API's three fields: NAME, NAME_low, NAME_high (the wire format)
    for name, figure in (("latency_p50", e.latency_p50_s), ("latency_at_percentile", e.latency_at_percentile_s),
                         ("worst_second_latency", e.worst_second_latency_s),
                         ("latency_at_percentile_with_fail_slow", e.latency_at_percentile_fail_slow_s),
                         ("latency_at_percentile_without_coordinated_reads", e.latency_at_percentile_without_coordinated_reads_s)):
        set_interval_durations(msg, name, figure)
    horizon = to_duration(e.worst_second_horizon_s)
    if horizon is not None:
        msg.worst_second_horizon.CopyFrom(horizon)
    add_checks(msg, e.checks)
    return msg



MAX_PARETO = 50


def outcome_to_proto(o: ranking.PlanOutcome) -> pb.PlanResult:
    result = pb.PlanResult(recommendations=[recommendation_to_proto(r) for r in o.recommendations],
                           constraints_met=o.constraints_met, summary=o.summary, models=list(o.models),
                           pareto_front=[recommendation_to_proto(r) for r in o.pareto_front[:MAX_PARETO]])
    if o.hdd_equivalence is not None:
        h = o.hdd_equivalence
        result.hdd_equivalence.CopyFrom(pb.HddEquivalence(hdd_model=h.hdd_model, drive_count=h.drive_count, layout=h.layout,
                                                          purchase_cost_usd=h.purchase_cost_usd, power_w=h.power_w,
                                                          explanation=h.explanation, drive_count_low=h.drive_count_low))
    for bound, count in o.removed_by_bound:
        result.removed_by_bound.add(bound=bound, candidate_count=count)
    for m in o.nearest_misses:
        c = m.candidate
        result.nearest_misses.add(drive_model=c.drive_model, layout=c.layout, group_width=c.group_width, drive_count=c.drive_count,
                                  failed_bounds=[k.bound for k in m.failed], explanation=m.explanation())
    result.assumptions.extend(o.assumptions)
    result.candidates_not_simulated = o.candidates_not_simulated
    result.search_note = o.search_note
    return result


def _drive_fields(spec: Any, path: str) -> tuple[dict[str, Any], list[Violation]]:
    """A ``DriveSpec`` as catalog-file fields (a provenance entry makes its field a table)."""
    violations: list[Violation] = []
    fields: dict[str, Any] = {}
    for fd in spec.DESCRIPTOR.fields:
        if fd.name == "provenance":
            continue
        if fd.has_presence:
            if spec.HasField(fd.name):
                fields[fd.name] = getattr(spec, fd.name)
        elif getattr(spec, fd.name):
            fields[fd.name] = getattr(spec, fd.name)
    for j, p in enumerate(spec.provenance):
        if p.field not in fields:
            violations.append(Violation(field=f"{path}.provenance[{j}].field",
                                        reason=f"must name a field this drive gives a value for, got {p.field!r}"))
            continue
        table: dict[str, Any] = {"value": fields[p.field]}
        for key in ("source", "quote", "reason"):
            if getattr(p, key):
                table[key] = getattr(p, key)
        if p.assumed:
            table["assumed"] = True
        fields[p.field] = table
    return fields, violations


def custom_drives_from_proto(specs: Any, prefix: str = "plan.spec", catalog: Catalog | None = None) -> tuple[Drive, ...]:
    """``PlanSpec.custom_drives`` as engine drives, every field validated: one
    ``InvalidInputError`` naming ``plan.spec.custom_drives[i].FIELD`` and the allowed range for
    every problem, a name the catalog (or an earlier custom drive) already has included, and what
    the drive models will demand of it when the plan runs (``drive_model_violations``)."""
    catalog = catalog or builtin_catalog()
    drives: list[Drive] = []
    violations: list[Violation] = []
    for i, spec in enumerate(specs):
        path = f"{prefix}.custom_drives[{i}]"
        fields, problems = _drive_fields(spec, path)
        violations.extend(problems)
        if problems:
            continue
        try:
            drive = drive_from_fields(fields, path, bare=USER_PROVENANCE)
        except InvalidInputError as exc:
            violations.extend(exc.violations)
            continue
        model_violations = drive_model_violations(drive, path, supplied=set(fields))
        if model_violations:
            violations.extend(model_violations)
        else:
            drives.append(drive)
    if violations:
        raise InvalidInputError(violations)
    try:
        with_user_drives(drives, base=catalog, field_prefix=f"{prefix}.custom_drives")
    except InvalidInputError as exc:
        raise InvalidInputError(exc.violations) from None
    return tuple(drives)


def custom_drive_model_violations(specs: Any, prefix: str = "plan.spec") -> list[Violation]:
    """Only ``drive_model_violations`` of the custom drives whose fields are valid: what a plan
    file's loader checks on its own, so such a drive is refused with its line before any server
    sees the plan (field errors and name clashes are the server's, ``custom_drives_from_proto``)."""
    out: list[Violation] = []
    for i, spec in enumerate(specs):
        path = f"{prefix}.custom_drives[{i}]"
        fields, problems = _drive_fields(spec, path)
        if problems:
            continue
        try:
            drive = drive_from_fields(fields, path, bare=USER_PROVENANCE)
        except InvalidInputError:
            continue
        out.extend(drive_model_violations(drive, path, supplied=set(fields)))
    return out


def drive_to_proto(d: Drive) -> pb.Drive:
    msg = pb.Drive(
        name=d.name, display_name=d.display_name, vendor=d.vendor or "", family=d.family or "",
        kind=pb.DRIVE_KIND_SSD if d.kind == "ssd" else pb.DRIVE_KIND_HDD, interface=d.interface or "",
        capacity_bytes=int(d.capacity_bytes), raw_nand_bytes=int(d.raw_nand_bytes or 0),
        random_read_iops=float(d.random_read_iops or 0), random_write_iops=float(d.random_write_iops or 0),
        steady_random_write_iops=float(d.steady_random_write_iops or 0),
        seq_read_bytes_per_second=float(d.seq_read_bytes_per_s or 0), seq_write_bytes_per_second=float(d.seq_write_bytes_per_s or 0),
        endurance_bytes_written=float(d.endurance_bytes_written or 0), price_usd=float(d.price_usd or 0),
        price_year=int(d.price_year or 0), active_power_w=float(d.active_power_w or 0), idle_power_w=float(d.idle_power_w or 0),
        annual_failure_rate=float(d.annual_failure_rate or 0), gc_policy=d.gc_policy or "", rpm=int(d.rpm or 0),
        spare_bytes_per_user_byte=float(d.spare_bytes_per_user_byte or 0) if d.kind == "ssd" else 0.0,
        recording=d.recording or "", nand_type=d.nand_type or "",
        endurance_rating_workload=d.endurance_rating_workload or "",
    )
    for field_name, p in sorted(d.provenance.items()):
        msg.provenance.add(field=field_name, source=p.source, quote=p.quote, assumed=p.assumed, reason=p.reason)
    return msg
