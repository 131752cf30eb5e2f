"""The recommendations table's one column specification, shared by the CLI table, the report's
Markdown and its HTML: each column is a key, a header, a unit and a formatter of a
``pb.Recommendation``. Light on purpose (no matplotlib, no Jinja2): the CLI imports it."""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from arrayplan.v1 import planner_pb2 as pb

# The API encodes "unbounded" headroom as a huge finite number.
_UNBOUNDED = 1e6


def seconds_of(d: Any) -> float:
    """A protobuf Duration in seconds (0 when unset)."""
    return float(d.ToNanoseconds() / 1e9)


def ms(d: Any) -> str:
    s = seconds_of(d)
    return f"{s * 1e3:.3g}" if s > 0 else "–"


def usd(x: float) -> str:
    return f"${x:,.0f}"


def usd_small(x: float) -> str:
    if not math.isfinite(x) or x <= 0:
        return "–"
    return f"${x:,.3g}" if x < 100 else f"${x:,.0f}"


def pct(x: float, *, signed: bool = False) -> str:
    if not math.isfinite(x) or abs(x) >= _UNBOUNDED:
        return "∞" if x > 0 else "–"
    return f"{x:+.0%}" if signed else f"{x:.0%}"


def layout_name(r: pb.Recommendation) -> str:
    if r.HasField("cluster"):  # spans servers: servers x drives each, and the pool
        return f"{r.cluster.server_count} × {r.cluster.drives_per_server} servers, {r.cluster.scheme} by {r.cluster.failure_domain}"
    name = r.layout.upper() if not r.layout.startswith("ec:") else f"EC {r.layout[3:]}"
    if r.layout in ("raid5", "raid6") and r.group_width and r.group_width != r.drive_count:
        name += f" ({r.group_width}-wide)"
    if r.over_provisioning_fraction > 0:
        name += f", {r.over_provisioning_fraction:.0%} OP"
    return name



@dataclass(frozen=True, slots=True, kw_only=True)
class Column:
    """One column: ``header`` may hold ``{pct}`` (the requested percentile, ``p99.9``); the unit
    follows the header (``p50 ms``); ``brief`` columns are the ones the terminal table shows."""

    key: str
    header: str
    unit: str
    formatter: Callable[[pb.Recommendation], str]
    align: str = "r"  # "r" or "l"
    brief: bool = True
    # shown only for a plan with PlanSpec.coordinated_reads
    coordinated_reads: bool = False

    def title(self, pct_label: str) -> str:
        head = self.header.format(pct=pct_label)
        return f"{head} {self.unit}" if self.unit else head


def _plus_minus(value: float, low: float, high: float) -> str:
    """" ±6%": half the 95 % interval over the value; empty when the interval is not known (0s:
    a screening run) or the value is not positive."""
    if not (value > 0 and high > 0 and math.isfinite(low) and math.isfinite(high)) or high < low:
        return ""
    return f" ±{0.5 * (high - low) / value:.0%}"


def iops_cell(r: pb.Recommendation) -> str:
    return f"{r.predicted_iops:,.0f}{_plus_minus(r.predicted_iops, r.predicted_iops_low, r.predicted_iops_high)}"


def latency_cell(value: Any, low: Any, high: Any) -> str:
    """A latency in ms with its 95 % interval's relative half-width (" ±6%")."""
    return ms(value) + (_plus_minus(seconds_of(value), seconds_of(low), seconds_of(high)) if seconds_of(value) > 0 else "")


def worst_second_cell(r: pb.Recommendation) -> str:
    """The worst second over the horizon in ms, its (asymmetric) 95 % interval in brackets."""
    base = ms(r.worst_second_latency)
    lo, hi = seconds_of(r.worst_second_latency_low), seconds_of(r.worst_second_latency_high)
    if seconds_of(r.worst_second_latency) <= 0 or hi <= 0:
        return base
    return f"{base} ({lo * 1e3:.3g}–{hi * 1e3:.3g})"


def converged_cell(r: pb.Recommendation) -> str:
    """Whether the intervals reached their targets (5 % IOPS, 10 % percentile) or a cap stopped them."""
    if r.simulation_precision == "screening":
        return "screening"
    return "yes" if r.simulation_converged else "cap"


NOT_APPLIED = "n/a (no parity)"


def without_coordinated_reads_cell(r: pb.Recommendation) -> str:
    """The latency at the percentile without coordinated reads, with its 95 % interval; "n/a"
    for an array the policy does not apply to (RAID 0, mirrors)."""
    if not r.coordinated_reads_applied:
        return NOT_APPLIED
    return latency_cell(r.latency_at_percentile_without_coordinated_reads, r.latency_at_percentile_without_coordinated_reads_low,
                        r.latency_at_percentile_without_coordinated_reads_high)


def read_around_cell(r: pb.Recommendation) -> str:
    """Share of host reads read around a busy member (coordinated reads)."""
    return f"{r.reconstructed_read_fraction:.1%}" if r.coordinated_reads_applied else NOT_APPLIED


def _meets(r: pb.Recommendation) -> str:
    return "yes" if r.meets_constraints else "NO"


RECOMMENDATION_COLUMNS: tuple[Column, ...] = (
    Column(key="rank", header="#", unit="", formatter=lambda r: str(r.rank)),
    Column(key="drive", header="drive", unit="", formatter=lambda r: r.drive_display_name or r.drive_model, align="l"),
    Column(key="drive_count", header="n", unit="", formatter=lambda r: str(r.drive_count)),
    Column(key="layout", header="layout", unit="", formatter=layout_name, align="l"),
    Column(key="usable_capacity_bytes", header="usable", unit="TB", formatter=lambda r: f"{r.usable_capacity_bytes / 1e12:.2f}"),
    Column(key="predicted_iops", header="IOPS", unit="", formatter=iops_cell),
    Column(key="latency_p50", header="p50", unit="ms", formatter=lambda r: latency_cell(r.latency_p50, r.latency_p50_low,
                                                                                      r.latency_p50_high)),
    Column(key="latency_at_percentile", header="{pct}", unit="ms",
           formatter=lambda r: latency_cell(r.latency_at_percentile, r.latency_at_percentile_low, r.latency_at_percentile_high)),
    Column(key="latency_at_percentile_without_coordinated_reads", header="{pct} without coord. reads", unit="ms",
           formatter=without_coordinated_reads_cell, coordinated_reads=True),
    Column(key="reconstructed_read_fraction", header="reads read around", unit="", formatter=read_around_cell,
           coordinated_reads=True),
    Column(key="worst_second_latency", header="worst s", unit="ms", formatter=worst_second_cell, brief=False),
    Column(key="simulation_converged", header="converged", unit="", formatter=converged_cell, align="l", brief=False),
    Column(key="life_used_fraction", header="life used", unit="", formatter=lambda r: pct(r.life_used_fraction)),
    Column(key="wear_out_year", header="wear-out year", unit="",
           formatter=lambda r: str(r.wear_out_year) if r.wear_out_year else "–", brief=False),
    Column(key="data_loss_probability", header="P(loss)", unit="", formatter=lambda r: f"{r.data_loss_probability:.2g}"),
    Column(key="total_cost_usd", header="TCO", unit="", formatter=lambda r: usd(r.total_cost_usd)),
    Column(key="cost_per_usable_tb_usd", header="$/TB", unit="", formatter=lambda r: usd_small(r.cost_per_usable_tb_usd),
           brief=False),
    Column(key="cost_per_iops_usd", header="$/IOPS", unit="", formatter=lambda r: usd_small(r.cost_per_iops_usd), brief=False),
    Column(key="binding_constraint", header="binding", unit="", formatter=lambda r: r.binding_constraint.replace("_", " "),
           align="l"),
    Column(key="headroom_fraction", header="headroom", unit="", formatter=lambda r: pct(r.headroom_fraction, signed=True)),
    Column(key="meets_constraints", header="meets", unit="", formatter=_meets, align="l"),
)


def columns(*, brief: bool = False, coordinated_reads: bool = False) -> tuple[Column, ...]:
    """Every column (the report), or the ``brief`` ones (the terminal and the CLI's Markdown);
    the coordinated-reads columns only for a plan that asked for them (``PlanSpec.coordinated_reads``:
    the latency at the percentile with the policy is the usual column, without it beside it)."""
    return tuple(c for c in RECOMMENDATION_COLUMNS if (c.brief or not brief) and (coordinated_reads or not c.coordinated_reads))


def row(r: pb.Recommendation, cols: tuple[Column, ...]) -> list[str]:
    return [c.formatter(r) for c in cols]


def md_cell(text: str) -> str:
    """A Markdown table cell under the one escaping rule (``report.markdown.cell``)."""
    from .markdown import cell

    return cell(text)


__all__ = ["RECOMMENDATION_COLUMNS", "Column", "columns", "converged_cell", "iops_cell", "latency_cell", "layout_name", "md_cell",
           "ms", "pct", "read_around_cell", "row", "seconds_of", "usd", "usd_small", "without_coordinated_reads_cell",
           "worst_second_cell"]
