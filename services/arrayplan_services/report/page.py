"""The report's pages: ``index.html`` (Jinja2, autoescaped), ``report.md`` and
``report-embedded.md`` (Markdown, table cells' pipes escaped), rendered from the frame and figures."""

from __future__ import annotations

import base64
from collections.abc import Callable
from pathlib import Path
from typing import Any

import matplotlib
from markupsafe import Markup

from arrayplan.v1 import planner_pb2 as pb

from ..fanout import Executor
from . import DEFAULT_SIMULATION_TIMEOUT_S, EMBEDDED_MARKDOWN_NAME, HTML_NAME, MARKDOWN_NAME, figures
from . import markdown as md
from .columns import Column, columns, layout_name, ms, pct, row, usd
from .frame import CdfSet, Frame, frame_of, hdd_sentence, meta, question, simulate_cdfs, title, verdict
from .jinja import ENV as _ENV

# Simulated time is the plan's own (the CDF is the run its figures come from); this switch only
# says whether to simulate (0: draw the CDFs through the plan's percentiles).
DEFAULT_ARRAY_SIMULATION_S = 2.0
SECTIONS = ("pareto", "years", "cdf", "consistency")


def _data_uri(p: figures.Plot) -> str:
    return "data:image/png;base64," + base64.b64encode(p.png).decode("ascii")


def _image_ref(p: figures.Plot, images: str) -> str:
    """Where report Markdown points at a plot: ``"relative"`` (the PNG beside it), ``"data"`` (a
    base64 data URI: one self-contained file) or a base URL the PNGs are published under (what a
    pull-request comment needs: GitHub shows neither relative links nor data URIs in comments)."""
    if images == "relative":
        return p.name
    if images == "data":
        return _data_uri(p)
    return images.rstrip("/") + "/" + p.name


def _cards(frame: Frame) -> list[tuple[str, str, str]]:
    if not frame.recommendations:
        return []
    w = frame.recommendations[0]
    return [
        ("#1 array" if w.meets_constraints else "#1 nearest miss", f"{w.drive_count} × {w.drive_display_name or w.drive_model}",
         layout_name(w)),
        ("total cost", usd(w.total_cost_usd), f"{frame.service_life_years} years"),
        (f"{frame.pct_label} latency", ms(w.latency_at_percentile) + " ms",
         f"target {frame.latency_target_s * 1e3:.3g} ms" if frame.latency_target_s else "no target"),
        ("usable", f"{w.usable_capacity_bytes / 1e12:.2f} TB", f"{w.predicted_iops:,.0f} IOPS"),
        ("life used", pct(w.life_used_fraction), f"limit {frame.endurance_limit_fraction:.0%}"),
        ("binding", w.binding_constraint.replace("_", " "), pct(w.headroom_fraction, signed=True) + " headroom"),
    ]


def _context(plan: pb.Plan, frame: Frame, plots: dict[str, figures.Plot | None], notes: dict[str, str],
             images: str) -> dict[str, Any]:
    cols: tuple[Column, ...] = columns(coordinated_reads=plan.spec.coordinated_reads)
    vclass, vtext = verdict(plan, frame)
    return {
        "title": title(plan), "meta": meta(plan), "verdict_class": vclass, "verdict": vtext,
        "question": question(plan, frame) if plan.HasField("spec") else [], "summary": plan.result.summary,
        "cards": _cards(frame),
        "columns": [{"key": c.key, "align": c.align, "title": c.title(frame.pct_label)} for c in cols],
        "rows": [{"rank": r.rank, "meets": r.meets_constraints, "explanation": r.explanation,
                  "css": "miss" if not r.meets_constraints else ("best" if r.rank == 1 else ""),
                  "cells": list(zip(({"key": c.key, "align": c.align} for c in cols), row(r, cols), strict=True))}
                 for r in frame.recommendations],
        # the recommendations as a Markdown table (report.md): a miss's "meets" cell in bold
        "markdown_table": Markup("\n".join(md.table(
            [c.title(frame.pct_label) for c in cols],
            ([md.Strong(v) if c.key == "meets_constraints" and not r.meets_constraints else v
              for c, v in zip(cols, row(r, cols), strict=True)] for r in frame.recommendations),
            [c.align for c in cols]))),
        "sections": [{"plot": plots.get(k), "note": notes.get(k, ""),
                      "src": Markup(_image_ref(p, images)) if (p := plots.get(k)) is not None else ""} for k in SECTIONS],
        "hdd": hdd_sentence(plan), "models": list(plan.result.models), "plan_name": plan.name, "trace_id": plan.trace_id,
    }


def html(plan: pb.Plan, frame: Frame, plots: dict[str, figures.Plot | None], notes: dict[str, str]) -> str:
    return _ENV.get_template("report.html.j2").render(_context(plan, frame, plots, notes, "data"))


def markdown(plan: pb.Plan, frame: Frame, plots: dict[str, figures.Plot | None], notes: dict[str, str],
             images: str = "relative") -> str:
    return _ENV.get_template("report.md.j2").render(_context(plan, frame, plots, notes, images))


def write_report(plan: pb.Plan, out_dir: Path, *, array_simulation_s: float = DEFAULT_ARRAY_SIMULATION_S,
                 simulation_timeout_s: float = DEFAULT_SIMULATION_TIMEOUT_S, image_base_url: str | None = None,
                 executor: Executor | None = None, progress: Callable[[str], None] | None = None) -> Path:
    """Write ``out_dir/index.html`` and ``out_dir/report.md`` (plus its PNGs); return the HTML path.

    ``report.md`` links the PNGs relatively, or under ``image_base_url`` when given (where CI
    publishes ``out_dir``: the links then resolve in a pull-request comment);
    ``report-embedded.md`` is the same with the images as data URIs (one self-contained file, for
    renderers that show them: GitLab, VS Code; not GitHub comments, see docs/json.md).

    The latency CDFs come from simulating the top arrays on ``executor`` (in this process when
    None; the planner's Ray executor works too) within ``simulation_timeout_s`` of wall time;
    ``array_simulation_s=0`` skips the simulation and draws them through the plan's percentiles,
    as does a simulation that fails or runs out of time (the caption says which). Everything else
    is read from the plan; the consistency figure runs the winner's drive alone (one simulation,
    skipped past ``figures.CONSISTENCY_MAX_HOST_IOS``, the note says so). ``progress`` gets one
    line per step.
    """
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    frame = frame_of(plan)
    if not frame.top:
        sims = CdfSet()
    elif array_simulation_s <= 0:
        sims = CdfSet(note="array simulation disabled")
    else:
        sims = simulate_cdfs(plan, frame, executor=executor, timeout_s=simulation_timeout_s, progress=progress)
    say = progress or (lambda _line: None)
    plots: dict[str, figures.Plot | None] = {}
    notes: dict[str, str] = {}
    with matplotlib.rc_context(figures.STYLE):
        say("drawing the Pareto front and the service life from the plan")
        plots["pareto"] = figures.pareto_plot(frame, plan)
        plots["years"] = figures.years_plot(frame)
        plots["cdf"] = figures.cdf_plot(plan, frame, sims)
        if frame.recommendations:
            say("the consistency experiment on the winner's drive (run only within its IO budget)")
        plots["consistency"], notes["consistency"] = figures.consistency_plot(frame)
        if notes["consistency"]:
            say(notes["consistency"])
    for p in plots.values():
        if p is not None:
            (out_dir / p.name).write_bytes(p.png)
    html_path = out_dir / HTML_NAME
    html_path.write_text(html(plan, frame, plots, notes), encoding="utf-8")
    (out_dir / MARKDOWN_NAME).write_text(markdown(plan, frame, plots, notes, image_base_url or "relative"), encoding="utf-8")
    (out_dir / EMBEDDED_MARKDOWN_NAME).write_text(markdown(plan, frame, plots, notes, "data"), encoding="utf-8")
    return html_path
