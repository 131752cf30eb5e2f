"""Plan reports: a self-contained HTML page and a Markdown twin for CI comments.

``write_report(plan, out_dir)`` reads everything from a finished ``pb.Plan`` (spec, result, trace
id) and writes ``out_dir/index.html`` (inline CSS, plots as base64 PNG data URIs, no network) and
``out_dir/report.md`` (the plots as PNG files next to it, referenced relatively or under a base URL
CI publishes them at) and ``out_dir/report-embedded.md`` (images inline as data URIs).

The package: ``columns`` (the recommendations table's one column specification, shared with the
CLI), ``frame`` (what the report shows, computed once; the latency CDFs' simulation through the
``Executor``), ``figures`` (matplotlib), ``page`` (Jinja2 templates under ``templates/``).
Beside the plan report: ``forecast`` (the forecast section and page of ``arrayplan forecast
--report``) and ``array_plots`` (the figures of ``arrayplan simulate --local --plot``), which only
the CLI imports. This module stays light (the CLI imports ``columns``); ``write_report`` loads the
rest on use.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

HTML_NAME = "index.html"
MARKDOWN_NAME = "report.md"
EMBEDDED_MARKDOWN_NAME = "report-embedded.md"
# Wall-clock budget of the simulation behind the latency CDFs (a cold numba cache compiles the
# array kernel in about a minute; a warm one answers in a few seconds); frame.py uses it.
DEFAULT_SIMULATION_TIMEOUT_S = 180.0

if TYPE_CHECKING:
    from arrayplan.v1 import planner_pb2 as pb


def write_report(plan: pb.Plan, out_dir: Path, **kwargs: Any) -> Path:
    """See ``page.write_report``."""
    from .page import write_report as write

    return write(plan, out_dir, **kwargs)
