"""Fitting a drive to a measured consistency run (engine/arrayplan_engine/drive_fit.py): fio's
log formats, clear errors for what is not one, and the round trip: a known drive's simulated log
fits back to within 10 % on steady-state level and time to steady state."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from arrayplan_engine import drive_fit as df
from arrayplan_engine import ssd
from arrayplan_engine.catalog import drive_from_toml, drive_to_toml, get_drive
from arrayplan_engine.errors import InvalidInputError


def test_write_iops_log_and_fio_json_parse_to_per_second_iops() -> None:
    iops = np.arange(1, 301, dtype=float) * 10
    text = df.fio_log_text(iops)
    assert text.splitlines()[0] == "1000, 10, 1, 4096, 0"
    assert np.array_equal(df.parse_fio_log(text), iops)
    # fio 3.x adds a priority column; read samples (direction 0) are skipped.
    six = "".join(f"{(i + 1) * 1000}, {v:.0f}, 1, 4096, 0, 0\n{(i + 1) * 1000}, 7, 0, 4096, 0, 0\n" for i, v in enumerate(iops))
    assert np.array_equal(df.parse_fio_log(six), iops)
    doc = {"fio version": "fio-3.36", "jobs": [{"jobname": "ss", "steadystate": {"data": {"iops": iops.tolist(), "bw": []}}}]}
    assert np.array_equal(df.parse_fio_log(json.dumps(doc)), iops)


@pytest.mark.parametrize(
    ("text", "where", "words"),
    [
        ("# not fio\n", "x.log:1", "not a fio write_iops_log line"),
        ("1000, 5, 1, 4096, 0\n2000, lots, 1, 4096, 0\n", "x.log:2", "not a fio write_iops_log line"),
        ("1000, 5, 0, 4096, 0\n", "x.log", "no write samples"),
        ("".join(f"{(i + 1) * 1000}, 5, 1, 4096, 0\n" for i in range(400) if i != 7), "x.log", "no sample for second 7"),
        ("1000, 5, 1, 4096, 0\n", "x.log", "at least 300"),
        ('{"jobs": [{"write": {"iops": 5}}]}', "x.log", "no jobs[].steadystate.data.iops"),
        ('{"jobs": [', "x.log:1", "not valid JSON"),
    ],
)
def test_what_is_not_a_fio_log_is_refused_with_its_line(text: str, where: str, words: str) -> None:
    with pytest.raises(InvalidInputError) as exc:
        df.parse_fio_log(text, "x.log")
    v = exc.value.violations[0]
    assert v.field == where and words in v.reason, (v.field, v.reason)


def test_a_known_drives_simulated_log_fits_back_within_ten_percent() -> None:
    """The S3700 400GB (the 001 seed's comparison drive; the S3500 is still climbing at 2000 s in
    the cleaning model, docs/validation.md, so it has no time to steady state to fit): simulate
    2000 s with one seed, write fio's log, fit the drive from a copy with a wrong spare area and
    the wrong cleaning trait: the steady level, its start and the spare come back."""
    known = get_drive("intel-dc-s3700-400gb")
    run = ssd.consistency_experiment(known, duration_s=2000, seed=5)
    measured = df.parse_fio_log(df.fio_log_text(run.iops), "s3500.log")
    base = drive_from_toml(drive_to_toml(known).replace('value = "eager"', 'value = "lazy"', 1))
    # 7 bisection steps per trait narrow the spare's log range (ln 400 = 6.0) to 0.047, +-2.4 %:
    # inside the 5 % asserted, at 15 simulations of 2,000 s instead of the CLI's 25.
    result = df.fit_drive(base, measured, source="s3500.log", iterations=7)
    assert result.runs == 14
    assert abs(result.steady_error) < 0.10 and abs(result.steady_start_error) < 0.10
    # The cleaning trait is not identifiable from a per-second log of this drive (lazy drives clean
    # whole victim blocks, no whole-second stalls: both traits overlay it); it is stated as fitted.
    assert result.drive.provenance["gc_policy"].assumed and "overlays the log better" in result.drive.provenance["gc_policy"].reason
    # the effective spare comes back too (the catalog's spare bytes per user byte)
    assert result.drive.spare_bytes_per_user_byte == pytest.approx(known.spare_bytes_per_user_byte, rel=0.05)
    assert result.drive.provenance["raw_nand_bytes"].assumed and result.drive.provenance["raw_nand_bytes"].source == "s3500.log"
    # The fitted drive is a catalog file that loads back unchanged.
    again = drive_from_toml(drive_to_toml(result.drive))
    assert again == result.drive and math.isfinite(result.measured.steady_start_s)
