"""Telemetry parsing on the real smartctl samples in tests/data/smart (see its README).

Every sample parses: counters found, or honestly unknown (a note says so). Expected figures are
the samples' own fields times the unit their source gives (NVMe 512,000-byte data units, Intel
32 MiB, Phison GiB, Micron 512-byte sectors)."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest

from arrayplan_engine import smart as t
from arrayplan_engine.units import GiB, MiB

DATA = Path(__file__).resolve().parents[1] / "data" / "smart"
SAMPLES = sorted(DATA.glob("*.json"))


def _load(name: str) -> dict:
    return json.loads((DATA / name).read_text())


def test_the_vendored_samples_are_all_there() -> None:
    assert len(SAMPLES) == 31
    assert (DATA / "LICENSE").read_text().startswith("                                 Apache License")


@pytest.mark.parametrize("path", SAMPLES, ids=lambda p: p.name)
def test_every_sample_parses_with_counters_or_an_honest_unknown(path: Path) -> None:
    doc = json.loads(path.read_text())
    s = t.parse_document(doc, path.name)
    assert s.source == path.name
    assert s.model and s.capacity_bytes and s.capacity_bytes > 1e10
    assert s.protocol == doc["device"]["protocol"].lower()
    if not s.has_wear_counters:
        assert any("unknown" in n for n in s.notes), s.notes
    if s.percentage_used is not None:
        assert 0 <= s.percentage_used <= 100
        assert "percentage_used" in s.counter_sources
    if s.host_written_bytes is not None:
        assert s.host_written_bytes > 0 and "host_written_bytes" in s.counter_sources


@pytest.mark.parametrize("path", [p for p in SAMPLES if "nvme_smart_health_information_log" in p.read_text()], ids=lambda p: p.name)
def test_nvme_host_bytes_are_data_units_times_512000_exactly(path: Path) -> None:
    doc = json.loads(path.read_text())
    s = t.parse_smartctl(doc, path.name)
    log = doc["nvme_smart_health_information_log"]
    assert s.host_written_bytes == log["data_units_written"] * 512_000
    assert s.percentage_used == log["percentage_used"]
    assert s.available_spare_percent == log["available_spare"]
    assert s.power_on_hours == log["power_on_hours"]


def test_intel_s4510_host_and_nand_writes_in_32mib_units_give_measured_write_amplification() -> None:
    s = t.parse_smartctl(_load("sat-Intel_S4510_S4610_S4500_S4600_Series_SSDs-INTEL_SSDSC2KB240G7-sdd.json"), "s4510")
    assert s.host_written_bytes == 4149381 * 32 * MiB        # attribute 241 raw
    assert s.nand_written_bytes == 25496755 * 32 * MiB       # attribute 243 raw
    assert s.write_amplification == pytest.approx(25496755 / 4149381, rel=1e-12)
    assert s.percentage_used == 100 - 55                     # Media_Wearout_Indicator normalised value 55
    assert not any("241" in u for u in s.unknown_counters)


def test_phison_gib_counters_and_life_left() -> None:
    s = t.parse_smartctl(_load("sat-Phison_Driven_SSDs-KINGSTON_SA400M8120G-sda.json"), "a400")
    assert s.host_written_bytes == 398 * GiB and s.nand_written_bytes == 979 * GiB
    assert s.percentage_used == 2                            # SSD_Life_Left 98
    assert s.exit_status == 4 and any("bit 2" in n for n in s.notes)


def test_micron_5210_sectors_and_program_pages() -> None:
    s = t.parse_smartctl(_load("sat-Micron_5100_Pro___52x0___5300_SSDs-Micron_5210_MTFDDAK960QDE-sdm.json"), "5210")
    assert s.host_written_bytes == 272291616 * 512
    assert s.write_amplification == pytest.approx((8509113 + 1059955) / 8509113, rel=1e-12)
    assert s.percentage_used == 0


def test_a_generic_total_lbas_written_of_unknown_unit_is_reported_unknown_not_converted() -> None:
    s = t.parse_smartctl(_load("sat-Seagate_Exos_7E8-ST1000NM000A-2J3100-sdq.json"), "exos")
    assert s.host_written_bytes is None
    assert "241 Total_LBAs_Written" in s.unknown_counters


def test_sas_disk_write_gigabytes_and_no_endurance_indicator() -> None:
    s = t.parse_smartctl(_load("HITACHI_H109060SESUN600G_10.json"), "sas")
    assert s.protocol == "scsi" and s.host_written_bytes == pytest.approx(127551.260e9, rel=1e-12)
    assert s.percentage_used is None and any("wear unknown" in n for n in s.notes)
    assert s.power_on_hours == pytest.approx(22364 + 52 / 60)


def test_drive_behind_a_megaraid_controller() -> None:
    doc = _load("sat-Phison_Driven_SSDs-KINGSTON_SA400M8120G-sda.json")
    # As smartctl -d sat+megaraid,1 /dev/bus/0 reports the same drive behind a MegaRAID controller.
    doc["device"] = {"name": "/dev/bus/0", "info_name": "/dev/bus/0 [megaraid_disk_01] [SAT]", "type": "sat+megaraid,1", "protocol": "ATA"}
    s = t.parse_smartctl(doc, "megaraid")
    assert s.behind_raid_controller and s.device_type == "sat+megaraid,1"
    assert s.host_written_bytes == 398 * GiB


def test_smartctl_error_output_is_a_telemetry_error_naming_the_file_and_device() -> None:
    doc = {"json_format_version": [1, 0], "smartctl": {"version": [7, 3], "exit_status": 2,
           "messages": [{"string": "Smartctl open device: /dev/sdz failed: No such device", "severity": "error"}]},
           "device": {"name": "/dev/sdz", "info_name": "/dev/sdz", "type": "ata", "protocol": "ATA"}}
    with pytest.raises(t.TelemetryError) as e:
        t.parse_document(doc, "host1/sdz.json")
    assert "host1/sdz.json" in str(e.value) and "/dev/sdz" in str(e.value) and "open device" in str(e.value)


def test_nvme_cli_smart_log() -> None:
    doc = {"critical_warning": 0, "temperature": 301, "avail_spare": 100, "spare_thresh": 10, "percent_used": 7,
           "data_units_read": 1000, "data_units_written": 123456789, "power_on_hours": 9000, "media_errors": 0}
    s = t.parse_document(doc, "nvme0-smart-log.json")
    assert s.protocol == "nvme" and s.host_written_bytes == 123456789 * 512_000 and s.percentage_used == 7
    assert s.model is None and any("names no model or serial" in n for n in s.notes)


def test_series_never_merge_on_redacted_serials() -> None:
    a = t.parse_smartctl(_load("INTEL_SSDPE2KX080T8_1.json"), "a")
    b = t.parse_smartctl(_load("INTEL_SSDPE2KX080T8_6.json"), "b")
    series = t.series_from_snapshots([a, b])
    assert len(series) == 2 and all(len(s.snapshots) == 1 for s in series)


def test_series_merge_a_real_serial_and_split_when_counters_go_backwards() -> None:
    d1 = _load("INTEL_SSDPE2KX080T8_1.json")
    d2 = _load("INTEL_SSDPE2KX080T8_6.json")
    for d in (d1, d2):
        d["serial_number"] = "PHLJ0000000A8P0HGN"
    later = t.parse_smartctl(d2, "later")
    earlier = t.parse_smartctl(d1, "earlier")
    [one] = t.series_from_snapshots([later, earlier])
    assert [s.source for s in one.snapshots] == ["earlier", "later"] and one.clock == "power_on_hours"
    # A third snapshot with the same serial but more hours and fewer bytes written is another drive.
    d3 = copy.deepcopy(d2)
    d3["nvme_smart_health_information_log"]["data_units_written"] = 1
    d3["power_on_time"]["hours"] = 13000
    other = t.parse_smartctl(d3, "other")
    series = t.series_from_snapshots([earlier, later, other])
    assert sorted(len(s.snapshots) for s in series) == [1, 2]
    assert any("counters going backwards" in n for s in series for n in s.notes)
    # Same serial, other model: never merged.
    d4 = copy.deepcopy(d2)
    d4["model_name"] = "INTEL SSDPE2KX020T8"
    assert len(t.series_from_snapshots([earlier, t.parse_smartctl(d4, "x")])) == 2
