"""Errors a client can use, without a server: INTERNAL carries only an error id
that is in the server log, details are bounded, unknown names suggest the closest first, token
files are checked line by line without echoing a token."""

from __future__ import annotations

import logging
import sqlite3
from pathlib import Path

import pytest
from google.rpc import code_pb2, error_details_pb2

from arrayplan_engine.catalog import builtin_catalog
from arrayplan_engine.errors import InvalidInputError, UnknownNameError, Violation
from arrayplan_services.api.errors import PlanQueueFullError
from arrayplan_services.server.auth import Authenticator, TokenFileError
from arrayplan_services.server.errors import status_for
from arrayplan_services.store import StoreUnavailableError, unavailable_condition


def test_internal_error_is_an_id_in_the_log(caplog: pytest.LogCaptureFixture) -> None:
    try:
        raise ZeroDivisionError("float division by zero at /srv/arrayplan/x.py pid 4242 from 10.0.0.7")
    except ZeroDivisionError as exc:
        with caplog.at_level(logging.ERROR):
            status = status_for(exc)
    assert status.code == code_pb2.INTERNAL
    for secret in ("/srv", "4242", "10.0.0.7", "ZeroDivision", "Traceback"):
        assert secret not in status.message
    info = error_details_pb2.ErrorInfo()
    status.details[0].Unpack(info)
    error_id = info.metadata["error_id"]
    assert len(error_id) == 16 and error_id in status.message
    assert any(error_id in r.getMessage() and r.exc_info for r in caplog.records), "the log has the id and the traceback"


def test_invalid_argument_is_bounded() -> None:
    exc = InvalidInputError([Violation(field=f"plan.spec.x{i}", reason="r" * 5000) for i in range(500)])
    status = status_for(exc)
    assert status.code == code_pb2.INVALID_ARGUMENT
    bad = error_details_pb2.BadRequest()
    status.details[1].Unpack(bad)
    assert len(bad.field_violations) == 20 and all(len(v.description) <= 600 for v in bad.field_violations)
    assert status.ByteSize() < 16_000 and len(status.message) <= 1000


def test_unknown_names_suggest_the_closest_first() -> None:
    with pytest.raises(UnknownNameError) as err:
        builtin_catalog().get("intel-dc-s3500-48gb")
    reason = err.value.violations[0].reason
    assert reason.startswith("unknown 'intel-dc-s3500-48gb'; did you mean intel-dc-s3500-480gb")
    names = reason.split("did you mean ")[1].replace("?", ",").replace("known:", "").split(",")
    assert len([n for n in names if n.strip() and "more)" not in n]) <= 10
    long = UnknownNameError("name", "z" * 10_000, ["a", "b"]).violations[0].reason
    assert len(long) < 300


def test_queue_full_carries_retry_info() -> None:
    status = status_for(PlanQueueFullError(4, 64, 42.4))
    assert status.code == code_pb2.RESOURCE_EXHAUSTED
    retry = error_details_pb2.RetryInfo()
    assert status.details[1].Unpack(retry) and retry.retry_delay.seconds == 42


def test_store_faults_are_unavailable() -> None:
    full = sqlite3.OperationalError("database or disk is full")
    assert unavailable_condition(full) == "full"
    assert unavailable_condition(sqlite3.OperationalError("attempt to write a readonly database")) == "read-only"
    assert unavailable_condition(sqlite3.OperationalError("no such table: runs")) is None
    assert status_for(StoreUnavailableError("full")).code == code_pb2.UNAVAILABLE


def test_token_file(tmp_path: Path) -> None:
    f = tmp_path / "tokens"
    f.write_text("# comment\nalice aaaaaaaaaaaaaaaaaaaa\nops bbbbbbbbbbbbbbbbbbbb admin\n")
    f.chmod(0o600)  # a token file others can read is refused (test_secrets_and_inputs.py)
    auth = Authenticator(f)
    assert auth.caller([("authorization", "Bearer aaaaaaaaaaaaaaaaaaaa")]).name == "alice"
    assert auth.caller([("authorization", "bearer bbbbbbbbbbbbbbbbbbbb")]).admin
    assert auth.caller([("authorization", "Bearer aaaaaaaaaaaaaaaaaaab")]) is None
    assert auth.caller([]) is None
    assert Authenticator(None).caller([]).admin, "no token file: every caller is an anonymous admin"
    for text, words in (("alice short\n", "shorter than 16"), ("alice aaaaaaaaaaaaaaaaaaaa root\n", "NAME TOKEN admin"),
                        ("a aaaaaaaaaaaaaaaaaaaa\na bbbbbbbbbbbbbbbbbbbb\n", "appears twice"), ("# nothing\n", "no tokens")):
        f.write_text(text)
        with pytest.raises(TokenFileError) as err:
            Authenticator(f)
        assert words in str(err.value) and "aaaaaaaaaaaaaaaa" not in str(err.value)


def _simulate_request(**fields: object):  # type: ignore[no-untyped-def]
    from arrayplan.v1 import planner_pb2 as pb

    base: dict[str, object] = {"drive_model": "intel-dc-s3500-480gb", "drive_count": 12, "layout": "raid6",
                               "workload": pb.Workload(preset="oltp-8k-70-30")}
    return pb.SimulateArrayRequest(**{**base, **fields})


def test_simulate_service_life_says_what_it_accepts() -> None:
    """The old check let 0 through while its reason said [1, 15]: 0 is proto3's unset (the
    documented default, 5 years) and passes; a negative or too long life is rejected and the reason
    now names both the range and the 0 it accepts."""
    from arrayplan_services.api.simulate_convert import _validate

    catalog = builtin_catalog()
    for years in (0, 1, 15):
        _validate(_simulate_request(service_life_years=years), catalog)
    for years in (-1, 16):
        with pytest.raises(InvalidInputError) as exc:
            _validate(_simulate_request(service_life_years=years), catalog)
        assert [(x.field, x.reason) for x in exc.value.violations] == [
            ("service_life_years", f"must be an integer in [1, 15] (0 = the default, 5), got {years}")]


def test_simulate_bounds_name_the_field_and_the_range() -> None:
    from google.protobuf.duration_pb2 import Duration

    from arrayplan_services.api.simulate_convert import _validate

    with pytest.raises(InvalidInputError) as exc:
        _validate(_simulate_request(drive_count=2000, group_width=12, seed=-3, duration=Duration(seconds=3600, nanos=1)), builtin_catalog())
    assert {x.field: x.reason for x in exc.value.violations} == {
        "drive_count": "must be in [1, 1024], got 2000",
        "duration": "must be in (0, 3600] s, got 3600.000000001",
        "seed": "must be an integer >= 0, got -3",
    }
    _validate(_simulate_request(duration=Duration(seconds=3600)), builtin_catalog())  # the upper bound is closed
