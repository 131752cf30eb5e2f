"""`arrayplan drives`: the catalog as JSON, `drives export` round trips, a site's catalog folder
(`--catalog DIR`), and a malformed catalog file stopping `arrayplan serve`."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from arrayplan_engine.catalog import all_drives, drive_from_toml, get_drive
from arrayplan_services.cli.main import main

ACME = (Path(__file__).resolve().parents[1] / "engine" / "test_catalog_files.py").read_text(encoding="utf-8").split('GOOD = """')[1].split('"""')[0]


def _run(argv: list[str], capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> tuple[int, str, str]:
    monkeypatch.delenv("ARRAYPLAN_SERVER", raising=False)
    code = main(argv)
    out = capsys.readouterr()
    return code, out.out, out.err


def test_drives_json_lists_every_drive_with_kind_capacity_bytes_and_sources(capsys, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    code, out, _ = _run(["drives", "--format", "json"], capsys, monkeypatch)
    assert code == 0
    rows = json.loads(out)
    assert [r["name"] for r in rows] == [d.name for d in all_drives()]
    for r in rows:
        assert r["kind"] in ("ssd", "hdd") and isinstance(r["capacity_bytes"], int) and r["capacity_bytes"] > 0
        # every sourced value's source is listed (a generic disk with only assumed values has none)
        quoted = {p["source"] for p in r["provenance"] if not p["assumed"]}
        assert quoted <= set(r["sources"]) and (r["sources"] or not quoted)
    s3500 = next(r for r in rows if r["name"] == "intel-dc-s3500-480gb")
    assert s3500["capacity_bytes"] == 480_000_000_000 and "001_4993870e060cd6fa.txt" in s3500["sources"]


def test_drives_export_prints_a_catalog_file_that_loads_back_unchanged(capsys, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    for name in ("intel-dc-s3500-480gb", "hdd-7k2-nearline-8tb"):
        code, out, _ = _run(["drives", "export", name], capsys, monkeypatch)
        assert code == 0
        assert f'name = "{name}"' in out.splitlines()
        again = drive_from_toml(out, name)
        assert again == get_drive(name) and dict(again.provenance) == dict(get_drive(name).provenance)
    code, _, err = _run(["drives", "export", "intel-ssd-999"], capsys, monkeypatch)
    assert code == 2 and "unknown 'intel-ssd-999'" in err


def test_a_catalog_folder_adds_a_sites_drives(tmp_path: Path, capsys, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    (tmp_path / "acme.toml").write_text(ACME, encoding="utf-8")
    code, out, _ = _run(["drives", "--catalog", str(tmp_path), "--format", "json"], capsys, monkeypatch)
    assert code == 0
    acme = json.loads(out)[-1]
    assert acme["name"] == "acme-x1-3840gb" and acme["capacity_bytes"] == 3_840_000_000_000
    assert acme["sources"] == ["https://example.org/acme-x1.pdf"]
    code, out, _ = _run(["drives", "export", "acme-x1-3840gb", "--catalog", str(tmp_path)], capsys, monkeypatch)
    assert code == 0 and drive_from_toml(out).capacity_bytes == 3_840_000_000_000


def test_a_malformed_catalog_file_stops_the_server_naming_file_line_and_field(tmp_path: Path, capsys, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    bad = tmp_path / "cat" / "acme.toml"
    bad.parent.mkdir()
    bad.write_text(ACME.replace("value = 3840000000000", "value = -5"), encoding="utf-8")
    code, _, err = _run(["serve", "--catalog", str(bad.parent), "--port", "0", "--data-dir", str(tmp_path / "d"),
                         "--executor", "local"], capsys, monkeypatch)
    assert code == 2
    assert f"{bad}:8: capacity_bytes: must be an integer in (0, 1e15]" in err


@pytest.mark.slow
def test_consistency_fio_log_round_trips_through_drives_fit(tmp_path: Path, capsys, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    log, base, fitted, figure = (tmp_path / n for n in ("s3500.log", "base.toml", "fitted.toml", "fit.png"))
    code, _, _ = _run(["consistency", "intel-dc-s3500-480gb", "--duration-s", "2000", "--seed", "5", "--fio-log-out", str(log)],
                      capsys, monkeypatch)
    assert code == 0 and log.read_text().splitlines()[0].endswith(", 1, 4096, 0")
    code, out, _ = _run(["drives", "export", "intel-dc-s3500-480gb"], capsys, monkeypatch)
    base.write_text(out)
    code, out, err = _run(["drives", "fit", "--base", str(base), "--fio-log", str(log), "--figure", str(figure), "--out", str(fitted),
                           "--name", "my-s3500", "--quiet", "--iterations", "7"], capsys, monkeypatch)
    assert code == 0, err
    assert "14 model runs" in err
    drive = drive_from_toml(out)
    assert drive.name == "my-s3500" and fitted.read_text() == out and figure.stat().st_size > 10_000
    assert "steady" in err and "time to steady" in err
    # the fitted file runs as a drive: its own consistency run keeps the measured steady level
    code, out, _ = _run(["consistency", str(fitted), "--duration-s", "2000", "--seed", "5", "--fio-log-out", str(tmp_path / "again.log"),
                         "--format", "json"], capsys, monkeypatch)
    assert code == 0
    from arrayplan_engine.drive_fit import curve_figures, parse_fio_log

    measured = curve_figures(parse_fio_log(log.read_text()))
    assert json.loads(out)["steady_iops_mean"] == pytest.approx(measured.steady_iops, rel=0.10)


def test_drives_fit_refuses_a_log_that_is_not_fio(tmp_path: Path, capsys, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    (tmp_path / "x.log").write_text("time,iops\n0,5000\n")
    code, _, err = _run(["drives", "fit", "--base", "intel-dc-s3500-480gb", "--fio-log", str(tmp_path / "x.log"), "--iterations", "2"],
                        capsys, monkeypatch)
    assert code == 2 and "--iterations: must be an integer in [3, 30], got 2" in err
    code, _, err = _run(["drives", "fit", "--base", "intel-dc-s3500-480gb", "--fio-log", str(tmp_path / "x.log")], capsys, monkeypatch)
    assert code == 2 and f"{tmp_path / 'x.log'}:1: not a fio write_iops_log line" in err


def _table_row(out: str, name: str) -> dict[str, str]:
    """The cells of ``name``'s row in the drives table, by column title."""
    lines = out.splitlines()
    head = next(line for line in lines if "rand write IOPS" in line)
    row = next(line for line in lines if f" {name} " in line)
    titles = [c.strip() for c in head.strip("┃").split("┃")]
    return dict(zip(titles, [c.strip() for c in row.strip("│").split("│")], strict=True))


def test_an_unknown_value_is_shown_unknown_not_zero(capsys, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """The DC S3500 spec gives no fresh random-write IOPS (only steady state): '-' in the table and
    null in JSON, as the other values the catalog does not give; a known value stays a number."""
    assert get_drive("intel-dc-s3500-480gb").random_write_iops is None
    code, out, _ = _run(["drives", "--format", "json"], capsys, monkeypatch)
    assert code == 0
    rows = {r["name"]: r for r in json.loads(out)}
    s3500, hdd = rows["intel-dc-s3500-480gb"], rows["hdd-15k-sas-300gb"]
    assert s3500["random_write_iops"] is None and s3500["steady_random_write_iops"] == 11_500
    assert hdd["steady_random_write_iops"] is None and hdd["endurance_bytes_written"] is None and hdd["random_write_iops"] > 0
    for d in all_drives():  # null exactly where the catalog has no value
        for key in ("random_read_iops", "random_write_iops", "steady_random_write_iops", "endurance_bytes_written", "price_usd"):
            assert (rows[d.name][key] is None) == (getattr(d, key) is None), (d.name, key)
    code, out, _ = _run(["drives", "--kind", "ssd"], capsys, monkeypatch)
    assert code == 0
    cells = _table_row(out, "intel-dc-s3500-480gb")
    assert cells["rand write IOPS"] == "-" and cells["steady write"] == "11,500" and cells["rand read IOPS"] == "75,000"
    assert _table_row(out, "intel-ssd-320-300gb")["rand write IOPS"] not in ("-", "0")


def test_provenance_says_assumed_once(capsys, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """`drives NAME` prints an assumed value as `field: assumed: reason`; no reason in the catalog
    repeats the word (it read "assumed: assumed: a typical 2024 street price ...")."""
    doubled = [(d.name, f) for d in all_drives() for f, p in d.provenance.items() if p.assumed and p.reason.lower().startswith("assumed")]
    assert not doubled
    code, out, _ = _run(["drives", "kioxia-cm6-r-30720gb"], capsys, monkeypatch)
    assert code == 0
    assert "  price_usd: assumed: a typical 2024 street price for this class of drive" in out
    assert "assumed: assumed:" not in out
