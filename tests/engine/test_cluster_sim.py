"""The cluster's IO stream simulated event by event (``cluster_sim``) against queueing theory.

Sources: the Pollaczek-Khinchine mean wait of M/D/1, ``rho S / (2 (1 - rho))`` (Kleinrock,
Queueing Systems I, eq. 5.66 with E[S^2] = S^2); an overloaded FIFO queue's backlog grows by
``(rho - 1)`` service times per service time. Each check states its sampling error: the standard
error of a mean from 20 batch means of consecutive operations (batch means absorb the
correlation of consecutive waits), and a tolerance of 4 of them.
"""

from __future__ import annotations

import numpy as np
import pytest

from arrayplan_engine.cluster import ClusterTopology, Scheme, ServerSpec
from arrayplan_engine.cluster_network import ClusterWorkload, nic_load
from arrayplan_engine.cluster_sim import EC_ENCODE_BYTES_PER_S, simulate_cluster_ops
from arrayplan_engine.errors import InvalidInputError

MiB = 1 << 20
ZERO = np.zeros(1)


def _topo(hosts: int = 16, *, hop: float = 0.0, nic: float = 25e9 / 8) -> ClusterTopology:
    return ClusterTopology(server_count=hosts, drives_per_server=12, server=ServerSpec(nic_hop_latency_s=hop, nic_bytes_per_s=nic))


def _batch_se(x: np.ndarray, batches: int = 20) -> float:
    means = np.array([b.mean() for b in np.array_split(x, batches)])
    return float(means.std(ddof=1) / np.sqrt(batches))


@pytest.mark.parametrize("rho", [0.1, 0.3, 0.5, 0.9, 0.95])
def test_a_replicated_read_sees_an_md1_queue_at_its_primary_nic(rho: float) -> None:
    """Replicated reads of 1 MiB with instant drives and no hop: the only queue is the primary's
    TX (primaries uniform, so each host's arrivals are Poisson at rate / hosts, services fixed):
    the operation's time is the M/D/1 sojourn S + rho S / (2 (1 - rho))."""
    topo = _topo()
    svc = MiB / topo.server.nic_bytes_per_s
    rate = rho * topo.server_count / svc
    ops = 400_000 if rho >= 0.9 else 100_000
    r = simulate_cluster_ops(topo, Scheme.replicated(3), iops=rate, read_fraction=1.0, io_bytes=MiB, drive_read_s=ZERO,
                             drive_write_s=ZERO, ops=ops, seed=11)
    theory = svc + rho * svc / (2 * (1 - rho))
    lat = r.read_latency_s
    assert lat.size == ops - ops // 10
    assert abs(lat.mean() - theory) <= 4 * _batch_se(lat) + 1e-12, (lat.mean(), theory, _batch_se(lat))
    # the share of operations that wait is rho (a transfer waits iff the link is busy)
    assert np.mean(lat > svc * (1 + 1e-9)) == pytest.approx(rho, abs=0.02)
    assert r.tx_utilization.mean() == pytest.approx(rho, rel=0.02)
    assert not r.saturated


def test_an_overloaded_nic_grows_its_backlog_at_rho_minus_one() -> None:
    """At rho = 1.1 the wait of the n-th transfer at a host grows by (rho - 1) S per arrival's
    worth of time, i.e. by (1 - 1/rho) S per transfer: the last tenth of the operations waits
    that much longer than the first tenth, per transfer between them (within 10 %)."""
    topo = _topo(hosts=4)
    svc = MiB / topo.server.nic_bytes_per_s
    rho = 1.1
    ops = 80_000
    r = simulate_cluster_ops(topo, Scheme.replicated(3), iops=rho * 4 / svc, read_fraction=1.0, io_bytes=MiB,
                             drive_read_s=ZERO, drive_write_s=ZERO, ops=ops, seed=3, warmup_ops=0)
    lat = r.read_latency_s
    tenth = ops // 10
    per_host_between = (ops - tenth) / 4  # transfers a host serves between the two tenths' centres
    growth = lat[-tenth:].mean() - lat[:tenth].mean()
    assert growth == pytest.approx(per_host_between * (1 - 1 / rho) * svc, rel=0.10)


@pytest.mark.parametrize("scheme,read", [(Scheme.ec(8, 3), 0.7), (Scheme.replicated(3), 0.3), (Scheme.ec(4, 2), 0.0)])
def test_the_simulated_nic_load_is_the_analytic_one(scheme: Scheme, read: float) -> None:
    """The bytes each host's TX and RX carry per second equal ``nic_load``'s (the same operation
    paths counted analytically), to 3 % (sampling of primaries and mix over 60,000 operations)."""
    topo = _topo()
    cw = ClusterWorkload(iops=2_000, read_fraction=read, io_bytes=4 * MiB)
    want = nic_load(topo, scheme, cw)
    r = simulate_cluster_ops(topo, scheme, iops=cw.iops, read_fraction=read, io_bytes=cw.io_bytes, drive_read_s=ZERO,
                             drive_write_s=ZERO, ops=60_000, seed=5, ec_encode_bytes_per_s=0.0)
    assert r.tx_utilization.mean() == pytest.approx(want.tx_utilization, rel=0.03)
    assert r.rx_utilization.mean() == pytest.approx(want.rx_utilization, rel=0.03)


def test_ec_encoding_queues_at_the_primary_cpu_as_md1() -> None:
    """EC 8+3 writes of 4 MiB with a NIC far faster than the CPU (1 TB/s) and instant drives: the
    primary's CPU is an M/D/1 queue at rho = rate x s / (hosts x encode rate); the write's time is
    its sojourn plus the (negligible) transfers. The CPU's utilization is that rho (2 %)."""
    topo = _topo(nic=1e12)
    s = 4 * MiB
    cpu_s = s / EC_ENCODE_BYTES_PER_S
    rho = 0.6
    rate = rho * topo.server_count / cpu_s
    r = simulate_cluster_ops(topo, Scheme.ec(8, 3), iops=rate, read_fraction=0.0, io_bytes=s, drive_read_s=ZERO,
                             drive_write_s=ZERO, ops=100_000, seed=9)
    lat = r.write_latency_s
    net = s / 1e12 + 10 * (s / 8) / 1e12  # client bytes in, then 10 shards out, on the primary's links
    theory = cpu_s + rho * cpu_s / (2 * (1 - rho)) + net
    assert abs(lat.mean() - theory) <= 4 * _batch_se(lat), (lat.mean(), theory)
    assert r.cpu_utilization.mean() == pytest.approx(rho, rel=0.02)


def test_the_encode_rate_limits_ec_write_throughput() -> None:
    """Past hosts x encode rate / object bytes, EC writes pile up at the CPUs (the NIC is not the
    limit here): at 1.2 times that rate each CPU's backlog grows by (1 - 1/1.2) encodes per encode,
    as the overloaded NIC's does (within 10 %), and the CPUs are busy all the time."""
    topo = _topo(hosts=4, nic=1e12)
    s = 4 * MiB
    limit = 4 * EC_ENCODE_BYTES_PER_S / s
    r = simulate_cluster_ops(topo, Scheme.ec(2, 1), iops=1.2 * limit, read_fraction=0.0, io_bytes=s, drive_read_s=ZERO,
                             drive_write_s=ZERO, ops=40_000, seed=2, warmup_ops=0)
    lat = r.write_latency_s
    growth = lat[-4000:].mean() - lat[:4000].mean()
    assert growth == pytest.approx((40_000 - 4000) / 4 * (1 - 1 / 1.2) * s / EC_ENCODE_BYTES_PER_S, rel=0.10)
    assert r.cpu_utilization.mean() > 0.97


def test_a_fail_slow_host_sets_the_tail_of_the_stripes_it_touches() -> None:
    """Drives at a fixed 5 ms, one host of 16 ten times slower (its drives and NIC). An 8+3 read
    needs 8 shards on 8 distinct hosts: it touches the slow host with probability 8/16, so its
    median is the slow drive's 50 ms. A replicated read touches it 1/16 of the time: the median
    stays at 5 ms and the p99 is the slow host's."""
    topo = _topo(hop=50e-6)
    d = np.full(1, 5e-3)
    kw = dict(iops=500.0, read_fraction=1.0, io_bytes=MiB, drive_read_s=d, drive_write_s=d, ops=20_000, seed=4)
    ec_fast = simulate_cluster_ops(topo, Scheme.ec(8, 3), **kw).read_latency_s  # type: ignore[arg-type]
    ec_slow = simulate_cluster_ops(topo, Scheme.ec(8, 3), slow_host_count=1, slow_factor=10.0, **kw).read_latency_s  # type: ignore[arg-type]
    assert np.quantile(ec_fast, 0.75) < 6e-3
    assert np.mean(ec_slow > 50e-3) == pytest.approx(0.5, abs=0.02)
    rep_slow = simulate_cluster_ops(topo, Scheme.replicated(3), slow_host_count=1, slow_factor=10.0, **kw).read_latency_s  # type: ignore[arg-type]
    assert np.quantile(rep_slow, 0.5) < 6e-3
    assert np.quantile(rep_slow, 0.99) > 50e-3
    assert np.mean(rep_slow > 50e-3) == pytest.approx(1 / 16, abs=0.01)


def test_bad_input_names_the_field() -> None:
    with pytest.raises(InvalidInputError, match="workload.iops"):
        simulate_cluster_ops(_topo(), Scheme.replicated(3), iops=0.0, read_fraction=1.0, io_bytes=MiB, drive_read_s=ZERO,
                             drive_write_s=ZERO, ops=10, seed=1)
    with pytest.raises(InvalidInputError, match="slow_host_count"):
        simulate_cluster_ops(_topo(), Scheme.replicated(3), iops=1.0, read_fraction=1.0, io_bytes=MiB, drive_read_s=ZERO,
                             drive_write_s=ZERO, ops=10, seed=1, slow_host_count=17)
    with pytest.raises(InvalidInputError, match="drive_read_s"):
        simulate_cluster_ops(_topo(), Scheme.replicated(3), iops=1.0, read_fraction=1.0, io_bytes=MiB,
                             drive_read_s=np.array([-1.0]), drive_write_s=ZERO, ops=10, seed=1)


def test_a_published_network_bound_minio_cluster() -> None:
    """MinIO's "Performance at Scale: MinIO Pushes Past 1.4 terabits per second with 256 NVMe
    Drives" (32 x i3en.24xlarge, 8 NVMe each, 100 Gbit/s per node shared by client and
    inter-node traffic, "the network was almost entirely choked"): 171.3 GB/s of PUTs and 183.2
    GB/s of GETs (https://www.surfniet.nl/a.aspx?a=hg2X6Wmn2Uq1z0Mf70CDWw, a copy of MinIO's post).
    MinIO's rule makes sets of 16 (one shard per server) at EC:4, so 12+4. The model's NIC bound:
    a PUT puts s + 15 s/12 on its primary's RX, 400 GB/s / 2.25 = 177.8 GB/s; a GET s + 11 s/12
    on TX, 400 / 1.917 = 208.7 GB/s. The measured rates sit below the bounds, PUTs within 4 %
    (the drives, 12.9 GB/s of writes a node by iozone, are not the limit) and GETs at 88 % (the
    post's nodes carried 45.8 Gbit/s each on reads: the clients' side is not modelled). Simulated
    at the published PUT rate, the busiest RX is 96 % busy and every queue is stable."""
    topo = ClusterTopology(server_count=32, drives_per_server=8, server=ServerSpec(nic_bytes_per_s=12.5e9))
    scheme = Scheme.ec(12, 4)
    s = 64 * MiB
    put = nic_load(topo, scheme, ClusterWorkload(iops=1.0, read_fraction=0.0, io_bytes=s))
    get = nic_load(topo, scheme, ClusterWorkload(iops=1.0, read_fraction=1.0, io_bytes=s))
    assert put.max_iops * s / 1e9 == pytest.approx(177.8, abs=0.1) and put.binding == "NIC RX"
    assert get.max_iops * s / 1e9 == pytest.approx(208.7, abs=0.1) and get.binding == "NIC TX"
    assert 171.3 <= put.max_iops * s / 1e9 <= 171.3 * 1.04
    assert 183.2 <= get.max_iops * s / 1e9 <= 183.2 / 0.85
    r = simulate_cluster_ops(topo, scheme, iops=171.3e9 / s, read_fraction=0.0, io_bytes=s, drive_read_s=ZERO,
                             drive_write_s=ZERO, ops=30_000, seed=8, ec_encode_bytes_per_s=0.0)
    assert not r.saturated
    assert r.rx_utilization.mean() == pytest.approx(171.3 / 177.8, rel=0.03)


@pytest.mark.parametrize("rho", [0.5, 0.8])
def test_a_size_mix_queues_as_mg1(rho: float) -> None:
    """Replicated reads whose sizes are 256 KiB (weight 0.8) or 4 MiB (0.2): the primary's TX is
    M/G/1 with those service times, and the read's time is E[S] + the Pollaczek-Khinchine wait
    rho E[S^2] / (2 E[S] (1 - rho)) (E[S^2] / E[S]^2 = 3.25 here: waits 3.25 times M/D/1's at
    the same load), within 4 batch-mean standard errors."""
    topo = _topo()
    bw = topo.server.nic_bytes_per_s
    mix = ((256 * 1024, 0.8), (4 * MiB, 0.2))
    es = sum(b / bw * w for b, w in mix)
    es2 = sum((b / bw) ** 2 * w for b, w in mix)
    rate = rho * topo.server_count / es
    r = simulate_cluster_ops(topo, Scheme.replicated(3), iops=rate, read_fraction=1.0, io_bytes=1.0, io_size_mix=mix,
                             drive_read_s=ZERO, drive_write_s=ZERO, ops=300_000, seed=21)
    theory = es + rho * es2 / (2 * es * (1 - rho))
    lat = r.read_latency_s
    assert abs(lat.mean() - theory) <= 4 * _batch_se(lat), (lat.mean(), theory, _batch_se(lat))
    assert r.tx_utilization.mean() == pytest.approx(rho, rel=0.02)
    assert es2 / es**2 == pytest.approx(3.25, abs=1e-9)
