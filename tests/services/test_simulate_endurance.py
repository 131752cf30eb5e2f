"""SimulateArray's endurance_years is the planner's wear model (endurance.service_life_wear): the
FTL's write amplification counts, so sequential writes outlive random ones on the same drive, and
a closed loop wears the drives at the rate it achieved (it once divided rated TBW by host bytes,
ignoring write amplification, and a closed loop answered 1e9 years)."""

from __future__ import annotations

import dataclasses

import pytest
from google.protobuf import duration_pb2

from arrayplan.v1 import planner_pb2 as pb
from arrayplan_engine import endurance, ssd
from arrayplan_engine.catalog import builtin_catalog
from arrayplan_engine.layout import make_layout, usable_capacity_bytes
from arrayplan_services.api.convert import workload_from_proto
from arrayplan_services.fanout import LocalExecutor
from arrayplan_services.plan import simulate

DRIVE = "intel-dc-s3500-480gb"


def _request(*, random_fraction: float, io_bytes: int, target_iops: float, layout: str = "raid0", count: int = 4,
             fill: float = 1.0) -> pb.SimulateArrayRequest:
    wl = pb.Workload(read_fraction=0.0, random_fraction=random_fraction, queue_depth=8, target_iops=target_iops,
                     io_size_mix=[pb.IoSizeShare(io_bytes=io_bytes, weight=1.0)])
    return pb.SimulateArrayRequest(drive_model=DRIVE, drive_count=count, layout=layout, workload=wl, fill_fraction=fill,
                                   duration=duration_pb2.Duration(nanos=200_000_000), seed=3, service_life_years=5)


def test_simulate_wears_by_the_planners_model() -> None:
    """The figure is service_life_wear's for the same drive, layout, workload, fill and discards
    (the request's default, auto, is none for RAID 5: the members' span stays mapped, and the
    wear is at the full-span write amplification; passed wears at the fill's)."""
    catalog = builtin_catalog()
    drive = catalog.get(DRIVE)
    layout = make_layout("raid5", 4)
    usable = usable_capacity_bytes(layout, 4, drive.capacity_bytes)
    years = {}
    for discards in ("", "passed"):
        req = _request(random_fraction=1.0, io_bytes=4096, target_iops=8_000, layout="raid5", count=4, fill=0.6)
        req.discards = discards
        resp = simulate.simulate_array(req, catalog, LocalExecutor())
        wear = endurance.service_life_wear(drive, layout, 4, workload_from_proto(req.workload, "workload"), years=5,
                                           data_bytes_year1=0.6 * usable, usable_capacity_bytes=usable,
                                           discards=discards or "auto")
        assert resp.endurance_years == pytest.approx(wear.endurance_years, rel=1e-12)
        assert 0 < resp.endurance_years < 1e9
        years[discards] = resp.endurance_years
    assert years[""] < years["passed"]


def test_sequential_writes_outlive_random_ones() -> None:
    """Same host bytes a day on a RAID 0 (write factor 1 for both): random 4 KiB writes wear the
    NAND by the FTL's steady-state write amplification (Desnoyers' greedy model, wa.py: ~4 for the
    S3500's spare at full fill), sequential writes free whole blocks (WA 1). The years differ by
    that factor (to 1e-9: the same model on both sides, no sampling)."""
    catalog = builtin_catalog()
    rnd = simulate.simulate_array(_request(random_fraction=1.0, io_bytes=4096, target_iops=32_000), catalog, LocalExecutor())
    seq = simulate.simulate_array(_request(random_fraction=0.0, io_bytes=128 * 1024, target_iops=1_000), catalog, LocalExecutor())
    wa = ssd.steady_state_write_amplification(catalog.get(DRIVE), fill_fraction=1.0)
    assert wa > 3.0
    assert seq.endurance_years / rnd.endurance_years == pytest.approx(wa, rel=1e-9)


def test_closed_loop_wears_at_the_achieved_rate() -> None:
    """No target rate: the drives wear at the simulated rate, a finite life, and the same figure
    as an open loop offered exactly that rate."""
    catalog = builtin_catalog()
    closed = simulate.simulate_array(_request(random_fraction=1.0, io_bytes=4096, target_iops=0.0), catalog, LocalExecutor())
    assert closed.achieved_iops > 1_000
    assert 0 < closed.endurance_years < 100
    drive = catalog.get(DRIVE)
    layout = make_layout("raid0", 4)
    usable = usable_capacity_bytes(layout, 4, drive.capacity_bytes)
    wl = dataclasses.replace(workload_from_proto(_request(random_fraction=1.0, io_bytes=4096, target_iops=0.0).workload, "workload"),
                             target_iops=closed.achieved_iops)
    wear = endurance.service_life_wear(drive, layout, 4, wl, years=5, data_bytes_year1=usable, usable_capacity_bytes=usable)
    assert closed.endurance_years == pytest.approx(wear.endurance_years, rel=1e-12)


def test_hdd_has_no_write_endurance_figure() -> None:
    catalog = builtin_catalog()
    hdd = next(d for d in catalog if d.kind == "hdd")
    req = _request(random_fraction=1.0, io_bytes=4096, target_iops=100)
    req.drive_model = hdd.name
    assert simulate.simulate_array(req, catalog, LocalExecutor()).endurance_years == 0.0


def test_the_cli_builds_the_members_used_state_from_discards() -> None:
    """`arrayplan simulate --discards`: a RAID 5's members at fill 0.3 are simulated fully mapped
    by default (auto = none for parity) and at the fill with passed; RAID 10's default is passed."""
    from arrayplan_services.cli.main import build_parser
    from arrayplan_services.cli.simulate_command import _request

    def span(*extra: str) -> float:
        args = build_parser().parse_args(["simulate", "--drive", DRIVE, "--drives", "4", "--layout", *extra,
                                          "--fill-fraction", "0.3", "--read-fraction", "0.7", "--local", "--parts", "1"])
        # the request the command sends (to a server or in-process), read as SimulateArray reads it
        return simulate.question_of(_request(args), builtin_catalog()).spec.service_models[0].span_pages

    full = span("raid5")
    assert span("raid5", "--discards", "none") == full
    assert span("raid5", "--discards", "passed") == pytest.approx(0.3 * full, rel=1e-9)
    assert span("raid10") == pytest.approx(0.3 * full, rel=1e-9)
