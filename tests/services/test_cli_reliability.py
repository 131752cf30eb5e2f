"""``arrayplan reliability`` (services/arrayplan_services/cli/reliability_command.py): through ``register``
on a fresh argparse parser, and as ``python -m arrayplan_services.cli.main reliability`` once the
module is in the CLI's plugin list."""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

import pytest

from arrayplan_engine import reliability
from arrayplan_engine.layout import make_layout
from arrayplan_services.cli import reliability_command

ROOT = Path(__file__).resolve().parents[2]


def _run(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="arrayplan")
    sub = parser.add_subparsers(dest="command", required=True)
    reliability_command.register(sub)
    args = parser.parse_args(["reliability", *argv])
    return int(args.func(args))


def _json(argv: list[str], capsys: pytest.CaptureFixture[str]) -> dict[str, object]:
    assert _run(argv) == 0
    return dict(json.loads(capsys.readouterr().out))


def test_markov_json(capsys: pytest.CaptureFixture[str]) -> None:
    # RAID 5 of 8, AFR 1% (MTTF = 876 000 h), 24-h rebuilds: MTTDL ~ MTTF^2 / (8 * 7 * 24) = 5.71e8 h.
    out = _json(["--layout", "raid5", "--drives", "8", "--afr", "0.01", "--repair-hours", "24", "--method", "markov"], capsys)
    assert {"mttdl_hours", "annual_loss_probability", "service_life_loss_probability"} <= out.keys()
    assert out["group_width"] == 8 and out["group_count"] == 1 and out["failures_tolerated"] == 1
    assert out["mttdl_hours"] == pytest.approx(876_000.0**2 / (8 * 7 * 24), rel=1e-3)
    engine = reliability.array_reliability(make_layout("raid5", 8), 8, annual_failure_rate=0.01, repair_hours=24.0)
    assert out["service_life_loss_probability"] == engine.service_life_loss_probability
    assert out["trials"] is None and out["mttdl_stderr_hours"] is None  # every field present (docs/json.md)


def test_ure_flags(capsys: pytest.CaptureFixture[str]) -> None:
    # RAID 6 of 12 x 16 TB at UBER 1e-15: a last-level rebuild reads 10 * 16e12 * 8 = 1.28e15 bits,
    # h = 1 - e^-1.28 = 0.722; the MTTDL falls ~400-fold against no UREs.
    base = ["--layout", "raid6", "--drives", "24", "--group-width", "12", "--afr", "0.01", "--repair-hours", "24"]
    with_ure = _json([*base, "--uber", "1e-15", "--drive-bytes", "16e12"], capsys)
    without = _json(base, capsys)
    assert with_ure["rebuild_failure_probability"] == pytest.approx(0.7220, abs=1e-4)
    assert without["rebuild_failure_probability"] == 0.0
    assert 300 < without["mttdl_hours"] / with_ure["mttdl_hours"] < 3000  # type: ignore[operator]


def test_binomial_reproduces_backblaze(capsys: pytest.CaptureFixture[str]) -> None:
    # Backblaze's README example, 4+2 shards, AFR 0.10, 1-day replacement: annual loss 1.500e-07.
    out = _json(["--layout", "ec:4+2", "--drives", "6", "--afr", "0.10", "--repair-hours", "24", "--method", "binomial",
                 "--service-life-years", "1"], capsys)
    assert f"{out['annual_loss_probability']:.3e}" == "1.500e-07"
    assert out["service_life_loss_probability"] == pytest.approx(out["annual_loss_probability"], rel=1e-12)


def test_closed_form_and_text(capsys: pytest.CaptureFixture[str]) -> None:
    assert _run(["--layout", "raid10", "--drives", "8", "--afr", "0.02", "--repair-hours", "12", "--method", "closed-form",
                 "--format", "text"]) == 0
    text = capsys.readouterr().out
    assert "mttdl_hours" in text and "service_life_loss_probability" in text and "closed-form" in text
    # 4 mirror pairs: MTTF^2 / (2 MTTR) / 4 = 438 000^2 / 24 / 4 = 1.998e9 h.
    line = next(ln for ln in text.splitlines() if ln.startswith("mttdl_hours"))
    assert float(line.split()[1]) == pytest.approx(438_000.0**2 / 24 / 4, rel=1e-5)


def test_monte_carlo_is_seeded(capsys: pytest.CaptureFixture[str]) -> None:
    # Fast failures (AFR 87.6 = MTTF 100 h, 5-h rebuilds) so losses happen within the 0.05-year life.
    argv = ["--layout", "raid6", "--drives", "6", "--afr", "87.6", "--repair-hours", "5", "--service-life-years", "0.05",
            "--method", "monte-carlo", "--trials", "5000", "--seed", "42"]
    a = _json(argv, capsys)
    b = _json(argv, capsys)
    assert a == b and a["trials"] == 5000 and a["seed"] == 42
    markov = reliability.array_reliability(make_layout("raid6", 6), 6, annual_failure_rate=87.6, repair_hours=5.0,
                                           service_life_years=0.05)
    stderr = a["service_life_loss_probability_stderr"]
    assert abs(a["service_life_loss_probability"] - markov.service_life_loss_probability) < 4 * stderr  # type: ignore[operator]


def test_monte_carlo_without_losses_prints_null(capsys: pytest.CaptureFixture[str]) -> None:
    out = _json(["--layout", "raid6", "--drives", "12", "--afr", "0.01", "--repair-hours", "24", "--method", "monte-carlo",
                 "--trials", "1000"], capsys)
    assert out["mttdl_hours"] is None and out["service_life_loss_probability"] == 0.0


@pytest.mark.parametrize(("argv", "field", "flag"), [
    (["--layout", "raid5", "--drives", "8", "--afr", "-0.01", "--repair-hours", "24"], "annual_failure_rate", "--afr"),
    (["--layout", "raid5", "--drives", "8", "--afr", "0.01", "--repair-hours", "0"], "repair_hours", "--repair-hours"),
    (["--layout", "raid5", "--drives", "8", "--afr", "0.01", "--repair-hours", "24", "--uber", "1e-15"],
     "drive_capacity_bytes", "--drive-bytes"),
    (["--layout", "raid7", "--drives", "8", "--afr", "0.01", "--repair-hours", "24"], "layout", "--layout"),
    (["--layout", "raid5", "--drives", "4", "--group-width", "8", "--afr", "0.01", "--repair-hours", "24"],
     "drive_count", "--drives"),
    (["--layout", "raid5", "--drives", "8", "--group-width", "2", "--afr", "0.01", "--repair-hours", "24"],
     "layout.group_width", "--group-width"),
    (["--layout", "raid5", "--drives", "8", "--afr", "0.01", "--repair-hours", "24", "--service-life-years", "-1"],
     "service_life_years", "--service-life-years"),
    (["--layout", "raid5", "--drives", "8", "--afr", "0.01", "--repair-hours", "24", "--method", "monte-carlo",
      "--trials", "5"], "trials", "--trials"),
])
def test_bad_input_exits_2(argv: list[str], field: str, flag: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert _run(argv) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert f"{field}:" in captured.err and f"(flag {flag})" in captured.err


@pytest.mark.parametrize("argv", [
    ["--layout", "raid5", "--drives", "8", "--afr", "0.01", "--repair-hours", "24", "--method", "weibull"],
    ["--layout", "raid5", "--drives", "eight", "--afr", "0.01", "--repair-hours", "24"],
    ["--layout", "raid5", "--drives", "8", "--repair-hours", "24"],
])
def test_argparse_errors_exit_2(argv: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as e:
        _run(argv)
    assert e.value.code == 2


def test_through_the_real_cli() -> None:
    cmd = [sys.executable, "-m", "arrayplan_services.cli.main", "reliability", "--layout", "ec:8+3", "--drives", "22",
           "--afr", "0.015", "--repair-hours", "48", "--method", "markov", "--format", "json"]
    done = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)
    assert out["group_count"] == 2 and out["failures_tolerated"] == 3
    bad = subprocess.run([*cmd[:-6], "--afr", "2000", "--repair-hours", "48"], capture_output=True, text=True, cwd=ROOT,
                         timeout=120, check=False)
    assert bad.returncode == 2 and "annual_failure_rate" in bad.stderr
