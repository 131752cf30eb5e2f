"""load_workload: presets, fio job files and block traces (compressed or not) from a spec, with
overrides and field-named, file:line errors. Samples: tests/data/ (sources and licences in its README)."""

from __future__ import annotations

import bz2
import gzip
import shutil
from pathlib import Path

import pytest

from arrayplan_engine.errors import InvalidInputError, UnknownNameError
from arrayplan_engine.presets import get_preset
from arrayplan_services.api.workloads import load_workload

DATA = Path(__file__).resolve().parents[1] / "data"


def test_preset_and_overrides() -> None:
    w, warnings = load_workload({"preset": "oracle-swingbench"}, DATA)
    assert w == get_preset("oracle-swingbench") and warnings == []
    w, warnings = load_workload({"preset": "oltp-8k-70-30", "target_iops": 5000, "growth_per_year": 0.2}, DATA)
    assert (w.target_iops, w.growth_per_year, w.read_fraction) == (5000, 0.2, 0.70)
    assert warnings == ["overridden: growth_per_year, target_iops"]
    with pytest.raises(UnknownNameError) as exc:
        load_workload({"preset": "nope"}, DATA)
    assert exc.value.violations[0].field == "workload.preset"
    with pytest.raises(InvalidInputError) as exc2:
        load_workload({"preset": "vdi", "read_fraction": 1.5}, DATA)
    assert exc2.value.violations[0].field == "workload.read_fraction"


def test_inline_fields() -> None:
    w, warnings = load_workload({"read_fraction": 0.3, "io_size_mix": [[8192, 1.0]], "queue_depth": 16}, DATA)
    assert (w.read_fraction, w.io_size_mix, w.queue_depth, warnings) == (0.3, ((8192, 1.0),), 16, [])


def test_fio_file() -> None:
    w, warnings = load_workload({"fio": "fio/jesd219.fio"}, DATA)
    assert (w.read_fraction, w.queue_depth, w.hot_write_fraction, w.hot_space_fraction) == pytest.approx((0.4, 1024, 0.8, 0.2))
    assert w.name == "jesd219" and "fio/jesd219.fio" in w.source
    assert any(x.startswith("fio/jesd219.fio: fio:10:norandommap") for x in warnings)
    w, _ = load_workload({"fio": "fio/sprandom.fio", "env": {"FIO_BS": 4096}}, DATA)
    assert w.io_size_mix == ((4096, 1.0),)


def test_fio_errors_name_the_file_and_line(tmp_path: Path) -> None:
    (tmp_path / "bad.fio").write_text("[global]\nrw=randrw\n[job]\nbssplit=4k/70:8k/70\n")
    with pytest.raises(InvalidInputError) as exc:
        load_workload({"fio": "bad.fio"}, tmp_path)
    v = exc.value.violations[0]
    assert v.field == "workload.fio"
    assert v.reason.startswith("bad.fio:4: bssplit:") and "over 100" in v.reason
    with pytest.raises(InvalidInputError) as exc:
        load_workload({"fio": "missing.fio"}, tmp_path)
    assert exc.value.violations[0].field == "workload.fio" and "cannot read missing.fio" in exc.value.violations[0].reason
    with pytest.raises(InvalidInputError) as exc:
        load_workload({"fio": "fio/sprandom.fio"}, DATA)
    assert exc.value.violations[0].reason.startswith("fio/sprandom.fio:32: bs:")


@pytest.mark.parametrize(
    ("path", "fmt", "read_fraction"),
    [
        ("traces/msr-cambridge1-sample.csv", None, 508 / 1000),
        ("traces/msr-cambridge1-sample.csv", "msr", 508 / 1000),
        ("traces/cloudPhysicsIO.csv.gz", None, 46_974 / 113_872),
        ("traces/systor17-traces-sample.csv.gz", None, 826 / 999),
        ("traces/cloud_storage-sample.bz2", "tencent", 24_521 / 50_000),
        ("traces/disksim-ascii.trace.gz", "disksim", 79_634 / 100_000),
    ],
)
def test_traces_including_compressed(path: str, fmt: str | None, read_fraction: float) -> None:
    spec = {"trace": path} | ({"format": fmt} if fmt else {})
    w, _ = load_workload(spec, DATA)
    assert w.read_fraction == pytest.approx(read_fraction)
    assert w.target_iops > 0 and w.working_set_bytes > 0 and w.daily_write_bytes > 0
    assert path in w.source


def test_trace_options_and_overrides(tmp_path: Path) -> None:
    src = DATA / "traces" / "tpcc-small.trace.gz"
    w_ns, _ = load_workload({"trace": str(src)}, tmp_path)  # absolute path; ns detected
    w_ms, _ = load_workload({"trace": str(src), "time_unit": "ms"}, tmp_path)
    # ~1.4 s of arrivals in ns; read as ms they spread over ~16 days (rate in 1 s bins).
    assert w_ns.target_iops > 3000 and w_ms.target_iops < w_ns.target_iops / 1e4
    assert any("read in ns" in n for n in w_ns.notes) and any("read in ms" in n for n in w_ms.notes)
    w, warnings = load_workload({"trace": str(src), "queue_depth": 12, "name": "tpcc"}, tmp_path)
    assert (w.queue_depth, w.name) == (12, "tpcc") and "overridden: name, queue_depth" in warnings


def test_trace_errors_name_the_file_and_line(tmp_path: Path) -> None:
    lines = (DATA / "traces" / "msr-cambridge1-sample.csv").read_text().splitlines()
    lines[4] = lines[4].replace("Write", "Flush").replace("Read", "Flush")
    with gzip.open(tmp_path / "msr.csv.gz", "wt") as f:
        f.write("\n".join(lines) + "\n")
    with pytest.raises(InvalidInputError) as exc:
        load_workload({"trace": "msr.csv.gz"}, tmp_path)
    v = exc.value.violations[0]
    assert v.field == "workload.trace" and v.reason.startswith("msr.csv.gz:5: Type 'Flush'")
    # Tolerated when asked, and reported.
    _, warnings = load_workload({"trace": "msr.csv.gz", "max_bad_lines": 1}, tmp_path)
    assert any("1 malformed lines skipped" in x and "line 5" in x for x in warnings)
    # A truncated bz2 stream.
    data = bz2.compress(gzip.decompress((DATA / "traces" / "tpcc-small.trace.gz").read_bytes()))
    (tmp_path / "cut.trace.bz2").write_bytes(data[: len(data) // 2])
    with pytest.raises(InvalidInputError) as exc:
        load_workload({"trace": "cut.trace.bz2", "format": "disksim"}, tmp_path)
    assert exc.value.violations[0].field == "workload.trace"
    with pytest.raises(InvalidInputError) as exc:
        load_workload({"trace": "nothere.csv"}, tmp_path)
    assert "cannot read nothere.csv" in exc.value.violations[0].reason


def test_spec_errors(tmp_path: Path) -> None:
    shutil.copy(DATA / "fio" / "jesd219.fio", tmp_path)
    cases = [
        ({"preset": "vdi", "fio": "jesd219.fio"}, "workload", "not preset and fio"),
        ({"trace": "x.csv", "format": "csv"}, "workload.format", "unknown trace format"),
        ({"fio": "jesd219.fio", "format": "msr"}, "workload.format", "only applies with trace"),
        ({"trace": "x.csv", "env": {}}, "workload.env", "only applies with fio"),
        ({"preset": "vdi", "colour": "blue"}, "workload.colour", "unknown field"),
        ({"trace": "x.csv", "max_bad_lines": -1}, "workload.max_bad_lines", ">= 0"),
        ({"fio": 5}, "workload.fio", "file path"),
    ]
    for spec, field, reason in cases:
        with pytest.raises(InvalidInputError) as exc:
            load_workload(spec, tmp_path)
        v = exc.value.violations[0]
        assert (v.field, reason in v.reason) == (field, True), (spec, v)
