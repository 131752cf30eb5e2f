"""One size and duration grammar (docs/units.md) through every loader that reads one.

Each row of the tables is written the way a person writes it into a plan file, an array-in-service
file, a capacity CSV and a CLI flag, read by the real loader (files on disk, the real argparse
parser), and must give the same bytes or seconds everywhere, or the same error naming the field.
"""

from __future__ import annotations

import csv
from pathlib import Path
from typing import Any

import pytest

from arrayplan_engine.units import DURATION_FORMS, DURATION_RANGE, MAX_DURATION_S, MAX_SIZE_BYTES, SIZE_FORMS, SIZE_RANGE
from arrayplan_services.api.arrayfile import array_from_doc, load_array_file
from arrayplan_services.api.planfile import PlanFileError, load_yaml, plan_spec_from_text
from arrayplan_services.api.smart_io import CapacityFileError, read_capacity_csv
from arrayplan_services.cli.main import build_parser
from conftest import DATA

# (written, bytes) -- bytes are exact integers; a float field (daily_write_bytes, used_bytes) holds
# the nearest double, compared to 1 part in 1e15.
SIZES: list[tuple[str, int]] = [
    ("4096", 4096),
    ("0", 0),
    ("8k", 8192), ("8K", 8192), ("8Ki", 8192), ("8KiB", 8192), ("8 kib", 8192),  # as fio's bs=8k
    ("8 KB", 8000), ("8kB", 8000), ("8 Kb", 8000),                             # SI; never bits
    ("8 B", 8), ("8b", 8),
    ("1M", 1024**2), ("1 MB", 10**6),
    ("20 TB", 20 * 10**12), ("4.8 TB", 4_800_000_000_000),
    ("1.5 TiB", 1_649_267_441_664), ("1 PiB", 2**50), ("1 PB", 10**15),
    # The example: a bare T is 2^40, here as in the plan file; rounded to whole bytes.
    ("4.8T", 5_277_655_813_325),          # 5,277,655,813,324.8
    ("1.2T", 1_319_413_953_331),          # 1,319,413,953,331.2
    ("1e12", 10**12), ("1.5e12", 1_500_000_000_000),
    ("1.5", 2), ("2.5", 2), ("0.6", 1),   # fractions of a byte: nearest byte, half to even
    (str(MAX_SIZE_BYTES), MAX_SIZE_BYTES),
]

# (written, what the error says besides the field) -- the same everywhere.
SIZE_ERRORS: list[tuple[str, str]] = [
    ("-1 TB", f"a size cannot be negative (allowed: {SIZE_RANGE})"),
    ("-5", f"a size cannot be negative (allowed: {SIZE_RANGE})"),
    ("", f"is empty; expected {SIZE_FORMS}"),
    ("8 parsecs", f"unknown size unit 'parsecs'; expected {SIZE_FORMS}"),
    ("8 KiBs", f"unknown size unit 'KiBs' (did you mean 'KiB' or 'KB'?); expected {SIZE_FORMS}"),
    ("4 KiB/s", "unknown size unit 'KiB/s'"),
    ("lots", f"expected {SIZE_FORMS}, got 'lots'"),
    ("12,5 TB", f"expected {SIZE_FORMS}, got '12,5 TB'"),
    (str(MAX_SIZE_BYTES + 1), f"out of range (allowed: {SIZE_RANGE})"),
    ("8192 PiB", f"out of range (allowed: {SIZE_RANGE})"),
    ("1e400", f"out of range (allowed: {SIZE_RANGE})"),
    ("0.4", "is 0.4 B, under half a byte: a size is a whole number of bytes"),
    ("0.0001k", "is 0.1024 B, under half a byte"),
]

# (written, seconds)
DURATIONS: list[tuple[str, float]] = [
    ("5ms", 0.005), ("5 ms", 0.005), ("5 MS", 0.005),
    ("500us", 500e-6), ("500 µs", 500e-6), ("500μs", 500e-6),  # micro sign and Greek mu
    ("250ns", 250e-9), ("1.5s", 1.5), ("1e3ms", 1.0),
    ("2 min", 120.0), ("2m", 120.0), ("1h", 3600.0),
    ("0.6ns", 1e-9),                     # whole nanoseconds, the resolution of a Duration
    (f"{MAX_DURATION_S}s", float(MAX_DURATION_S)),
    ("0s", 0.0),
]

DURATION_ERRORS: list[tuple[str, str]] = [
    ("5", "a duration needs a unit (ns, us, ms, s, min, h): did you mean '5ms' or '5s'?"),
    ("-5ms", f"a duration cannot be negative (allowed: {DURATION_RANGE})"),
    ("", f"is empty; expected {DURATION_FORMS}"),
    ("2 fortnights", f"unknown duration unit 'fortnights'; expected {DURATION_FORMS}"),
    ("soon", f"expected {DURATION_FORMS}, got 'soon'"),
    ("1e400s", f"out of range (allowed: {DURATION_RANGE})"),
    (f"{MAX_DURATION_S + 1}s", f"out of range (allowed: {DURATION_RANGE})"),
    ("0.4ns", "is 0.4 ns, under half a nanosecond"),
]


def _yaml(text: str) -> str:
    """A value written into YAML as a person would: bare, but quoted when empty (a bare empty value
    is YAML's null, which the loaders also call empty)."""
    return text if text else '""'


# -- the four loaders ------------------------------------------------------------------------------

def plan_sizes(text: str) -> tuple[int, float]:
    """constraints.usable_capacity_bytes (int64) and workload.daily_write_bytes (double)."""
    spec, _ = plan_spec_from_text(f"workload:\n  read_fraction: 0.5\n  daily_write_bytes: {_yaml(text)}\n"
                                  f"constraints:\n  usable_capacity_bytes: {_yaml(text)}\n", "plan.yaml")
    return spec.constraints.usable_capacity_bytes, spec.workload.daily_write_bytes


def plan_duration_s(text: str) -> float:
    spec, _ = plan_spec_from_text("workload:\n  read_fraction: 0.5\nconstraints:\n  usable_capacity_bytes: 1 TB\n"
                                  f"  latency_target: {_yaml(text)}\n", "plan.yaml")
    return spec.constraints.latency_target.ToNanoseconds() / 1e9


ARRAY_HEAD = "name: a1\nlayout: raid5\nstart_date: 2024-01-01\ngroups:\n  - {name: g1, drives: [S1, S2, S3, S4]}\n"


def array_file(tmp_path: Path, body: str) -> Path:
    path = tmp_path / "array.yaml"
    path.write_text(ARRAY_HEAD + body, encoding="utf-8")
    return path


def csv_used_bytes(tmp_path: Path, text: str) -> float:
    path = tmp_path / "capacity.csv"
    with path.open("w", newline="", encoding="utf-8") as f:
        csv.writer(f).writerows([["time", "used_bytes"], ["2024-01-01", text]])
    (sample,) = read_capacity_csv(path)
    return sample.used_bytes


SIMULATE = ["simulate", "--drive", "intel-dc-s3500-480gb", "--drives", "4", "--layout", "raid10"]
RELIABILITY = ["reliability", "--layout", "raid5", "--drives", "8", "--afr", "0.01", "--repair-hours", "24"]
SIZE_FLAGS = [(SIMULATE, "--io-bytes", "io_bytes"), (RELIABILITY, "--drive-bytes", "drive_bytes")]
TIMEOUT_COMMANDS = [["plan", "p.yaml"], SIMULATE, ["forecast", "a.yaml"], ["submit", "p.yaml"]]


def cli(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[Any, str]:
    """The real ``arrayplan`` argument parser: (namespace, "") or (None, its error line)."""
    try:
        return build_parser().parse_args(argv), ""
    except SystemExit as exc:
        assert exc.code == 2
        return None, capsys.readouterr().err


# -- sizes -----------------------------------------------------------------------------------------

@pytest.mark.parametrize(("text", "expected"), SIZES, ids=[s or "empty" for s, _ in SIZES])
def test_a_size_means_the_same_in_every_loader(text: str, expected: int, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    usable, daily = plan_sizes(text)
    assert usable == expected
    assert daily == pytest.approx(expected, rel=1e-15, abs=0)

    body = f"replan:\n  constraints:\n    usable_capacity_bytes: {_yaml(text)}\n"
    if expected > 0:  # the array's own usable capacity must be > 0 (a range check after the grammar)
        body += f"usable_capacity_bytes: {_yaml(text)}\n"
    if expected <= 1e18:  # the workload's daily writes are checked against an exabyte a day
        body += f"workload:\n  read_fraction: 0.5\n  daily_write_bytes: {_yaml(text)}\n"
    arr = load_array_file(array_file(tmp_path, body))
    assert arr.replan is not None and arr.replan.constraints.usable_capacity_bytes == expected
    if expected > 0:
        assert arr.spec.usable_capacity_bytes == pytest.approx(expected, rel=1e-15, abs=0)
    if expected <= 1e18:
        assert arr.workload_proto is not None and arr.workload_proto.daily_write_bytes == pytest.approx(expected, rel=1e-15, abs=0)

    assert csv_used_bytes(tmp_path, text) == pytest.approx(expected, rel=1e-15, abs=0)

    for argv, flag, dest in SIZE_FLAGS:
        args, err = cli([*argv, f"{flag}={text}"], capsys)
        assert err == "" and getattr(args, dest) == expected, (flag, err)


@pytest.mark.parametrize(("text", "reason"), SIZE_ERRORS, ids=[s or "empty" for s, _ in SIZE_ERRORS])
def test_a_bad_size_is_refused_alike_naming_the_field(text: str, reason: str, tmp_path: Path,
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(PlanFileError) as plan:
        plan_sizes(text)
    assert sorted(plan.value.problems) == [(3, "workload.daily_write_bytes", plan.value.problems[0][2]),
                                          (5, "constraints.usable_capacity_bytes", plan.value.problems[1][2])]
    for _, _, why in plan.value.problems:
        assert reason in why

    body = (f"usable_capacity_bytes: {_yaml(text)}\nworkload:\n  read_fraction: 0.5\n  daily_write_bytes: {_yaml(text)}\n"
            f"replan:\n  constraints:\n    usable_capacity_bytes: {_yaml(text)}\n")
    with pytest.raises(PlanFileError) as arr:
        load_array_file(array_file(tmp_path, body))
    found = {(line, field) for line, field, why in arr.value.problems if reason in why}
    assert found == {(6, "usable_capacity_bytes"), (9, "workload.daily_write_bytes"), (12, "replan.constraints.usable_capacity_bytes")}, \
        arr.value.problems
    assert str(tmp_path / "array.yaml") + ":6: usable_capacity_bytes: " + reason.split(" (")[0] in str(arr.value)

    with pytest.raises(CapacityFileError) as bad_csv:
        csv_used_bytes(tmp_path, text)
    assert bad_csv.value.line == 2 and bad_csv.value.reason.startswith("used_bytes: ") and reason in bad_csv.value.reason
    assert str(bad_csv.value).startswith(f"{tmp_path / 'capacity.csv'}:2: used_bytes: ")

    for argv, flag, _ in SIZE_FLAGS:
        args, err = cli([*argv, f"{flag}={text}"], capsys)
        assert args is None and f"error: argument {flag}: " in err and reason in " ".join(err.split()), (flag, err)


def test_one_array_file_one_unit() -> None:
    """The issue's file: usable_capacity_bytes and the workload block of one array file read a bare
    T alike (they read 10^12 and 2^40 before), and TB is 10^12 in both."""
    text = ARRAY_HEAD + "usable_capacity_bytes: 4.8T\nworkload:\n  read_fraction: 0.5\n  daily_write_bytes: 1.2T\n"
    arr = array_from_doc(load_yaml(text, "a.yaml"), "a.yaml", Path.cwd())
    assert arr.workload_proto is not None
    assert arr.spec.usable_capacity_bytes / arr.workload_proto.daily_write_bytes == pytest.approx(4, abs=1e-11)
    assert arr.workload_proto.daily_write_bytes == round(1.2 * 2**40)
    si = array_from_doc(load_yaml(text.replace("T\n", " TB\n"), "a.yaml"), "a.yaml", Path.cwd())
    assert si.spec.usable_capacity_bytes == 4.8e12 and si.workload_proto is not None and si.workload_proto.daily_write_bytes == 1.2e12


# -- durations -------------------------------------------------------------------------------------

@pytest.mark.parametrize(("text", "expected_s"), DURATIONS, ids=[s for s, _ in DURATIONS])
def test_a_duration_means_the_same_in_every_loader(text: str, expected_s: float, tmp_path: Path,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    assert plan_duration_s(text) == pytest.approx(expected_s, rel=1e-15, abs=0)

    arr = load_array_file(array_file(tmp_path, f"replan:\n  constraints:\n    latency_target: {_yaml(text)}\n"))
    assert arr.replan is not None
    assert arr.replan.constraints.latency_target.ToNanoseconds() / 1e9 == pytest.approx(expected_s, rel=1e-15, abs=0)

    for argv in TIMEOUT_COMMANDS:  # --timeout must be > 0 s (a range check after the grammar)
        args, err = cli([*argv, f"--timeout={text}"], capsys)
        if expected_s > 0:
            assert err == "" and args.timeout == pytest.approx(expected_s, rel=1e-15, abs=0), (argv[0], err)
        else:
            assert args is None and f"argument --timeout: must be > 0 s, got '{text}'" in err, (argv[0], err)


@pytest.mark.parametrize(("text", "reason"), DURATION_ERRORS, ids=[s or "empty" for s, _ in DURATION_ERRORS])
def test_a_bad_duration_is_refused_alike_naming_the_field(text: str, reason: str, tmp_path: Path,
                                                          capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(PlanFileError) as plan:
        plan_duration_s(text)
    assert [(line, field) for line, field, _ in plan.value.problems] == [(5, "constraints.latency_target")]
    assert reason in plan.value.problems[0][2]

    with pytest.raises(PlanFileError) as arr:
        load_array_file(array_file(tmp_path, f"replan:\n  constraints:\n    latency_target: {_yaml(text)}\n"))
    assert [(line, field) for line, field, _ in arr.value.problems] == [(8, "replan.constraints.latency_target")]
    assert reason in arr.value.problems[0][2]

    for argv in TIMEOUT_COMMANDS:
        args, err = cli([*argv, f"--timeout={text}"], capsys)
        if text == "5":  # --timeout is documented in seconds: a bare number is seconds there (docs/units.md)
            assert err == "" and args.timeout == 5.0
        else:
            assert args is None and "error: argument --timeout: " in err and reason in " ".join(err.split()), (argv[0], err)


# -- a size beside a trace -------------------------------------------------------------------------

def test_a_trace_options_size_takes_the_grammar() -> None:
    """``seq_tolerance_bytes`` next to ``trace:`` in a plan file is a size like the others: 64k and
    65536 characterise the trace alike (and differently from 0), and a bad one names the field."""
    def random_fraction(tolerance: str) -> float:
        spec, _ = plan_spec_from_text(f"workload:\n  trace: msr-cambridge1-sample.csv\n  seq_tolerance_bytes: {tolerance}\n"
                                      "constraints:\n  usable_capacity_bytes: 1 TB\n", "plan.yaml", DATA / "traces")
        return spec.workload.random_fraction

    assert random_fraction("64k") == random_fraction("65536") == random_fraction("64 KiB")
    assert random_fraction("64k") < random_fraction("0")
    with pytest.raises(PlanFileError) as exc:
        random_fraction("-1 TB")
    assert [(line, field) for line, field, _ in exc.value.problems] == [(3, "workload.seq_tolerance_bytes")]
    assert "a size cannot be negative" in exc.value.problems[0][2]
