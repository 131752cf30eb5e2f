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
    assert nvme["host_written_bytes"] == 2643181154 * 512_000 and isinstance(nvme["host_written_bytes"], int)
    assert nvme["percentage_used"] == 22 and nvme["protocol"] == "nvme"
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


def test_telemetry_names_drives_without_wear_counters(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["telemetry", str(DATA / "sat-Western_Digital_RE4-WDC_WD1003FBYX-01Y7B0-sda.json")]) == 0
    err = capsys.readouterr().err
    assert "sat-Western_Digital_RE4-WDC_WD1003FBYX-01Y7B0-sda.json: WDC WD1003FBYX-01Y7B0 serial REDACTED" in err and "wear unknown" in err


def test_telemetry_nothing_readable_is_bad_input(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["telemetry", str(tmp_path / "missing")]) == 2
    assert "no such file or directory" in capsys.readouterr().err


EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "array-in-service"


def test_forecast_example_array(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["forecast", str(EXAMPLE / "array.yaml"), "--format", "json"]) == 0
    rec = json.loads(capsys.readouterr().out)
    assert len(rec["drives"]) == 12 and not rec["problems"]
    assert {d["basis"] for d in rec["drives"]} == {"catalog rating"}
    assert {d["catalog_drive"] for d in rec["drives"]} == {"intel-dc-s3500-480gb"}
    g = {x["name"]: x for x in rec["groups"]}
    # g2's reused drives wear out first, and evenly: lockstep in both RAID 5 groups.
    assert g["g2"]["wear_out"]["time_s"] < g["g1"]["wear_out"]["time_s"]
    assert g["g1"]["lockstep"] and g["g2"]["lockstep"]
    for d in rec["drives"]:
        w = d["wear_out"]
        assert w["earliest_s"] < w["time_s"] < w["latest_s"]
        assert d["passed_but_worn"] == (d["group"] == "g2")      # < 25 % left, SMART PASSED
    full = rec["fill"]["full"]
    assert full["earliest_s"] <= full["time_s"] <= full["latest_s"]
    assert [o["action"] for o in rec["options"]][0] == "replace" and "group g2" in rec["options"][0]["text"]


def _array_yaml(tmp: Path, telemetry_dir: Path, serials: list[str]) -> Path:
    p = tmp / "array.yaml"
    p.write_text(f"name: t\nlayout: raid1\nstart_date: 2024-01-01\ntelemetry: [{telemetry_dir}]\n"
                 f"groups:\n  - name: m\n    drives: [{', '.join(serials)}]\n")
    return p


def test_forecast_bad_input_names_file_and_drive_and_processes_the_rest(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    tdir = tmp_path / "t"
    tdir.mkdir()
    good = (EXAMPLE / "telemetry" / "BTWL41000480BGN.json").read_text()
    (tdir / "a.json").write_text(good)
    (tdir / "broken.json").write_text(good[:500])
    hdd = json.loads((DATA / "sat-Western_Digital_RE4-WDC_WD1003FBYX-01Y7B0-sda.json").read_text())
    hdd["serial_number"] = "WD-WMATV0000001"
    (tdir / "hdd.json").write_text(json.dumps(hdd))
    # An SSD whose file holds no wear counters: the Micron 5210 sample without its wear attributes.
    ssd = json.loads((DATA / "sat-Micron_5100_Pro___52x0___5300_SSDs-Micron_5210_MTFDDAK960QDE-sdm.json").read_text())
    ssd["serial_number"] = "18151F0AA001"
    ssd["ata_smart_attributes"]["table"] = [a for a in ssd["ata_smart_attributes"]["table"] if a["id"] not in (202, 246, 247, 248)]
    (tdir / "nocounters.json").write_text(json.dumps(ssd))
    arr = _array_yaml(tmp_path, tdir, ["BTWL41000480BGN", "WD-WMATV0000001", "18151F0AA001", "NOSUCHSERIAL"])
    assert main(["forecast", str(arr), "--format", "json"]) == 4
    out = capsys.readouterr()
    rec = json.loads(out.out)
    assert "broken.json: truncated JSON" in out.err
    assert "drive NOSUCHSERIAL: no snapshot in the telemetry has this serial" in out.err
    assert "drive 18151F0AA001" in out.err and "nocounters.json" in out.err and "wear unknown" in out.err
    by = {d["serial"]: d for d in rec["drives"]}
    assert by["BTWL41000480BGN"]["wear_out"]["time_s"] is not None
    assert by["WD-WMATV0000001"]["basis"] == "none" and any("spinning disk" in n for n in by["WD-WMATV0000001"]["notes"])


def test_forecast_bad_array_file_names_line_and_field(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    p = tmp_path / "a.yaml"
    p.write_text("name: t\nlayout: raid7\nstart_date: 2024-01-01\ngroups:\n  - name: m\n    drives: [A, B]\nfull_fraction: 2\n")
    assert main(["forecast", str(p)]) == 2
    err = capsys.readouterr().err
    assert f"{p}:2: layout: unknown layout 'raid7'" in err and f"{p}:7: full_fraction: must be in (0, 1]" in err


def test_prometheus_capacity_samples(tmp_path: Path) -> None:
    from arrayplan_services.api.smart_io import parse_prometheus_text

    text = ("# HELP array_used_bytes Bytes used\n# TYPE array_used_bytes gauge\n"
            'array_used_bytes{array="a1",fs="x"} 1.0e12 1704067200000\n'
            'array_used_bytes{array="a1",fs="y"} 5.0e11 1704067200000\n'
            'array_used_bytes{array="a2",fs="x"} 9.0e12 1704067200000\n'
            'array_used_bytes{array="a1",fs="x"} 1.1e12 1706745600000\n')
    s = parse_prometheus_text(text, "array_used_bytes", {"array": "a1"})
    assert [(x.time_s, x.used_bytes) for x in s] == [(1704067200.0, 1.5e12), (1706745600.0, 1.1e12)]


def test_forecast_report_section(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["forecast", str(EXAMPLE / "array.yaml"), "--report", str(tmp_path)]) == 0
    html = (tmp_path / "forecast.html").read_text()
    md = (tmp_path / "forecast.md").read_text()
    for png in ("forecast-wear.png", "forecast-fill.png"):
        assert (tmp_path / png).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
        assert f"]({png})" in md
    assert html.count("data:image/png;base64,") == 2 and "90 % interval" in html
    assert "replace group g2" in md and "PASSED but worn" in md


def test_forecast_page_escapes_what_it_prints(tmp_path: Path) -> None:
    """The page is the report's Jinja2 templates, autoescaped: an array name, a drive model and a
    warning holding markup print as text in the title, the heading, the warning list and the table."""
    from dataclasses import replace

    from arrayplan_engine.catalog import builtin_catalog
    from arrayplan_services.api.arrayfile import forecast_file, load_array_file
    from arrayplan_services.report.forecast import forecast_section, write_forecast_report

    f, _ = forecast_file(load_array_file(EXAMPLE / "array.yaml"), builtin_catalog(), ())
    hostile = '<script>alert("x")</script> & <b>co</b>'
    f = replace(f, name=hostile, warnings=(hostile,), drives=(replace(f.drives[0], model=hostile), *f.drives[1:]))
    page = write_forecast_report(f, tmp_path).read_text()
    escaped = "&lt;script&gt;alert(&#34;x&#34;)&lt;/script&gt; &amp; &lt;b&gt;co&lt;/b&gt;"
    assert "<script>" not in page and "<b>co" not in page
    assert page.count(escaped) == 4  # <title>, <h2>, the warning, the drive's model cell
    section, md, _ = forecast_section(f)
    assert section.startswith(f"<section><h2>Forecast: {escaped}</h2>") and section in page
    # Markdown escapes it too (a pull-request comment renders HTML): entities, no live tag
    md_escaped = '&lt;script&gt;alert("x")&lt;/script&gt; &amp; &lt;b&gt;co&lt;/b&gt;'
    assert md.startswith(f"## Forecast: {md_escaped}\n") and md == (tmp_path / "forecast.md").read_text()


def test_replan_spec_uses_the_observed_write_rate_and_grown_capacity() -> None:
    from arrayplan_engine.catalog import builtin_catalog
    from arrayplan_services.api.arrayfile import forecast_file, load_array_file, observed_host_write_bytes_per_day, replan_spec

    array = load_array_file(EXAMPLE / "array.yaml")
    f, problems = forecast_file(array, builtin_catalog())
    assert not problems
    spec, notes = replan_spec(array, f)
    observed = observed_host_write_bytes_per_day(f, array.spec)
    # The example's drives were written from the model's years: 12 months at 1.2 TB/day of host
    # writes, 6 at 1.44 (20 % growth) -> 1.28 TB/day on average, back through RAID 5's write factor.
    assert observed == pytest.approx((12 * 1.2e12 + 6 * 1.44e12) / 18, rel=0.05)
    assert spec.workload.daily_write_bytes == pytest.approx(observed)
    assert spec.workload.read_fraction == pytest.approx(0.7) and spec.workload.growth_fraction_per_year == pytest.approx(0.2)
    # Year 1's capacity (the planner grows it by the workload's 20 %/year).
    assert spec.constraints.usable_capacity_bytes == pytest.approx(f.fill.used_bytes / 0.9, rel=1e-6)
    assert list(spec.candidate_space.layouts) == ["raid5", "raid6"] and spec.service_life_years == 5
    assert any("observed" in n for n in notes)


@pytest.mark.slow
def test_forecast_replan_through_the_planner(tmp_path: Path, server, capsys: pytest.CaptureFixture[str]) -> None:  # type: ignore[no-untyped-def]
    text = (EXAMPLE / "array.yaml").read_text()
    text = text.replace("telemetry: [telemetry/]", f"telemetry: [{EXAMPLE / 'telemetry'}]").replace("csv: capacity.csv", f"csv: {EXAMPLE / 'capacity.csv'}")
    head = text.split("replan:")[0]
    (tmp_path / "array.yaml").write_text(head + "replan:\n  service_life_years: 5\n  candidate_space:\n"
                                         "    drive_models: [intel-dc-s3700-800gb]\n    layouts: [raid5]\n    group_widths: [6]\n"
                                         "    min_drive_count: 12\n    max_drive_count: 18\n  seed: 1\n  max_recommendations: 1\n")
    code = main(["forecast", str(tmp_path / "array.yaml"), "--replan", "--server", server.address, "--format", "json"])
    rec = json.loads(capsys.readouterr().out)
    assert code == 0
    spec = rec["replan"]["spec"]
    assert float(spec["workload"]["daily_write_bytes"]) == pytest.approx((12 * 1.2e12 + 6 * 1.44e12) / 18, rel=0.05)
    best = rec["replan"]["result"]["recommendations"][0]
    assert best["drive_model"] == "intel-dc-s3700-800gb" and best["layout"] == "raid5"
    # The re-plan holds today's data under 90 % full, grown 20 %/year over 5 years.
    assert float(best["usable_capacity_bytes"]) >= float(spec["constraints"]["usable_capacity_bytes"]) * 1.2**4


def test_forecast_with_prometheus_capacity_samples_matches_the_csv(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    import csv as csv_mod
    import datetime as dt

    lines = ["# TYPE array_used_bytes gauge"]
    with (EXAMPLE / "capacity.csv").open() as f:
        for row in csv_mod.DictReader(f):
            t = dt.datetime.fromisoformat(row["time"]).replace(tzinfo=dt.UTC)
            lines.append(f'array_used_bytes{{array="oltp-array-1"}} {row["used_bytes"]} {int(t.timestamp() * 1000)}')
            lines.append(f'array_used_bytes{{array="other"}} 1e15 {int(t.timestamp() * 1000)}')
    (tmp_path / "scrape.prom").write_text("\n".join(lines) + "\n")
    text = (EXAMPLE / "array.yaml").read_text().replace("telemetry: [telemetry/]", f"telemetry: [{EXAMPLE / 'telemetry'}]")
    text = text.replace("  csv: capacity.csv", "  prometheus: [scrape.prom]\n  metric: array_used_bytes\n  labels: {array: oltp-array-1}")
    (tmp_path / "array.yaml").write_text(text)
    assert main(["forecast", str(tmp_path / "array.yaml"), "--format", "json"]) == 0
    prom = json.loads(capsys.readouterr().out)["fill"]
    assert main(["forecast", str(EXAMPLE / "array.yaml"), "--format", "json"]) == 0
    csv_fill = json.loads(capsys.readouterr().out)["fill"]
    assert prom["used_bytes"] == pytest.approx(csv_fill["used_bytes"], rel=1e-12)
    assert prom["full"]["time_s"] == pytest.approx(csv_fill["full"]["time_s"], abs=1.0)


def test_forecast_unknown_catalog_drive_names_the_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    p = tmp_path / "a.yaml"
    p.write_text("name: t\nlayout: raid1\nstart_date: 2024-01-01\ncatalog_drive: intel-ssd-999\ngroups:\n  - name: m\n    drives: [A, B]\n")
    assert main(["forecast", str(p)]) == 2
    assert f"{p}:4: catalog_drive: unknown 'intel-ssd-999'" in capsys.readouterr().err


def test_the_example_telemetry_is_what_the_generator_writes(tmp_path: Path) -> None:
    """examples/array-in-service is reproducible from the endurance model (seeded), by the generator
    run as its docstring and docs/forecast.md say."""
    import subprocess
    import sys

    root = EXAMPLE.parents[1]
    subprocess.run([sys.executable, str(root / "scripts" / "forecast_example.py"), str(tmp_path)], check=True, cwd=root, timeout=300)
    for p in sorted((EXAMPLE / "telemetry").glob("*.json")) + [EXAMPLE / "capacity.csv"]:
        assert (tmp_path / p.relative_to(EXAMPLE)).read_text() == p.read_text(), p.name


def test_forecast_a_drive_read_with_nvme_cli(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """nvme smart-log -o json names no drive: the array file says whose logs they are; capture times
    come from the files' modification times (nvme-cli prints none)."""
    import os

    real = json.loads((DATA / "nvme-null-Micron_7300_MTFDHBE960TDF-nvme0.json").read_text())["nvme_smart_health_information_log"]
    logs = []
    for k, (extra_hours, extra_pct) in enumerate(((0, 0), (2000, 1))):
        # nvme-cli's key names for the same log page; the later log is the same drive 2000 h on.
        doc = {"critical_warning": 0, "avail_spare": real["available_spare"], "spare_thresh": real["available_spare_threshold"],
               "percent_used": real["percentage_used"] + extra_pct, "data_units_written": real["data_units_written"] + extra_hours * 48_000,
               "power_on_hours": real["power_on_hours"] + extra_hours, "media_errors": 0}
        p = tmp_path / f"nvme0-{k}.json"
        p.write_text(json.dumps(doc))
        os.utime(p, (1_700_000_000 + extra_hours * 3600, 1_700_000_000 + extra_hours * 3600))
        logs.append(p.name)
    arr = tmp_path / "array.yaml"
    arr.write_text("name: n\nlayout: raid0\nstart_date: 2021-01-01\ngroups:\n  - name: m\n    drives:\n"
                   f"      - {{serial: MSN0001, model: Micron_7300_MTFDHBE960TDF, nvme_smart_log: [{', '.join(logs)}]}}\n")
    assert main(["forecast", str(arr), "--format", "json"]) == 0
    [d] = json.loads(capsys.readouterr().out)["drives"]
    assert d["snapshot_count"] == 2 and d["basis"] == "wear indicator" and d["rate_basis"] == "intervals"
    assert d["life_used_fraction"] == pytest.approx(0.11)
    # 1 % per 2000 h (the readings are whole percents): 89 % more in about 178,000 h.
    assert (d["wear_out"]["time_s"] - (1_700_000_000 + 2000 * 3600)) / 3600 == pytest.approx(89 * 2000, rel=1e-6)
    assert d["host_write_bytes_per_day"] == pytest.approx(48_000 * 512_000 * 24, rel=1e-9)
