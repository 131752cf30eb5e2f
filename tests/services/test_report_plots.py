"""The report's, the forecast's and the array simulation's plots, checked on the matplotlib
objects (scales, labels, titles, legends, label and curve positions), not on pixels."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import matplotlib
import numpy as np
import pytest
from matplotlib.figure import Figure
from matplotlib.text import Annotation

from arrayplan.v1 import planner_pb2 as pb
from arrayplan_services.report import figures
from arrayplan_services.report.frame import CdfSet, frame_of

ROOT = Path(__file__).resolve().parents[2]


def _is_colorbar(ax: Any) -> bool:
    return ax.get_label() == "<colorbar>"


def check_axes(fig: Figure) -> None:
    """Every axes (but a colour bar) has both axis labels and a title; each title is no wider than
    its axes (a wider one ran into the next panel); every legend is framed and opaque (a line behind
    it would otherwise strike through its text)."""
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()  # type: ignore[attr-defined]
    for ax in fig.axes:
        if _is_colorbar(ax):
            assert ax.get_ylabel() or ax.get_xlabel()
            continue
        assert ax.get_xlabel().strip(), f"no x label on {ax.get_title(loc='left') or ax.get_title()!r}"
        assert ax.get_ylabel().strip(), f"no y label on {ax.get_title(loc='left') or ax.get_title()!r}"
        titles = [t for t in (ax.title, ax._left_title, ax._right_title) if t.get_text()]
        assert titles, f"no title on the axes labelled {ax.get_ylabel()!r}"
        width = ax.get_window_extent(renderer).width
        for t in titles:
            assert t.get_window_extent(renderer).width <= width + 1.0, t.get_text()
        legend = ax.get_legend()
        if legend is not None:
            frame = legend.get_frame()
            assert frame.get_visible() and legend.get_frame_on()
            assert frame.get_alpha() is not None and frame.get_alpha() >= 0.9
            assert matplotlib.colors.to_rgba(frame.get_facecolor())[:3] == (1.0, 1.0, 1.0)


def _recommendation(rank: int, latencies_ms: list[float], *, cost: float) -> pb.Recommendation:
    r = pb.Recommendation(rank=rank, drive_model="intel-dc-s3500-480gb", drive_display_name="Intel SSD DC S3500 480GB",
                          drive_count=4 + 2 * rank, layout="raid6", group_width=4 + 2 * rank, total_cost_usd=cost, meets_constraints=True,
                          binding_constraint="latency", headroom_fraction=0.5, data_loss_probability=1e-6,
                          pareto_optimal=True)
    r.latency_p50.FromNanoseconds(round(latencies_ms[0] * 0.3e6))
    r.latency_at_percentile.FromNanoseconds(round(max(latencies_ms) * 1e6))
    for y, lat in enumerate(latencies_ms, start=1):
        yf = r.years.add(year=y, required_iops=20000.0 * 1.2 ** (y - 1), predicted_iops=300000.0,
                         life_used_fraction=0.01, cumulative_life_used_fraction=0.01 * y)
        yf.latency_at_percentile.FromNanoseconds(round(lat * 1e6))
    return r


def _plan(latencies: list[list[float]]) -> pb.Plan:
    """A plan whose top arrays' per-year latencies are the given ones (ms), target 5 ms."""
    spec = pb.PlanSpec(constraints=pb.Constraints(latency_percentile=99.9), service_life_years=len(latencies[0]))
    spec.constraints.latency_target.FromNanoseconds(5_000_000)
    recs = [_recommendation(i + 1, lat, cost=10000.0 + 1500 * i) for i, lat in enumerate(latencies)]
    return pb.Plan(name="plans/plots", spec=spec, state=pb.Plan.STATE_SUCCEEDED,
                   result=pb.PlanResult(recommendations=recs, constraints_met=True))


def test_years_latency_axis_is_log_when_a_small_latency_would_sit_on_zero() -> None:
    """0.04 ms against a 5 ms target: a log axis where both are visible; 2-4 ms: a linear one."""
    plan = _plan([[0.04, 0.05, 0.9], [2.0, 3.0, 4.0]])
    with matplotlib.rc_context(figures.STYLE):
        p = figures.years_plot(frame_of(plan))
    assert p is not None and p.figure is not None
    check_axes(p.figure)
    lat_axes = [ax for ax in p.figure.axes if ax.get_title(loc="left").startswith("latency at")]
    assert len(lat_axes) == 2
    small, plain = lat_axes
    assert small.get_yscale() == "log" and "log scale" in small.get_ylabel()
    lo, hi = small.get_ylim()
    assert lo <= 0.04 / 1.5 and hi >= 5.0 * 1.5  # the smallest latency well above the bottom, the target below the top
    ticks = [small.yaxis.get_major_formatter()(v, 0) for v in small.get_yticks() if lo <= v <= hi]
    assert "0.05" in ticks and "5" in ticks  # plain milliseconds, no powers of ten
    assert plain.get_yscale() == "linear" and plain.get_ylim()[0] == 0.0 and plain.get_ylim()[1] >= 5.0


def test_report_figures_have_labels_titles_and_framed_legends() -> None:
    """Pareto, years and CDF figures of a plan; a long array name wraps its title."""
    plan = _plan([[0.04, 0.05, 0.9], [2.0, 3.0, 4.0], [0.5, 0.6, 0.7]])
    plan.result.recommendations[0].drive_display_name = "Intel SSD DC S3500 480GB with a very long marketing name (2.5in, SATA)"
    frame = frame_of(plan)
    with matplotlib.rc_context(figures.STYLE):
        plots = [figures.pareto_plot(frame, plan), figures.years_plot(frame), figures.cdf_plot(plan, frame, CdfSet(note="off"))]
    for p in plots:
        assert p is not None and p.figure is not None
        check_axes(p.figure)
    years = plots[1].figure  # type: ignore[union-attr]
    assert years is not None
    long_title = years.axes[0].get_title(loc="left")
    assert "very long" in long_title.replace("\n", " ") and long_title.count("\n") >= 2  # wrapped, not clipped
    cdf = plots[2].figure  # type: ignore[union-attr]
    assert cdf is not None and cdf.axes[0].get_xscale() == "log" and cdf.axes[0].get_yscale() == "logit"


def test_pareto_labels_sit_beside_their_points() -> None:
    """Each of the top 3 labels is within 120 px (display) of its own point, covers no marker and
    no other label."""
    plan = _plan([[0.5], [0.6], [0.7]])
    for i, r in enumerate(plan.result.recommendations):
        r.headroom_fraction = 0.2 + 0.05 * i
    for k in range(12):  # a crowd of other ranked arrays around them
        plan.result.recommendations.append(_recommendation(4 + k, [0.4 + 0.05 * k], cost=9000.0 + 600 * k))
        plan.result.recommendations[-1].pareto_optimal = False
    frame = frame_of(plan)
    with matplotlib.rc_context(figures.STYLE):
        made = figures.pareto_figure(frame, plan)
    assert made is not None
    fig, _ = made
    figures.render(fig)
    fig.canvas.draw()  # savefig's tight bounding box leaves the boxes' extents shifted: lay out again
    renderer = fig.canvas.get_renderer()  # type: ignore[attr-defined]
    ax = fig.axes[0]
    anns = [a for a in ax.texts if isinstance(a, Annotation)]
    assert len(anns) == 3
    boxes = [a.get_bbox_patch().get_window_extent(renderer) for a in anns]
    for a, b in zip(anns, boxes, strict=True):
        px, py = ax.transData.transform(a.xy)
        dx = max(b.x0 - px, 0.0, px - b.x1)
        dy = max(b.y0 - py, 0.0, py - b.y1)
        assert math.hypot(dx, dy) <= 120.0, (a.get_text(), math.hypot(dx, dy))
    for coll in ax.collections:
        radii = np.sqrt(coll.get_sizes()) / 2 * fig.dpi / 72
        for (x, y), rad in zip(ax.transData.transform(coll.get_offsets()), np.broadcast_to(radii, len(coll.get_offsets())),
                               strict=True):
            for b in boxes:
                assert not (b.x0 - rad < x < b.x1 + rad and b.y0 - rad < y < b.y1 + rad)
    for i, a in enumerate(boxes):
        for b in boxes[i + 1:]:
            assert not (a.x0 < b.x1 and b.x0 < a.x1 and a.y0 < b.y1 and b.y0 < a.y1)
    check_axes(fig)


def test_forecast_projection_leaves_the_last_sample_without_a_kink() -> None:
    """The example array in service: each drive's dashed projection starts at its last sample (no
    gap, no jump), with the slope of its current wear rate, and ends at 100 % on the forecast date."""
    from arrayplan_engine.catalog import builtin_catalog
    from arrayplan_engine.units import DAY_S
    from arrayplan_services.api.arrayfile import forecast_file, load_array_file
    from arrayplan_services.report.forecast import forecast_section, projection

    f, _ = forecast_file(load_array_file(ROOT / "examples" / "array-in-service" / "array.yaml"), builtin_catalog(), ())
    _, _, plots = forecast_section(f)
    assert {p.name for p in plots} == {"forecast-wear.png", "forecast-fill.png"}
    for p in plots:
        assert p.figure is not None
        check_axes(p.figure)
    checked = 0
    for d in f.drives:
        if d.life_used_fraction is None or not d.history or d.wear_out.time_s is None or not d.life_rate_per_day:
            continue
        t0, v0 = d.history[-1]
        t, v = projection(t0, v0, d.life_rate_per_day, d.wear_out.time_s, d.wear_out.time_s + DAY_S)
        assert t[0] == t0 and v[0] == pytest.approx(100 * v0, abs=1e-9)
        assert v[-1] == pytest.approx(100.0, abs=1e-6) and t[-1] == pytest.approx(d.wear_out.time_s)
        slope0 = (v[1] - v[0]) / ((t[1] - t[0]) / DAY_S)  # % per day over the first step
        assert slope0 == pytest.approx(100 * d.life_rate_per_day, rel=0.05)
        assert np.all(np.diff(v) >= 0)
        checked += 1
    assert checked >= 6


def test_array_plots_have_labels_titles_and_log_latency_axes(tmp_path: Path) -> None:
    """report.array_plots on a real (short) array simulation: latency on log axes in plain ms, the tail on
    a log axis, both axis labels and a title on every panel; the file is written."""
    from arrayplan_engine import array, simulation
    from arrayplan_engine.catalog import builtin_catalog
    from arrayplan_engine.layout import make_layout
    from arrayplan_engine.workload import Workload
    from arrayplan_services.report import array_plots

    drive = builtin_catalog().get("intel-dc-s3500-480gb")
    spec = simulation.array_spec(drive, make_layout("raid10", 4), 4,
                               Workload(read_fraction=0.7, io_size_mix=((8192, 1.0),), queue_depth=16),
                               fill_fraction=0.5, duration_s=0.5, seed=1)
    result = array.simulate(spec)
    fig = array_plots.array_figure({"4 x S3500 RAID10": result})
    check_axes(fig)
    cdf, tail, iops = fig.axes
    assert cdf.get_xscale() == "log" and tail.get_xscale() == "log" and tail.get_yscale() == "log"
    x, _ = result.latency_cdf("all")
    lo, hi = cdf.get_xlim()
    assert lo < x[0] * 1e3 and hi > x[-1] * 1e3
    assert iops.get_ylim()[0] == 0.0
    out = array_plots.plot_array({"a": result}, tmp_path / "a.png")
    assert out.stat().st_size > 10_000


def test_consistency_figure_of_a_fast_drive_runs_on_a_similar_drive(monkeypatch: pytest.MonkeyPatch) -> None:
    """A D7-P5600 winner (2000 s at its catalog rate is over 500 M IOs) gets its figure from the
    similar drive the consistency command runs (ssd.consistency_scale), and the caption says so;
    past the report's budget even so, it gets a note naming the budget and the command, and no
    simulation at all."""
    from arrayplan_engine import array, ssd

    real, calls = array.simulate, []

    def counted(spec: array.ArraySpec) -> array.ArrayResult:  # the real simulation, counted
        calls.append(spec)
        return real(spec)

    monkeypatch.setattr(array, "simulate", counted)
    plan = _plan([[0.5]])
    plan.result.recommendations[0].drive_model = "intel-d7-p5600-6400gb"
    ios = figures.consistency_host_ios(array_drive("intel-d7-p5600-6400gb"))
    k = ssd.consistency_scale(ios)
    assert ios > 500e6 and k > 1 and ios / k <= figures.CONSISTENCY_MAX_HOST_IOS
    plot, note = figures.consistency_plot(frame_of(plan))
    assert plot is not None and note == "" and len(calls) == 1
    assert f"Simulated on a similar drive {k} times smaller at QD {ssd.QUEUE_DEPTH // k}" in plot.caption

    calls.clear()
    monkeypatch.setattr(figures, "CONSISTENCY_MAX_HOST_IOS", ios / k / 2)
    plot, note = figures.consistency_plot(frame_of(plan))
    assert plot is None and calls == []
    assert "past the report's budget of" in note and "`arrayplan consistency intel-d7-p5600-6400gb` runs it" in note
    assert f"on a similar drive {k} times smaller" in note


def array_drive(name: str) -> object:
    from arrayplan_engine.catalog import builtin_catalog

    return builtin_catalog().get(name)
