"""The CapacityPlan custom resource: names, spec <-> ``arrayplan.v1.PlanSpec``, status documents.

``spec`` is a plan file as an object (the same field names and unit strings, see
``api/planfile.py``), so the one parser that reads plan files reads CapacityPlans too and reports
problems by field path. ``status`` is camelCase, as Kubernetes status is.
"""

from __future__ import annotations

import datetime as dt
import json
import re
from collections.abc import Mapping
from typing import Any

from google.protobuf import json_format

from arrayplan.v1 import planner_pb2 as pb

GROUP = "arrayplan.io"
VERSION = "v1alpha1"
PLURAL = "capacityplans"
KIND = "CapacityPlan"
API_VERSION = f"{GROUP}/{VERSION}"

# Conditions (type -> meaning); reasons are CamelCase as Kubernetes conditions use.
ACCEPTED, RUNNING, SUCCEEDED, FAILED = "Accepted", "Running", "Succeeded", "Failed"
CONDITION_TYPES = (ACCEPTED, RUNNING, SUCCEEDED, FAILED)
TERMINAL_PHASES = (SUCCEEDED, FAILED)

# Failure reasons a client (``arrayplan submit``) treats as bad input (exit 2).
BAD_INPUT_REASONS = ("InvalidSpec", "SearchSpaceTooLarge")

_RUN_ID_CHARS = re.compile(r"[^a-z0-9-]+")


class SpecError(Exception):
    """A CapacityPlan spec the planner cannot take: ``violations`` are (field path, reason), with
    paths from the object root (``spec.workload.read_fraction``)."""

    def __init__(self, violations: list[tuple[str, str]]) -> None:
        self.violations = violations
        super().__init__("; ".join(f"{f}: {r}" if f else r for f, r in violations))


def run_id(obj: Mapping[str, Any]) -> str:
    """The planner run id of an object's current generation: the same object and generation always
    give the same id, so a controller that restarts (or a second replica) finds the run it started
    instead of starting another one. Fits the planner's plan id rule (4-63 of [a-z0-9-])."""
    meta = obj["metadata"]
    name = _RUN_ID_CHARS.sub("-", str(meta["name"]).lower()).strip("-")[:32].strip("-") or "plan"
    uid = str(meta["uid"]).replace("-", "")[:8]
    return f"cp-{name}-{uid}-g{int(meta['generation'])}"


def spec_to_plan_spec(spec: Any) -> pb.PlanSpec:
    """A CapacityPlan spec -> PlanSpec, with the plan-file parser; raises ``SpecError``."""
    from ..api.planfile import PlanFileError, plan_spec_from_text

    if not isinstance(spec, Mapping):
        raise SpecError([("spec", "must be an object with workload and constraints")])
    workload = spec.get("workload")
    if isinstance(workload, Mapping):
        for key in ("fio", "trace"):
            if key in workload:
                reason = ("files cannot be read by the controller; `arrayplan submit` reads fio job files and traces "
                          "on the client and sends workload fields")
                raise SpecError([(f"spec.workload.{key}", reason)])
    try:
        plan_spec, _warnings = plan_spec_from_text(json.dumps(spec), "spec")
    except PlanFileError as exc:
        raise SpecError([(f"spec.{f}" if f else "spec", r) for _line, f, r in exc.problems]) from None
    return plan_spec


def _bytes_value(value: Any) -> int | str:
    f = float(value)
    return int(f) if f.is_integer() else repr(f)


def plan_spec_to_spec(plan_spec: pb.PlanSpec) -> dict[str, Any]:
    """PlanSpec -> a CapacityPlan spec that ``spec_to_plan_spec`` reads back to the same message."""
    data = json_format.MessageToDict(plan_spec, preserving_proto_field_name=True)

    def fix(msg_desc: Any, d: dict[str, Any]) -> None:
        for key, value in list(d.items()):
            fd = msg_desc.fields_by_name[key]
            if fd.message_type is not None and fd.message_type.full_name == "google.protobuf.Duration":
                d[key] = value  # "0.005s": the plan-file duration syntax reads it
            elif fd.message_type is not None:
                for item in value if isinstance(value, list) else [value]:
                    fix(fd.message_type, item)
            elif key.endswith("_bytes"):
                d[key] = _bytes_value(value)
            elif fd.type in (fd.TYPE_INT64, fd.TYPE_INT32):
                d[key] = [int(v) for v in value] if isinstance(value, list) else int(value)
            elif fd.enum_type is not None and fd.enum_type.name == "Objective":
                d[key] = str(value).removeprefix("OBJECTIVE_").lower()
    fix(pb.PlanSpec.DESCRIPTOR, data)
    return data


def field_from_api(field: str) -> str:
    """The planner's field path (``plan.spec.workload.read_fraction``) -> the object's
    (``spec.workload.read_fraction``)."""
    return "spec." + field.removeprefix("plan.spec.") if field.startswith("plan.spec") else field


def now_rfc3339() -> str:
    return dt.datetime.now(dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def condition(type_: str, status: bool | None, reason: str, message: str, generation: int) -> dict[str, Any]:
    return {"type": type_, "status": {True: "True", False: "False", None: "Unknown"}[status], "reason": reason,
            "message": message[:32000], "observedGeneration": generation}


def merge_conditions(old: list[dict[str, Any]] | None, new: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Conditions in a fixed order; lastTransitionTime moves only when a condition's status changes."""
    by_type = {c.get("type"): c for c in (old or [])}
    now = now_rfc3339()
    for c in new:
        prev = by_type.get(c["type"])
        c = dict(c)
        c["lastTransitionTime"] = prev["lastTransitionTime"] if prev and prev.get("status") == c["status"] and prev.get("lastTransitionTime") else now
        by_type[c["type"]] = c
    return [by_type[t] for t in CONDITION_TYPES if t in by_type]


def _latency(d: Any) -> str:
    s = d.ToNanoseconds() / 1e9
    return f"{s * 1e3:.3g}ms" if s < 1 else f"{s:.3g}s"


def best_line(rec: pb.Recommendation) -> str:
    group = f" (groups of {rec.group_width})" if rec.group_width and rec.group_width != rec.drive_count else ""
    return f"{rec.drive_count} x {rec.drive_model} {rec.layout}{group}"


def recommendation_status(rec: pb.Recommendation) -> dict[str, Any]:
    return {
        "rank": rec.rank, "driveModel": rec.drive_model, "driveCount": rec.drive_count, "layout": rec.layout,
        "groupWidth": rec.group_width, "usableCapacityBytes": int(rec.usable_capacity_bytes),
        "predictedIops": round(rec.predicted_iops, 1), "latencyAtPercentile": _latency(rec.latency_at_percentile),
        "purchaseCostUsd": round(rec.purchase_cost_usd, 2), "totalCostUsd": round(rec.total_cost_usd, 2),
        "powerW": round(rec.power_w, 2), "enduranceYears": round(rec.endurance_years, 3),
        "meetsConstraints": rec.meets_constraints, "bindingConstraint": rec.binding_constraint,
        "headroomFraction": round(rec.headroom_fraction, 4), "explanation": rec.explanation[:1000],
    }


def progress_status(p: pb.PlanProgress) -> dict[str, int]:
    return {"candidatesTotal": p.candidates_total, "candidatesPruned": p.candidates_pruned,
            "candidatesToEvaluate": p.candidates_to_evaluate, "candidatesEvaluated": p.candidates_evaluated}


def timestamp_rfc3339(ts: Any) -> str | None:
    if not ts.seconds and not ts.nanos:
        return None
    return str(ts.ToDatetime(tzinfo=dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ"))


def camel_reason(upper_snake: str, default: str = "RunFailed") -> str:
    """SERVER_RESTARTED -> ServerRestarted (the planner's reasons in the conditions' style)."""
    if not upper_snake:
        return default
    return "".join(part.capitalize() for part in upper_snake.lower().split("_"))
