"""``arrayplan ftl`` and ``arrayplan consistency`` (services/arrayplan_services/cli/ssd_commands.py),
driven through ``register`` on a fresh argparse parser."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import pytest

from arrayplan_services.cli import ssd_commands


def _run(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="arrayplan")
    sub = parser.add_subparsers(dest="command", required=True)
    ssd_commands.register(sub)
    args = parser.parse_args(argv)
    return int(args.func(args))


def test_ftl_json(capsys: pytest.CaptureFixture[str]) -> None:
    code = _run(["ftl", "--spare-factor", "0.1", "--pages-per-block", "64", "--policy", "greedy",
                 "--workload", "uniform", "--user-pages", "131072", "--format", "json"])
    assert code == 0
    out = json.loads(capsys.readouterr().out)
    assert out["spare_fraction_of_raw"] == 0.1  # --spare-factor is the old name of --spare-fraction-of-raw
    # Desnoyers greedy formula vs simulation: 3 % (docs/ssd-model.md, "Simulation vs formula").
    assert out["wa_measured"] == pytest.approx(out["wa_model"], rel=0.03)


def test_ftl_hotcold_text_and_blocks(capsys: pytest.CaptureFixture[str]) -> None:
    code = _run(["ftl", "--spare-factor", "0.2", "--pages-per-block", "64", "--policy", "fifo",
                 "--workload", "hotcold:0.8,0.2", "--blocks", "2048", "--format", "text"])
    assert code == 0
    text = capsys.readouterr().out
    assert "wa_measured=" in text and "wa_model=" in text and "workload=hotcold:0.8,0.2" in text


@pytest.mark.parametrize(
    ("argv", "field"),
    [
        (["--spare-factor", "-0.1"], "ftl.spare_fraction_of_raw"),
        (["--spare-fraction-of-raw", "1.5"], "ftl.spare_fraction_of_raw"),
        (["--spare-factor", "0.1", "--pages-per-block", "0"], "ftl.pages_per_block"),
        (["--spare-factor", "0.1", "--policy", "lru"], "ftl.policy"),
        (["--spare-factor", "0.1", "--workload", "zipf:x"], "workload"),
    ],
)
def test_ftl_bad_input_exits_2(argv: list[str], field: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert _run(["ftl", *argv]) == 2
    assert field in capsys.readouterr().err


def test_consistency_writes_figure_and_figures(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "consistency.png"
    code = _run(["consistency", "intel-dc-s3700-200gb", "intel-ssd-320-300gb", "--duration-s", "600", "--out", str(out)])
    assert code == 0
    assert out.stat().st_size > 10_000 and out.read_bytes()[:4] == b"\x89PNG"
    rows = json.loads(capsys.readouterr().out)
    assert [r["drive"] for r in rows] == ["intel-dc-s3700-200gb", "intel-ssd-320-300gb"]
    assert all(r["steady_iops_mean"] < r["fob_iops"] for r in rows)


def test_consistency_svg_with_op(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "c.svg"
    assert _run(["consistency", "intel-dc-s3500-480gb", "--op", "0.25", "--duration-s", "300", "--out", str(out)]) == 0
    assert b"<svg" in out.read_bytes()[:2000]
    assert json.loads(capsys.readouterr().out)["op_fraction"] == 0.25


@pytest.mark.parametrize(
    ("argv", "needle"),
    [
        (["consistency", "no-such-drive", "--out", "x.png"], "drive_model"),
        (["consistency", "intel-dc-s3500-480gb", "--op", "1.5", "--out", "x.png"], "op"),
        (["consistency", "intel-dc-s3500-480gb", "--out", "x.pdf"], "out"),
    ],
)
def test_consistency_bad_input_exits_2(argv: list[str], needle: str, capsys: pytest.CaptureFixture[str], tmp_path: Path,
                                       monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    assert _run(argv) == 2
    assert needle in capsys.readouterr().err
