"""Plan reports: a self-contained HTML page and a Markdown twin for CI comments.

``write_report(plan, out_dir)`` reads everything from a finished ``pb.Plan`` (spec, result, trace
id) and writes ``out_dir/index.html`` (inline CSS, plots as base64 PNG data URIs, no network) and
``out_dir/report.md`` (the plots as PNG files next to it, referenced relatively or under a base URL
CI publishes them at) and ``out_dir/report-embedded.md`` (images inline as data URIs).

Two figures need more than the plan holds and are computed here, each with a fallback:

* latency CDFs: a ``Recommendation`` carries three latency figures only (p50, the requested
  percentile, the worst second). When the plan's spec has a workload, the top arrays' worst years
  are simulated again through the planner's own factory (``recommend.candidate_year_case``: same
  array spec, service models, seed and simulated time, so the very run the plan's figures come
  from) in a child process with a wall-clock budget (a cold numba cache compiles for about a
  minute); the CDFs then come from its latency histograms, with the plan's own figures marked on
  them. Otherwise
  (or if the simulation fails) the CDF is drawn through the plan's percentiles and the caption says
  so.
* the consistency plot: ``ssd.consistency_experiment`` on the winner's drive (skipped for HDDs).
"""

from __future__ import annotations

import base64
import html
import io
import json
import math
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from statistics import NormalDist
from typing import Any

import matplotlib
import numpy as np
from matplotlib import colormaps
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.cm import ScalarMappable
from matplotlib.colors import Normalize
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.ticker import FuncFormatter, LogLocator, MaxNLocator, NullFormatter

from arrayplan.v1 import planner_pb2 as pb

HTML_NAME = "index.html"
MARKDOWN_NAME = "report.md"
EMBEDDED_MARKDOWN_NAME = "report-embedded.md"
TOP_N = 3
# Seconds of simulated time per array for the latency CDFs, and its fixed seed.
DEFAULT_ARRAY_SIMULATION_S = 2.0
# Wall-clock budget of the child process that simulates the top arrays (a cold numba cache
# compiles the array kernel in about a minute; a warm one answers in a few seconds).
DEFAULT_SIMULATION_TIMEOUT_S = 180.0
CONSISTENCY_DURATION_S = 2000.0
CONSISTENCY_SEED = 0
# The consistency zoom shows this many seconds at the end of the steady part (5 SNIA rounds).
ZOOM_S = 300
# Bottom of the CDF plot's logit axis.
Y_BOTTOM = 0.05
# Data-loss probabilities below this are drawn at it (log colour scale).
LOSS_PROBABILITY_FLOOR = 1e-15
# The API encodes "unbounded" headroom as a huge finite number.
_UNBOUNDED = 1e6

COLORS = ("#2563eb", "#ea580c", "#16a34a")
_GREY = "#94a3b8"
_TARGET = "#b91c1c"
_STYLE = {
    "font.family": "DejaVu Sans",
    "font.size": 10,
    "axes.titlesize": 11,
    "axes.titleweight": "bold",
    "axes.labelsize": 10,
    "axes.edgecolor": "#94a3b8",
    "axes.linewidth": 0.8,
    "axes.grid": True,
    "grid.color": "#e2e8f0",
    "grid.linewidth": 0.7,
    "axes.spines.top": False,
    "axes.spines.right": False,
    "xtick.color": "#334155",
    "ytick.color": "#334155",
    "legend.frameon": False,
    "legend.fontsize": 9,
    "figure.dpi": 100,
    "savefig.dpi": 110,
    "savefig.facecolor": "white",
}


# ==============================================================================================
# small helpers
# ==============================================================================================


def _s(d: Any) -> float:
    """A protobuf Duration in seconds (0 when unset)."""
    return d.seconds + d.nanos / 1e9


def _ms(d: Any) -> str:
    s = _s(d)
    return f"{s * 1e3:.3g}" if s > 0 else "–"


def _usd(x: float) -> str:
    return f"${x:,.0f}"


def _usd_small(x: float) -> str:
    if not math.isfinite(x) or x <= 0:
        return "–"
    return f"${x:,.3g}" if x < 100 else f"${x:,.0f}"


def _pct(x: float, *, signed: bool = False) -> str:
    if not math.isfinite(x) or abs(x) >= _UNBOUNDED:
        return "∞" if x > 0 else "–"
    return f"{x:+.0%}" if signed else f"{x:.0%}"


def _layout_name(r: pb.Recommendation) -> str:
    name = r.layout.upper() if not r.layout.startswith("ec:") else f"EC {r.layout[3:]}"
    if r.layout in ("raid5", "raid6") and r.group_width and r.group_width != r.drive_count:
        name += f" ({r.group_width}-wide)"
    if r.over_provisioning_fraction > 0:
        name += f", {r.over_provisioning_fraction:.0%} OP"
    return name


def _short(r: pb.Recommendation) -> str:
    """'RAID6 16 × S3500 480GB' (the display name without the vendor prefix)."""
    name = (r.drive_display_name or r.drive_model).split(" (", 1)[0]
    for prefix in ("Intel SSD DC ", "Intel SSD ", "Intel "):
        if name.startswith(prefix):
            name = name[len(prefix):]
            break
    return f"{_layout_name(r)} {r.drive_count} × {name}"


def _key(r: pb.Recommendation) -> tuple[Any, ...]:
    return (r.drive_model, r.drive_count, r.layout, r.group_width, round(r.over_provisioning_fraction, 6))


def _check(r: pb.Recommendation, constraint: str) -> pb.ConstraintCheck | None:
    for k in r.checks:
        if k.constraint == constraint:
            return k
    return None


@dataclass(frozen=True, slots=True, kw_only=True)
class _Frame:
    """What every section needs to know about the question, read once from the plan."""

    percentile: float
    latency_target_s: float
    endurance_limit_fraction: float
    service_life_years: int
    required_iops: float
    recommendations: tuple[pb.Recommendation, ...]
    top: tuple[pb.Recommendation, ...]

    @property
    def pct_label(self) -> str:
        return f"p{self.percentile:g}"


def _frame(plan: pb.Plan) -> _Frame:
    recs = tuple(plan.result.recommendations)
    c = plan.spec.constraints
    percentile = c.latency_percentile or 99.0
    target = _s(c.latency_target) if c.HasField("latency_target") else 0.0
    limit = 1.0 - c.endurance_margin_fraction
    required_iops = c.min_iops or plan.spec.workload.target_iops
    for r in recs:  # the checks carry what the engine actually applied
        k = _check(r, "latency")
        if k is not None and not target:
            target = k.required
        k = _check(r, "endurance")
        if k is not None:
            limit = k.required
        k = _check(r, "iops")
        if k is not None and not required_iops:
            required_iops = k.required
    years = plan.spec.service_life_years or (len(recs[0].years) if recs and recs[0].years else 5)
    return _Frame(percentile=percentile, latency_target_s=target, endurance_limit_fraction=limit,
                  service_life_years=years, required_iops=required_iops, recommendations=recs, top=recs[:TOP_N])


# ==============================================================================================
# figures
# ==============================================================================================


@dataclass(slots=True)
class _Plot:
    """One rendered figure: file name, PNG bytes, alt text and caption."""

    name: str
    png: bytes
    alt: str
    caption: str
    title: str


def _render(fig: Figure) -> bytes:
    """PNG bytes through the Agg canvas (pyplot and the process-wide backend are left alone)."""
    FigureCanvasAgg(fig)
    buf = io.BytesIO()
    fig.savefig(buf, format="png", bbox_inches="tight", pad_inches=0.15)
    return buf.getvalue()


def _pareto_plot(frame: _Frame, plan: pb.Plan) -> _Plot | None:
    front = list(plan.result.pareto_front)
    front_keys = {_key(r) for r in front}
    points: dict[tuple[Any, ...], tuple[pb.Recommendation, bool]] = {}
    for r in front:
        points[_key(r)] = (r, True)
    for r in frame.recommendations:
        points.setdefault(_key(r), (r, _key(r) in front_keys or r.pareto_optimal))
    if not points:
        return None
    has_latency = any(_check(r, "latency") is not None for r, _ in points.values())

    def y_of(r: pb.Recommendation) -> float:
        k = _check(r, "latency") if has_latency else None
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
        ax.scatter([r.total_cost_usd for r, _ in others], [y_of(r) for r, _ in others], s=46,
                   c=[loss_of(r) for r, _ in others], cmap=cmap, norm=norm, marker="s", alpha=0.55,
                   edgecolors="#475569", linewidths=0.6, zorder=2)
    if on_front:
        ax.scatter([r.total_cost_usd for r, _ in on_front], [y_of(r) for r, _ in on_front], s=70,
                        c=[loss_of(r) for r, _ in on_front], cmap=cmap, norm=norm, edgecolors="#1e293b",
                        linewidths=0.7, zorder=3)
    cb = fig.colorbar(ScalarMappable(norm=norm, cmap=cmap), ax=ax, pad=0.015)
    cb.set_label(f"log₁₀ P(data loss over {frame.service_life_years} years)")
    if frame.recommendations:
        w = frame.recommendations[0]
        ax.scatter([w.total_cost_usd], [y_of(w)], s=420, marker="*", facecolors="none",
                   edgecolors="#f59e0b", linewidths=1.8, zorder=4)
    if has_latency:
        ax.axhline(0, color=_TARGET, lw=1.0, ls="--")
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
        handles.append(Line2D([], [], color=_TARGET, lw=1.0, ls="--", label="latency target (0% headroom)"))
    ax.legend(handles=handles, loc="upper left")
    ax.margins(x=0.08, y=0.18)
    _label_top(ax, frame, [(r.total_cost_usd, y_of(r)) for r, _ in items], y_of)
    png = _render(fig)
    if not on_front:
        return _Plot(name="pareto.png", png=png, alt="Cost against latency headroom of the nearest misses",
                     caption=("No Pareto front: no array meets every constraint (the front holds only those that do). "
                              "Squares are the ranked nearest misses; colour is the log₁₀ probability of losing data over "
                              "the service life; the star marks #1. Headroom below 0 misses the target."),
                     title="Cost vs latency headroom (no Pareto front)")
    caption = ("Each marker is a candidate array; circles are the Pareto front on total cost, latency headroom and "
               "durability (a front in three dimensions, so not a single curve in this projection), squares other "
               "ranked recommendations. Colour is the log₁₀ probability of losing data over the service life "
               "(darker = more likely); the star marks #1.")
    return _Plot(name="pareto.png", png=png, alt="Pareto front: total cost against latency headroom",
                 caption=caption, title="Pareto front")


def _label_top(ax: Any, frame: _Frame, points: Sequence[tuple[float, float]], y_of: Any) -> None:
    """Label the top 3 in a stacked block, right of the legend, where it covers fewest points."""
    if not frame.top:
        return
    ax.autoscale_view()
    (x0, x1), (y0, y1) = ax.get_xlim(), ax.get_ylim()
    frac = [((x - x0) / (x1 - x0 or 1.0), (y - y0) / (y1 - y0 or 1.0)) for x, y in points]
    step, n = 0.085, len(frame.top)

    def covered(top_y: float) -> int:
        lo, hi = top_y - step * (n - 1) - 0.05, top_y + 0.05
        return sum(1 for fx, fy in frac if fx >= 0.45 and lo <= fy <= hi)

    top_y = min((0.26, 0.90, 0.58), key=covered)  # lower right first: a Pareto front leaves it empty
    for i, r in enumerate(frame.top):
        ax.annotate(f"#{r.rank}  {_short(r)}  ·  {_usd(r.total_cost_usd)}", (r.total_cost_usd, y_of(r)),
                    xytext=(0.50, top_y - step * i), textcoords="axes fraction", fontsize=9, color="#0f172a",
                    va="center", bbox={"boxstyle": "round,pad=0.3", "fc": "white", "ec": COLORS[i], "lw": 1.2, "alpha": 0.95},
                    arrowprops={"arrowstyle": "-", "color": COLORS[i], "lw": 1.0, "shrinkB": 6}, zorder=5)


def _years_plot(frame: _Frame) -> _Plot | None:
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
        ax.axhline(limit, color=_TARGET, ls="--", lw=1.2, label=f"limit (1 − margin) {limit:.0f}%")
        top_pct = max(limit, max(life))
        ax.set_ylim(0, top_pct * 1.5)  # room for the legend above the limit, without ticks there
        ax.set_yticks([v for v in ax.get_yticks() if 0 <= v <= top_pct * 1.0001])
        ax.set_ylabel("rated endurance used (%)")
        ax.set_title(f"#{r.rank} {_short(r)}\nendurance", loc="left")
        ax.legend(loc="upper left", fontsize=8)

        ax = axes[i][1]
        pred = [y.predicted_iops for y in r.years]
        req = [y.required_iops for y in r.years]
        ax.plot(years, pred, "o-", color=color, lw=2, label="predicted (steady state)")
        if any(v > 0 for v in req):
            ax.plot(years, req, "s--", color=_TARGET, lw=1.3, label="required")
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
        lat = [_s(y.latency_at_percentile) * 1e3 for y in r.years]
        ax.plot(years, lat, "o-", color=color, lw=2, label=f"{frame.pct_label} predicted")
        if target_ms > 0:
            ax.axhline(target_ms, color=_TARGET, ls="--", lw=1.2, label=f"target {target_ms:.3g} ms")
        ax.set_ylim(0, max(lat + [target_ms]) * 1.2 or 1.0)
        ax.set_ylabel(f"{frame.pct_label} latency (ms)")
        ax.set_title(f"latency at {frame.pct_label}", loc="left")
        ax.legend(loc="lower right")
        for ax in axes[i]:
            ax.set_xlabel("year of service")
            ax.xaxis.set_major_locator(MaxNLocator(integer=True))
            ax.set_xlim(min(years) - 0.5, max(years) + 0.5)
    fig.tight_layout(h_pad=1.6, w_pad=1.8)
    png = _render(fig)
    caption = (f"Year by year for the top {len(top)}: share of rated endurance used (the dashed line is the limit "
               f"1 − endurance margin = {limit:.0f}%), steady-state IOPS at that year's fill level against the required "
               f"IOPS (growth included), and latency at {frame.pct_label} against the target.")
    return _Plot(name="years.png", png=png, alt="Per-year endurance, IOPS and latency of the top recommendations",
                 caption=caption, title="Service life, year by year")


# ---- latency CDFs ------------------------------------------------------------------------------


@dataclass(slots=True)
class _Cdf:
    latency_s: np.ndarray
    fraction: np.ndarray
    simulated: bool
    ios: int = 0
    at_percentile_s: float = math.nan
    saturated: bool = False


@dataclass(slots=True)
class _CdfSet:
    curves: dict[int, _Cdf] = field(default_factory=dict)  # by rank
    note: str = ""
    simulated: bool = False
    elapsed_s: float = 0.0
    simulated_s: float = 0.0  # the longest simulated window among the curves


def _sim_jobs(plan: pb.Plan, frame: _Frame, duration_s: float) -> list[dict[str, Any]]:
    del duration_s  # the plan's own simulated time: the CDF is the run the plan's figures come from
    jobs = []
    spec = base64.b64encode(plan.spec.SerializeToString()).decode()
    for r in frame.top:
        # The year whose latency is worst (the one the plan's latency figure comes from).
        year = max(r.years, key=lambda y: _s(y.latency_at_percentile)) if r.years else None
        jobs.append({
            "rank": r.rank, "drive_model": r.drive_model, "drive_count": r.drive_count, "layout": r.layout,
            "group_width": r.group_width, "over_provisioning_fraction": r.over_provisioning_fraction,
            "year": year.year if year else 1, "plan_spec": spec, "percentile": frame.percentile,
        })
    return jobs


def _simulate_jobs(jobs: Sequence[dict[str, Any]], out_path: Path) -> None:
    """Child-process side: simulate each job's array and save its CDF (``--simulate``).

    The array, workload, fill, seed and simulated time come from the planner's factory
    (``recommend.candidate_year_case``) for the plan's request, the recommendation's candidate and
    its worst year, so the CDF is the very run the plan's p50 and percentile were read from.
    """
    from arrayplan_engine import array, recommend

    from .server.convert import plan_request_from_proto

    arrays: dict[str, np.ndarray] = {}
    meta = []
    for job in jobs:
        req = plan_request_from_proto(pb.PlanSpec.FromString(base64.b64decode(job["plan_spec"])), "plan.spec")
        cand = recommend.find_candidate(req, drive_model=job["drive_model"], layout=job["layout"], group_width=job["group_width"],
                                        drive_count=job["drive_count"], over_provisioning_fraction=job["over_provisioning_fraction"])
        case = recommend.candidate_year_case(req, cand, int(job["year"]))
        res = array.simulate(case.spec)
        # CDF at the bucket edges, from the lower edge of the first occupied bucket (fraction 0).
        h = res.latency_histograms[0]
        n = int(h.sum())
        nz = np.nonzero(h)[0]
        if n:
            lo, hi = int(nz[0]), int(nz[-1]) + 1
            x = array.latency_bucket_edges_s()[lo:hi + 1]
            y = np.concatenate(([0.0], np.cumsum(h[lo:hi]) / n))
        else:
            x = y = np.empty(0)
        arrays[f"x{job['rank']}"] = x
        arrays[f"y{job['rank']}"] = y
        meta.append({"rank": job["rank"], "ios": n, "saturated": bool(res.saturated), "achieved_iops": res.achieved_iops,
                     "p50_s": res.latency_percentile_s(0.5) if n else math.nan,
                     "at_percentile_s": res.latency_percentile_s(job["percentile"] / 100.0) if n else math.nan,
                     "duration_s": case.spec.duration_s, "seed": case.seed})
    arrays["meta"] = np.frombuffer(json.dumps(meta).encode(), dtype=np.uint8)
    np.savez(out_path, **arrays)


def _simulated_cdfs(plan: pb.Plan, frame: _Frame, duration_s: float, timeout_s: float) -> _CdfSet:
    out = _CdfSet()
    if duration_s <= 0:
        out.note = "array simulation disabled"
        return out
    if not plan.spec.HasField("workload"):
        out.note = "the plan carries no workload to simulate"
        return out
    jobs = _sim_jobs(plan, frame, duration_s)
    t0 = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="arrayplan-report-") as tmp:
        job_path, out_path = Path(tmp) / "jobs.json", Path(tmp) / "cdf.npz"
        job_path.write_text(json.dumps(jobs))
        try:
            proc = subprocess.run([sys.executable, "-m", "arrayplan_services.report", "--simulate", str(job_path), str(out_path)],
                                  capture_output=True, text=True, timeout=timeout_s, check=False)
        except subprocess.TimeoutExpired:
            out.note = f"the array simulation did not finish within {timeout_s:g} s (a cold numba cache compiles first)"
            return out
        except OSError as exc:
            out.note = f"the array simulation could not start ({exc})"
            return out
        out.elapsed_s = time.monotonic() - t0
        if proc.returncode != 0 or not out_path.exists():
            last = (proc.stderr.strip().splitlines() or ["no output"])[-1]
            out.note = f"the array simulation failed ({last[:200]})"
            return out
        with np.load(out_path) as data:
            meta = json.loads(data["meta"].tobytes().decode())
            for m in meta:
                x, y = data[f"x{m['rank']}"], data[f"y{m['rank']}"]
                if x.size:
                    out.simulated_s = max(out.simulated_s, float(m.get("duration_s", 0.0)))
                    out.curves[m["rank"]] = _Cdf(latency_s=x, fraction=y, simulated=True, ios=int(m["ios"]),
                                                 at_percentile_s=float(m["at_percentile_s"]), saturated=bool(m["saturated"]))
    out.simulated = bool(out.curves)
    if not out.simulated:
        out.note = "the array simulation recorded no IOs"
    return out


def _interpolated_cdf(r: pb.Recommendation, percentile: float) -> _Cdf | None:
    """A log-normal CDF through the plan's p50 and its latency at the requested percentile."""
    p50, pq = _s(r.latency_p50), _s(r.latency_at_percentile)
    q = percentile / 100.0
    if not (p50 > 0 and pq > p50 and 0.5 < q < 1.0):
        return None
    nd = NormalDist()
    sigma = (math.log(pq) - math.log(p50)) / nd.inv_cdf(q)
    z = np.linspace(nd.inv_cdf(0.01), nd.inv_cdf(0.99999), 200)
    return _Cdf(latency_s=np.exp(math.log(p50) + sigma * z), fraction=np.array([nd.cdf(float(v)) for v in z]),
                simulated=False)


def _cdf_plot(plan: pb.Plan, frame: _Frame, duration_s: float, timeout_s: float) -> tuple[_Plot | None, _CdfSet]:
    top = frame.top
    if not top:
        return None, _CdfSet()
    sims = _simulated_cdfs(plan, frame, duration_s, timeout_s)
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
        label = f"#{r.rank} {_short(r)}"
        if curve is None:
            curve = _interpolated_cdf(r, frame.percentile)
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
        pts = [(v * 1e3, p) for v, p in ((_s(r.latency_p50), 0.5), (_s(r.latency_at_percentile), q)) if v > 0]
        if pts:
            ax.plot([p[0] for p in pts], [p[1] for p in pts], "o", ms=8, mfc="white", mec=color, mew=2, zorder=4,
                    label="plan: p50 and " + frame.pct_label if i == 0 else None)
            xs.extend(p[0] for p in pts)
        ws = _s(r.worst_second_latency)
        if ws > 0:
            ax.axvline(ws * 1e3, color=color, ls=":", lw=1.3, label="plan: worst second" if i == 0 else None)
            xs.append(ws * 1e3)
    if frame.latency_target_s > 0:
        t = frame.latency_target_s * 1e3
        ax.axvline(t, color=_TARGET, lw=1.5, ls="--", label=f"target {frame.pct_label} ≤ {t:.3g} ms")
        ax.axhline(q, color=_TARGET, lw=0.8, ls="-", alpha=0.35)
        xs.append(t)
    if not xs:
        return None, sims
    ticks = [t for t in (0.1, 0.5, 0.9, 0.99, 0.999, 0.9999, 0.99999) if t <= y_top]
    ax.set_ylim(Y_BOTTOM, y_top)
    ax.set_yticks(ticks)
    ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v * 100:g}%"))
    ax.yaxis.set_minor_formatter(NullFormatter())
    ax.set_xlim(min(xs) / 1.6, max(xs) * 1.6)
    ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
    ax.set_xlabel("host IO latency (ms, log scale)")
    ax.set_ylabel("IOs completed within the latency (CDF, logit scale)")
    ax.set_title("Latency distribution of the top arrays")
    ax.legend(loc="best", fontsize=8.5, framealpha=0.92, frameon=True, edgecolor="#e2e8f0")
    png = _render(fig)
    if sims.simulated:
        has_ws = any(_s(r.worst_second_latency) > 0 for r in top)
        caption = (f"Solid lines: CDF of host IO latency from the engine's discrete-event array simulation: the run "
                   f"the plan's own figures were read from (the planner's factory for each array's worst year: the "
                   f"required IOPS, that year's fill and the array's seed stream, {sims.simulated_s:.3g} s simulated). "
                   f"Hollow circles{' and dotted lines' if has_ws else ''}: the "
                   f"plan's own figures (p50, {frame.pct_label}{', worst second' if has_ws else ''}) from "
                   f"{', '.join(_perf_models(plan)) or 'its performance model'}.")
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
    return _Plot(name="latency_cdf.png", png=png, alt="Latency CDFs of the top recommendations", caption=caption,
                 title="Latency CDF"), sims


def _sim_vs_plan(frame: _Frame, sims: _CdfSet) -> str:
    """One sentence comparing the simulated percentile with the plan's, per simulated array."""
    parts, ratios = [], []
    for r in frame.top:
        c = sims.curves.get(r.rank)
        plan_s = _s(r.latency_at_percentile)
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


def _perf_models(plan: pb.Plan) -> list[str]:
    return [m for m in plan.result.models if m.split(":", 1)[0] not in ("endurance", "reliability", "cost")]


# ---- consistency ---------------------------------------------------------------------------------


def _consistency_plot(frame: _Frame) -> tuple[_Plot | None, str]:
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
    try:
        r = ssd.consistency_experiment(w.drive_model, duration_s=CONSISTENCY_DURATION_S,
                                       op=w.over_provisioning_fraction, seed=CONSISTENCY_SEED)
    except Exception as exc:  # noqa: BLE001
        return None, f"The consistency experiment failed: {exc}."
    iops = np.asarray(r.iops, dtype=float)
    t = np.arange(1, iops.size + 1)
    start = int(r.steady_start_s) if math.isfinite(r.steady_start_s) else max(0, iops.size - 300)
    fig = Figure(figsize=(12.5, 4.2))
    ax1, ax2 = fig.subplots(1, 2, gridspec_kw={"width_ratios": [1.35, 1]})
    ax1.plot(t, iops, color=COLORS[0], lw=0.8)
    ax1.set_yscale("log")
    ax1.axhline(r.fob_iops, color=_GREY, ls="--", lw=1, label=f"fresh out of box {r.fob_iops:,.0f}")
    ax1.axvspan(start, iops.size, color="#16a34a", alpha=0.08,
                label="steady state" if r.steady is not None else "last 5 rounds (no steady state found)")
    ax1.yaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:,.0f}"))
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
    ax2.axhline(p1, color=_TARGET, lw=1.0, ls="--", label=f"1st percentile {p1:,.0f} ({p1 / mean:.0%} of mean)")
    ax2.set_ylim(0, float(seg.max()) * 1.25 if seg.size else 1)
    ax2.yaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:,.0f}"))
    ax2.set_xlabel("time (s)")
    ax2.set_ylabel("4 KB random write IOPS")
    ax2.set_title(f"zoom: last {seg.size} s of the steady part (linear scale)", loc="left")
    ax2.legend(loc="lower right")
    fig.tight_layout(w_pad=2.0)
    png = _render(fig)
    op = f", {w.over_provisioning_fraction:.0%} short-stroked" if w.over_provisioning_fraction > 0 else ""
    caption = (f"The reviewers' performance-consistency test on the winner's drive{op}: secure erase, sequential fill, "
               f"then {CONSISTENCY_DURATION_S:g} s of 4 KB random writes at QD32, IOPS every second (seed "
               f"{CONSISTENCY_SEED}, {r.gc_policy} garbage collection, write amplification {r.write_amplification:.2f}). "
               f"Steady state {'from' if r.steady is not None else 'not reached; last rounds from'} {start} s "
               f"at {r.steady_iops_mean:,.0f} IOPS on average; the zoom (dotted box) shows the last {seg.size} s.")
    return _Plot(name="consistency.png", png=png, alt=f"Performance consistency of {drive.display_name}",
                 caption=caption, title="Performance consistency of the winner's drive"), ""


# ==============================================================================================
# text
# ==============================================================================================

_COLUMNS: tuple[tuple[str, str], ...] = (
    ("#", "r"), ("drive", "l"), ("count", "r"), ("layout", "l"), ("usable TB", "r"), ("IOPS", "r"),
    ("p50 ms", "r"), ("PCT ms", "r"), ("worst s ms", "r"), ("life used", "r"), ("wear-out year", "r"),
    ("TCO", "r"), ("$/TB", "r"), ("$/IOPS", "r"), ("binding", "l"), ("headroom", "r"), ("meets", "l"),
)


def _columns(frame: _Frame) -> list[tuple[str, str]]:
    return [(name.replace("PCT", frame.pct_label), align) for name, align in _COLUMNS]


def _row(r: pb.Recommendation) -> list[str]:
    return [
        str(r.rank), r.drive_display_name or r.drive_model, str(r.drive_count), _layout_name(r),
        f"{r.usable_capacity_bytes / 1e12:.2f}", f"{r.predicted_iops:,.0f}", _ms(r.latency_p50),
        _ms(r.latency_at_percentile), _ms(r.worst_second_latency), _pct(r.life_used_fraction),
        str(r.wear_out_year) if r.wear_out_year else "–", _usd(r.total_cost_usd), _usd_small(r.cost_per_usable_tb_usd),
        _usd_small(r.cost_per_iops_usd), r.binding_constraint.replace("_", " "), _pct(r.headroom_fraction, signed=True),
        "yes" if r.meets_constraints else "no",
    ]


def _verdict(plan: pb.Plan, frame: _Frame) -> tuple[str, str]:
    """(css class, sentence)."""
    if plan.state != pb.Plan.STATE_SUCCEEDED:
        state = pb.Plan.State.Name(plan.state).removeprefix("STATE_").lower()
        why = f": {plan.error_message}" if plan.error_message else ""
        return "bad", f"The plan {state}{why}"
    met = [r for r in frame.recommendations if r.meets_constraints]
    if not frame.recommendations:
        return "bad", "There are no recommendations: no candidate array was evaluated (see the summary for why)."
    if plan.result.constraints_met and met:
        w = frame.recommendations[0]
        return "ok", (f"{len(met)} recommended arrays meet every constraint. Best: {_short(w)}, "
                      f"{_usd(w.total_cost_usd)} over {frame.service_life_years} years.")
    return "bad", ("No array meets every constraint. The table shows the nearest misses (in red); "
                   "each explanation names what it misses.")


def _question(plan: pb.Plan, frame: _Frame) -> list[str]:
    """The question as short phrases (from the spec when the plan carries it)."""
    out = []
    w = plan.spec.workload
    if plan.spec.HasField("workload"):
        name = w.display_name or w.preset or "custom workload"
        parts = [name]
        if w.HasField("read_fraction"):
            parts.append(f"{w.read_fraction:.0%} reads")
        if w.io_size_mix:
            parts.append("IO " + "/".join(f"{s.io_bytes // 1024} KiB" for s in w.io_size_mix))
        if w.HasField("daily_write_bytes") and w.daily_write_bytes:
            parts.append(f"{w.daily_write_bytes / 1e12:.3g} TB written/day")
        if w.HasField("growth_fraction_per_year") and w.growth_fraction_per_year:
            parts.append(f"{w.growth_fraction_per_year:.0%}/year growth")
        out.append("workload: " + ", ".join(parts))
    c = plan.spec.constraints
    if c.usable_capacity_bytes:
        out.append(f"usable capacity ≥ {c.usable_capacity_bytes / 1e12:.3g} TB")
    if frame.required_iops:
        out.append(f"IOPS ≥ {frame.required_iops:,.0f}")
    if frame.latency_target_s:
        out.append(f"{frame.pct_label} ≤ {frame.latency_target_s * 1e3:.3g} ms")
    if c.HasField("worst_second_latency_target"):
        out.append(f"worst second ≤ {_s(c.worst_second_latency_target) * 1e3:.3g} ms")
    out.append(f"endurance used ≤ {frame.endurance_limit_fraction:.0%}")
    for value, text in ((c.max_purchase_cost_usd, f"budget ≤ {_usd(c.max_purchase_cost_usd)}"),
                        (c.max_drive_count, f"≤ {c.max_drive_count} drive slots"),
                        (c.max_power_w, f"power ≤ {c.max_power_w:,.0f} W"),
                        (c.max_data_loss_probability, f"P(data loss) ≤ {c.max_data_loss_probability:.2g}")):
        if value:
            out.append(text)
    out.append(f"service life {frame.service_life_years} years")
    return out


def _hdd_sentence(plan: pb.Plan) -> str:
    if not plan.result.HasField("hdd_equivalence"):
        return ""
    h = plan.result.hdd_equivalence
    what = h.explanation or f"{h.drive_count} × {h.hdd_model} in {h.layout.upper()} would carry the same workload."
    out = f"{what} They cost {_usd(h.purchase_cost_usd)} to buy and draw {h.power_w:,.0f} W"
    if plan.result.recommendations:
        w = plan.result.recommendations[0]
        out += (f", against {_usd(w.purchase_cost_usd)} and {w.power_w:,.0f} W for #1 "
                f"({w.drive_count} × {w.drive_display_name or w.drive_model})")
    return out + "."


def _plan_id(plan: pb.Plan) -> str:
    return plan.name.rsplit("/", 1)[-1] if plan.name else "unnamed plan"


def _title(plan: pb.Plan) -> str:
    wl = plan.spec.workload.display_name or plan.spec.workload.preset
    return f"Capacity plan {_plan_id(plan)}" + (f" — {wl}" if wl else "")


def _meta(plan: pb.Plan) -> list[tuple[str, str]]:
    out = [("stored run", plan.name or "–"), ("trace id", plan.trace_id or "–"),
           ("state", pb.Plan.State.Name(plan.state).removeprefix("STATE_").lower())]
    if plan.HasField("end_time"):
        out.append(("finished", plan.end_time.ToDatetime().strftime("%Y-%m-%d %H:%M UTC")))
    if plan.spec.seed:
        out.append(("seed", str(plan.spec.seed)))
    return out


# ---- HTML ----------------------------------------------------------------------------------------

_CSS = """
:root { --fg:#0f172a; --muted:#64748b; --line:#e2e8f0; --ok:#15803d; --bad:#b91c1c; --accent:#2563eb; }
* { box-sizing: border-box; }
body { margin:0; background:#f1f5f9; color:var(--fg);
  font:15px/1.55 -apple-system, "Segoe UI", Roboto, "Helvetica Neue", "DejaVu Sans", Arial, sans-serif; }
main { max-width:1320px; margin:0 auto; padding:28px 40px 56px; background:#fff; min-height:100vh; }
header { border-bottom:3px solid var(--accent); padding-bottom:14px; }
.brand { font-size:12px; font-weight:700; letter-spacing:.12em; text-transform:uppercase; color:var(--accent); }
h1 { font-size:27px; margin:2px 0 8px; }
h2 { font-size:19px; margin:34px 0 10px; padding-bottom:5px; border-bottom:1px solid var(--line); }
.meta { display:flex; flex-wrap:wrap; gap:6px 18px; font-size:13px; color:var(--muted); }
.meta b { color:#334155; font-weight:600; }
code { font-family:ui-monospace, "SFMono-Regular", Menlo, Consolas, "DejaVu Sans Mono", monospace; font-size:12.5px;
  background:#f1f5f9; padding:1px 5px; border-radius:4px; color:#0f172a; }
.verdict { border-radius:8px; padding:12px 16px; margin:20px 0 12px; font-weight:600; font-size:16px; }
.verdict.ok { background:#f0fdf4; border:1px solid #86efac; color:var(--ok); }
.verdict.bad { background:#fef2f2; border:1px solid #fca5a5; color:var(--bad); }
.verdict.none { background:#f8fafc; border:1px solid #cbd5e1; color:#334155; }
.question { margin:0 0 8px; padding:0; list-style:none; display:flex; flex-wrap:wrap; gap:6px; }
.question li { background:#f1f5f9; border:1px solid var(--line); border-radius:999px; padding:2px 11px; font-size:13px; }
.summary { color:#334155; }
.cards { display:grid; grid-template-columns:repeat(7, 1fr); gap:12px; margin:14px 0 4px; }
.card.wide { grid-column:span 2; }
.card { border:1px solid var(--line); border-radius:8px; padding:9px 13px; background:#fcfdff; }
.card .k { font-size:11.5px; color:var(--muted); text-transform:uppercase; letter-spacing:.05em; }
.card .v { font-size:19px; font-weight:650; margin-top:2px; }
.card .v small { font-size:12px; font-weight:500; color:var(--muted); }
.tablewrap { overflow-x:auto; border:1px solid var(--line); border-radius:8px; }
table { border-collapse:collapse; width:100%; font-size:12.5px; font-variant-numeric:tabular-nums; }
th { text-align:right; font-weight:600; color:#334155; background:#f8fafc; padding:7px 7px; border-bottom:2px solid #cbd5e1;
  vertical-align:bottom; line-height:1.25; }
td { text-align:right; padding:5px 7px; border-bottom:1px solid var(--line); white-space:nowrap; }
tr:last-child td { border-bottom:none; }
th.l, td.l { text-align:left; }
td.drive { white-space:normal; }
tr.best td { background:#eff6ff; font-weight:600; }
tr.miss td { color:var(--bad); background:#fef2f2; }
td.yes { color:var(--ok); font-weight:600; }
td.no { color:var(--bad); font-weight:700; }
ol.explain { padding-left:22px; } ol.explain li { margin:4px 0; }
ol.explain li.miss { color:var(--bad); }
figure { margin:12px 0 8px; }
figure img { display:block; max-width:100%; height:auto; border:1px solid var(--line); border-radius:8px; }
figcaption { color:var(--muted); font-size:13px; margin-top:6px; max-width:1100px; }
.note { color:var(--muted); font-size:14px; }
ul.models { columns:2; font-size:13.5px; }
footer { margin-top:40px; padding-top:10px; border-top:1px solid var(--line); font-size:12px; color:var(--muted); }
"""


def _e(text: Any) -> str:
    return html.escape(str(text), quote=True)


def _img(p: _Plot) -> str:
    data = base64.b64encode(p.png).decode("ascii")
    return (f'<figure><img src="data:image/png;base64,{data}" alt="{_e(p.alt)}">'
            f"<figcaption>{_e(p.caption)}</figcaption></figure>")


def _cards(frame: _Frame) -> str:
    if not frame.recommendations:
        return ""
    w = frame.recommendations[0]
    cards = [
        ("#1 array" if w.meets_constraints else "#1 nearest miss",
         f"{w.drive_count} × {_e(w.drive_display_name or w.drive_model)}", _e(_layout_name(w))),
        ("total cost", _e(_usd(w.total_cost_usd)), f"{frame.service_life_years} years"),
        (f"{frame.pct_label} latency", _e(_ms(w.latency_at_percentile)) + " ms",
         f"target {frame.latency_target_s * 1e3:.3g} ms" if frame.latency_target_s else "no target"),
        ("usable", f"{w.usable_capacity_bytes / 1e12:.2f} TB", f"{w.predicted_iops:,.0f} IOPS"),
        ("life used", _e(_pct(w.life_used_fraction)), f"limit {frame.endurance_limit_fraction:.0%}"),
        ("binding", _e(w.binding_constraint.replace("_", " ")), _e(_pct(w.headroom_fraction, signed=True)) + " headroom"),
    ]
    cells = "".join(f'<div class="card{" wide" if i == 0 else ""}"><div class="k">{k}</div><div class="v">{v}</div>'
                    f'<div class="v"><small>{s}</small></div></div>' for i, (k, v, s) in enumerate(cards))
    return f'<div class="cards">{cells}</div>'


def _html_table(frame: _Frame) -> str:
    cols = _columns(frame)
    head = "".join(f'<th class="{a}">{_e(n)}</th>' for n, a in cols)
    rows = []
    for r in frame.recommendations:
        cls = "miss" if not r.meets_constraints else ("best" if r.rank == 1 else "")
        cells = []
        for (name, align), value in zip(cols, _row(r), strict=True):
            extra = " drive" if name == "drive" else ""
            if name == "meets":
                extra += " yes" if r.meets_constraints else " no"
            cells.append(f'<td class="{align}{extra}">{_e(value)}</td>')
        rows.append(f'<tr class="{cls}" data-rank="{r.rank}">{"".join(cells)}</tr>')
    return f'<div class="tablewrap"><table><thead><tr>{head}</tr></thead><tbody>{"".join(rows)}</tbody></table></div>'


def _html(plan: pb.Plan, frame: _Frame, plots: dict[str, _Plot | None], notes: dict[str, str]) -> str:
    vcls, vtext = _verdict(plan, frame)
    meta = "".join(f"<span>{_e(k)} <b><code>{_e(v)}</code></b></span>" if k in ("stored run", "trace id")
                   else f"<span>{_e(k)} <b>{_e(v)}</b></span>" for k, v in _meta(plan))
    parts = [
        "<!DOCTYPE html>", '<html lang="en"><head><meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f"<title>{_e(_title(plan))}</title><style>{_CSS}</style></head><body><main>",
        f'<header><div class="brand">arrayplan report</div><h1>{_e(_title(plan))}</h1><div class="meta">{meta}</div></header>',
        f'<div class="verdict {vcls}">{_e(vtext)}</div>',
    ]
    if plan.HasField("spec"):
        parts.append('<ul class="question">' + "".join(f"<li>{_e(q)}</li>" for q in _question(plan, frame)) + "</ul>")
    if plan.result.summary:
        parts.append(f'<p class="summary">{_e(plan.result.summary)}</p>')
    parts.append(_cards(frame))
    parts.append("<h2>Ranked recommendations</h2>")
    if frame.recommendations:
        parts.append(_html_table(frame))
        parts.append("<h2>Why each one</h2><ol class=\"explain\">" + "".join(
            f'<li value="{r.rank}" class="{"" if r.meets_constraints else "miss"}">{_e(r.explanation)}</li>'
            for r in frame.recommendations) + "</ol>")
    else:
        parts.append('<p class="note">There are no recommendations: no candidate array was evaluated.</p>')
    for key in ("pareto", "years", "cdf", "consistency"):
        p = plots.get(key)
        if p is not None:
            parts.append(f"<h2>{_e(p.title)}</h2>{_img(p)}")
        elif notes.get(key):
            parts.append(f'<p class="note">{_e(notes[key])}</p>')
    hdd = _hdd_sentence(plan)
    if hdd:
        parts.append(f"<h2>Hard-disk equivalence</h2><p>{_e(hdd)}</p>")
    if plan.result.models:
        parts.append('<h2>Models</h2><ul class="models">' + "".join(f"<li><code>{_e(m)}</code></li>" for m in plan.result.models)
                     + "</ul>")
    parts.append(f"<footer>Generated by arrayplan from stored run <code>{_e(plan.name)}</code>, trace id "
                 f"<code>{_e(plan.trace_id)}</code>. Self-contained: no network resources.</footer>")
    parts.append("</main></body></html>")
    return "\n".join(parts) + "\n"


# ---- Markdown ------------------------------------------------------------------------------------


def _md_cell(text: str) -> str:
    return text.replace("|", "\\|")


def _image_ref(p: _Plot, images: str) -> str:
    """Where report Markdown points at a plot: ``"relative"`` (the PNG beside it), ``"data"`` (a
    base64 data URI: one self-contained file) or a base URL the PNGs are published under (what a
    pull-request comment needs: GitHub shows neither relative links nor data URIs in comments)."""
    if images == "relative":
        return p.name
    if images == "data":
        return "data:image/png;base64," + base64.b64encode(p.png).decode("ascii")
    return images.rstrip("/") + "/" + p.name


def _markdown(plan: pb.Plan, frame: _Frame, plots: dict[str, _Plot | None], notes: dict[str, str],
              images: str = "relative") -> str:
    _, vtext = _verdict(plan, frame)
    out = [f"## {_title(plan)}", "",
           f"Stored run `{plan.name or '-'}` · trace id `{plan.trace_id or '-'}`", "", f"**{vtext}**", ""]
    if plan.HasField("spec"):
        out += ["Question: " + "; ".join(_question(plan, frame)) + ".", ""]
    if plan.result.summary:
        out += [plan.result.summary, ""]
    if frame.recommendations:
        cols = _columns(frame)
        out.append("| " + " | ".join(n for n, _ in cols) + " |")
        out.append("|" + "|".join("---:" if a == "r" else "---" for _, a in cols) + "|")
        for r in frame.recommendations:
            row = [_md_cell(v) for v in _row(r)]
            if not r.meets_constraints:
                row[-1] = "**NO**"
            out.append("| " + " | ".join(row) + " |")
        out.append("")
        out += [f"{r.rank}. {r.explanation}" for r in frame.recommendations]
        out.append("")
    else:
        out += ["There are no recommendations: no candidate array was evaluated.", ""]
    for key in ("pareto", "years", "cdf", "consistency"):
        p = plots.get(key)
        if p is not None:
            out += [f"### {p.title}", "", f"![{p.alt}]({_image_ref(p, images)})", "", p.caption, ""]
        elif notes.get(key):
            out += [notes[key], ""]
    hdd = _hdd_sentence(plan)
    if hdd:
        out += ["### Hard-disk equivalence", "", hdd, ""]
    if plan.result.models:
        out += ["Models: " + ", ".join(f"`{m}`" for m in plan.result.models), ""]
    return "\n".join(out)


# ==============================================================================================
# entry point
# ==============================================================================================


def write_report(plan: pb.Plan, out_dir: Path, *, array_simulation_s: float = DEFAULT_ARRAY_SIMULATION_S,
                 simulation_timeout_s: float = DEFAULT_SIMULATION_TIMEOUT_S, image_base_url: str | None = None) -> Path:
    """Write ``out_dir/index.html`` and ``out_dir/report.md`` (plus its PNGs); return the HTML path.

    ``report.md`` links the PNGs relatively, or under ``image_base_url`` when given (where CI
    publishes ``out_dir``: the links then resolve in a pull-request comment);
    ``report-embedded.md`` is the same with the images as data URIs (one self-contained file, for
    renderers that show them: GitLab, VS Code; not GitHub comments, see docs/json.md).

    ``array_simulation_s`` is the simulated time per top array for the latency CDFs (0 draws them
    through the plan's percentiles instead); ``simulation_timeout_s`` bounds that simulation's wall
    time, after which the report falls back the same way.
    """
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    frame = _frame(plan)
    plots: dict[str, _Plot | None] = {}
    notes: dict[str, str] = {}
    with matplotlib.rc_context(_STYLE):
        plots["pareto"] = _pareto_plot(frame, plan)
        plots["years"] = _years_plot(frame)
        plots["cdf"], _ = _cdf_plot(plan, frame, array_simulation_s, simulation_timeout_s)
        plots["consistency"], notes["consistency"] = _consistency_plot(frame)
    for p in plots.values():
        if p is not None:
            (out_dir / p.name).write_bytes(p.png)
    html_path = out_dir / HTML_NAME
    html_path.write_text(_html(plan, frame, plots, notes), encoding="utf-8")
    (out_dir / MARKDOWN_NAME).write_text(_markdown(plan, frame, plots, notes, image_base_url or "relative"), encoding="utf-8")
    (out_dir / EMBEDDED_MARKDOWN_NAME).write_text(_markdown(plan, frame, plots, notes, "data"), encoding="utf-8")
    return html_path


def _main(argv: Sequence[str]) -> int:
    if len(argv) == 3 and argv[0] == "--simulate":
        _simulate_jobs(json.loads(Path(argv[1]).read_text()), Path(argv[2]))
        return 0
    print("usage: python -m arrayplan_services.report --simulate JOBS.json OUT.npz", file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(_main(sys.argv[1:]))
