"""The one Markdown table writer (``report.markdown``) and its one escaping rule, and that every
Markdown table the CLI and the reports print goes through it."""

from __future__ import annotations

import re

import pytest

from arrayplan.v1 import planner_pb2 as pb
from arrayplan_services.cli import render
from arrayplan_services.report import markdown as md

# A GFM table row split into cells: split on pipes not preceded by a backslash.
_SPLIT = re.compile(r"(?<!\\)\|")


def _cells(line: str) -> list[str]:
    assert line.startswith("| ") and line.endswith(" |"), line
    return [c.strip() for c in _SPLIT.split(line[1:-1])]


def _unescape(text: str) -> str:
    return re.sub(r"\\(.)", r"\1", text.replace("<br>", "\n"))


@pytest.mark.parametrize(("raw", "escaped"), [
    ("plain", "plain"),
    ("a|b", "a\\|b"),
    ("a\nb", "a<br>b"),
    ("a\r\nb\rc", "a<br>b<br>c"),
    ("back\\slash", "back\\\\slash"),
    ("already \\| escaped", "already \\\\\\| escaped"),
    ("", ""),
])
def test_cell_escaping_rule(raw: str, escaped: str) -> None:
    assert md.cell(raw) == escaped
    assert "\n" not in md.cell(raw) and "\r" not in md.cell(raw)
    assert _unescape(md.cell(raw)) == raw.replace("\r\n", "\n").replace("\r", "\n")


def test_table_keeps_one_row_per_line_and_cell_count() -> None:
    nasty = ["x | y", "two\nlines", "pipe at end|", "\\|", md.Strong("NO | maybe")]
    lines = md.table(["a|1", "b", "c", "d", "e"], [nasty, ["1", "2", "3", "4", "5"]], ["l", "r", "l", "r", "l"])
    assert len(lines) == 4  # header, delimiter, two rows: no newline leaked into a row
    assert lines[1] == "|---|---:|---|---:|---|"
    for line in (lines[0], lines[2], lines[3]):
        assert len(_cells(line)) == 5
    assert _cells(lines[0])[0] == "a\\|1"
    assert _cells(lines[2])[4] == "**NO \\| maybe**"
    assert [_unescape(c) for c in _cells(lines[2])[:4]] == ["x | y", "two\nlines", "pipe at end|", "\\|"]


def test_table_rejects_bad_shapes() -> None:
    with pytest.raises(ValueError, match="row 1 has 1 cells for 2 columns"):
        md.table(["a", "b"], [["1", "2"], ["1"]])
    with pytest.raises(ValueError, match=r"align\[1\] is 'c'; allowed: l, r"):
        md.table(["a", "b"], [], ["l", "c"])
    with pytest.raises(ValueError, match="at least one column"):
        md.table([], [])


def test_plan_markdown_uses_the_writer() -> None:
    """``--format markdown``: a drive name with a pipe and a newline stays in its cell."""
    r = pb.Recommendation(rank=1, drive_model="x", drive_display_name="Odd | name\nsecond line", drive_count=4,
                          layout="raid10", meets_constraints=False, binding_constraint="latency")
    plan = pb.Plan(name="plans/md", result=pb.PlanResult(recommendations=[r], summary="s"))
    lines = render.plan_markdown(plan).splitlines()
    head = next(i for i, line in enumerate(lines) if line.startswith("| # |"))
    header, row = _cells(lines[head]), _cells(lines[head + 2])
    assert len(row) == len(header)
    assert row[1] == "Odd \\| name<br>second line"
    assert row[-1] == "**NO**"


def test_cluster_status_markdown_uses_the_writer(capsys: pytest.CaptureFixture[str]) -> None:
    """``arrayplan cluster ... --format markdown``: a CapacityPlan status's pipes stay in their cells."""
    from arrayplan_services.cli.cluster_commands import _render

    rec = {"rank": 1, "driveCount": 8, "driveModel": "odd|model", "layout": "raid6", "groupWidth": 8,
           "usableCapacityBytes": 4e12, "predictedIops": 20000.0, "latencyAtPercentile": "0.002s",
           "totalCostUsd": 12345.0, "bindingConstraint": "latency\nx", "headroomFraction": 0.25}
    _render({"metadata": {"name": "p"}, "status": {"phase": "Succeeded", "recommendations": [rec]}}, "markdown")
    lines = capsys.readouterr().out.splitlines()
    head = next(i for i, line in enumerate(lines) if line.startswith("| # |"))
    row = _cells(lines[head + 2])
    assert len(row) == len(_cells(lines[head])) == 8
    assert row[1] == "8 x odd\\|model" and row[7] == "latency<br>x (+25.0%)"
