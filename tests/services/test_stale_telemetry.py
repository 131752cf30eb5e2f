"""Stale telemetry said so: ``arrayplan forecast`` (table and JSON) and ForecastArray on the real
server (session fixture in tests/conftest.py) say when the latest snapshot ("as of") is older than
the threshold before now (the caller's clock, or the date given)."""

from __future__ import annotations

import json
from pathlib import Path

import grpc
import pytest
from google.protobuf import duration_pb2
from google.rpc import error_details_pb2
from grpc_status import rpc_status

from arrayplan.v1 import planner_pb2 as pb
from arrayplan_services.cli.main import main

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "array-in-service" / "array.yaml"
STALE_TEXT = "stale telemetry: the latest snapshot is from 2025-07-01, 504 days (16.6 months) before 2026-11-17 (stale after 30 days)"


def test_the_cli_says_a_17_month_old_snapshot_is_stale(capsys: pytest.CaptureFixture[str]) -> None:
    """The example array's telemetry ends 2025-07-01 12:00 UTC: judged at 2026-11-17 it is 503.5
    days old."""
    assert main(["forecast", str(EXAMPLE), "--now", "2026-11-17"]) == 0
    out = capsys.readouterr().out
    assert "warning: " + STALE_TEXT[:60] in " ".join(out.split())
    assert main(["forecast", str(EXAMPLE), "--now", "2026-11-17", "--format", "json"]) == 0
    rec = json.loads(capsys.readouterr().out)
    assert rec["stale"] is True and rec["as_of_age_days"] == pytest.approx(503.5)
    assert rec["warnings"][0].startswith(STALE_TEXT)


def test_the_cli_is_quiet_about_fresh_telemetry_and_takes_a_threshold(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["forecast", str(EXAMPLE), "--now", "2025-07-15", "--format", "json"]) == 0
    rec = json.loads(capsys.readouterr().out)
    assert rec["stale"] is False and rec["as_of_age_days"] == pytest.approx(13.5)
    assert not any(w.startswith("stale telemetry") for w in rec["warnings"])
    assert main(["forecast", str(EXAMPLE), "--now", "2025-07-15", "--stale-after-days", "7", "--format", "json"]) == 0
    assert json.loads(capsys.readouterr().out)["stale"] is True


@pytest.mark.parametrize(("flag", "value"), [("--stale-after-days", "0"), ("--stale-after-days", "soon"), ("--now", "yesterday")])
def test_bad_staleness_flags_are_refused(flag: str, value: str, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exc:
        main(["forecast", str(EXAMPLE), flag, value])
    assert exc.value.code == 2
    assert flag in capsys.readouterr().err


def _request() -> pb.ForecastArrayRequest:
    from test_forecast_api import _request as forecast_request

    return forecast_request()


def test_forecast_array_reports_stale_telemetry(stub) -> None:  # type: ignore[no-untyped-def]
    from test_forecast_api import _ts

    req = _request()
    req.now_time.CopyFrom(_ts("2026-11-17"))
    resp = stub.ForecastArray(req, timeout=120)
    assert resp.telemetry_stale and resp.as_of_age.ToSeconds() == 503.5 * 86400
    assert resp.warnings[0].startswith(STALE_TEXT)
    req.now_time.CopyFrom(_ts("2025-07-15"))
    fresh = stub.ForecastArray(req, timeout=120)
    assert not fresh.telemetry_stale and fresh.as_of_age.ToSeconds() == 13.5 * 86400
    assert not any(w.startswith("stale telemetry") for w in fresh.warnings)
    req.stale_after.CopyFrom(duration_pb2.Duration(seconds=7 * 86400))
    assert stub.ForecastArray(req, timeout=120).telemetry_stale


def test_forecast_array_refuses_a_bad_threshold(stub) -> None:  # type: ignore[no-untyped-def]
    req = _request()
    req.stale_after.CopyFrom(duration_pb2.Duration(seconds=-1))
    with pytest.raises(grpc.RpcError) as err:
        stub.ForecastArray(req, timeout=60)
    assert err.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    status = rpc_status.from_call(err.value)
    assert status is not None
    bad = error_details_pb2.BadRequest()
    [d for d in status.details if d.Is(error_details_pb2.BadRequest.DESCRIPTOR)][0].Unpack(bad)
    assert [v.field for v in bad.field_violations] == ["stale_after"]
