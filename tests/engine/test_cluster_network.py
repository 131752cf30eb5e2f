"""The network in a cluster's IO path: NIC load, M/G/1 waits below and at saturation, and the tail of
a stripe that includes its slowest host."""

from __future__ import annotations

import math

import numpy as np
import pytest

from arrayplan_engine import cluster as c
from arrayplan_engine import cluster_network as cn
from arrayplan_engine.errors import InvalidInputError
from arrayplan_engine.units import MiB

NIC = 25e9 / 8  # 25 GbE
TOPO = c.ClusterTopology(server_count=16, drives_per_server=12, server=c.ServerSpec(nic_bytes_per_s=NIC,
                                                                                    nic_hop_latency_s=50e-6))


def test_replicated_write_puts_r_copies_on_the_nics() -> None:
    w = cn.ClusterWorkload(iops=1000.0, read_fraction=0.0, io_bytes=4 * MiB)
    load = cn.nic_load(TOPO, c.Scheme.replicated(3), w)
    # Per op: primary RX s + replica RX 2s (3s in RX over the cluster), primary TX 2s; / 16 hosts.
    assert load.rx_bytes_per_s == pytest.approx(1000 / 16 * 3 * 4 * MiB)
    assert load.tx_bytes_per_s == pytest.approx(1000 / 16 * 2 * 4 * MiB)
    assert load.binding == "NIC RX"
    assert load.max_iops == pytest.approx(16 * NIC / (3 * 4 * MiB))


def test_ec_write_sends_k_plus_m_shards() -> None:
    w = cn.ClusterWorkload(iops=1000.0, read_fraction=0.0, io_bytes=8 * MiB)
    load = cn.nic_load(TOPO, c.Scheme.ec(8, 3), w)
    # RX: s from the client + 10 shards of s/8 to the others = s (1 + 10/8); TX 10/8 s.
    assert load.rx_bytes_per_s == pytest.approx(1000 / 16 * 8 * MiB * (1 + 10 / 8))
    assert load.tx_bytes_per_s == pytest.approx(1000 / 16 * 8 * MiB * 10 / 8)
    # 8+3 moves 2.25 s per write against 3x replication's 3 s: a higher NIC-bound write rate.
    rep = cn.nic_load(TOPO, c.Scheme.replicated(3), w)
    assert load.max_iops / rep.max_iops == pytest.approx(3 / 2.25)


def test_mg1_wait_below_and_at_saturation() -> None:
    # M/D/1 (fixed-size transfers): W = rho S / (2 (1 - rho)); at rho = 0.5, S = 1 ms -> 0.5 ms.
    assert cn.mg1_mean_wait_s(utilization=0.5, mean_service_s=1e-3, second_moment_s2=1e-6) == pytest.approx(0.5e-3)
    # M/M/1 (E[S^2] = 2 S^2): W = rho S / (1 - rho) -> 1 ms at rho 0.5, 9 ms at 0.9
    assert cn.mg1_mean_wait_s(utilization=0.9, mean_service_s=1e-3, second_moment_s2=2e-6) == pytest.approx(9e-3)
    assert math.isinf(cn.mg1_mean_wait_s(utilization=1.0, mean_service_s=1e-3, second_moment_s2=1e-6))


def _drive(mean_s: float, n: int = 100_000) -> np.ndarray:
    return np.random.default_rng(3).exponential(mean_s, n)


def test_latency_grows_with_nic_load_and_is_refused_at_saturation() -> None:
    scheme = c.Scheme.replicated(3)
    drive = _drive(5e-3)
    lat = {}
    for frac in (0.1, 0.5, 0.9):
        max_iops = cn.nic_load(TOPO, scheme, cn.ClusterWorkload(iops=1.0, read_fraction=0.0, io_bytes=4 * MiB)).max_iops
        w = cn.ClusterWorkload(iops=frac * max_iops, read_fraction=0.0, io_bytes=4 * MiB)
        lat[frac] = cn.operation_latency_samples(TOPO, scheme, w, drive_read_s=drive, drive_write_s=drive, samples=50_000,
                                                 rng=np.random.default_rng(1), kind="write")
    # Below saturation the mean wait on the primary's RX link follows M/D/1: at rho 0.9 a 4 MiB
    # transfer (1.34 ms) waits 0.9 x 1.34 / (2 x 0.1) = 6.0 ms on average; at 0.1, 0.075 ms.
    svc = 4 * MiB / NIC
    extra = lat[0.9].mean() - lat[0.1].mean()
    expected_rx = 0.9 * svc / (2 * 0.1) - 0.1 * svc / (2 * 0.9)
    assert extra > expected_rx  # the TX waits add on top of it
    assert np.quantile(lat[0.9], 0.99) > np.quantile(lat[0.5], 0.99) > np.quantile(lat[0.1], 0.99)
    full = cn.nic_load(TOPO, scheme, cn.ClusterWorkload(iops=1.0, read_fraction=0.0, io_bytes=4 * MiB)).max_iops
    with pytest.raises(InvalidInputError) as e:
        cn.operation_latency_samples(TOPO, scheme, cn.ClusterWorkload(iops=full, read_fraction=0.0, io_bytes=4 * MiB),
                                     drive_read_s=drive, drive_write_s=drive, samples=10, rng=np.random.default_rng(1),
                                     kind="write")
    assert e.value.violations[0].field == "workload.iops" and "NIC RX" in e.value.violations[0].reason


def test_stripe_read_is_the_max_over_its_shards() -> None:
    # No network cost (fast NIC, zero hop): an EC 8+3 read gathers 8 shards; its q-quantile is the
    # max of 8 exponentials: -mu ln(1 - q^(1/8)).
    fast = c.ClusterTopology(server_count=16, drives_per_server=12,
                             server=c.ServerSpec(nic_bytes_per_s=1e12, nic_hop_latency_s=0.0))
    mu = 4e-3
    w = cn.ClusterWorkload(iops=1.0, read_fraction=1.0, io_bytes=4096)
    lat = cn.operation_latency_samples(fast, c.Scheme.ec(8, 3), w, drive_read_s=_drive(mu), drive_write_s=_drive(mu),
                                       samples=200_000, rng=np.random.default_rng(5))
    for q in (0.5, 0.99):
        assert np.quantile(lat, q) == pytest.approx(-mu * math.log(1 - q ** (1 / 8)), rel=0.03)


def test_a_fail_slow_host_sets_the_tail_of_every_stripe_it_touches() -> None:
    # One host of 16 with drives and NIC 10x slower. An 8+3 read touches 8 of the 16 hosts: half
    # the reads wait for the slow host, so even the median moves; a replicated read touches one
    # host: 1/16 of reads are slow, the median does not move but the p99 does.
    # (The EC median sits at the boundary of the two halves; its p75 is in the slow half.)
    w = cn.ClusterWorkload(iops=100.0, read_fraction=1.0, io_bytes=64 * 1024)
    drive = _drive(2e-3)
    kw = dict(drive_read_s=drive, drive_write_s=drive, samples=100_000, kind="read")
    out = {}
    for name, scheme in (("ec", c.Scheme.ec(8, 3)), ("rep", c.Scheme.replicated(3))):
        for slow in (0, 1):
            out[name, slow] = cn.operation_latency_samples(TOPO, scheme, w, rng=np.random.default_rng(9),
                                                           slow_host_count=slow, slow_factor=10.0, **kw)
    ec_p75 = np.quantile(out["ec", 1], 0.75) / np.quantile(out["ec", 0], 0.75)
    rep_med = np.median(out["rep", 1]) / np.median(out["rep", 0])
    assert ec_p75 > 2.0
    assert rep_med == pytest.approx(1.0, abs=0.1)
    assert np.quantile(out["rep", 1], 0.99) > 3 * np.quantile(out["rep", 0], 0.99)
    # EC reads slower than the healthy p99.9 (thr): those touching the slow host (8/16) whose slow
    # shard (exponential, mean 20 ms) exceeds thr: ~ 0.5 exp(-thr / 20 ms); healthy ones: 0.1 %.
    thr = float(np.quantile(out["ec", 0], 0.999))
    share = float(np.mean(out["ec", 1] > thr))
    assert share == pytest.approx(0.5 * math.exp(-thr / 20e-3), abs=0.02)


def test_composes_the_single_box_kernel_with_the_network() -> None:
    # The array kernel simulates one 20 TB HDD at its share of the shard IOs of a 16 x 12 cluster
    # (EC 8+3, 1 MiB objects, 70 % reads, 1,000 ops/s: 27 shard reads + 17 shard writes per drive
    # per second); its latency histogram feeds the cluster model. A read waits for the slowest of
    # 8 shards: its q-quantile is at least the drive's q^(1/8)-quantile (max of 8 independent
    # draws) and at most that plus the network path (3 hops of 50 us, a 1 MiB reply at 25 GbE =
    # 0.34 ms, a 128 KiB shard = 0.04 ms, NIC waits at < 5 % load).
    from arrayplan_engine import array as arr
    from arrayplan_engine import simulation
    from arrayplan_engine.catalog import builtin_catalog
    from arrayplan_engine.layout import make_layout
    from arrayplan_engine.workload import Workload

    scheme = c.Scheme.ec(8, 3)
    w = cn.ClusterWorkload(iops=1000.0, read_fraction=0.7, io_bytes=1 * MiB)
    reads, writes = cn.shard_iops_per_drive(TOPO, scheme, w)
    assert (reads, writes) == pytest.approx((1000 / 192 * 0.7 * 8, 1000 / 192 * 0.3 * 11))
    wl = Workload(read_fraction=reads / (reads + writes), io_size_mix=((MiB // 8, 1.0),), queue_depth=32,
                  target_iops=reads + writes)
    drive = builtin_catalog().get("wd-ultrastar-hc560-20tb")
    result = arr.simulate(simulation.array_spec(drive, make_layout("raid0", 1), 1, wl, fill_fraction=0.7,
                                                duration_s=30.0, seed=5))
    rng = np.random.default_rng(11)
    dr = cn.drive_latency_samples(result, kind="read", samples=100_000, rng=rng)
    dw = cn.drive_latency_samples(result, kind="write", samples=100_000, rng=rng)
    assert np.quantile(dr, 0.5) == pytest.approx(result.latency_percentile_s(0.5, "read"), rel=0.05)
    lat = cn.operation_latency_samples(TOPO, scheme, w, drive_read_s=dr, drive_write_s=dw, samples=100_000, rng=rng)
    for q in (0.5, 0.9):
        floor = float(np.quantile(dr, q ** (1 / 8)))
        assert floor * 0.97 <= float(np.quantile(lat, q)) <= floor + 2e-3


@pytest.mark.parametrize(("rho", "kind"), [(0.5, "fixed"), (0.9, "fixed"), (0.5, "exponential"), (0.8, "exponential")])
def test_simulated_link_waits_match_pollaczek_khinchine_below_saturation(rho: float, kind: str) -> None:
    # A 25 GbE link carrying 1 MiB transfers (0.336 ms each): M/D/1 (fixed sizes) and M/M/1
    # (exponential sizes) simulated transfer by transfer; the mean wait within 5 % of P-K, and the
    # share of transfers that wait within 0.01 of rho (PASTA: an arrival finds the link busy w.p. rho).
    mean_s = MiB / NIC
    rng = np.random.default_rng(21)
    svc = np.full(1, mean_s) if kind == "fixed" else rng.exponential(mean_s, 200_000)
    second = float(np.mean(svc**2))
    waits = cn.simulate_link_waits(rate_per_s=rho / float(svc.mean()), service_s=svc, transfers=2_000_000, rng=rng)
    waits = waits[100_000:]  # past the empty start
    expected = cn.mg1_mean_wait_s(utilization=rho, mean_service_s=float(svc.mean()), second_moment_s2=second)
    assert waits.mean() == pytest.approx(expected, rel=0.05)
    assert float(np.mean(waits > 0)) == pytest.approx(rho, abs=0.01)
    if kind == "exponential":  # M/M/1: P(W > t) = rho exp(-(1 - rho) t / S) exactly, as the tail model assumes
        t = 3 * expected
        assert float(np.mean(waits > t)) == pytest.approx(rho * math.exp(-(1 - rho) * t / mean_s), rel=0.1)


def test_simulated_link_at_saturation_grows_without_bound() -> None:
    # At rho = 1 the queue is a null-recurrent random walk: the mean wait keeps growing as the
    # square root of the transfers (16x the transfers: ~4x the wait, over 20 independent runs);
    # at 1.1 it grows linearly, by (1 - 1/rho) x S per transfer.
    mean_s = MiB / NIC
    svc = np.full(1, mean_s)
    seeds = np.random.SeedSequence(4).spawn(20)
    early, late = [], []
    for seed in seeds:
        w = cn.simulate_link_waits(rate_per_s=1.0 / mean_s, service_s=svc, transfers=160_000,
                                   rng=np.random.default_rng(seed))
        early.append(w[10_000])
        late.append(w[-1])
    assert np.mean(late) / np.mean(early) == pytest.approx(4.0, rel=0.5)
    waits = cn.simulate_link_waits(rate_per_s=1.1 / mean_s, service_s=svc, transfers=400_000, rng=np.random.default_rng(4))
    assert waits[-1] == pytest.approx(400_000 * (1 - 1 / 1.1) * mean_s, rel=0.05)
