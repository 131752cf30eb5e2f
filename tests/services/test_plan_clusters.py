"""Clusters as one more kind of plan candidate: the two example questions run end to end through
`arrayplan plan --local` (the in-process executor), and the plan file's cluster fields refused
with their field and range. Figures derived in each test from the example's stated inputs."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from arrayplan_engine.errors import InvalidInputError
from arrayplan_services.api.convert import plan_request_from_proto
from arrayplan_services.api.planfile import PlanFileError, plan_spec_from_text

ROOT = Path(__file__).resolve().parents[2]


def _plan(name: str, tmp_path: Path) -> dict:
    out = subprocess.run([sys.executable, "-m", "arrayplan_services.cli.main", "plan", str(ROOT / "examples" / name), "--local",
                          "--executor", "local", "--data-dir", str(tmp_path), "--format", "json"],
                         capture_output=True, text=True, timeout=600, cwd=ROOT)
    assert out.returncode == 0, out.stderr[-3000:]
    doc = json.loads(out.stdout)
    plan = doc.get("plan", doc)
    assert plan["state"] == "STATE_SUCCEEDED"
    return plan["result"]


def test_object_store_minio_example(tmp_path: Path) -> None:
    r = _plan("object-store-minio.yaml", tmp_path)
    assert r["constraints_met"]
    recs = r["recommendations"]
    assert recs and all("cluster" in x for x in recs)  # 96 disks in one box cannot hold it durably: clusters win
    final_year = 1e15 * 1.1**4  # 1 PB growing 10 % a year, year 5
    prices = {"wd-ultrastar-hc560-20tb": 680.0, "wd-ultrastar-hc570-22tb": 450.0, "wd-ultrastar-hc670-26tb": 480.0}  # catalog
    for x in recs:
        c = x["cluster"]
        assert x["meets_constraints"] and x["usable_capacity_bytes"] >= final_year
        assert c["data_loss_probability"] <= 1e-6
        assert x["drive_count"] == c["server_count"] * c["drives_per_server"]
        # every bay paid with its server: servers x (9,000 USD + drives x drive price)
        assert x["purchase_cost_usd"] == pytest.approx(c["server_count"] * (9000 + c["drives_per_server"] * prices[x["drive_model"]]))
        assert c["host_rebuild_duration_s"] > c["drive_rebuild_duration_s"] > 0
        # the latency interval brackets its estimate; a 1 MiB object over 7,200 rpm disks waits at
        # least half a rotation (4.17 ms) on some shard at p99, and meets the 500 ms target
        assert x["latency_at_percentile_low_s"] <= x["latency_at_percentile_s"] <= x["latency_at_percentile_high_s"] <= 0.5
        assert x["latency_at_percentile_s"] > 60 / 7200 / 2
        checks = {k["constraint"]: k for k in x["checks"]}
        assert checks["iops"]["met"] and x["predicted_iops_low"] >= 500  # the drives' bound, at its low end
    best = recs[0]["cluster"]
    # MinIO (cmd/endpoint-ellipses.go, storageclass DefaultParityBlocks): 7 servers x 16 drives -> sets
    # of 14 (the largest size in 2..16 dividing 112 and symmetric with 7 hosts), EC:4 for 8-16 drives
    assert best["scheme"] == "minio EC:4 sets of 14" and best["server_count"] == 7
    # usable = raw x k/(k+m) x nearfull 0.85 (no failed-server reserve: MinIO heals onto the replacement)
    assert best["usable_capacity_bytes"] == pytest.approx(best["raw_capacity_bytes"] * 10 / 14 * 0.85, rel=1e-9)
    assert any(a.startswith("clusters: latency is one drive's kernel simulation at its share of the shard IOs, whose latencies") for a in r["assumptions"])


def test_block_ceph_rbd_example(tmp_path: Path) -> None:
    r = _plan("block-ceph-rbd.yaml", tmp_path)
    assert r["constraints_met"]
    best = r["recommendations"][0]
    c = best["cluster"]  # a 12-bay box cannot hold 187.5 TB: the clusters rank first
    assert (c["scheme"], c["server_count"], c["drives_per_server"]) == ("ec:4+2", 6, 6)
    # 6 hosts for a 6-wide stripe: no failed-host reserve, nearfull 0.85 binds: 36 x 7.68 TB x 4/6 x 0.85
    assert best["usable_capacity_bytes"] == pytest.approx(36 * 7.68e12 * 4 / 6 * 0.85, rel=1e-9)
    # NIC bound (cluster_network): 16 KiB ops, 70 % reads; a host's TX per op is 0.7 (s + 3 s/4) + 0.3 (5 s/4)
    # = 1.6 s; six 100 GbE hosts saturate at 6 x 12.5e9 / (1.6 x 16,384) ops/s
    nic_bound = 6 * 12.5e9 / (1.6 * 16384)
    assert c["nic_max_iops"] == pytest.approx(nic_bound, rel=1e-6)
    # IOPS is the lower of the NIC and the drives' bound (the kernel's saturation run of one drive):
    # 200,000 IOPS needs neither near its limit, and the check holds at the interval's low end
    assert best["predicted_iops_low"] <= best["predicted_iops"] <= min(nic_bound * (1 + 1e-9), best["predicted_iops_high"])
    checks = {k["constraint"]: k for k in best["checks"]}
    assert checks["iops"]["met"] and best["predicted_iops_low"] > 200_000
    assert best["latency_at_percentile_low_s"] <= best["latency_at_percentile_s"] <= best["latency_at_percentile_high_s"] <= 5e-3
    assert best["latency_at_percentile_s"] >= 2 * 50e-6  # at least the request and reply hops
    assert checks["latency"]["confidence_level"] == pytest.approx(0.95) and checks["latency"]["met"]
    assert checks["durability"]["predicted"] == c["data_loss_probability"] <= 1e-6


BASE = """
workload: {read_fraction: 0.7, io_size_mix: [{io_bytes: 16 KiB, weight: 1}], target_iops: 1000}
constraints: {usable_capacity_bytes: 100 TB}
candidate_space:
  servers:
"""


def test_plan_file_cluster_fields_are_checked() -> None:
    with pytest.raises(PlanFileError) as exc:
        plan_spec_from_text(BASE + "    bay_counts: 12\n")
    assert "did you mean 'bay_count'" in str(exc.value)
    bad = BASE + "    nic_bytes_per_s: 12.5 GB\n    pools: [{scheme: 'ec:4+2', failure_domain: hots}]\n    drives_per_server: [20]\n"
    with pytest.raises(PlanFileError) as exc:  # the plan file names the lines
        plan_spec_from_text(bad)
    lines = {field: (line, reason) for line, field, reason in exc.value.problems}
    assert lines["candidate_space.servers.pools[0].failure_domain"][0] == 7
    assert "did you mean 'host'" in lines["candidate_space.servers.pools[0].failure_domain"][1]
    assert lines["candidate_space.servers.drives_per_server[0]"][0] == 8
    # the API refuses the same message, naming the fields and ranges
    spec, _ = plan_spec_from_text(BASE + "    nic_bytes_per_s: 12.5 GB\n")
    assert spec.candidate_space.servers.nic_bytes_per_s == 12.5e9
    spec.candidate_space.servers.pools.add(scheme="ec:4+2", failure_domain="hots")
    spec.candidate_space.servers.drives_per_server.append(20)
    spec.candidate_space.servers.max_server_count = 1000
    with pytest.raises(InvalidInputError) as err:
        plan_request_from_proto(spec)
    fields = {v.field: v.reason for v in err.value.violations}
    assert "did you mean 'host'" in fields["plan.spec.candidate_space.servers.pools[0].failure_domain"]
    assert "in [1, bay_count" in fields["plan.spec.candidate_space.servers.drives_per_server[0]"]
    spec.candidate_space.servers.ClearField("pools")
    spec.candidate_space.servers.ClearField("drives_per_server")
    with pytest.raises(InvalidInputError) as err:  # 12 x 3 pools x 1,000 server counts = 36,000: allowed; x 16 pools: not
        for _ in range(16):
            spec.candidate_space.servers.pools.add(scheme="rep:3")
        plan_request_from_proto(spec)
    assert "at most 50,000" in {v.field: v.reason for v in err.value.violations}["plan.spec.candidate_space.servers.max_server_count"]


def test_a_saturated_nic_fails_the_iops_check_without_a_simulation() -> None:
    # Reads of 1 MiB: a replicated read sends the object from its primary's TX once, so 4 hosts
    # with 1 GB/s NICs carry at most 4 x 1e9 / 1,048,576 = 3,815 reads/s; 10,000 are asked.
    from arrayplan_engine import cluster_plan
    from arrayplan_engine.catalog import builtin_catalog

    spec, _ = plan_spec_from_text("""
workload: {read_fraction: 1.0, io_size_mix: [{io_bytes: 1 MiB, weight: 1}], target_iops: 10000}
constraints: {usable_capacity_bytes: 10 TB}
candidate_space:
  drive_models: [wd-ultrastar-hc570-22tb]
  servers: {bay_count: 4, drives_per_server: [4], nic_bytes_per_s: 1 GB, min_server_count: 4, max_server_count: 4,
            pools: [{scheme: "rep:3"}]}
""")
    catalog = builtin_catalog()
    req = plan_request_from_proto(spec, "plan.spec", catalog)
    out = cluster_plan.evaluate_clusters(req, catalog, req.cluster)
    (rec,) = out.recommendations
    assert not rec.meets_constraints and rec.binding_constraint == "iops"
    assert rec.predicted_iops.value == pytest.approx(4 * 1e9 / 1048576, rel=1e-9)
    assert rec.replications == 0 and rec.latency_at_percentile_s.value != rec.latency_at_percentile_s.value  # NaN: not simulated
    assert any("saturates at 3,815 client ops/s" in n for n in rec.notes)


def test_bay_cost_and_power_from_the_plan_file_and_their_ranges() -> None:
    """candidate_space.bay_cost_usd / bay_power_w: read from the plan file into the request (unset:
    cost.py's sourced 99.17 USD and 5.17 W), priced into a cluster server that states no cost
    (bay_count bays), and refused out of range with the field, the line and the range."""
    from arrayplan_engine import cost

    spec, _ = plan_spec_from_text(BASE + "    bay_count: 16\n")
    req = plan_request_from_proto(spec)
    assert (req.candidate_space.bay_cost_usd, req.candidate_space.bay_power_w) == (
        cost.ENCLOSURE_USD_PER_BAY, cost.ENCLOSURE_POWER_W_PER_BAY)
    assert req.cluster is not None
    assert req.cluster.server.cost_usd == pytest.approx(16 * 5_950 / 60, rel=1e-12)  # 16 bays of a bare Storage Pod
    assert req.cluster.server.power_w == pytest.approx(16 * (158 - 12 * 8) / 12, rel=1e-12)
    spec, _ = plan_spec_from_text(BASE + "    bay_count: 16\n    server_cost_usd: 9000\n  bay_cost_usd: 0\n  bay_power_w: 2.5\n")
    req = plan_request_from_proto(spec)
    assert (req.candidate_space.bay_cost_usd, req.candidate_space.bay_power_w) == (0.0, 2.5)
    assert req.cluster is not None
    assert (req.cluster.server.cost_usd, req.cluster.server.power_w) == (9000.0, 16 * 2.5)  # a stated price is kept
    with pytest.raises(PlanFileError) as exc:
        plan_spec_from_text(BASE + "    bay_count: 16\n  bay_cost_usd: -1\n  bay_power_w: 5000\n")
    lines = {field: (line, reason) for line, field, reason in exc.value.problems}
    assert lines["candidate_space.bay_cost_usd"] == (7, "must be in [0, 100000] USD, got -1.0")
    assert lines["candidate_space.bay_power_w"][0] == 8 and "[0, 1000]" in lines["candidate_space.bay_power_w"][1]
    spec.candidate_space.bay_cost_usd = -1
    with pytest.raises(InvalidInputError) as err:
        plan_request_from_proto(spec)
    assert "plan.spec.candidate_space.bay_cost_usd" in {v.field for v in err.value.violations}


def test_ec_encoding_bounds_iops_and_a_fail_slow_host_is_reported() -> None:
    # EC 4+2 writes of 4 MiB with a host's encoder at 50 MB/s (a stated, deliberately slow rate,
    # given in the plan file):
    # 8 primaries encode at most 8 x 50e6 / 4,194,304 = 95.4 writes/s, below the NICs (25 GbE:
    # 8 x 3.125e9 / (1.5 x 4 MiB) = 3,974/s) and the drives. At 60 writes/s (CPUs 63 % busy) the
    # cluster is simulated, and its tail with one host 2x slow (its CPU then 126 % busy: that
    # host's queue grows) is reported and is longer.
    from arrayplan_engine import cluster_plan
    from arrayplan_engine.catalog import builtin_catalog

    spec, _ = plan_spec_from_text("""
workload: {read_fraction: 0.0, io_size_mix: [{io_bytes: 4 MiB, weight: 1}], target_iops: 60}
constraints: {usable_capacity_bytes: 10 TB}
candidate_space:
  drive_models: [intel-d7-p5500-7680gb]
  servers: {bay_count: 4, drives_per_server: [2], min_server_count: 8, max_server_count: 8,
            pools: [{scheme: "ec:4+2"}], ec_encode_bytes_per_s: 50e6}
""")
    catalog = builtin_catalog()
    req = plan_request_from_proto(spec, "plan.spec", catalog)
    assert req.cluster is not None and req.cluster.server.ec_encode_bytes_per_s == 50e6
    (rec,) = cluster_plan.evaluate_clusters(req, catalog, req.cluster).recommendations
    assert rec.cpu_max_iops == pytest.approx(8 * 50e6 / 4194304, rel=1e-9)
    assert rec.predicted_iops.value == pytest.approx(rec.cpu_max_iops, rel=1e-9)
    assert any("primaries' EC encoding (CPU) binds" in n for n in rec.notes)
    assert any("busiest CPU 6" in n for n in rec.notes)  # 60 x 4 MiB / (8 x 50 MB/s) = 63 %
    assert rec.latency_slow_host_s > rec.latency_at_percentile_s.high
    assert any(n.startswith("fail-slow host: with one host 2x slow") and "offered 126%" in n for n in rec.notes)


def test_the_encode_rate_defaults_to_one_core_and_a_bad_one_is_named() -> None:
    # unset: one core's jerasure rate (cluster.EC_ENCODE_BYTES_PER_S, Ceph's benchmark); 0 is
    # "free" and accepted; a negative rate is refused naming the field and its range
    from arrayplan_engine.cluster import EC_ENCODE_BYTES_PER_S

    text = """
workload: {read_fraction: 0.5, io_size_mix: [{io_bytes: 1 MiB, weight: 1}], target_iops: 100}
constraints: {usable_capacity_bytes: 10 TB}
candidate_space:
  servers: {bay_count: 4, min_server_count: 8, max_server_count: 8%s}
"""
    spec, _ = plan_spec_from_text(text % "")
    assert plan_request_from_proto(spec).cluster.server.ec_encode_bytes_per_s == EC_ENCODE_BYTES_PER_S == 4.2e9
    spec, _ = plan_spec_from_text(text % ", ec_encode_bytes_per_s: 0")
    assert plan_request_from_proto(spec).cluster.server.ec_encode_bytes_per_s == 0.0
    with pytest.raises(PlanFileError, match=r":5: candidate_space\.servers\.ec_encode_bytes_per_s: a size cannot be negative"):
        plan_spec_from_text(text % ", ec_encode_bytes_per_s: -1")
    with pytest.raises(PlanFileError, match=r":5: candidate_space\.servers\.ec_encode_bytes_per_s: must be in \[0, 1e13\] bytes/s"):
        plan_spec_from_text(text % ", ec_encode_bytes_per_s: 2e13")
