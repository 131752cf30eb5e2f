"""``arrayplan telemetry`` and ``arrayplan forecast`` from the command line (in-process)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from arrayplan_services.cli.main import main

DATA = Path(__file__).resolve().parents[1] / "data" / "smart"
REQUIRED = ("source", "model", "serial", "protocol", "power_on_hours", "host_written_bytes", "percentage_used")


def test_telemetry_json_gives_one_record_per_snapshot(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["telemetry", str(DATA), "--format", "json"]) == 0
    records = json.loads(capsys.readouterr().out)
    files = sorted(DATA.glob("*.json"))
    assert len(records) == len(files)
    assert sorted(Path(r["source"]).name for r in records) == [f.name for f in files]
    for r in records:
        assert all(k in r for k in REQUIRED)
    by_name = {Path(r["source"]).name: r for r in records}
    nvme = by_name["nvme-null-INTEL_SSDPE2KX020T8-nvme2.json"]
    assert nvme["host_written_bytes"] == 2643181154 * 512_000 and nvme["percentage_used"] == 22 and nvme["protocol"] == "nvme"
    hdd = by_name["sat-Western_Digital_RE4-WDC_WD1003FBYX-01Y7B0-sda.json"]
    assert hdd["percentage_used"] is None and hdd["host_written_bytes"] is None and hdd["power_on_hours"] == 92209


def test_telemetry_bad_files_are_named_and_the_rest_processed(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    good = DATA / "nvme-null-Micron_7300_MTFDHBE960TDF-nvme0.json"
    shutil.copy(good, tmp_path / "good.json")
    text = good.read_text()
    (tmp_path / "truncated.json").write_text(text[: len(text) // 2])
    (tmp_path / "sdz.json").write_text(json.dumps({
        "json_format_version": [1, 0],
        "smartctl": {"version": [7, 3], "exit_status": 2,
                     "messages": [{"string": "Smartctl open device: /dev/sdz failed: No such device", "severity": "error"}]},
        "device": {"name": "/dev/sdz", "info_name": "/dev/sdz", "type": "ata", "protocol": "ATA"}}))
    assert main(["telemetry", str(tmp_path), "--format", "json"]) == 4
    out = capsys.readouterr()
    records = json.loads(out.out)
    assert [Path(r["source"]).name for r in records] == ["good.json"]
    assert "truncated.json: truncated JSON" in out.err
    assert "sdz.json: smartctl could not read /dev/sdz" in out.err and "open device" in out.err


def test_telemetry_nothing_readable_is_bad_input(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["telemetry", str(tmp_path / "missing")]) == 2
    assert "no such file or directory" in capsys.readouterr().err
