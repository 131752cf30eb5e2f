"""Pictures of array simulations (matplotlib through the Agg canvas, files only; pyplot and the
process-wide backend are left alone), in the report's style (``plot_style.STYLE``).

* ``plot_latency_cdf``: host latency CDF of one or more candidate arrays, log latency axis, with a
  second panel of the tail (1 - CDF on a log axis) where p99, p99.9 and p99.99 live.
* ``plot_iops_over_time``: IOPS per second of each array over the simulated window (the reviews'
  consistency scatter, here for a whole array: garbage-collection dips of the members show up
  when they line up).
* ``plot_array``: both in one figure.

Each has a ``*_figure`` twin that returns the ``Figure`` (what the tests inspect: scales, labels,
titles); every axes has both axis labels and a title (wrapped to its axes), and the legends are
framed and opaque (a line behind one no longer strikes through its text).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import matplotlib
import numpy as np
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter

from arrayplan_engine.array import ArrayResult

from ..plot_style import STYLE, fit_titles, plain_ms

_TAIL_FLOOR = 1e-7
_TAIL_MARKS = ((1e-2, "p99"), (1e-3, "p99.9"), (1e-4, "p99.99"))


def _ms_axis(axis: Any) -> None:
    """Plain milliseconds at 1-2-5 steps on a log axis (0.05, 0.1, 0.2 ...), no minor labels."""
    axis.set_major_locator(LogLocator(base=10, subs=(1.0, 2.0, 5.0)))
    axis.set_major_formatter(FuncFormatter(lambda v, _: plain_ms(v)))
    axis.set_minor_formatter(NullFormatter())


def _draw_cdf(ax_cdf: Any, ax_tail: Any, results: Mapping[str, ArrayResult], kind: str) -> None:
    xs: list[float] = []
    for label, r in results.items():
        x, y = r.latency_cdf(kind)
        if x.size == 0:
            continue
        ms = x * 1e3
        xs.extend((float(ms[0]), float(ms[-1])))
        ax_cdf.step(ms, y, where="post", label=label)
        ax_tail.step(ms, np.clip(1.0 - y, _TAIL_FLOOR, 1.0), where="post", label=label)
    for ax in (ax_cdf, ax_tail):
        ax.set_xscale("log")
        ax.set_xlabel("host latency (ms, log scale)")
        ax.grid(True, which="both", alpha=0.3)
        if xs:
            ax.set_xlim(min(xs) / 1.3, max(xs) * 1.3)
        _ms_axis(ax.xaxis)
    ax_cdf.set_ylim(0.0, 1.02)
    ax_cdf.set_ylabel("fraction of host IOs completed")
    ax_cdf.set_title(f"latency CDF ({kind} IOs)")
    ax_tail.set_yscale("log")
    ax_tail.set_ylim(_TAIL_FLOOR / 2, 1.5)
    ax_tail.set_ylabel("fraction slower (1 − CDF, log scale)")
    ax_tail.set_title(f"latency tail ({kind} IOs)")
    x_text = ax_tail.get_xlim()[0]  # after the limits are set: the marks' labels sit at the left edge
    for q, name in _TAIL_MARKS:
        ax_tail.axhline(q, color="grey", lw=0.6, ls=":")
        ax_tail.text(x_text, q, f" {name}", va="bottom", fontsize=7, color="grey")
    if xs:
        ax_cdf.legend(loc="lower right", fontsize=8)
        ax_tail.legend(loc="upper right", fontsize=8)


def _draw_iops(ax: Any, results: Mapping[str, ArrayResult], log_scale: bool) -> None:
    for label, r in results.items():
        t = r.window_start_s + np.arange(r.iops_per_second.size)
        ax.plot(t, r.iops_per_second, ".", ms=3, label=label)
    ax.set_xlabel("simulated time (s)")
    if log_scale:
        ax.set_yscale("log")
        ax.set_ylabel("host IOPS per second (log scale)")
    else:
        top = max((float(r.iops_per_second.max()) for r in results.values() if r.iops_per_second.size), default=1.0)
        ax.set_ylim(0, top * 1.15 or 1.0)  # the highest second inside the axes, not on its edge
        ax.set_ylabel("host IOPS per second")
    ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:,.0f}"))
    ax.set_title("host IOPS over the simulated window")
    ax.grid(True, which="both", alpha=0.3)
    if results:
        ax.legend(loc="lower right", fontsize=8)


def latency_cdf_figure(results: Mapping[str, ArrayResult], *, kind: str = "all") -> Figure:
    """The latency CDF and its tail, side by side."""
    with matplotlib.rc_context(STYLE):
        fig = Figure(figsize=(11, 4.5))
        ax_cdf, ax_tail = fig.subplots(1, 2)
        _draw_cdf(ax_cdf, ax_tail, results, kind)
        _layout(fig)
    return fig


def iops_figure(results: Mapping[str, ArrayResult], *, log_scale: bool = False) -> Figure:
    """IOPS per second over the simulated window."""
    with matplotlib.rc_context(STYLE):
        fig = Figure(figsize=(11, 4))
        _draw_iops(fig.add_subplot(), results, log_scale)
        _layout(fig)
    return fig


def array_figure(results: Mapping[str, ArrayResult], *, kind: str = "all") -> Figure:
    """Latency CDF, its tail and IOPS vs time in one figure."""
    with matplotlib.rc_context(STYLE):
        fig = Figure(figsize=(11, 8))
        grid = fig.add_gridspec(2, 2)
        _draw_cdf(fig.add_subplot(grid[0, 0]), fig.add_subplot(grid[0, 1]), results, kind)
        _draw_iops(fig.add_subplot(grid[1, :]), results, log_scale=False)
        _layout(fig)
    return fig


def _layout(fig: Figure) -> None:
    FigureCanvasAgg(fig)
    fit_titles(fig)
    fig.tight_layout()


def _save(fig: Figure, path: str | Path) -> Path:
    out = Path(path)
    with matplotlib.rc_context(STYLE):
        fig.savefig(out, dpi=110)
    return out


def plot_latency_cdf(results: Mapping[str, ArrayResult], path: str | Path, *, kind: str = "all") -> Path:
    """Write the latency CDF (log scale) of each labelled result to ``path`` (PNG/SVG/PDF)."""
    return _save(latency_cdf_figure(results, kind=kind), path)


def plot_iops_over_time(results: Mapping[str, ArrayResult], path: str | Path, *, log_scale: bool = False) -> Path:
    """Write IOPS per second over the simulated window of each labelled result to ``path``."""
    return _save(iops_figure(results, log_scale=log_scale), path)


def plot_array(results: Mapping[str, ArrayResult], path: str | Path, *, kind: str = "all") -> Path:
    """Latency CDF, its tail and IOPS vs time in one figure."""
    return _save(array_figure(results, kind=kind), path)
