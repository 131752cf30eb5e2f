"""Output for people (table), pipelines (JSON) and pull requests (Markdown)."""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from typing import Any

from arrayplan.v1 import planner_pb2 as pb

from .. import jsonout


def stdout_console() -> Any:
    """A rich console for stdout: the terminal's width on a TTY; piped, as wide as the content
    needs (no wrapping, no padding to a fixed width, no colour codes)."""
    import sys

    from rich.console import Console

    if sys.stdout.isatty():
        return Console()
    return Console(width=100_000, no_color=True, color_system=None, highlight=False, soft_wrap=True)


def _ms(d: Any) -> str:
    s = d.seconds + d.nanos / 1e9
    return f"{s * 1e3:.3g}" if s > 0 else "-"


def _tb(b: float) -> str:
    return f"{b / 1e12:.2f}"


def plan_json(plan: pb.Plan) -> str:
    """The plan under the one JSON convention (arrayplan_services.jsonout, docs/json.md)."""
    return jsonout.dumps(plan)


def seconds(value: float | None) -> str:
    """A duration with the unit that reads best: ns, µs, ms, s, min or h."""
    if value is None or not math.isfinite(value):
        return "-"
    a = abs(value)
    if a == 0:
        return "0 s"
    for limit, unit, scale in ((1e-6, "ns", 1e9), (1e-3, "µs", 1e6), (1.0, "ms", 1e3), (120.0, "s", 1.0), (7200.0, "min", 1 / 60)):
        if a < limit:
            return f"{value * scale:.4g} {unit}"
    return f"{value / 3600:.4g} h"


def _bytes(value: float) -> str:
    for unit, scale in (("PB", 1e15), ("TB", 1e12), ("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
        if abs(value) >= scale:
            return f"{value / scale:.4g} {unit} ({value:,.0f} B)"
    return f"{value:,.0f} B"


def _flatten(d: Mapping[str, Any], prefix: str = "") -> Iterable[tuple[str, Any]]:
    for k, v in d.items():
        if isinstance(v, Mapping):
            yield from _flatten(v, f"{prefix}{k}.")
        else:
            yield f"{prefix}{k}", v


def text_lines(d: Mapping[str, Any]) -> list[str]:
    """``key value`` lines of a JSON-convention dict for people: a ``_s`` key loses its suffix and
    its value carries the unit (``latency.p99  628.7 µs``), ``_bytes`` in decimal units with the
    exact count, ``_fraction`` as a percentage; lists are left to ``--format json``."""
    lines = []
    for key, val in _flatten(d):
        if isinstance(val, list):
            continue
        label = key
        if key.endswith("_s") and (val is None or isinstance(val, (int, float))):
            label, shown = key[:-2], seconds(val)
        elif key.endswith("_bytes") and isinstance(val, (int, float)) and not isinstance(val, bool):
            shown = _bytes(float(val))
        elif key.endswith("_fraction") and isinstance(val, float):
            shown = f"{val:.4%}"
        elif isinstance(val, float):
            shown = f"{val:.6g}"
        else:
            shown = "-" if val is None else str(val)
        lines.append(f"{label:42s} {shown}")
    return lines


_COLUMNS = ("#", "drive", "n", "layout", "usable TB", "IOPS", "p50 ms", "pXX ms", "life used", "P(loss)", "TCO $", "binding",
            "headroom", "ok")


def _rows(plan: pb.Plan) -> list[list[str]]:
    rows = []
    for r in plan.result.recommendations:
        layout = r.layout if r.layout in ("raid0", "raid10") or r.layout.startswith("ec:") else f"{r.layout}({r.group_width})"
        rows.append([
            str(r.rank), r.drive_display_name or r.drive_model, str(r.drive_count), layout, _tb(r.usable_capacity_bytes),
            f"{r.predicted_iops:,.0f}", _ms(r.latency_p50), _ms(r.latency_at_percentile), f"{r.life_used_fraction:.0%}",
            f"{r.data_loss_probability:.2g}", f"{r.total_cost_usd:,.0f}", r.binding_constraint,
            f"{r.headroom_fraction:+.0%}" if abs(r.headroom_fraction) < 1e6 else "n/a",
            "yes" if r.meets_constraints else "NO",
        ])
    return rows


def _percentile_label(plan: pb.Plan) -> str:
    p = plan.spec.constraints.latency_percentile or 99.0
    return f"p{p:g} ms"


def applied_constraints(plan: pb.Plan) -> str:
    """The constraints the answer applied that a reader might not have written (defaults)."""
    c = plan.spec.constraints
    margin = c.endurance_margin_fraction
    parts = [f"endurance margin {margin:.0%} of rated endurance kept in reserve (life used at most {1 - margin:.0%}; "
             "constraints.endurance_margin_fraction)"]
    parts.append(f"latency at p{c.latency_percentile or 99.0:g}")
    return "applied: " + "; ".join(parts)


def plan_markdown(plan: pb.Plan, warnings: Iterable[str] = ()) -> str:
    """Markdown for a pull-request comment: the table with P(data loss), the top explanations, the
    constraints applied and every warning from the plan file's import."""
    cols = list(_COLUMNS)
    cols[7] = _percentile_label(plan)
    out = [f"### arrayplan: {plan.name}", "", plan.result.summary, ""]
    warnings = list(warnings)
    if warnings:
        out += ["> [!WARNING]", *[f"> {w}  " for w in warnings], ""]
    if plan.result.recommendations:
        out += ["| " + " | ".join(cols) + " |", "|" + "---|" * len(cols)]
        out += ["| " + " | ".join(row) + " |" for row in _rows(plan)]
        out += [""]
    out += [f"{r.rank}. {r.explanation}" for r in plan.result.recommendations[:3]]
    if plan.result.recommendations:
        best = plan.result.recommendations[0]
        out += ["", f"P(data loss) over the service life, best: {best.data_loss_probability:.3g} (MTTDL {best.mttdl_hours:,.0f} h)"]
    out += ["", applied_constraints(plan)]
    out += ["", f"trace id `{plan.trace_id}` · run `{plan.name}` · models: {', '.join(plan.result.models)}"]
    return "\n".join(out) + "\n"


def plan_table(plan: pb.Plan, console: Any, warnings: Iterable[str] = ()) -> None:
    from rich.table import Table

    for w in warnings:
        console.print(f"warning: {w}", soft_wrap=True, highlight=False, markup=False)
    if not plan.result.recommendations:
        console.print(plan.result.summary, soft_wrap=True, highlight=False)
        console.print(applied_constraints(plan), soft_wrap=True, highlight=False)
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
        console.print(f"{r.rank}. {r.explanation}", soft_wrap=True, highlight=False)  # one line each: the terminal wraps, not rich
    console.print(plan.result.summary, soft_wrap=True, highlight=False)
    console.print(applied_constraints(plan), soft_wrap=True, highlight=False)
    console.print(f"trace id: {plan.trace_id}   stored run: {plan.name}")
