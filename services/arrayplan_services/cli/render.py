"""Output for people (table), pipelines (JSON) and pull requests (Markdown)."""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping
from typing import Any

from arrayplan.v1 import planner_pb2 as pb

from .. import jsonout
from ..report import markdown as md
from ..report.columns import columns, row


def stdout_console() -> Any:
    """A rich console for stdout: the terminal's width on a TTY; piped, as wide as the content
    needs (no wrapping, no padding to a fixed width, no colour codes)."""
    import sys

    from rich.console import Console

    if sys.stdout.isatty():
        return Console()
    return Console(width=100_000, no_color=True, color_system=None, highlight=False, soft_wrap=True)


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


def _table(plan: pb.Plan) -> tuple[list[tuple[str, str]], list[tuple[pb.Recommendation, list[str]]]]:
    """The recommendations table from the one column specification (``report.columns``, shared with
    the report's Markdown and HTML): the brief columns, as (header, align) and rows."""
    cols = columns(brief=True, coordinated_reads=plan.spec.coordinated_reads)
    label = f"p{plan.spec.constraints.latency_percentile or 99.0:g}"
    return [(c.title(label), c.align) for c in cols], [(r, row(r, cols)) for r in plan.result.recommendations]


def applied_constraints(plan: pb.Plan) -> str:
    """The constraints the answer applied that a reader might not have written (defaults)."""
    c = plan.spec.constraints
    margin = c.endurance_margin_fraction
    parts = [f"endurance margin {margin:.0%} of rated endurance kept in reserve (life used at most {1 - margin:.0%}; "
             "constraints.endurance_margin_fraction)"]
    floor = c.max_array_loss_probability
    parts.append(f"durability floor P(array loss) <= {floor:.2g} (constraints.max_array_loss_probability)" if floor > 0
                 else "no durability floor")
    parts.append(f"latency at p{c.latency_percentile or 99.0:g}")
    horizon = c.worst_second_horizon.ToNanoseconds() / 1e9 if c.HasField("worst_second_horizon") else 3600.0
    parts.append(f"simulated figures with 95 % intervals (± in the table), checks met at the pessimistic end; worst second "
                 f"over {horizon:,.0f} s (constraints.worst_second_horizon)")
    return "applied: " + "; ".join(parts)


def plan_markdown(plan: pb.Plan, warnings: Iterable[str] = ()) -> str:
    """Markdown for a pull-request comment: the table with P(data loss), the top explanations, the
    constraints applied and every warning from the plan file's import."""
    cols, rows = _table(plan)
    out = [f"### arrayplan: {plan.name}", "", plan.result.summary, ""]
    warnings = list(warnings)
    if warnings:
        out += ["> [!WARNING]", *[f"> {w}  " for w in warnings], ""]
    if plan.result.recommendations:
        # a miss's last cell ("meets": NO) in bold
        out += md.table([h for h, _ in cols], ([*cells[:-1], cells[-1] if r.meets_constraints else md.Strong(cells[-1])]
                                               for r, cells in rows), [a for _, a in cols])
        out += [""]
    out += [f"{r.rank}. {r.explanation}" for r in plan.result.recommendations[:3]]
    if plan.result.recommendations:
        best = plan.result.recommendations[0]
        out += ["", f"P(data loss) over the service life, best: {best.data_loss_probability:.3g} (MTTDL {best.mttdl_hours:,.0f} h): "
                    f"losing the array {best.array_loss_probability:.3g}, some data unreadable after a rebuild "
                    f"{best.unreadable_after_rebuild_probability:.3g}"]
    out += ["", applied_constraints(plan)]
    if plan.result.assumptions:
        out += ["", "Assumptions:", *[f"- {a}" for a in plan.result.assumptions]]
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
    cols, rows = _table(plan)
    table = Table(title=f"arrayplan {plan.name}", title_justify="left")
    for header, align in cols:
        table.add_column(header, justify="right" if align == "r" else "left")
    for r, cells in rows:
        table.add_row(*cells, style=None if r.meets_constraints else "red")
    console.print(table)
    for r in plan.result.recommendations[:3]:
        console.print(f"{r.rank}. {r.explanation}", soft_wrap=True, highlight=False)  # one line each: the terminal wraps, not rich
    console.print(plan.result.summary, soft_wrap=True, highlight=False)
    console.print(applied_constraints(plan), soft_wrap=True, highlight=False)
    for a in plan.result.assumptions:
        console.print(f"assumed: {a}", soft_wrap=True, highlight=False, markup=False)
    console.print(f"trace id: {plan.trace_id}   stored run: {plan.name}")


def rpc_error_lines(code_name: str, details: str, violations: Iterable[tuple[str, str]]) -> list[str]:
    """A failed call's error for stderr, each field violation once. The server's message of an
    INVALID_ARGUMENT is its field violations joined (``field: reason; ...``), so with violations
    the message is not printed again: one violation is one line (``CODE: field: reason``),
    several are a headline and one indented line each (and how many the server did not list,
    which only its message says). Without violations, ``CODE: message``."""
    found = list(violations)
    if not found:
        return [f"{code_name}: {details}"]
    unlisted = re.search(r"\((\d+) not listed\)$", details)
    hidden = int(unlisted.group(1)) if unlisted else 0
    if len(found) == 1 and not hidden:
        return [f"{code_name}: {found[0][0]}: {found[0][1]}"]
    return [f"{code_name}: {len(found) + hidden} invalid fields", *[f"  {field}: {reason}" for field, reason in found],
            *([f"  ... and {hidden} more not listed"] if hidden else [])]


#: What ``arrayplan drives`` prints for a value the catalog does not give (table; JSON has null).
UNKNOWN = "-"

#: Drive values that are numbers in the API message and catalog values with provenance (same
#: names): a 0 there with no provenance entry is a value the catalog does not give, not a zero.
DRIVE_VALUE_FIELDS = ("random_read_iops", "random_write_iops", "steady_random_write_iops", "endurance_bytes_written",
                      "price_usd", "active_power_w", "idle_power_w", "annual_failure_rate")


def drive_unknown_fields(drive: pb.Drive) -> set[str]:
    """The ``DRIVE_VALUE_FIELDS`` the catalog does not give for ``drive``: every catalog value
    carries its provenance, so a 0 without one is unknown (the message's plain doubles cannot
    say so themselves)."""
    known = {p.field for p in drive.provenance}
    return {f for f in DRIVE_VALUE_FIELDS if f not in known and not getattr(drive, f)}

