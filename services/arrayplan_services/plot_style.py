"""The plot style every arrayplan figure shares (the report's figures, the forecast's, the array plots'):
the matplotlib rc settings, plain-millisecond tick labels and titles wrapped to their axes. A
low-layer module (matplotlib only); ``report.figures`` re-exports it."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

STYLE: dict[Any, Any] = {
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
    # An opaque framed legend: a line drawn behind it (a target, a limit) no longer strikes its text.
    "legend.frameon": True,
    "legend.framealpha": 0.92,
    "legend.facecolor": "white",
    "legend.edgecolor": "#e2e8f0",
    "legend.fontsize": 9,
    "figure.dpi": 100,
    "savefig.dpi": 110,
    "savefig.facecolor": "white",
}


def plain_ms(v: float) -> str:
    """A tick in plain milliseconds: '0.05', '2', '1,000' (never '5e-02' or '10^{-1}')."""
    if v <= 0 or not math.isfinite(v):
        return ""
    return f"{v:,.0f}" if v >= 1 else np.format_float_positional(float(f"{v:.3g}"), trim="-")


def _wrap(text: str, fits: Any) -> str:
    """``text`` with line breaks added between words so each line ``fits``."""
    out: list[str] = []
    for para in text.split("\n"):
        line = ""
        for word in para.split(" "):
            trial = f"{line} {word}" if line else word
            if line and not fits(trial):
                out.append(line)
                line = word
            else:
                line = trial
        out.append(line)
    return "\n".join(out)


def fit_titles(fig: Figure) -> None:
    """Wrap every axes title that is wider than its axes (a long title ran into the next panel or
    off the figure: "clipped"). Call before ``tight_layout`` so the layout sees the wrapped title."""
    canvas = fig.canvas if isinstance(fig.canvas, FigureCanvasAgg) else FigureCanvasAgg(fig)
    renderer = canvas.get_renderer()  # type: ignore[no-untyped-call]  # Agg's, untyped in matplotlib's stubs
    for ax in fig.axes:
        width = ax.get_window_extent(renderer).width
        for loc in ("left", "center", "right"):
            text = ax.get_title(loc)
            if not text:
                continue
            t = ax.set_title(text, loc=loc)
            props = t.get_fontproperties()

            def fits(s: str, props: Any = props, width: float = width) -> bool:
                w, _, _ = renderer.get_text_width_height_descent(s, props, ismath=False)
                return bool(w <= 0.98 * width)

            wrapped = _wrap(text, fits)
            if wrapped != text:
                ax.set_title(wrapped, loc=loc)


__all__ = ["STYLE", "fit_titles", "plain_ms"]
