"""Your own drives: `custom_drives:` in plan files and PlanSpec.custom_drives (validated with their
API paths, no shadowing, calibrated by the catalog's code), and `arrayplan serve --catalog DIR`
showing a site's drives over the API."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import grpc
import pytest

from arrayplan.v1 import planner_pb2 as pb
from arrayplan.v1 import planner_pb2_grpc as pb_grpc
from arrayplan_engine import recommend, ssd
from arrayplan_engine.errors import InvalidInputError
from arrayplan_services.api.convert import plan_request_from_proto
from arrayplan_services.api.planfile import PlanFileError, plan_spec_from_text
from conftest import start_server

PLAN = """
workload: {read_fraction: 0.7, random_fraction: 1.0, io_size_mix: [{io_bytes: 4 KiB, weight: 1}], target_iops: 20000}
constraints: {usable_capacity_bytes: 4 TB}
candidate_space: {drive_models: [site-ssd-1920gb], layouts: [raid10], max_drive_count: 8}
custom_drives:
  - name: site-ssd-1920gb
    kind: ssd
    interface: sata-6g
    capacity_bytes: {value: 1.92 TB, source: "https://example.org/site-ssd.pdf", quote: "Capacity: 1.92TB"}
    nand_type: {value: mlc, assumed: true, reason: "the vendor says 'MLC' on the box only"}
    random_read_iops: 90000
    random_write_iops: 30000
    seq_read_bytes_per_s: 540e6
    seq_write_bytes_per_s: 500e6
    endurance_bytes_written: 3.5 PB
    price_usd: 400
    active_power_w: 3.5
    idle_power_w: 1.2
"""


def _violations(text: str) -> dict[str, str]:
    spec, _ = plan_spec_from_text(text, "plan.yaml", Path("."))
    with pytest.raises(InvalidInputError) as exc:
        plan_request_from_proto(spec, "plan.spec")
    return {v.field: v.reason for v in exc.value.violations}


def test_a_plan_file_custom_drive_becomes_a_calibrated_drive() -> None:
    spec, _ = plan_spec_from_text(PLAN, "plan.yaml", Path("."))
    d = spec.custom_drives[0]
    assert d.capacity_bytes == 1_920_000_000_000 and d.endurance_bytes_written == 3_500_000_000_000_000
    req = plan_request_from_proto(spec, "plan.spec")
    drive = req.custom_drives[0]
    assert drive.provenance["capacity_bytes"].source == "https://example.org/site-ssd.pdf"
    assert drive.provenance["nand_type"].assumed and drive.provenance["random_read_iops"].source == "user"
    # Spec-sheet only: raw NAND and GC policy are filled in, marked assumed (2 TiB for 1.92 TB).
    assert drive.raw_nand_bytes == 2 * 1024**4 and drive.provenance["raw_nand_bytes"].assumed
    # Calibrated by the catalog's code: the model's FOB figures reproduce the spec sheet.
    rows = {r.quantity: r for r in ssd.calibration_report(drive) if r.quantity != "random_write_iops"}
    assert rows["random_read_iops"].model == pytest.approx(90_000, rel=0.02)
    assert rows["seq_write_bytes_per_s"].model == pytest.approx(500e6, rel=0.02)
    # The search uses it: RAID 10 of 8 x 1.92 TB holds 4 TB (growth 0) and is enumerated.
    req = dataclasses.replace(req, service_life_years=1)
    out = recommend.plan(req)
    assert out.recommendations[0].evaluation.candidate.drive_model == "site-ssd-1920gb"


@pytest.mark.parametrize(
    ("edit", "field", "words"),
    [
        (("    capacity_bytes: {value: 1.92 TB, source: \"https://example.org/site-ssd.pdf\", quote: \"Capacity: 1.92TB\"}\n", ""),
         "plan.spec.custom_drives[0].capacity_bytes", "is required"),
        (("random_read_iops: 90000", "random_read_iops: -5"), "plan.spec.custom_drives[0].random_read_iops", "must be in (0, 1e8]"),
        (("endurance_bytes_written: 3.5 PB", "endurance_bytes_written: 3500"), "plan.spec.custom_drives[0].endurance_bytes_written",
         "TBW"),
        (("name: site-ssd-1920gb", "name: intel-dc-s3500-480gb"), "plan.spec.custom_drives[0].name", "already in the catalog"),
        (("interface: sata-6g", "interface: usb"), "plan.spec.custom_drives[0].interface", "must be one of"),
        (("reason: \"the vendor says 'MLC' on the box only\"", "reason: \"\""), "plan.spec.custom_drives[0].nand_type.reason",
         "is required"),
    ],
)
def test_bad_custom_drives_name_the_field_and_range(edit: tuple[str, str], field: str, words: str) -> None:
    text = PLAN.replace(*edit)
    if "intel-dc-s3500-480gb" in edit[1]:
        text = text.replace("drive_models: [site-ssd-1920gb]", "drive_models: [intel-dc-s3500-480gb]")
    got = _violations(text)
    assert field in got and words in got[field], got


def test_a_site_catalog_over_the_api_and_custom_drives_in_requests(tmp_path: Path) -> None:
    acme = (Path(__file__).resolve().parents[1] / "engine" / "test_catalog_files.py").read_text().split('GOOD = """')[1].split('"""')[0]
    (tmp_path / "catalog").mkdir()
    (tmp_path / "catalog" / "acme.toml").write_text(acme)
    server = start_server(tmp_path / "data", extra=("--catalog", str(tmp_path / "catalog"), "--executor", "local"))
    try:
        with grpc.insecure_channel(server.address) as channel:
            stub = pb_grpc.PlannerServiceStub(channel)
            d = stub.GetDrive(pb.GetDriveRequest(name="acme-x1-3840gb"), timeout=30)
            assert d.capacity_bytes == 3_840_000_000_000
            assert any(p.field == "capacity_bytes" and p.source == "https://example.org/acme-x1.pdf" for p in d.provenance)
            assert "acme-x1-3840gb" in [x.name for x in stub.ListDrives(pb.ListDrivesRequest(page_size=1000), timeout=30).drives]
            spec, _ = plan_spec_from_text(PLAN.replace("name: site-ssd-1920gb", "name: acme-x1-3840gb"), "plan.yaml", tmp_path)
            with pytest.raises(grpc.RpcError) as exc:
                stub.CreatePlan(pb.CreatePlanRequest(plan=pb.Plan(spec=spec)), timeout=30)
            assert exc.value.code() == grpc.StatusCode.INVALID_ARGUMENT
            assert "plan.spec.custom_drives[0].name" in exc.value.details()
    finally:
        server.stop()


def test_a_custom_qlc_drive_carries_its_slc_cache() -> None:
    """A QLC part sent inline carries its SLC write cache (DriveSpec.slc_cache_bytes and
    slc_write_bytes_per_s), validated like a catalog file's: the cached rate may not be below the
    direct-to-QLC rate. Figures of a Samsung 870 QVO 4TB as tests/engine/test_qlc_cache.py has them."""
    text = PLAN.replace("    nand_type: {value: mlc, assumed: true, reason: \"the vendor says 'MLC' on the box only\"}\n",
                        "    nand_type: qlc\n    slc_cache_bytes: 6 GB\n    slc_write_bytes_per_s: 530e6\n")
    text = text.replace("seq_write_bytes_per_s: 500e6", "seq_write_bytes_per_s: 160e6")
    spec, _ = plan_spec_from_text(text, "plan.yaml", Path("."))
    drive = plan_request_from_proto(spec, "plan.spec").custom_drives[0]
    assert (drive.slc_cache_bytes, drive.slc_write_bytes_per_s, drive.seq_write_bytes_per_s) == (6_000_000_000, 530e6, 160e6)
    got = _violations(text.replace("slc_write_bytes_per_s: 530e6", "slc_write_bytes_per_s: 100e6"))
    assert any(f.startswith("plan.spec.custom_drives[0].slc_write_bytes_per_s") for f in got), got


def test_a_custom_drive_carries_its_posted_write_buffer() -> None:
    """A drive sent inline carries its power-loss-protected write buffer (DriveSpec.write_buffer_bytes),
    so its writes are posted as a catalog file's are: the service model drains a buffer of that
    size, split over its controllers (docs/ssd-model.md, "Posted writes"); a negative size names
    the field."""
    text = PLAN.replace("    random_write_iops: 30000\n", "    random_write_iops: 30000\n    write_buffer_bytes: 1 MiB\n")
    spec, _ = plan_spec_from_text(text, "plan.yaml", Path("."))
    assert spec.custom_drives[0].write_buffer_bytes == 1 << 20
    drive = plan_request_from_proto(spec, "plan.spec").custom_drives[0]
    assert drive.write_buffer_bytes == 1 << 20
    model = ssd.service_model(drive)
    assert model.write_buffer_pages == pytest.approx((1 << 20) / 4096 / (drive.controllers or 1), rel=1e-12)
    assert 0.0 < model.posted_write_fixed_s < 1.0 / 30000 * 1.0001
    plain = plan_request_from_proto(plan_spec_from_text(PLAN, "plan.yaml", Path("."))[0], "plan.spec").custom_drives[0]
    assert plain.write_buffer_bytes is None and ssd.service_model(plain).write_buffer_pages == 0.0
    # A plan file refuses a negative size itself (the size grammar, docs/units.md); the API names the
    # field when a negative buffer arrives in a message.
    with pytest.raises(PlanFileError, match=r"custom_drives\[0\]\.write_buffer_bytes: a size cannot be negative"):
        plan_spec_from_text(text.replace("write_buffer_bytes: 1 MiB", "write_buffer_bytes: -4096"), "plan.yaml", Path("."))
    spec.custom_drives[0].write_buffer_bytes = -4096
    with pytest.raises(InvalidInputError) as exc:
        plan_request_from_proto(spec, "plan.spec")
    assert "plan.spec.custom_drives[0].write_buffer_bytes" in {v.field for v in exc.value.violations}, exc.value.violations
