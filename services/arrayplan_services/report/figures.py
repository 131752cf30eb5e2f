"""The report's figures (matplotlib, through the Agg canvas: pyplot and the process-wide backend
are left alone): the Pareto front, the service life year by year, the latency CDFs and the
consistency experiment on the winner's drive (``ssd.consistency_experiment``; skipped for HDDs)."""

from __future__ import annotations

import io
import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from matplotlib import colormaps
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.cm import ScalarMappable
from matplotlib.colors import Normalize
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.text import Text
from matplotlib.ticker import FuncFormatter, LogLocator, MaxNLocator, NullFormatter

from arrayplan.v1 import planner_pb2 as pb

from ..plot_style import STYLE as STYLE  # re-exported: the report and the forecast draw in it
from ..plot_style import fit_titles as fit_titles
from ..plot_style import plain_ms as plain_ms
from .columns import seconds_of, usd
from .frame import CdfSet, Frame, check, interpolated_cdf, key, perf_models, short

CONSISTENCY_DURATION_S = 2000.0
CONSISTENCY_SEED = 0
# The consistency experiment's budget of simulated host IOs. The experiment runs a fast drive as a
# similar drive k times smaller (``ssd.consistency_scale``, k up to 32: docs/ssd-model.md, "Similar
# drives"), so it simulates its catalog-rate IOs over k; a drive that would still pass the budget
# is not simulated for the report, and the note says so and names ``arrayplan consistency DRIVE``.
# With k = 32 every catalog drive stays within it.
CONSISTENCY_MAX_HOST_IOS = 100_000_000
# The consistency zoom shows this many seconds at the end of the steady part (5 SNIA rounds).
ZOOM_S = 300
# Bottom of the CDF plot's logit axis.
Y_BOTTOM = 0.05
# Data-loss probabilities below this are drawn at it (log colour scale).
LOSS_PROBABILITY_FLOOR = 1e-15

COLORS = ("#2563eb", "#ea580c", "#16a34a")
GREY = "#94a3b8"
TARGET = "#b91c1c"




@dataclass(slots=True)
class Plot:
    """One rendered figure: file name, PNG bytes, alt text and caption."""

    name: str
    png: bytes
    alt: str
    caption: str
    title: str
    figure: Figure | None = field(default=None, repr=False, compare=False)  # what was drawn (for inspection)


# A latency axis spanning more than this ratio (max/min of what it shows) is drawn on a log scale:
# on a linear 0-6 ms axis a 0.04 ms latency would be a line on zero.
LOG_AXIS_RATIO = 8.0


def latency_axis(ax: Any, values_ms: Sequence[float], what: str) -> None:
    """Fit the y axis to latencies in ms (and a target among them): a log scale with plain-ms ticks
    when they span more than ``LOG_AXIS_RATIO``, else a linear one from 0; the label says which."""
    positive = [v for v in values_ms if v > 0 and math.isfinite(v)]
    if positive and max(positive) / min(positive) > LOG_AXIS_RATIO:
        ax.set_yscale("log")
        ax.set_ylim(min(positive) / 1.8, max(positive) * 1.8)
        ax.yaxis.set_major_locator(LogLocator(base=10, subs=(1.0, 2.0, 5.0)))
        ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _: plain_ms(v)))
        ax.yaxis.set_minor_formatter(NullFormatter())
        ax.set_ylabel(f"{what} (ms, log scale)")
    else:
        ax.set_ylim(0, max(positive or [1.0]) * 1.25)
        ax.set_ylabel(f"{what} (ms)")


def render(fig: Figure) -> bytes:
    """PNG bytes through the Agg canvas (pyplot and the process-wide backend are left alone);
    titles wider than their axes are wrapped first."""
    fit_titles(fig)
    buf = io.BytesIO()
    fig.savefig(buf, format="png", bbox_inches="tight", pad_inches=0.15)
    return buf.getvalue()


def pareto_figure(frame: Frame, plan: pb.Plan) -> tuple[Figure, bool] | None:
    """The Pareto plot's figure and whether it has a front (None: nothing to draw)."""
    front = list(plan.result.pareto_front)
    front_keys = {key(r) for r in front}
    points: dict[tuple[Any, ...], tuple[pb.Recommendation, bool]] = {}
    for r in front:
        points[key(r)] = (r, True)
    for r in frame.recommendations:
        points.setdefault(key(r), (r, key(r) in front_keys or r.pareto_optimal))
    if not points:
        return None
    has_latency = any(check(r, "latency") is not None for r, _ in points.values())

    def y_of(r: pb.Recommendation) -> float:
        k = check(r, "latency") if has_latency else None
        h = k.headroom_fraction if k is not None else r.headroom_fraction
        return float(np.clip(h, -5.0, 10.0)) * 100.0

    def loss_of(r: pb.Recommendation) -> float:
        return math.log10(max(r.data_loss_probability, LOSS_PROBABILITY_FLOOR))

    items = list(points.values())
    losses = [loss_of(r) for r, _ in items]
    lo, hi = min(losses), max(losses)
    if hi - lo < 1.0:
        lo, hi = lo - 0.5, hi + 0.5
    norm = Normalize(vmin=lo, vmax=hi)
    cmap = colormaps["viridis_r"]
    fig = Figure(figsize=(12.5, 5.4))
    ax = fig.add_subplot()
    others = [(r, f) for r, f in items if not f]
    on_front = sorted([(r, f) for r, f in items if f], key=lambda t: t[0].total_cost_usd)
    if others:
        ax.scatter([r.total_cost_usd for r, _ in others], [y_of(r) for r, _ in others], s=_S_OTHER,
                   c=[loss_of(r) for r, _ in others], cmap=cmap, norm=norm, marker="s", alpha=0.55,
                   edgecolors="#475569", linewidths=0.6, zorder=2)
    if on_front:
        ax.scatter([r.total_cost_usd for r, _ in on_front], [y_of(r) for r, _ in on_front], s=_S_FRONT,
                        c=[loss_of(r) for r, _ in on_front], cmap=cmap, norm=norm, edgecolors="#1e293b",
                        linewidths=0.7, zorder=3)
    cb = fig.colorbar(ScalarMappable(norm=norm, cmap=cmap), ax=ax, pad=0.015)
    cb.set_label(f"log₁₀ P(data loss over {frame.service_life_years} years)")
    if frame.recommendations:
        w = frame.recommendations[0]
        ax.scatter([w.total_cost_usd], [y_of(w)], s=_S_STAR, marker="*", facecolors="none",
                   edgecolors="#f59e0b", linewidths=1.8, zorder=4)
    if has_latency:
        ax.axhline(0, color=TARGET, lw=1.0, ls="--")
        ax.set_ylabel(f"latency headroom at {frame.pct_label} (%)")
    else:
        ax.set_ylabel("headroom of the binding constraint (%)")
    ax.set_xlabel(f"total cost of ownership over {frame.service_life_years} years (USD)")
    ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: f"${v:,.0f}"))
    ax.set_title("Cost vs latency headroom")
    handles = []
    if on_front:
        handles.append(Line2D([], [], ls="none", marker="o", ms=8, mfc="#cbd5e1", mec="#1e293b",
                              label="Pareto front (cost, latency headroom, durability)"))
    if others:
        handles.append(Line2D([], [], ls="none", marker="s", ms=7, mfc="#e2e8f0", mec="#475569",
                              label="other ranked recommendations"))
    if frame.recommendations:
        handles.append(Line2D([], [], ls="none", marker="*", ms=16, mfc="none", mec="#f59e0b", mew=1.6,
                              label="#1 (winner)" if frame.recommendations[0].meets_constraints else "#1 (nearest miss)"))
    if has_latency:
        handles.append(Line2D([], [], color=TARGET, lw=1.0, ls="--", label="latency target (0% headroom)"))
    ax.legend(handles=handles, loc="best")  # matplotlib places it where it covers fewest markers
    ax.margins(x=0.08, y=0.18)
    marks = [(r.total_cost_usd, y_of(r), _S_FRONT if f else _S_OTHER) for r, f in items]
    if frame.recommendations:
        marks.append((frame.recommendations[0].total_cost_usd, y_of(frame.recommendations[0]), _S_STAR))
    _label_top(fig, ax, frame, marks, y_of)
    return fig, bool(on_front)


def pareto_plot(frame: Frame, plan: pb.Plan) -> Plot | None:
    made = pareto_figure(frame, plan)
    if made is None:
        return None
    fig, on_front = made
    png = render(fig)
    if not on_front:
        return Plot(name="pareto.png", png=png, figure=fig, alt="Cost against latency headroom of the nearest misses",
                     caption=("No Pareto front: no array meets every constraint (the front holds only those that do). "
                              "Squares are the ranked nearest misses; colour is the log₁₀ probability of losing data over "
                              "the service life; the star marks #1. Headroom below 0 misses the target."),
                     title="Cost vs latency headroom (no Pareto front)")
    caption = ("Each marker is a candidate array; circles are the Pareto front on total cost, latency headroom and "
               "durability (a front in three dimensions, so not a single curve in this projection), squares other "
               "ranked recommendations. Colour is the log₁₀ probability of losing data over the service life "
               "(darker = more likely); the star marks #1.")
    return Plot(name="pareto.png", png=png, figure=fig, alt="Pareto front: total cost against latency headroom",
                 caption=caption, title="Pareto front")


# Marker areas (points²) of the Pareto plot: other ranked arrays, the front, the winner's star.
_S_OTHER, _S_FRONT, _S_STAR = 46, 70, 420
# Gap between a label box and a marker or another label (pixels at the figure's dpi).
_LABEL_GAP_PX = 3.0


# Where a Pareto label may sit around its point: rings of this many pixels out, 16 directions each.
_LABEL_RINGS_PX = (10.0, 22.0, 36.0, 54.0, 78.0, 110.0)
_LABEL_DIRECTIONS = 16


def _label_top(fig: Figure, ax: Any, frame: Frame, points: Sequence[tuple[float, float, float]], y_of: Any) -> None:
    """Label the top 3, each beside its own point: the nearest place (rings around the point, see
    ``_LABEL_RINGS_PX``) where the label box covers no marker, the legend or an earlier label and
    stays inside the axes; a short leader joins box and point. ``points`` are (x, y, marker area).
    When a label finds no free place, the y axis grows upward (room above the markers) and the
    search is repeated; after 6 tries that label is left out rather than covering a point."""
    if not frame.top:
        return
    FigureCanvasAgg(fig)
    anns = [ax.annotate(f"#{r.rank}  {short(r)}  ·  {usd(r.total_cost_usd)}", (r.total_cost_usd, y_of(r)),
                        xytext=(0.5, 0.5), textcoords="axes fraction", fontsize=9, color="#0f172a", ha="left", va="bottom",
                        bbox={"boxstyle": "round,pad=0.3", "fc": "white", "ec": COLORS[i], "lw": 1.2, "alpha": 0.95},
                        arrowprops={"arrowstyle": "-", "color": COLORS[i], "lw": 1.0, "shrinkA": 0, "shrinkB": 4}, zorder=5)
            for i, r in enumerate(frame.top)]
    ax.autoscale_view()
    fig.canvas.draw()  # lays out the legend and the label boxes (their sizes do not depend on where they go)
    renderer = fig.canvas.get_renderer()  # type: ignore[attr-defined]  # Agg's canvas has it; FigureCanvasBase does not declare it
    sizes, offsets = [], []
    for ann in anns:
        box = ann.get_bbox_patch().get_window_extent(renderer)
        text = Text.get_window_extent(ann, renderer)
        sizes.append((box.width, box.height))
        offsets.append((text.x0 - box.x0, text.y0 - box.y0))  # text's bottom-left inside its box
    legend = ax.get_legend()
    legend_box = legend.get_window_extent(renderer) if legend is not None else None
    px_per_pt = fig.dpi / 72.0
    ylim = ax.get_ylim()
    placed: list[tuple[float, float, float, float] | None] = [None] * len(anns)
    for _ in range(6):
        ax.set_xlim(ax.get_xlim())
        ax.set_ylim(ylim)
        axes_box = ax.get_window_extent(renderer)
        inner = (axes_box.x0 + 2, axes_box.y0 + 2, axes_box.x1 - 2, axes_box.y1 - 2)
        marks = [(*ax.transData.transform((x, y)), math.sqrt(s) / 2 * px_per_pt + _LABEL_GAP_PX) for x, y, s in points]
        taken: list[tuple[float, float, float, float]] = []
        if legend_box is not None:
            taken.append((legend_box.x0, legend_box.y0, legend_box.x1, legend_box.y1))
        placed = [None] * len(anns)
        for k, r in enumerate(frame.top):
            px, py = ax.transData.transform((r.total_cost_usd, y_of(r)))
            w, h = sizes[k]
            for ring in _LABEL_RINGS_PX:
                for d in range(_LABEL_DIRECTIONS):
                    ang = 2 * math.pi * d / _LABEL_DIRECTIONS
                    # the box's nearest side/corner sits ``ring`` px from the point in this direction
                    cx, cy = px + math.cos(ang) * (ring + w / 2), py + math.sin(ang) * (ring + h / 2)
                    b = (cx - w / 2, cy - h / 2, cx + w / 2, cy + h / 2)
                    if b[0] < inner[0] or b[1] < inner[1] or b[2] > inner[2] or b[3] > inner[3]:
                        continue
                    if any(_overlap(b, t) for t in taken):
                        continue
                    if any(b[0] - rad < mx < b[2] + rad and b[1] - rad < my < b[3] + rad for mx, my, rad in marks):
                        continue
                    placed[k] = b
                    break
                if placed[k] is not None:
                    break
            got = placed[k]
            if got is not None:
                taken.append(got)
        if all(b is not None for b in placed):
            break
        lo, hi = ylim
        ylim = (lo, hi + 0.35 * (hi - lo))  # room above the highest marker, then search again
    to_axes = ax.transAxes.inverted()
    for ann, spot, (dx, dy) in zip(anns, placed, offsets, strict=True):
        if spot is None:  # no free place: no label rather than one covering points
            ann.remove()
            continue
        ann.xyann = tuple(to_axes.transform((spot[0] + dx, spot[1] + dy)))


def _overlap(a: tuple[float, float, float, float], b: tuple[float, float, float, float]) -> bool:
    return a[0] < b[2] and b[0] < a[2] and a[1] < b[3] and b[1] < a[3]


def years_plot(frame: Frame) -> Plot | None:
    top = [r for r in frame.top if r.years]
    if not top:
        return None
    fig = Figure(figsize=(12.5, 3.1 * len(top) + 0.3))
    axes = fig.subplots(len(top), 3, squeeze=False)
    limit = frame.endurance_limit_fraction * 100.0
    target_ms = frame.latency_target_s * 1e3
    for i, r in enumerate(top):
        color = COLORS[i]
        years = [y.year for y in r.years]
        life = [y.cumulative_life_used_fraction * 100.0 for y in r.years]
        ax = axes[i][0]
        ax.bar(years, [y.life_used_fraction * 100.0 for y in r.years], color=color, alpha=0.25, width=0.6,
               label="used in the year")
        ax.plot(years, life, "o-", color=color, lw=2, label="cumulative")
        ax.axhline(limit, color=TARGET, ls="--", lw=1.2, label=f"limit (1 − margin) {limit:.0f}%")
        top_pct = max(limit, max(life))
        ax.set_ylim(0, top_pct * 1.5)  # room for the legend above the limit, without ticks there
        ax.set_yticks([v for v in ax.get_yticks() if 0 <= v <= top_pct * 1.0001])
        ax.set_ylabel("rated endurance used (%)")
        ax.set_title(f"#{r.rank} {short(r)}\nendurance", loc="left")
        ax.legend(loc="upper left", fontsize=8)

        ax = axes[i][1]
        pred = [y.predicted_iops for y in r.years]
        req = [y.required_iops for y in r.years]
        ax.plot(years, pred, "o-", color=color, lw=2, label="predicted (steady state)")
        if any(v > 0 for v in req):
            ax.plot(years, req, "s--", color=TARGET, lw=1.3, label="required")
        positive = [v for v in pred + req if v > 0]
        if positive and max(positive) / min(positive) > 8:
            ax.set_yscale("log")
            ax.yaxis.set_major_locator(LogLocator(base=10, subs=(1.0, 2.0, 5.0)))
            ax.set_ylim(min(positive) / 1.6, max(positive) * 1.6)
            ax.set_ylabel("host IOPS (log scale)")
        else:
            ax.set_ylim(0, max(positive or [1]) * 1.2)
        ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:,.0f}"))
        ax.yaxis.set_minor_formatter(NullFormatter())
        if ax.get_yscale() != "log":
            ax.set_ylabel("host IOPS")
        ax.set_title("IOPS", loc="left")
        ax.legend(loc="best")

        ax = axes[i][2]
        lat = [seconds_of(y.latency_at_percentile) * 1e3 for y in r.years]
        ax.plot(years, lat, "o-", color=color, lw=2, label=f"{frame.pct_label} predicted")
        if target_ms > 0:
            ax.axhline(target_ms, color=TARGET, ls="--", lw=1.2, label=f"target {target_ms:.3g} ms")
        latency_axis(ax, lat + [target_ms], f"{frame.pct_label} latency")
        ax.set_title(f"latency at {frame.pct_label}", loc="left")
        ax.legend(loc="best")
        for ax in axes[i]:
            ax.set_xlabel("year of service")
            ax.xaxis.set_major_locator(MaxNLocator(integer=True))
            ax.set_xlim(min(years) - 0.5, max(years) + 0.5)
    fit_titles(fig)
    fig.tight_layout(h_pad=1.6, w_pad=1.8)
    png = render(fig)
    caption = (f"Year by year for the top {len(top)}: share of rated endurance used (the dashed line is the limit "
               f"1 − endurance margin = {limit:.0f}%), steady-state IOPS at that year's fill level against the required "
               f"IOPS (growth included), and latency at {frame.pct_label} against the target.")
    return Plot(name="years.png", png=png, figure=fig, alt="Per-year endurance, IOPS and latency of the top recommendations",
                 caption=caption, title="Service life, year by year")




def cdf_plot(plan: pb.Plan, frame: Frame, sims: CdfSet) -> Plot | None:
    """The top arrays' latency CDFs: simulated (``frame.simulate_cdfs``) or through the plan's percentiles."""
    top = frame.top
    if not top:
        return None
    q = frame.percentile / 100.0
    fig = Figure(figsize=(12.5, 5.6))
    ax = fig.add_subplot()
    ax.set_xscale("log")
    ax.set_yscale("logit")
    y_top = 0.9999
    xs: list[float] = []
    any_interp = False
    for i, r in enumerate(top):
        color = COLORS[i]
        curve = sims.curves.get(r.rank)
        label = f"#{r.rank} {short(r)}"
        if curve is None:
            curve = interpolated_cdf(r, frame.percentile)
            any_interp = any_interp or curve is not None
            label += " (through the plan's percentiles)"
        if curve is not None:
            lx = curve.latency_s * 1e3
            if curve.simulated:
                # 0 and 1 are off a logit axis: draw them at its edges (the last step reaches the
                # plotting position 1 - 1/(2n) of the slowest IO).
                n = max(curve.ios, 1)
                ly = np.clip(curve.fraction, Y_BOTTOM / 2, 1 - 0.5 / n)
                ax.plot(lx, ly, color=color, lw=2, label=label + " — simulated")  # linear within a bucket
                y_top = max(y_top, min(1 - 1.0 / n, 0.99999))
                xs.extend(lx[curve.fraction >= Y_BOTTOM].tolist())
            else:
                ax.plot(lx, curve.fraction, color=color, lw=2, ls="--", label=label)
                xs.extend(lx[curve.fraction >= Y_BOTTOM].tolist())
        pts = [(v * 1e3, p) for v, p in ((seconds_of(r.latency_p50), 0.5), (seconds_of(r.latency_at_percentile), q)) if v > 0]
        if pts:
            ax.plot([p[0] for p in pts], [p[1] for p in pts], "o", ms=8, mfc="white", mec=color, mew=2, zorder=4,
                    label="plan: p50 and " + frame.pct_label if i == 0 else None)
            xs.extend(p[0] for p in pts)
        # the plan's 95 % intervals on those figures (whiskers; none for a screening run)
        for v, lo, hi, p in ((r.latency_p50, r.latency_p50_low, r.latency_p50_high, 0.5),
                             (r.latency_at_percentile, r.latency_at_percentile_low, r.latency_at_percentile_high, q)):
            if seconds_of(v) > 0 and seconds_of(hi) > 0:
                ax.plot([seconds_of(lo) * 1e3, seconds_of(hi) * 1e3], [p, p], color=color, lw=1.6, zorder=3,
                        label="plan: 95 % interval" if i == 0 and p == q else None)
                xs.extend([seconds_of(lo) * 1e3, seconds_of(hi) * 1e3])
        ws = seconds_of(r.worst_second_latency)
        if ws > 0:
            ax.axvline(ws * 1e3, color=color, ls=":", lw=1.3, label="plan: worst second" if i == 0 else None)
            xs.append(ws * 1e3)
    if frame.latency_target_s > 0:
        t = frame.latency_target_s * 1e3
        ax.axvline(t, color=TARGET, lw=1.5, ls="--", label=f"target {frame.pct_label} ≤ {t:.3g} ms")
        ax.axhline(q, color=TARGET, lw=0.8, ls="-", alpha=0.35)
        xs.append(t)
    if not xs:
        return None
    ticks = [t for t in (0.1, 0.5, 0.9, 0.99, 0.999, 0.9999, 0.99999) if t <= y_top]
    ax.set_ylim(Y_BOTTOM, y_top)
    ax.set_yticks(ticks)
    ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v * 100:g}%"))
    ax.yaxis.set_minor_formatter(NullFormatter())
    ax.set_xlim(min(xs) / 1.6, max(xs) * 1.6)
    # Plain milliseconds at 1-2-5 steps (0.05, 0.1, 0.2 ...): no powers of ten, no minor labels.
    ax.xaxis.set_major_locator(LogLocator(base=10, subs=(1.0, 2.0, 5.0)))
    ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: plain_ms(v)))
    ax.xaxis.set_minor_formatter(NullFormatter())
    ax.set_xlabel("host IO latency (ms, log scale)")
    ax.set_ylabel("IOs completed within the latency (CDF, logit scale)")
    ax.set_title("Latency distribution of the top arrays")
    ax.legend(loc="best", fontsize=8.5, framealpha=0.92, frameon=True, edgecolor="#e2e8f0")
    png = render(fig)
    if sims.simulated:
        has_ws = any(seconds_of(r.worst_second_latency) > 0 for r in top)
        caption = (f"Solid lines: CDF of host IO latency from the engine's discrete-event array simulation: the first "
                   f"of the independent replications the plan's own figures were pooled from (the planner's factory for "
                   f"each array's worst year: the required IOPS, that year's fill and seed, {sims.simulated_s:.3g} s "
                   f"simulated). Hollow circles{' and dotted lines' if has_ws else ''}: the "
                   f"plan's own figures (p50, {frame.pct_label}{', worst second over the horizon' if has_ws else ''}) from "
                   f"{', '.join(perf_models(plan)) or 'its performance model'}, with their 95 % intervals as whiskers "
                   "(one replication's curve may sit anywhere inside them).")
        caption += (f" The plan carries percentiles, not distributions, so the report simulated these "
                    f"{sims.simulation_count} array-years once each (each array's worst year); "
                    "every other figure is read from the plan.")
        if len(sims.curves) < len(top):
            caption += " Dashed: arrays not simulated, drawn through the plan's percentiles."
        caption += " " + _sim_vs_plan(frame, sims)
    else:
        caption = ("Each curve is drawn through the plan's percentiles only (a recommendation carries p50, "
                   f"{frame.pct_label} and the worst second): a log-normal through p50 and {frame.pct_label}, so its "
                   "shape between and beyond those points is an interpolation, not a measurement.")
        if sims.note:
            caption += f" Not simulated: {sims.note}."
        if not any_interp:
            caption += " The plan's percentiles do not define a curve here, so only its points are shown."
    return Plot(name="latency_cdf.png", png=png, figure=fig, alt="Latency CDFs of the top recommendations", caption=caption,
                 title="Latency CDF")


def _sim_vs_plan(frame: Frame, sims: CdfSet) -> str:
    """One sentence comparing the simulated percentile with the plan's, per simulated array."""
    parts, ratios = [], []
    for r in frame.top:
        c = sims.curves.get(r.rank)
        plan_s = seconds_of(r.latency_at_percentile)
        if c is None or not math.isfinite(c.at_percentile_s) or c.at_percentile_s <= 0:
            continue
        text = f"#{r.rank} {c.at_percentile_s * 1e3:.3g} ms"
        if plan_s > 0:
            text += f" (plan {plan_s * 1e3:.3g} ms)"
            ratios.append(plan_s / c.at_percentile_s)
        if c.saturated:
            text += " [saturated]"
        parts.append(text)
    if not parts:
        return ""
    out = f"Simulated {frame.pct_label}: " + "; ".join(parts) + "."
    if ratios and (max(ratios) > 2.0 or min(ratios) < 0.5):
        lo, hi = min(ratios), max(ratios)
        span = f"{lo:.1f}×" if hi / lo < 1.2 else f"{lo:.1f}–{hi:.1f}×"
        out += (f" The plan's {frame.pct_label} is {span} the simulated one: the ranking used the plan's figures, "
                "so read its latency headroom with that disagreement in mind.")
    return out




# ---- consistency ---------------------------------------------------------------------------------


def consistency_host_ios(drive: Any) -> float:
    """Host IOs the consistency experiment would simulate on ``drive``, at least: its duration at
    the catalog's 4 KB random-write rate (fresh-out-of-box, else sustained; the fresh phase runs
    faster still). 0 when the catalog gives no rate."""
    rate = drive.random_write_iops or drive.steady_random_write_iops or 0.0
    return float(CONSISTENCY_DURATION_S * rate)


def consistency_plot(frame: Frame) -> tuple[Plot | None, str]:
    if not frame.recommendations:
        return None, ""
    w = frame.recommendations[0]
    from arrayplan_engine import ssd
    from arrayplan_engine.catalog import builtin_catalog

    try:
        drive = builtin_catalog().get(w.drive_model)
    except Exception as exc:  # noqa: BLE001 - a report never fails on one figure
        return None, f"The consistency experiment was skipped: {exc}."
    if drive.kind != "ssd":
        return None, f"No consistency plot: the winner's drive ({drive.display_name}) is a hard disk."
    ios = consistency_host_ios(drive)
    k = ssd.consistency_scale(ios)
    if ios / k > CONSISTENCY_MAX_HOST_IOS:
        return None, (f"No consistency plot: the experiment on the winner's drive ({drive.display_name}) would simulate "
                      f"over {ios / k / 1e6:,.0f} M IOs ({CONSISTENCY_DURATION_S:g} s at its catalog rate, on a similar "
                      f"drive {k} times smaller), past the report's budget of {CONSISTENCY_MAX_HOST_IOS / 1e6:g} M; "
                      f"`arrayplan consistency {w.drive_model}` runs it.")
    duration_s = CONSISTENCY_DURATION_S
    try:
        r = ssd.consistency_experiment(w.drive_model, duration_s=duration_s,
                                       op=w.over_provisioning_fraction, seed=CONSISTENCY_SEED, scale=k)
    except Exception as exc:  # noqa: BLE001
        return None, f"The consistency experiment failed: {exc}."
    iops = np.asarray(r.iops, dtype=float)
    t = np.arange(1, iops.size + 1)
    start = int(r.steady_start_s) if math.isfinite(r.steady_start_s) else max(0, iops.size - 300)
    fig = Figure(figsize=(12.5, 4.2))
    ax1, ax2 = fig.subplots(1, 2, gridspec_kw={"width_ratios": [1.35, 1]})
    ax1.plot(t, iops, color=COLORS[0], lw=0.8)
    ax1.set_yscale("log")
    ax1.axhline(r.fob_iops, color=GREY, ls="--", lw=1, label=f"fresh out of box {r.fob_iops:,.0f}")
    ax1.axvspan(start, iops.size, color="#16a34a", alpha=0.08,
                label="steady state" if r.steady is not None else "last 5 rounds (no steady state found)")
    ax1.yaxis.set_major_locator(LogLocator(base=10, subs=(1.0, 2.0, 5.0)))
    ax1.yaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:,.0f}"))
    ax1.yaxis.set_minor_formatter(NullFormatter())  # no "6 × 10⁵" between the plain major ticks
    ax1.set_xlabel("time (s)")
    ax1.set_ylabel("4 KB random write IOPS (log scale)")
    ax1.set_title(f"{drive.display_name}: whole run", loc="left")
    ax1.legend(loc="upper right")
    ax1.set_xlim(0, iops.size)

    zoom = max(start, iops.size - ZOOM_S)
    ax1.axvspan(zoom, iops.size, fill=False, ec="#0f172a", lw=0.8, ls=":")
    seg_t, seg = t[zoom:], iops[zoom:]
    ax2.plot(seg_t, seg, color=COLORS[0], lw=0.8)
    mean = float(seg.mean()) if seg.size else math.nan
    p1 = float(np.percentile(seg, 1)) if seg.size else math.nan
    ax2.axhline(mean, color="#0f172a", lw=1.2, label=f"mean {mean:,.0f}")
    ax2.axhline(p1, color=TARGET, lw=1.0, ls="--", label=f"1st percentile {p1:,.0f} ({p1 / mean:.0%} of mean)")
    ax2.set_ylim(0, float(seg.max()) * 1.25 if seg.size else 1)
    ax2.yaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:,.0f}"))
    ax2.set_xlabel("time (s)")
    ax2.set_ylabel("4 KB random write IOPS")
    ax2.set_title(f"zoom: last {seg.size} s of the steady part (linear scale)", loc="left")
    ax2.legend(loc="lower right")
    fit_titles(fig)
    fig.tight_layout(w_pad=2.0)
    png = render(fig)
    op = f", {w.over_provisioning_fraction:.0%} short-stroked" if w.over_provisioning_fraction > 0 else ""
    caption = (f"The reviewers' performance-consistency test on the winner's drive{op}: secure erase, sequential fill, "
               f"then {duration_s:g} s of 4 KB random writes at QD32, IOPS every second (seed "
               f"{CONSISTENCY_SEED}, {r.gc_policy} garbage collection, write amplification {r.write_amplification:.2f}). "
               f"Steady state {'from' if r.steady is not None else 'not reached; last rounds from'} {start} s "
               f"at {r.steady_iops_mean:,.0f} IOPS on average; the zoom (dotted box) shows the last {seg.size} s."
               + (f" Simulated on a similar drive {r.scale} times smaller at QD {ssd.QUEUE_DEPTH // r.scale}, its IOPS counted "
                  f"{r.scale} times (the same curve in time: docs/ssd-model.md, Similar drives)." if r.scale > 1 else ""))
    return Plot(name="consistency.png", png=png, figure=fig, alt=f"Performance consistency of {drive.display_name}",
                 caption=caption, title="Performance consistency of the winner's drive"), ""


