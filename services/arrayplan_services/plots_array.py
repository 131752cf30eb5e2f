"""Pictures of array simulations (matplotlib, Agg backend, files only).

* ``plot_latency_cdf``: host latency CDF of one or more candidate arrays, log latency axis, with a
  second panel of the tail (1 - CDF on a log axis) where p99, p99.9 and p99.99 live.
* ``plot_iops_over_time``: IOPS per second of each array over the simulated window (the reviews'
  consistency scatter, here for a whole array: garbage-collection dips of the members show up
  when they line up).
* ``plot_array``: both in one figure.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np

from arrayplan_engine.array import ArrayResult


def _plt() -> Any:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def _draw_cdf(ax_cdf: Any, ax_tail: Any, results: Mapping[str, ArrayResult], kind: str) -> None:
    for label, r in results.items():
        x, y = r.latency_cdf(kind)
        if x.size == 0:
            continue
        ms = x * 1e3
        ax_cdf.step(ms, y, where="post", label=label)
        tail = np.clip(1.0 - y, 1e-7, 1.0)
        ax_tail.step(ms, tail, where="post", label=label)
    ax_cdf.set_xscale("log")
    ax_cdf.set_xlabel("host latency (ms)")
    ax_cdf.set_ylabel("fraction of host IOs")
    ax_cdf.set_title(f"latency CDF ({kind})")
    ax_cdf.grid(True, which="both", alpha=0.3)
    ax_tail.set_xscale("log")
    ax_tail.set_yscale("log")
    ax_tail.set_xlabel("host latency (ms)")
    ax_tail.set_ylabel("fraction slower (1 - CDF)")
    ax_tail.set_title("tail")
    for q, name in ((1e-2, "p99"), (1e-3, "p99.9"), (1e-4, "p99.99")):
        ax_tail.axhline(q, color="grey", lw=0.6, ls=":")
        ax_tail.text(ax_tail.get_xlim()[0] if ax_tail.lines else 1e-3, q, f" {name}", va="bottom", fontsize=7, color="grey")
    ax_tail.grid(True, which="both", alpha=0.3)
    ax_cdf.legend(fontsize=8)


def _draw_iops(ax: Any, results: Mapping[str, ArrayResult], log_scale: bool) -> None:
    for label, r in results.items():
        t = r.window_start_s + np.arange(r.iops_per_second.size)
        ax.plot(t, r.iops_per_second, ".", ms=3, label=label)
    ax.set_xlabel("time (s)")
    ax.set_ylabel("host IOPS (per second)")
    if log_scale:
        ax.set_yscale("log")
    ax.set_title("IOPS vs time")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8)


def plot_latency_cdf(results: Mapping[str, ArrayResult], path: str | Path, *, kind: str = "all") -> Path:
    """Write the latency CDF (log scale) of each labelled result to ``path`` (PNG/SVG/PDF)."""
    plt = _plt()
    fig, (ax_cdf, ax_tail) = plt.subplots(1, 2, figsize=(11, 4.5))
    _draw_cdf(ax_cdf, ax_tail, results, kind)
    fig.tight_layout()
    out = Path(path)
    fig.savefig(out, dpi=110)
    plt.close(fig)
    return out


def plot_iops_over_time(results: Mapping[str, ArrayResult], path: str | Path, *, log_scale: bool = False) -> Path:
    """Write IOPS per second over the simulated window of each labelled result to ``path``."""
    plt = _plt()
    fig, ax = plt.subplots(figsize=(11, 4))
    _draw_iops(ax, results, log_scale)
    fig.tight_layout()
    out = Path(path)
    fig.savefig(out, dpi=110)
    plt.close(fig)
    return out


def plot_array(results: Mapping[str, ArrayResult], path: str | Path, *, kind: str = "all") -> Path:
    """Latency CDF, its tail and IOPS vs time in one figure."""
    plt = _plt()
    fig = plt.figure(figsize=(11, 8))
    grid = fig.add_gridspec(2, 2)
    _draw_cdf(fig.add_subplot(grid[0, 0]), fig.add_subplot(grid[0, 1]), results, kind)
    _draw_iops(fig.add_subplot(grid[1, :]), results, log_scale=False)
    fig.tight_layout()
    out = Path(path)
    fig.savefig(out, dpi=110)
    plt.close(fig)
    return out
