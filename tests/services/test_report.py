"""The plan report: a real finished plan (engine planner in-process, converted to the API message)
rendered to HTML + Markdown, then rendered by headless Chromium and checked for a non-blank page."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import threading
import time
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from google.protobuf import duration_pb2
from markupsafe import escape

from arrayplan.v1 import planner_pb2 as pb
from arrayplan_engine import candidates, evaluation, plan_request, recommend
from arrayplan_engine.workload import Workload
from arrayplan_services import report
from arrayplan_services.api.convert import outcome_to_proto

CHROMIUM = "/usr/bin/chromium"
DRIVES = ("intel-dc-s3500-480gb", "intel-dc-s3700-400gb")
# Bounds the array simulation behind the latency CDFs: a warm numba cache answers in seconds,
# a cold one would compile for about a minute, and the report then falls back (and says so).
SIMULATION_TIMEOUT_S = 20.0


def _spec() -> pb.PlanSpec:
    """The API form of the request below (what a stored plan carries)."""
    return pb.PlanSpec(
        workload=pb.Workload(read_fraction=0.7, target_iops=20000, daily_write_bytes=1e12, display_name="oltp-test"),
        constraints=pb.Constraints(usable_capacity_bytes=4 * 10**12, latency_percentile=99.9,
                                   latency_target=duration_pb2.Duration(nanos=5_000_000)),
        service_life_years=5,
        candidate_space=pb.CandidateSpace(drive_models=DRIVES, layouts=("raid10", "raid6"), max_drive_count=24),
    )


def _plan(*, latency_target_s: float = 0.005, max_purchase_cost_usd: float = 0.0) -> pb.Plan:
    req = plan_request.PlanRequest(
        workload=Workload(read_fraction=0.7, target_iops=20000, daily_write_bytes=1e12),
        constraints=plan_request.Constraints(usable_capacity_bytes=4e12, latency_percentile=99.9, latency_target_s=latency_target_s,
                                   max_purchase_cost_usd=max_purchase_cost_usd),
        candidate_space=plan_request.CandidateSpace(drive_models=DRIVES, layouts=("raid10", "raid6"), max_drive_count=24),
    )
    outcome = recommend.plan(req)
    spec = _spec()
    spec.constraints.latency_target.FromNanoseconds(round(latency_target_s * 1e9))
    spec.constraints.max_purchase_cost_usd = max_purchase_cost_usd
    return pb.Plan(name="plans/test", spec=spec, state=pb.Plan.STATE_SUCCEEDED, trace_id="ab" * 16,
                   result=outcome_to_proto(outcome))


@pytest.fixture(scope="module")
def plan() -> pb.Plan:
    return _plan()


@pytest.fixture(scope="module")
def written(plan: pb.Plan, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, float]:
    out = tmp_path_factory.mktemp("report")
    t0 = time.monotonic()
    path = report.write_report(plan, out, simulation_timeout_s=SIMULATION_TIMEOUT_S)
    return path, time.monotonic() - t0


def _rows(html: str) -> dict[int, str]:
    return {int(m.group(1)): m.group(2) for m in re.finditer(r'<tr class="[^"]*" data-rank="(\d+)">(.*?)</tr>', html, re.DOTALL)}


def test_report_files_and_content(plan: pb.Plan, written: tuple[Path, float]) -> None:
    path, _ = written
    out = path.parent
    assert path == out / "index.html" and path.is_file()
    md_path = out / "report.md"
    assert md_path.is_file()
    html = path.read_text(encoding="utf-8")
    recs = plan.result.recommendations
    assert plan.result.constraints_met and len(recs) >= 3

    # Title: plan, stored run, trace id.
    assert "Capacity plan test" in html and "plans/test" in html and "ab" * 16 in html
    assert plan.result.summary in html
    # One table row per recommendation with its drive, count, layout and cost; explanations.
    rows = _rows(html)
    assert sorted(rows) == [r.rank for r in recs]
    for r in recs:
        row = rows[r.rank]
        assert r.drive_display_name in row and f">{r.drive_count}<" in row and f"${r.total_cost_usd:,.0f}" in row
        assert r.layout.upper() in row and (">yes<" in row) == r.meets_constraints
        assert html.count(r.explanation) >= 1
    assert "p99.9 ms" in html
    # Embedded images: Pareto, per-year, latency CDF, consistency (the winner is an SSD); no network.
    images = re.findall(r'<img src="data:image/png;base64,([A-Za-z0-9+/=]+)"', html)
    assert len(images) == 4
    assert all(len(i) > 10_000 for i in images)
    assert not re.search(r'(src|href)="(https?:)?//', html)
    assert "Hard-disk equivalence" in html and str(escape(plan.result.hdd_equivalence.explanation)) in html  # Jinja2's autoescape
    for m in plan.result.models:
        assert m in html
    # The CDF caption says where its curves come from.
    assert ("discrete-event array simulation" in html) or ("drawn through the plan" in html)

    md = md_path.read_text(encoding="utf-8")
    assert "| # | drive | n | layout |" in md and "|---:|---|---:|---|" in md
    assert sum(1 for line in md.splitlines() if re.match(r"\| \d+ \| ", line)) == len(recs)
    assert "ab" * 16 in md and "plans/test" in md
    pngs = re.findall(r"!\[[^\]]*\]\(([^)]+\.png)\)", md)
    assert sorted(pngs) == ["consistency.png", "latency_cdf.png", "pareto.png", "years.png"]
    for name in pngs:
        assert (out / name).stat().st_size > 10_000


def test_report_renders_in_chromium(written: tuple[Path, float], tmp_path: Path) -> None:
    if not Path(CHROMIUM).exists() and shutil.which("chromium") is None:
        pytest.skip("headless Chromium is not installed (Debian package `chromium`: apt-get install -y chromium)")
    from matplotlib import image

    path, _ = written
    shot = tmp_path / "report.png"
    cmd = [shutil.which("chromium") or CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
           "--disable-background-networking", "--disable-component-update", "--disable-sync",
           f"--user-data-dir={tmp_path / 'profile'}", f"--screenshot={shot}", "--window-size=1400,4000",
           path.resolve().as_uri()]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=60, check=False, env={**os.environ, "HOME": str(tmp_path)})
    assert shot.is_file(), f"no screenshot (exit {proc.returncode}):\n{proc.stderr[-2000:]}"
    pixels = image.imread(str(shot))
    assert pixels.shape[0] >= 3000 and pixels.shape[1] >= 1300
    assert float(np.var(pixels[..., :3])) > 0.005  # a blank page has variance 0
    # Keep a copy for a person to look at when KEEP_REPORT_SCREENSHOT names a directory.
    keep = os.environ.get("KEEP_REPORT_SCREENSHOT")
    if keep:
        Path(keep).mkdir(parents=True, exist_ok=True)
        shutil.copy(shot, Path(keep) / "report.png")
        shutil.copytree(path.parent, Path(keep) / "report", dirs_exist_ok=True)


def test_report_without_a_met_constraint(tmp_path: Path) -> None:
    # A latency target nothing meets (20 us, below one flash read): the nearest misses are listed, in red, and the report says so.
    plan = _plan(latency_target_s=0.00002)
    assert not plan.result.constraints_met and plan.result.recommendations
    path = report.write_report(plan, tmp_path, array_simulation_s=0)
    html = path.read_text(encoding="utf-8")
    assert "No array meets every constraint" in html
    rows = _rows(html)
    assert len(rows) == len(plan.result.recommendations)
    assert all(re.search(r'<tr class="miss" data-rank="' + str(rank) + '"', html) for rank in rows)
    assert "drawn through the plan" in html  # no simulation asked: the CDF is interpolated, and says so
    assert "**NO**" in (tmp_path / "report.md").read_text(encoding="utf-8")


def test_report_without_recommendations(tmp_path: Path) -> None:
    # A budget below the price of any array: every candidate is pruned, nothing is recommended.
    plan = _plan(max_purchase_cost_usd=1000.0)
    assert not plan.result.constraints_met and not plan.result.recommendations
    path = report.write_report(plan, tmp_path)
    html = path.read_text(encoding="utf-8")
    assert "there are no recommendations" in html.lower() and "ab" * 16 in html and plan.result.summary in html
    assert "<table" not in html and "<img" not in html
    md = (tmp_path / "report.md").read_text(encoding="utf-8")
    assert "no recommendations" in md and "plans/test" in md


def test_report_markdown_images_show_in_a_pull_request_comment(plan: pb.Plan, tmp_path: Path) -> None:
    """A comment cannot resolve a relative image: report.md links under the URL CI publishes the
    directory at; report-embedded.md carries the images inline (data URIs) in one file."""
    report.write_report(plan, tmp_path, array_simulation_s=0, image_base_url="https://ci.example/run/7/report/")
    md = (tmp_path / "report.md").read_text(encoding="utf-8")
    links = re.findall(r"!\[[^\]]*\]\(([^)]+)\)", md)
    assert links and all(u.startswith("https://ci.example/run/7/report/") and u.endswith(".png") for u in links)
    assert all((tmp_path / u.rsplit("/", 1)[1]).is_file() for u in links)
    embedded = (tmp_path / "report-embedded.md").read_text(encoding="utf-8")
    inline = re.findall(r"!\[[^\]]*\]\(data:image/png;base64,([A-Za-z0-9+/=]+)\)", embedded)
    assert len(inline) == len(links) and all(len(i) > 10_000 for i in inline)


def test_pareto_labels_cover_no_marker_and_no_other_label(plan: pb.Plan) -> None:
    """Each label box of the top 3 keeps clear of every marker (its drawn radius) and of the other
    labels, in display pixels after layout."""
    from matplotlib.text import Annotation

    from arrayplan_services.report import figures
    from arrayplan_services.report.frame import frame_of

    for p in (plan, _plan(latency_target_s=0.00002)):  # a front, and only nearest misses
        made = figures.pareto_figure(frame_of(p), p)
        assert made is not None
        fig, _ = made
        figures.render(fig)
        fig.canvas.draw()  # savefig's tight bounding box leaves the boxes' extents shifted: lay out again
        renderer = fig.canvas.get_renderer()
        ax = fig.axes[0]
        boxes = [a.get_bbox_patch().get_window_extent(renderer) for a in ax.texts if isinstance(a, Annotation)]
        assert len(boxes) == 3
        for coll in ax.collections:
            radii = np.sqrt(coll.get_sizes()) / 2 * fig.dpi / 72
            for (x, y), rad in zip(ax.transData.transform(coll.get_offsets()), np.broadcast_to(radii, len(coll.get_offsets())),
                                   strict=True):
                for b in boxes:
                    assert not (b.x0 - rad < x < b.x1 + rad and b.y0 - rad < y < b.y1 + rad), (x, y, b)
        for i, a in enumerate(boxes):
            for b in boxes[i + 1:]:
                assert not (a.x0 < b.x1 and b.x0 < a.x1 and a.y0 < b.y1 and b.y0 < a.y1)


def test_requirement_chips_show_the_final_years_need() -> None:
    """With 10%/year growth over 5 years the IOPS and capacity needs in year 5 are 1.1^4 times the
    first year's; the chips show both (the engine's checks carry the final year's), the capacity as
    the usable capacity that holds year 5's data at the fill target the stored spec states."""
    from arrayplan_services.api.convert import plan_request_from_proto
    from arrayplan_services.report.frame import frame_of, question

    spec = _spec()
    spec.workload.growth_fraction_per_year = 0.1
    spec.constraints.max_fill_fraction = 0.8  # as the planner stores the default it applied
    outcome = recommend.plan(plan_request_from_proto(spec))
    p = pb.Plan(name="plans/growth", spec=spec, state=pb.Plan.STATE_SUCCEEDED, result=outcome_to_proto(outcome))
    chips = question(p, frame_of(p))
    assert f"IOPS ≥ 20,000 ({20000 * 1.1**4:,.0f} in year 5)" in chips
    assert f"usable capacity ≥ 4 TB ({4 * 1.1**4 / 0.8:.3g} TB usable, its data at most 80% full in year 5)" in chips


def test_report_escapes_html_and_markdown_table_cells(plan: pb.Plan, tmp_path: Path) -> None:
    """Text from the plan is data: Jinja2 autoescapes it in the HTML; report.md (meant for
    pull-request comments, where GitHub passes some HTML through) carries no raw HTML either: a
    table cell's pipe is escaped and its <, > and & are entities, and paragraph text is escaped
    the same way (and its link and image syntax backslash-escaped)."""
    p = pb.Plan()
    p.CopyFrom(plan)
    p.result.summary = "<script>alert(1)</script> & more"
    p.result.recommendations[0].drive_display_name = "Drive <b>A|B</b>"
    report.write_report(p, tmp_path, array_simulation_s=0)
    html = (tmp_path / "index.html").read_text(encoding="utf-8")
    assert "<script>" not in html and "&lt;script&gt;alert(1)&lt;/script&gt; &amp; more" in html
    assert "Drive &lt;b&gt;A|B&lt;/b&gt;" in html
    md = (tmp_path / "report.md").read_text(encoding="utf-8")
    row1 = next(line for line in md.splitlines() if line.startswith("| 1 | "))
    assert "| Drive &lt;b&gt;A\\|B&lt;/b&gt; |" in row1
    header = next(line for line in md.splitlines() if line.startswith("| # | "))
    assert row1.replace("\\|", "").count("|") == header.count("|")  # as many cells as columns
    assert "&lt;script&gt;alert(1)&lt;/script&gt; &amp; more" in md
    # a drive display name with an image tag and an onerror handler, a link and an image: inert
    p.result.recommendations[0].drive_display_name = '<img src=x onerror="alert(1)">'
    p.result.summary = "[click](javascript:alert(1)) ![t](http://tracker.example/p.png) <svg onload=alert(1)>"
    report.write_report(p, tmp_path, array_simulation_s=0)
    md = (tmp_path / "report.md").read_text(encoding="utf-8")
    assert "<img src=x" not in md and "<svg" not in md and "[click](" not in md and "![t](" not in md
    assert "&lt;img src=x onerror=\"alert(1)\"&gt;" in md and "\\[click\\]" in md


def test_report_simulation_respects_the_callers_timeout(plan: pb.Plan) -> None:
    """Past the wall-clock budget the simulation is cancelled and the CDFs fall back, saying why."""
    from arrayplan_services.fanout import LocalExecutor
    from arrayplan_services.report.frame import frame_of, simulate_cdfs

    sims = simulate_cdfs(plan, frame_of(plan), executor=LocalExecutor(), timeout_s=0.0)
    assert not sims.simulated and not sims.curves
    assert sims.note == "the array simulation did not finish within 0 s (a cold numba cache compiles first)"


def test_report_simulates_only_the_top_arrays_worst_years_once(plan: pb.Plan, tmp_path: Path,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    """Everything but the latency CDFs is read from the plan: the report's array simulations are one
    per top array (its worst year, the planner's own case) plus the winner drive's consistency
    experiment, counted at ``array.simulate`` (the real function runs), with progress lines."""
    from arrayplan_engine import array
    from arrayplan_services.api.convert import plan_request_from_proto
    from arrayplan_services.fanout import LocalExecutor
    from arrayplan_services.report.frame import TOP_N, frame_of, worst_year

    real = array.simulate
    specs: list[array.ArraySpec] = []
    # an earlier report's in-process tasks may still finish in their own threads after their
    # timeout (frame.simulate_cdfs): count only the calls of threads this report starts
    earlier = {t.ident for t in threading.enumerate()} - {threading.get_ident()}

    def counted(spec: array.ArraySpec) -> array.ArrayResult:
        if threading.get_ident() not in earlier:
            specs.append(spec)
        return real(spec)

    monkeypatch.setattr(array, "simulate", counted)
    lines: list[str] = []
    report.write_report(plan, tmp_path, executor=LocalExecutor(), simulation_timeout_s=SIMULATION_TIMEOUT_S,
                        progress=lines.append)
    top = frame_of(plan).top
    assert 1 <= len(top) <= TOP_N
    req = plan_request_from_proto(plan.spec, "plan.spec")
    expected = []
    for r in top:
        cand = candidates.find_candidate(req, drive_model=r.drive_model, layout=r.layout, group_width=r.group_width,
                                 drive_count=r.drive_count, over_provisioning_fraction=r.over_provisioning_fraction)
        expected.append(evaluation.candidate_year_case(req, cand, worst_year(r)).spec)
    cdf_specs = [s for s in specs if s.workload.name != "consistency-4k-random-write-qd32"]
    assert len(cdf_specs) == len(top)  # no other year, no other array, no second run
    assert [(s.seed, s.duration_s, s.drive_count) for s in cdf_specs] == [(e.seed, e.duration_s, e.drive_count) for e in expected]
    assert len(specs) == len(top) + 1  # and the consistency experiment on the winner's drive
    assert any(line.startswith(f"simulating the worst year of the top {len(top)} arrays once each") for line in lines)
    assert sum(1 for line in lines if line.startswith("latency CDF ")) == len(top)
    assert "discrete-event array simulation" in (tmp_path / "index.html").read_text(encoding="utf-8")


PLAN_YAML = """\
workload:
  display_name: report-eq
  read_fraction: 0.7
  io_size_mix:
    - {io_bytes: 8 KiB, weight: 1}
  target_iops: 20000
  daily_write_bytes: 1 TB
constraints:
  usable_capacity_bytes: 4 TB
  latency_percentile: 99.9
  latency_target: 5ms
candidate_space:
  drive_models: [intel-dc-s3500-480gb, intel-dc-s3700-400gb]
  layouts: [raid10, raid6]
  max_drive_count: 16
service_life_years: 3
seed: 3
"""


def test_report_of_a_stored_run_equals_the_report_made_with_the_plan(server: Any, tmp_path: Path,
                                                                     capsys: pytest.CaptureFixture[str]) -> None:
    """`plan FILE --report A` and, later, `runs NAME --report B` against the same real server write
    the same report: the same Markdown, HTML and PNGs, byte for byte."""
    from arrayplan_services.cli.main import main

    plan_file = tmp_path / "plan.yaml"
    plan_file.write_text(PLAN_YAML, encoding="utf-8")
    a, b = tmp_path / "a", tmp_path / "b"
    code = main(["plan", str(plan_file), "--server", server.address, "--plan-id", "report-eq", "--report", str(a)])
    err = capsys.readouterr().err
    assert code == 0, err
    assert re.search(r"report: \[ *[0-9.]+ s\] simulating the worst year of the top [1-3] arrays once each", err)
    assert f"report written to {a / 'index.html'}" in err
    assert main(["runs", "report-eq", "--server", server.address, "--report", str(b), "--quiet"]) == 0
    assert capsys.readouterr().err == ""
    names = sorted(p.name for p in a.iterdir())
    assert names == sorted(p.name for p in b.iterdir())
    assert {"index.html", "report.md", "report-embedded.md", "latency_cdf.png"} <= set(names)
    for name in names:
        assert (a / name).read_bytes() == (b / name).read_bytes(), name
    md = (a / "report.md").read_text(encoding="utf-8")
    assert "plans/report-eq" in md and "discrete-event array simulation" in md


def test_runs_report_needs_a_run_name(server: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from arrayplan_services.cli.main import main

    assert main(["runs", "--server", server.address, "--report", str(tmp_path / "r")]) == 2
    assert "--report needs a run NAME" in capsys.readouterr().err
    assert not (tmp_path / "r").exists()
