"""The one range check every validator uses (errors.Range): bounds open and closed, NaN and inf,
integers, the field name and the allowed range in the reason."""

from __future__ import annotations

import math

import numpy as np
import pytest

from arrayplan_engine.errors import (
    OUT_OF_RANGE,
    REQUIRED,
    InvalidInputError,
    Range,
    Violation,
    check_fields,
    check_range,
    fmt_number,
    is_finite,
    require_range,
)


@pytest.mark.parametrize(("r", "inside", "outside", "text"), [
    (Range(lo=0, hi=1), [0, 0.5, 1, 1.0], [-1e-12, 1.0000001, 2], "[0, 1]"),
    (Range(lo=0, hi=1, hi_open=True), [0, 0.999999], [1, 1.0, -0.1], "[0, 1)"),
    (Range(lo=0, hi=1, lo_open=True), [1e-300, 1], [0, 0.0, -0.0, 1.5], "(0, 1]"),
    (Range(lo=0, hi=1, lo_open=True, hi_open=True), [0.5], [0, 1], "(0, 1)"),
    (Range(lo=0, lo_open=True), [1e-9, 1e300], [0, -1], "> 0"),
    (Range(lo=0), [0, 5], [-1e-9], ">= 0"),
    (Range(hi=10), [-5, 10], [10.5], "<= 10"),
    (Range(hi=10, hi_open=True), [9.99], [10], "< 10"),
])
def test_bounds_open_and_closed(r: Range, inside: list[float], outside: list[float], text: str) -> None:
    assert str(r) == text
    for x in inside:
        assert r.contains(x) and r.reason(x) is None, x
    for x in outside:
        assert not r.contains(x), x
        reason = r.reason(x)
        assert reason is not None and text in reason and reason.endswith(f"got {x!r}"), reason


@pytest.mark.parametrize("bad", [math.nan, math.inf, -math.inf, np.float64("nan"), True, False, "0.5", None, [0.5]])
def test_nan_inf_and_non_numbers_never_pass(bad: object) -> None:
    # an unbounded range still demands a finite real number; a bool is not a number here
    for r in (Range(lo=0, hi=1), Range(), Range(lo=-math.inf), Range(hi=math.inf)):
        assert not r.contains(bad)
        assert r.reason(bad) is not None
    assert not is_finite(bad)


def test_finite_numbers_of_every_type_pass() -> None:
    for x in (0, 0.75, np.float64(0.25), np.float32(0.5), np.int64(1)):
        assert is_finite(x) and Range(lo=0, hi=1).contains(x)
    # numpy scalars are echoed as plain numbers, not np.float64(...)
    assert Range(lo=0, hi=1).reason(np.float64(1.5)) == "must be in [0, 1], got 1.5"


def test_integers() -> None:
    r = Range(lo=1, hi=1024, integer=True)
    assert r.contains(1) and r.contains(1024) and r.contains(np.int64(7))
    assert not r.contains(0) and not r.contains(1025) and not r.contains(2.0) and not r.contains(1.5)
    assert r.reason(2.0) == "must be an integer in [1, 1024], got 2.0"
    assert Range(lo=0, integer=True).reason(-1) == "must be an integer >= 0, got -1"


def test_reason_wording_unit_note_and_named_bounds() -> None:
    assert Range(lo=0, lo_open=True).reason(0) == "must be a finite number > 0, got 0"
    assert (Range(lo=0, hi=1e12, unit="bytes/s", note="(0 = no rebuild)").reason(-1.0)
            == "must be in [0, 1e12] bytes/s (0 = no rebuild), got -1.0")
    assert Range(lo=0, hi=7.5, hi_open=True, hi_name="spare").reason(8) == "must be in [0, spare = 7.5), got 8"
    assert [fmt_number(x) for x in (1024, 0.9, 1e12, 1e-6, 3600.0, 100_000, 0.001, 10_000_000_000, 1_048_576)] == \
        ["1024", "0.9", "1e12", "1e-6", "3600", "100000", "0.001", "1e10", "1048576"]


def test_the_field_is_named() -> None:
    v: list[Violation] = []
    assert check_range(v, "workload.read_fraction", 0.5, 0, 1)
    assert not check_range(v, "workload.read_fraction", 1.5, 0, 1)
    # the violation says what kind of rule it broke and the interval allowed, beside the reason
    assert v == [Violation(field="workload.read_fraction", reason="must be in [0, 1], got 1.5", code=OUT_OF_RANGE, allowed="[0, 1]")]
    with pytest.raises(InvalidInputError) as exc:
        require_range("duration_s", -1.0, 1, 1e6, unit="seconds")
    assert exc.value.violations == (Violation(field="duration_s", reason="must be in [1, 1e6] seconds, got -1.0", code=OUT_OF_RANGE,
                                              allowed="[1, 1e6]"),)
    with pytest.raises(InvalidInputError) as exc:
        require_range("drive.seq_read_bytes_per_s", None, 0, lo_open=True)
    assert exc.value.violations[0].code == REQUIRED  # no value at all
    require_range("duration_s", 10, 1, 1e6)  # inside: no error


def test_a_table_of_fields_is_checked_in_one_call() -> None:
    table = {"rpm": Range(lo=3000, hi=20000), "seek_s": Range(lo=0, hi=0.05, unit="s")}
    assert check_fields({"rpm": 7200, "seek_s": 0.004}, table, "drive") == []
    bad = check_fields({"rpm": 99, "seek_s": math.nan}, table, "drive")
    assert [x.field for x in bad] == ["drive.rpm", "drive.seek_s"]
    assert bad[1].reason == "must be in [0, 0.05] s, got nan"
    # a mapping without a key skips it; an object is read by attribute
    assert check_fields({"rpm": 7200}, table) == []

    class Spec:
        rpm = 1.0
        seek_s = 0.0
    assert [x.field for x in check_fields(Spec(), table)] == ["rpm"]


def test_a_bound_taken_from_a_nan_field_lets_nothing_through() -> None:
    # e.g. low_free_pages in [0, high_free_pages] when high_free_pages is NaN
    assert not Range(lo=0, hi=math.nan).contains(0.5)
    assert not Range(lo=math.nan).contains(0.5)
    assert Range(lo=0, hi=math.inf).contains(1e300)
    assert Range(lo=0, hi=123456.789, hi_name="spare").reason(1e6) == "must be in [0, spare = 123456.789], got 1000000.0"


def test_wa_hot_cold_names_each_fraction() -> None:
    # the old check reported a bad hot_write_fraction under hot_space_fraction
    from arrayplan_engine import wa

    with pytest.raises(InvalidInputError) as exc:
        wa.wa_hotcold_lrw(0.1, 1.5, 0.2)
    assert [(x.field, x.reason) for x in exc.value.violations] == [("hot_write_fraction", "must be in [0, 1], got 1.5")]
    with pytest.raises(InvalidInputError) as exc:
        wa.wa_hotcold_lrw(0.1, 0.8, 1.0)
    assert [(x.field, x.reason) for x in exc.value.violations] == [("hot_space_fraction", "must be in (0, 1), got 1.0")]


def test_validators_share_the_wording() -> None:
    # the same bound reads the same in the engine's array spec, the reliability model and the catalog
    from arrayplan_engine import catalog, reliability

    with pytest.raises(InvalidInputError) as exc:
        reliability.ure_probability(uber=2e-6, read_bytes=math.nan)
    assert {x.field: x.reason for x in exc.value.violations} == {
        "uber": "must be in [0, 1e-6] errors per bit read, got 2e-06",
        "read_bytes": "must be a finite number >= 0, got nan",
    }
    assert catalog._check_number(2e-6, catalog._NUMERIC["uber"]) == (None, "must be in (0, 1e-6], got 2e-06")
