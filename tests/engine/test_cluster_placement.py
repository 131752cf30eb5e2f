"""Cluster topology, placement over failure domains, MinIO erasure sets, Ceph pools and capacity."""

from __future__ import annotations

import pytest

from arrayplan_engine import cluster as c
from arrayplan_engine.errors import InvalidInputError
from arrayplan_engine.units import TB


def topo(servers: int, drives: int, racks: int = 0) -> c.ClusterTopology:
    return c.ClusterTopology(server_count=servers, drives_per_server=drives, rack_count=racks,
                             server=c.ServerSpec(bay_count=max(drives, 12)))


# -- placement ------------------------------------------------------------------------------------------

def test_ec_over_hosts_one_shard_per_host_survives_m_hosts() -> None:
    p = c.place(topo(16, 12), c.ceph_ec_pool(8, 3))
    assert p.domain_count == 16 and p.domains_per_stripe == 11
    assert p.domain_failures_tolerated == 3 and p.drive_failures_tolerated == 3
    assert p.can_reprotect_after_domain_failure


def test_k_plus_m_over_too_few_hosts_is_refused_naming_the_field_and_range() -> None:
    # rook/rook#17929: 10+4 on 5 hosts cannot have crush-failure-domain=host.
    with pytest.raises(InvalidInputError) as e:
        c.place(topo(5, 12), c.ceph_ec_pool(10, 4))
    (viol,) = e.value.violations
    assert viol.field == "topology.server_count"
    assert "must be >= 14" in viol.reason and "got 5" in viol.reason


def test_several_shards_per_host_allowed_up_to_m_and_refused_above() -> None:
    # 10+4 on 5 hosts with at most 3 shards per host (a two-step CRUSH rule): survives 1 host.
    p = c.place(topo(5, 12), c.ceph_ec_pool(10, 4, shards_per_domain=3))
    assert p.domains_per_stripe == 5 and p.domain_failures_tolerated == 1
    assert not p.can_reprotect_after_domain_failure  # 4 survivors x 3 = 12 < 14 shards
    assert any("PR #35560" in n for n in p.notes)
    with pytest.raises(InvalidInputError) as e:
        c.place(topo(5, 12), c.ceph_ec_pool(10, 4, shards_per_domain=5))
    assert e.value.violations[0].field == "pool.shards_per_domain"
    assert "[1, m = 4]" in e.value.violations[0].reason


def test_k_plus_m_plus_one_hosts_can_reprotect_k_plus_m_cannot() -> None:
    # ceph/ceph PR #35560: with exactly k+m hosts a failed host's shards have nowhere to go.
    assert not c.place(topo(6, 12), c.ceph_ec_pool(4, 2)).can_reprotect_after_domain_failure
    assert c.place(topo(7, 12), c.ceph_ec_pool(4, 2)).can_reprotect_after_domain_failure


def test_rack_domain_needs_racks() -> None:
    with pytest.raises(InvalidInputError) as e:
        c.place(topo(12, 12), c.ceph_replicated_pool(3, failure_domain="rack"))
    assert e.value.violations[0].field == "topology.rack_count"
    p = c.place(topo(12, 12, racks=3), c.ceph_replicated_pool(3, failure_domain="rack"))
    assert p.domain_count == 3 and p.domain_failures_tolerated == 2 and not p.can_reprotect_after_domain_failure
    with pytest.raises(InvalidInputError) as e:
        c.place(topo(12, 12, racks=5), c.ceph_replicated_pool(3))
    assert e.value.violations[0].field == "topology.rack_count" and "must divide" in e.value.violations[0].reason


def test_bad_scheme_and_topology_fields_are_named() -> None:
    with pytest.raises(InvalidInputError) as e:
        c.place(topo(4, 12), c.Pool(scheme=c.Scheme.ec(4, 2, min_size=3)))
    assert e.value.violations[0].field == "pool.scheme.min_size"
    with pytest.raises(InvalidInputError) as e:
        c.place(c.ClusterTopology(server_count=4, drives_per_server=14), c.ceph_replicated_pool())
    assert e.value.violations[0].field == "topology.drives_per_server" and "bay_count = 12" in e.value.violations[0].reason
    with pytest.raises(InvalidInputError) as e:
        c.place(topo(0, 12), c.ceph_replicated_pool())
    assert e.value.violations[0].field == "topology.server_count"


def test_ceph_pool_defaults() -> None:
    r = c.ceph_replicated_pool()
    assert r.scheme.width == 3 and r.scheme.min_size == 2 and r.failure_domain is c.FailureDomain.HOST
    e = c.ceph_ec_pool(4, 2)
    assert e.scheme.min_size == 5 and e.scheme.efficiency == pytest.approx(4 / 6)


# -- MinIO's erasure sets ------------------------------------------------------------------------------
# Oracles: minio/minio#15576 (RELEASE.2022-08-11: 3 nodes x 16 drives -> sets of 12, EC:6 the
# most allowed); minio/minio#16268 (RELEASE.2022-12-12: 38 nodes x 12 drives -> 228 sets of 2);
# minio/minio#19742 (RELEASE.2024-05-10: 4 servers x 12 drives = 48 -> 3 sets of 16).

@pytest.mark.parametrize(("servers", "drives", "size", "sets"), [
    (3, 16, 12, 4),     # minio#15576
    (38, 12, 2, 228),   # minio#16268
    (4, 12, 16, 3),     # minio#19742
    (16, 12, 16, 12),
    (4, 16, 16, 4),
    (5, 4, 10, 2),      # 20 drives: 10 and 20/... 5 | 10
    (1, 4, 4, 1),
])
def test_minio_set_size_follows_getSetIndexes(servers: int, drives: int, size: int, sets: int) -> None:
    s = c.minio_erasure_sets(servers, drives)
    assert (s.set_drive_count, s.set_count) == (size, sets)


def test_minio_default_parity_by_set_size() -> None:
    # DefaultParityBlocks (internal/config/storageclass/storage-class.go) and MinIO's storage-class docs.
    assert [c.minio_default_parity(n) for n in (2, 3, 4, 5, 6, 7, 8, 12, 16)] == [1, 1, 2, 2, 3, 3, 4, 4, 4]
    assert c.minio_default_parity(8, "pr18725") == 3


def test_minio_pr18725_option_caps_sets_at_8() -> None:
    s = c.minio_erasure_sets(16, 12, policy="pr18725")
    assert s.set_drive_count == 8 and s.parity == 3 and s.set_count == 24


def test_minio_sets_wider_than_servers_put_several_shards_on_a_host() -> None:
    pool, sets = c.minio_pool(4, 16)  # sets of 16 over 4 servers: 4 shards per server, EC:4
    assert sets.drives_per_server_per_set == 4 and sets.parity == 4
    p = c.place(topo(4, 16), pool)
    assert p.domain_failures_tolerated == 1  # one server down, exactly at parity
    with pytest.raises(InvalidInputError) as e:
        c.minio_pool(4, 16, parity=9)
    assert e.value.violations[0].field == "pool.parity" and "EC:0..EC:8" in e.value.violations[0].reason


def test_minio_refuses_asymmetric_and_indivisible_pools() -> None:
    with pytest.raises(InvalidInputError) as e:
        c.minio_erasure_sets(17, 1)  # 17 drives: no size in 2..16 divides 17
    assert e.value.violations[0].field == "topology.drives_per_server"
    with pytest.raises(InvalidInputError) as e:
        c.minio_erasure_sets(1, 1)
    assert "at least 2" in e.value.violations[0].reason


# -- capacity -----------------------------------------------------------------------------------------------

def test_capacity_keeps_room_for_a_failed_host() -> None:
    p = c.place(topo(16, 12), c.ceph_replicated_pool(3))
    cap = c.cluster_capacity(p, 20 * TB)
    assert cap.raw_bytes == pytest.approx(192 * 20 * TB)
    # min(0.85, 0.90 x 15/16 = 0.84375): the host reserve binds on 16 hosts.
    assert cap.fill_ceiling_fraction == pytest.approx(0.84375)
    assert cap.usable_bytes == pytest.approx(192 * 20 * TB / 3 * 0.84375)
    assert "re-protect" in cap.binding
    # On 40 hosts nearfull binds (0.90 x 39/40 = 0.8775 > 0.85).
    cap40 = c.cluster_capacity(c.place(topo(40, 12), c.ceph_ec_pool(8, 3)), 20 * TB, metadata_overhead_fraction=0.02)
    assert cap40.fill_ceiling_fraction == pytest.approx(0.85) and cap40.binding.startswith("nearfull")
    assert cap40.usable_over_raw == pytest.approx(8 / 11 * 0.98 * 0.85)


def test_capacity_without_room_to_reprotect_says_so() -> None:
    cap = c.cluster_capacity(c.place(topo(6, 12), c.ceph_ec_pool(4, 2)), 10 * TB)
    assert cap.fill_ceiling_fraction == pytest.approx(0.85)
    assert any("cannot be re-protected" in a for a in cap.assumptions)


def test_capacity_ratios_are_checked() -> None:
    p = c.place(topo(16, 12), c.ceph_replicated_pool(3))
    with pytest.raises(InvalidInputError) as e:
        c.cluster_capacity(p, 20 * TB, ratios=c.CephRatios(nearfull_ratio=0.95, backfillfull_ratio=0.9))
    assert e.value.violations[0].field == "ratios.backfillfull_ratio"


def test_cost_charges_every_bay_with_its_server() -> None:
    t = c.ClusterTopology(server_count=8, drives_per_server=10,
                          server=c.ServerSpec(bay_count=12, cost_usd=9000.0, power_w=250.0))
    cost = c.cluster_cost(t, drive_price_usd=400.0, drive_power_w=8.0)
    assert cost.capex_usd == pytest.approx(8 * 9000 + 80 * 400)
    assert cost.power_w == pytest.approx(8 * 250 + 80 * 8)
    assert cost.empty_bays == 16
    cap = c.cluster_capacity(c.place(t, c.ceph_ec_pool(4, 2)), 20 * TB)
    assert cost.usd_per_usable_byte(cap) == pytest.approx(cost.capex_usd / cap.usable_bytes)
    with pytest.raises(InvalidInputError) as e:
        c.cluster_cost(t, drive_price_usd=-1.0, drive_power_w=8.0)
    assert e.value.violations[0].field == "drive_price_usd"


def test_minio_keeps_no_reserve_for_a_failed_server() -> None:
    # 32 servers x 1 drive: sets of 16 could move elsewhere, but MinIO heals onto the replacement.
    pool, sets = c.minio_pool(32, 1)
    assert sets.set_drive_count == 16
    cap = c.cluster_capacity(c.place(topo(32, 1), pool), 20 * TB)
    assert cap.fill_ceiling_fraction == pytest.approx(0.85)
    assert any("heals onto replacements" in a for a in cap.assumptions)
