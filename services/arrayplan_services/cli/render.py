"""Output for people (table), pipelines (JSON) and pull requests (Markdown)."""

from __future__ import annotations

import json
from typing import Any

from google.protobuf import json_format

from arrayplan.v1 import planner_pb2 as pb


def _ms(d: Any) -> str:
    s = d.seconds + d.nanos / 1e9
    return f"{s * 1e3:.3g}" if s > 0 else "-"


def _tb(b: float) -> str:
    return f"{b / 1e12:.2f}"


def plan_json(plan: pb.Plan) -> str:
    return json.dumps(json_format.MessageToDict(plan, preserving_proto_field_name=True), indent=2, sort_keys=False)


_COLUMNS = ("#", "drive", "n", "layout", "usable TB", "IOPS", "p50 ms", "pXX ms", "life used", "TCO $", "binding", "headroom", "ok")


def _rows(plan: pb.Plan) -> list[list[str]]:
    rows = []
    for r in plan.result.recommendations:
        layout = r.layout if r.layout in ("raid0", "raid10") or r.layout.startswith("ec:") else f"{r.layout}({r.group_width})"
        rows.append([
            str(r.rank), r.drive_display_name or r.drive_model, str(r.drive_count), layout, _tb(r.usable_capacity_bytes),
            f"{r.predicted_iops:,.0f}", _ms(r.latency_p50), _ms(r.latency_at_percentile), f"{r.life_used_fraction:.0%}",
            f"{r.total_cost_usd:,.0f}", r.binding_constraint, f"{r.headroom_fraction:+.0%}" if abs(r.headroom_fraction) < 1e6 else "n/a",
            "yes" if r.meets_constraints else "NO",
        ])
    return rows


def _percentile_label(plan: pb.Plan) -> str:
    p = plan.spec.constraints.latency_percentile or 99.0
    return f"p{p:g} ms"


def plan_markdown(plan: pb.Plan) -> str:
    cols = list(_COLUMNS)
    cols[7] = _percentile_label(plan)
    out = [f"### arrayplan: {plan.name}", "", plan.result.summary, ""]
    if plan.result.recommendations:
        out += ["| " + " | ".join(cols) + " |", "|" + "---|" * len(cols)]
        out += ["| " + " | ".join(row) + " |" for row in _rows(plan)]
        out += [""]
    out += [f"{r.rank}. {r.explanation}" for r in plan.result.recommendations[:3]]
    out += ["", f"trace id `{plan.trace_id}` · run `{plan.name}` · models: {', '.join(plan.result.models)}"]
    return "\n".join(out) + "\n"


def plan_table(plan: pb.Plan, console: Any) -> None:
    from rich.table import Table

    if not plan.result.recommendations:
        console.print(plan.result.summary)
        console.print(f"trace id: {plan.trace_id}   stored run: {plan.name}")
        return
    cols = list(_COLUMNS)
    cols[7] = _percentile_label(plan)
    table = Table(title=f"arrayplan {plan.name}", title_justify="left")
    for c in cols:
        table.add_column(c, justify="right" if c not in ("drive", "layout", "binding") else "left")
    for row in _rows(plan):
        table.add_row(*row, style=None if row[-1] == "yes" else "red")
    console.print(table)
    for r in plan.result.recommendations[:3]:
        console.print(f"{r.rank}. {r.explanation}")
    console.print(plan.result.summary)
    console.print(f"trace id: {plan.trace_id}   stored run: {plan.name}")
