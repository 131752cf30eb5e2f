"""The forecast section of a report: wear and fill over time with their intervals drawn.

``forecast_section(forecast, options)`` returns the section as HTML and Markdown plus its PNGs, for
any page to include; ``write_forecast_report(forecast, out_dir)`` writes a self-contained page
(``forecast.html``, inline images) and its Markdown twin (``forecast.md``, PNGs beside it). The
plan report (``page``) is a page of its own, drawn in the same plot style.

Drawn: each drive's life used over time (its history from the telemetry) and, from its last
sample, the path to the date it reaches its rated endurance (dashed): it leaves the sample at the
drive's current wear rate (continuous with the history: no kink) and bends exponentially, as a
rate compounding with growth does, to meet the forecast date (``projection``); the interval's
earliest and latest dates are the same kind of path, the band between them shaded. Then the used
capacity's samples, the fitted growth curve and its interval band up to the full line.

The page and the section are the report's Jinja2 templates (``templates/forecast.html.j2``,
``forecast_section.html.j2``, ``forecast.md.j2``, through ``jinja.ENV``): the HTML is autoescaped,
so a drive model, an array name or a warning cannot inject markup; the Markdown table goes through
``report.markdown.table`` like every other.
"""

from __future__ import annotations

import base64
import datetime as dt
import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import matplotlib
import numpy as np
from markupsafe import Markup
from matplotlib.dates import AutoDateLocator, ConciseDateFormatter
from matplotlib.figure import Figure

from arrayplan_engine import forecast as fc
from arrayplan_engine.units import DAY_S, YEAR_DAYS

from .figures import COLORS
from .figures import STYLE as _STYLE
from .figures import render as _render
from .jinja import ENV
from .markdown import table as markdown_table

HTML_NAME = "forecast.html"
MARKDOWN_NAME = "forecast.md"
_GREY = "#94a3b8"
_TARGET = "#b91c1c"


@dataclass(frozen=True, slots=True)
class SectionPlot:
    name: str
    png: bytes
    alt: str
    caption: str
    figure: Figure | None = field(default=None, repr=False, compare=False)  # what was drawn (for inspection)


def _d(t: float) -> dt.datetime:
    return dt.datetime.fromtimestamp(t, tz=dt.UTC)


def _day(t: float | None) -> str:
    return "-" if t is None else _d(t).strftime("%Y-%m-%d")


def _interval(w: fc.DateInterval) -> str:
    if w.time_s is None and w.earliest_s is None:
        return "not within 30 years"
    return f"{_day(w.time_s) if w.time_s else 'later'} ({_day(w.earliest_s)} .. {_day(w.latest_s) if w.latest_s else 'later'})"


def _axes_dates(ax: Any) -> None:
    loc = AutoDateLocator()
    ax.xaxis.set_major_locator(loc)
    ax.xaxis.set_major_formatter(ConciseDateFormatter(loc))


def projection(t0_s: float, v0: float, rate_per_day: float | None, t1_s: float | None, horizon_s: float,
               points: int = 80) -> tuple[np.ndarray, np.ndarray]:
    """A wear path in % from (``t0_s``, ``v0`` fraction) reaching 100 % at ``t1_s`` (None: past the
    horizon, drawn at the current rate up to ``horizon_s``): it leaves the start with
    ``rate_per_day`` (continuous with the history: no kink) and bends exponentially, as a rate
    compounding with growth does, to meet the forecast date: v0 + r0 (e^{k t} - 1) / k, k solved."""
    rem = 1.0 - v0
    end = min(t1_s, horizon_s) if t1_s is not None else horizon_s
    t = np.linspace(t0_s, max(end, t0_s + DAY_S), points)
    days = (t - t0_s) / DAY_S
    r0 = rate_per_day if rate_per_day is not None and rate_per_day > 0 else None
    if t1_s is None:
        v = v0 + (r0 or 0.0) * days
        return t, 100 * np.minimum(v, 1.0)
    span = max((t1_s - t0_s) / DAY_S, 1e-9)
    if r0 is None or rem <= 0:
        return t, 100 * np.minimum(v0 + rem * days / span, 1.0)

    def reached(k: float) -> float:  # growth by span days at exponent k (per day)
        return r0 * span if abs(k * span) < 1e-9 else r0 * math.expm1(k * span) / k

    lo, hi = -60.0 / span, 60.0 / span
    if not reached(lo) <= rem <= reached(hi):
        return t, 100 * np.minimum(v0 + rem * days / span, 1.0)  # the rate and the date disagree wildly: a straight line
    for _ in range(100):
        mid = 0.5 * (lo + hi)
        lo, hi = (mid, hi) if reached(mid) < rem else (lo, mid)
    k = 0.5 * (lo + hi)
    v = v0 + (r0 * days if abs(k * span) < 1e-9 else r0 * np.expm1(k * days) / k)
    return t, 100 * np.minimum(v, 1.0)


def _wear_plot(f: fc.ArrayForecast, worn_threshold: float) -> SectionPlot | None:
    drives = [d for d in f.drives if d.life_used_fraction is not None and d.history]
    if not drives:
        return None
    fig = Figure(figsize=(9.0, 4.6))
    ax = fig.add_subplot()
    groups = list(dict.fromkeys(d.group for d in drives))
    now = f.as_of_s
    horizon = now + 10 * YEAR_DAYS * DAY_S
    for gi, g in enumerate(groups):
        color = COLORS[gi % len(COLORS)]
        members = [d for d in drives if d.group == g]
        for k, d in enumerate(members):
            ts, vs = zip(*d.history)
            ax.plot([_d(t) for t in ts], [100 * v for v in vs], color=color, lw=1.0, alpha=0.8, label=f"group {g}" if k == 0 else None)
            w = d.wear_out
            # The projection leaves the drive's last sample with its current wear rate: no kink there.
            t0, v0, r0 = ts[-1], vs[-1], d.life_rate_per_day
            if w.earliest_s is not None:
                fast = projection(t0, v0, r0, min(w.earliest_s, horizon) if w.earliest_s > t0 else t0 + DAY_S, horizon)
                slow = projection(t0, v0, r0, w.latest_s, horizon)
                grid = np.linspace(t0, max(fast[0][-1], slow[0][-1]), 160)
                lo = np.interp(grid, *slow, right=slow[1][-1])
                hi = np.interp(grid, *fast, right=100.0)
                ax.fill_between([_d(t) for t in grid], lo, hi, color=color, alpha=0.10, lw=0)
            if w.time_s is not None and w.time_s <= horizon:
                px, py = projection(t0, v0, r0, w.time_s, horizon)
                ax.plot([_d(t) for t in px], py, color=color, lw=1.2, ls="--", alpha=0.9)
    ax.axhline(100, color=_TARGET, lw=1.0)
    ax.axhline(100 * (1 - worn_threshold), color=_GREY, lw=0.8, ls=":")
    ax.axvline(_d(now), color=_GREY, lw=0.8, ls=":")
    ax.text(_d(now), 2, " now", color="#334155", fontsize=8)
    ax.set_ylim(0, 105)
    ax.set_xlabel("date (UTC)")
    ax.set_ylabel("rated life used (%)")
    ax.set_title(f"{f.name}: wear over time and the date each drive reaches its rated endurance")
    _axes_dates(ax)
    ax.legend(loc="upper left")
    caption = ("Lines: each drive's life used from its telemetry. Dashed: from its last sample, at its current wear rate, to the "
               "forecast date of 100 %; shaded: the 90 % interval of that date (the paths to its earliest and latest dates). "
               "Dotted line: the PASSED-but-worn threshold.")
    first = f.wear_out
    alt = f"Wear over time for {len(drives)} drives; first drive reaches rated endurance {_interval(first)}."
    return SectionPlot(name="forecast-wear.png", png=_render(fig), figure=fig, alt=alt, caption=caption)


def _fill_plot(f: fc.ArrayForecast) -> SectionPlot | None:
    fl = f.fill
    if fl is None or not fl.history:
        return None
    fig = Figure(figsize=(9.0, 3.8))
    ax = fig.add_subplot()
    ts, us = zip(*fl.history)
    ax.plot([_d(t) for t in ts], [u / 1e12 for u in us], "o", ms=3, color=COLORS[0], label="used (samples)")
    if fl.level_log_bytes is not None and fl.slope_per_day is not None and fl.origin_s is not None:
        end_s = fl.full.latest_s or fl.full.time_s or (fl.origin_s + 3 * YEAR_DAYS * DAY_S)
        end_s = min(max(end_s, fl.origin_s + YEAR_DAYS * DAY_S), fl.origin_s + 10 * YEAR_DAYS * DAY_S)
        grid = np.linspace(min(ts), end_s, 200)
        days = (grid - fl.origin_s) / DAY_S
        slope, mean_day = fl.slope_per_day, fl.mean_day
        ybar = fl.level_log_bytes + slope * mean_day

        def curve(dl: float, ds: float) -> np.ndarray:
            return np.exp(ybar + dl + (slope + ds) * (days - mean_day)) / 1e12
        x = [_d(t) for t in grid]
        ax.plot(x, curve(0, 0), color=COLORS[0], lw=1.2, label=f"fit ({fl.growth_source})")
        ax.fill_between(x, curve(-fl.level_halfwidth, -fl.slope_halfwidth), curve(fl.level_halfwidth, fl.slope_halfwidth),
                        color=COLORS[0], alpha=0.12, lw=0, label="90 % interval")
    ax.axhline(fl.full_bytes / 1e12, color=_TARGET, lw=1.0, label=f"full ({fl.full_bytes / fl.usable_capacity_bytes:.0%} of usable)")
    ax.axhline(fl.usable_capacity_bytes / 1e12, color=_GREY, lw=0.8, ls=":", label="usable")
    ax.axvline(_d(f.as_of_s), color=_GREY, lw=0.8, ls=":")
    ax.set_xlabel("date (UTC)")
    ax.set_ylabel("used (TB)")
    ax.set_ylim(0, fl.usable_capacity_bytes / 1e12 * 1.05)
    ax.set_title(f"{f.name}: capacity used and the date it is full")
    _axes_dates(ax)
    ax.legend(loc="upper left")
    return SectionPlot(name="forecast-fill.png", png=_render(fig), figure=fig, alt=f"Capacity used over time; full {_interval(fl.full)}.",
                       caption="Dots: used capacity samples. Line: the growth fit; band: its 90 % interval, to the full line.")


def _section(f: fc.ArrayForecast, options: Sequence[Any], worn_threshold: float) -> tuple[dict[str, Any], list[SectionPlot]]:
    """The templates' context (``templates/forecast*.j2``) and the plots it shows."""
    with matplotlib.rc_context(_STYLE):
        plots = [p for p in (_wear_plot(f, worn_threshold), _fill_plot(f)) if p is not None]
    rows = [(d.group, d.serial, d.model or "?", d.basis + (f" ({d.catalog_drive})" if d.catalog_drive else ""),
             "-" if d.life_used_fraction is None else f"{d.life_used_fraction:.1%}", _interval(d.wear_out),
             "PASSED but worn" if d.passed_but_worn else "") for d in f.drives]
    head = ("group", "serial", "model", "basis", "life used", "rated endurance reached (90 % interval)", "flag")
    summary = [f"As of {_day(f.as_of_s)}: the first drive reaches its rated endurance {_interval(f.wear_out)}."]
    if f.fill is not None:
        summary.append(f"The array is full {_interval(f.fill.full)}.")
    context = {
        "name": f.name, "summary": " ".join(summary), "options": list(options),
        "warnings": list(f.warnings), "problems": list(f.problems), "notices": [*f.warnings, *f.problems],
        "head": head, "rows": rows, "table": Markup("\n".join(markdown_table(head, rows))),
        "plots": [{"name": Markup(p.name), "alt": p.alt, "caption": p.caption,
                   "src": "data:image/png;base64," + base64.b64encode(p.png).decode("ascii")} for p in plots],
    }
    return context, plots


def forecast_section(f: fc.ArrayForecast, options: Sequence[Any] = (), *, worn_threshold: float = fc.DEFAULT_WORN_THRESHOLD_FRACTION
                     ) -> tuple[str, str, list[SectionPlot]]:
    """(HTML, Markdown, plots) of the forecast section: ``forecast_section.html.j2`` (autoescaped)
    and ``forecast.md.j2``."""
    context, plots = _section(f, options, worn_threshold)
    return ENV.get_template("forecast_section.html.j2").render(context), ENV.get_template("forecast.md.j2").render(context), plots


def write_forecast_report(f: fc.ArrayForecast, out_dir: Path, *, options: Sequence[Any] = (),
                          worn_threshold: float = fc.DEFAULT_WORN_THRESHOLD_FRACTION) -> Path:
    """``out_dir/forecast.html`` (self-contained: ``forecast.html.j2`` around the section) and
    ``out_dir/forecast.md`` with its PNGs."""
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    context, plots = _section(f, options, worn_threshold)
    for p in plots:
        (out_dir / p.name).write_bytes(p.png)
    path = out_dir / HTML_NAME
    path.write_text(ENV.get_template("forecast.html.j2").render(context), encoding="utf-8")
    (out_dir / MARKDOWN_NAME).write_text(ENV.get_template("forecast.md.j2").render(context), encoding="utf-8")
    return path
