"""The network in a cluster's IO path: NIC load per host, queueing at the NICs, and the latency of a
client operation whose shards live on several hosts (the tail includes the slowest host).

An operation arrives at a *primary* host (uniformly over the hosts) and moves whole stripes
(object-store semantics: MinIO and Ceph RGW objects; ``stripe_units`` < k for sub-stripe block IO):

* replicated read: the primary reads its copy and sends ``s`` bytes to the client;
* EC read: the primary reads its shard and gathers k - 1 shards of ``s / k`` from other hosts
  (their TX, its RX), decodes, sends ``s`` to the client;
* replicated write: the client sends ``s`` to the primary (RX), the primary sends R - 1 copies
  one after the other on its TX, each replica writes and acknowledges; the write completes with
  the last acknowledgement (Ceph's primary-copy replication);
* EC write: the primary encodes and sends k + m - 1 shards of ``s / k`` (TX), each shard host
  writes and acknowledges.

A host's NIC is two links (TX, RX) of ``nic_bytes_per_s``; every crossing adds
``nic_hop_latency_s``. Load per host per direction is the average over primaries (uniform
placement); a link at utilization rho queues a transfer of mean service S with the
Pollaczek-Khinchine mean wait ``W = rho E[S^2] / (2 E[S] (1 - rho))`` (M/G/1) and, for the tail, the
usual approximation P(wait > 0) = rho, the wait given one exponential with mean W / rho (exact for
M/M/1). At rho >= 1 the queue grows without bound: the load says ``saturated`` and the latency
model refuses, naming ``workload.iops`` and the bound.

Drive latencies come from outside (samples: the single-box kernel's per-IO times, a datasheet
distribution, or measurements); a fail-slow host multiplies its drives' latencies and divides its
NIC bandwidth by ``slow_factor``. Latencies are sampled with a seeded ``np.random.Generator``;
a stripe's time is the max over its shards' paths, so one slow host in a stripe sets the stripe's
time. Pure: no I/O.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from numba import njit

from .array import ArrayResult, _kind_index, latency_bucket_edges_s
from .cluster import ClusterTopology, Scheme, SchemeKind
from .errors import InvalidInputError, Violation, check_range

__all__ = [
    "ClusterWorkload",
    "drive_latency_samples",
    "shard_iops_per_drive",
    "NicLoad",
    "mg1_mean_wait_s",
    "nic_load",
    "operation_latency_samples",
    "simulate_link_waits",
]


@dataclass(frozen=True, slots=True, kw_only=True)
class ClusterWorkload:
    iops: float  # client operations per second, the whole cluster
    read_fraction: float
    io_bytes: float  # bytes per client operation
    stripe_units: int = 0  # shards an EC read needs (0: k, a whole stripe)

    def validate(self, prefix: str = "workload") -> list[Violation]:
        v: list[Violation] = []
        check_range(v, f"{prefix}.iops", self.iops, 0, 1e12, lo_open=True, unit="ops/s")
        check_range(v, f"{prefix}.read_fraction", self.read_fraction, 0, 1)
        check_range(v, f"{prefix}.io_bytes", self.io_bytes, 1, 1e12, unit="bytes")
        check_range(v, f"{prefix}.stripe_units", self.stripe_units, 0, 64, integer=True, note="(0 = k)")
        return v


@dataclass(frozen=True, slots=True, kw_only=True)
class NicLoad:
    tx_bytes_per_s: float  # per host
    rx_bytes_per_s: float
    tx_utilization: float
    rx_utilization: float
    max_iops: float  # the client rate at which the busier direction reaches utilization 1
    binding: str  # "NIC TX" or "NIC RX"

    @property
    def saturated(self) -> bool:
        return max(self.tx_utilization, self.rx_utilization) >= 1.0


def _reads_needed(scheme: Scheme, w: ClusterWorkload) -> int:
    if scheme.kind is SchemeKind.REPLICATED:
        return 1
    return scheme.data_shards if w.stripe_units == 0 else min(w.stripe_units, scheme.data_shards)


def _bytes_per_op(topology: ClusterTopology, scheme: Scheme, w: ClusterWorkload) -> tuple[float, float]:
    """Average (TX, RX) bytes one client operation puts on one host's NIC, over uniform primaries."""
    s, h = w.io_bytes, topology.server_count
    remote = 1.0 if h > 1 else 0.0  # placement puts a stripe's other shards on other hosts
    if scheme.kind is SchemeKind.REPLICATED:
        r = scheme.width
        read_tx, read_rx = s, 0.0
        write_tx, write_rx = (r - 1) * s * remote, s + (r - 1) * s * remote
    else:
        k, n = scheme.data_shards, scheme.width
        need = _reads_needed(scheme, w)
        unit = s / k
        gathered = (need - 1) * unit * remote if need == k else need * unit * remote
        read_tx, read_rx = s + gathered, gathered
        write_tx, write_rx = (n - 1) * unit * remote, s + (n - 1) * unit * remote
    f = w.read_fraction
    return f * read_tx + (1 - f) * write_tx, f * read_rx + (1 - f) * write_rx


def nic_load(topology: ClusterTopology, scheme: Scheme, workload: ClusterWorkload) -> NicLoad:
    """Per-host NIC bytes per second and utilization for ``workload`` spread over the hosts."""
    v = topology.validate() + scheme.validate("pool.scheme") + workload.validate()
    if v:
        raise InvalidInputError(v)
    tx_op, rx_op = _bytes_per_op(topology, scheme, workload)
    per_host = workload.iops / topology.server_count
    bw = topology.server.nic_bytes_per_s
    tx, rx = per_host * tx_op, per_host * rx_op
    worst = max(tx_op, rx_op)
    max_iops = topology.server_count * bw / worst if worst > 0 else math.inf
    return NicLoad(tx_bytes_per_s=tx, rx_bytes_per_s=rx, tx_utilization=tx / bw, rx_utilization=rx / bw,
                   max_iops=max_iops, binding="NIC TX" if tx_op >= rx_op else "NIC RX")


def shard_iops_per_drive(topology: ClusterTopology, scheme: Scheme, workload: ClusterWorkload) -> tuple[float, float]:
    """(reads, writes) per second one drive serves for ``workload``: client operations times the
    shard IOs each makes (1 or k reads; R or k + m writes), spread evenly over the drives."""
    v = topology.validate() + scheme.validate("pool.scheme") + workload.validate()
    if v:
        raise InvalidInputError(v)
    reads_per_op = 1 if scheme.kind is SchemeKind.REPLICATED else _reads_needed(scheme, workload)
    per_drive = workload.iops / topology.drive_count
    return (per_drive * workload.read_fraction * reads_per_op, per_drive * (1 - workload.read_fraction) * scheme.width)


def drive_latency_samples(result: ArrayResult, *, kind: str, samples: int, rng: np.random.Generator) -> np.ndarray:
    """``samples`` latencies (s) drawn from a single-box simulation's histogram of ``kind``
    ('read' / 'write' / 'all'): a bucket by its count, then uniformly within it (buckets are at
    most 1/128 of their value wide). This is how a cluster composes the array kernel's per-drive
    behaviour (queueing, cleaning, caches) with the network, without changing the kernel: simulate
    one drive at its share of the shard IOs, then feed these samples to
    ``operation_latency_samples``."""
    v: list[Violation] = []
    check_range(v, "samples", samples, 1, 10_000_000, integer=True)
    if v:
        raise InvalidInputError(v)
    hist = np.asarray(result.latency_histograms[_kind_index(kind)], dtype=float)
    total = hist.sum()
    if total <= 0:
        raise InvalidInputError.one("result", f"the simulation completed no {kind} IOs to sample from")
    edges = latency_bucket_edges_s()
    idx = rng.choice(hist.size, size=samples, p=hist / total)
    lo, hi = edges[idx], edges[idx + 1]
    out: np.ndarray = lo + (hi - lo) * rng.random(samples)
    return out


def mg1_mean_wait_s(*, utilization: float, mean_service_s: float, second_moment_s2: float) -> float:
    """Pollaczek-Khinchine: ``rho E[S^2] / (2 E[S] (1 - rho))``; inf at rho >= 1."""
    if utilization >= 1.0:
        return math.inf
    if utilization <= 0.0:
        return 0.0
    return utilization * second_moment_s2 / (2.0 * mean_service_s * (1.0 - utilization))


def _waits(rng: np.random.Generator, size: tuple[int, ...], rho: float, mean_wait: float) -> np.ndarray:
    if rho <= 0.0 or mean_wait <= 0.0:
        return np.zeros(size)
    busy = rng.random(size) < rho
    return np.where(busy, rng.exponential(mean_wait / rho, size), 0.0)


def _check_drive_samples(v: list[Violation], drive_read_s: object, drive_write_s: object) -> None:
    """Violations of the drive latency samples a cluster simulation draws from (into ``v``)."""
    for name, arr in (("drive_read_s", drive_read_s), ("drive_write_s", drive_write_s)):
        a = np.asarray(arr, dtype=float)
        if a.ndim != 1 or a.size == 0 or not np.all(np.isfinite(a)) or np.any(a < 0):
            v.append(Violation(field=name, reason="must be a non-empty 1-D array of finite latencies >= 0 s"))


def operation_latency_samples(topology: ClusterTopology, scheme: Scheme, workload: ClusterWorkload, *,
                              drive_read_s: np.ndarray, drive_write_s: np.ndarray, samples: int,
                              rng: np.random.Generator, slow_host_count: int = 0, slow_factor: float = 1.0,
                              kind: str = "read") -> np.ndarray:
    """``samples`` client operation latencies (s) of ``kind`` 'read' or 'write' (module docstring).

    ``drive_read_s`` / ``drive_write_s``: samples of one drive's latency for a shard IO (drawn
    with replacement). Hosts ``0 .. slow_host_count - 1`` are slow by ``slow_factor``.
    """
    v = topology.validate() + scheme.validate("pool.scheme") + workload.validate()
    check_range(v, "samples", samples, 1, 10_000_000, integer=True)
    check_range(v, "slow_host_count", slow_host_count, 0, topology.server_count, integer=True, hi_name="server_count")
    check_range(v, "slow_factor", slow_factor, 1, 1e6)
    if kind not in ("read", "write"):
        v.append(Violation(field="kind", reason=f"must be 'read' or 'write', got {kind!r}"))
    _check_drive_samples(v, drive_read_s, drive_write_s)
    if v:
        raise InvalidInputError(v)
    load = nic_load(topology, scheme, workload)
    if load.saturated:
        raise InvalidInputError.one("workload.iops", f"must be < {load.max_iops:.6g} ops/s, where the hosts' "
                                                     f"{load.binding} saturates, got {workload.iops:g}")
    h, bw, hop = topology.server_count, topology.server.nic_bytes_per_s, topology.server.nic_hop_latency_s
    s = workload.io_bytes
    is_read = kind == "read"
    if scheme.kind is SchemeKind.REPLICATED:
        shards = 1 if is_read else scheme.width
        unit = s
    else:
        shards = _reads_needed(scheme, workload) if is_read else scheme.width
        unit = s / scheme.data_shards
    # Each operation's shard hosts: the primary (column 0) and shards - 1 others, distinct while hosts last.
    n = samples
    if shards <= h:
        hosts = np.argsort(rng.random((n, h)), axis=1)[:, :shards]
    else:
        hosts = rng.integers(0, h, (n, shards))
        hosts[:, 0] = rng.integers(0, h, n)
    slow = hosts < slow_host_count
    factor = np.where(slow, slow_factor, 1.0)
    drive = np.asarray(drive_read_s if is_read else drive_write_s, dtype=float)
    d_lat = rng.choice(drive, size=(n, shards)) * factor
    # waits: a transfer of `unit` bytes on a link at the host's utilization (M/G/1, sizes ~ fixed)
    rho_tx, rho_rx = load.tx_utilization, load.rx_utilization
    svc = unit / bw
    w_tx = mg1_mean_wait_s(utilization=rho_tx, mean_service_s=svc, second_moment_s2=svc * svc)
    w_rx = mg1_mean_wait_s(utilization=rho_rx, mean_service_s=s / bw, second_moment_s2=(s / bw) ** 2)
    nic_scale = factor  # a slow host's NIC is slower by the same factor
    if is_read:
        # remote shards: drive, then wait and transfer on the shard host's TX, then a hop
        remote = d_lat[:, 1:] + _waits(rng, (n, shards - 1), rho_tx, w_tx) * nic_scale[:, 1:] \
            + svc * nic_scale[:, 1:] + hop
        gathered = np.maximum(d_lat[:, 0], remote.max(axis=1) if shards > 1 else 0.0)
        rx_serial = (shards - 1) * svc * nic_scale[:, 0] + (hop if shards > 1 else 0.0)
        gathered = np.maximum(gathered, rx_serial)
        reply = _waits(rng, (n,), rho_tx, mg1_mean_wait_s(utilization=rho_tx, mean_service_s=s / bw,
                                                           second_moment_s2=(s / bw) ** 2)) * nic_scale[:, 0]
        out: np.ndarray = hop + gathered + reply + (s / bw) * nic_scale[:, 0] + hop
        return out
    # write: client -> primary (RX), then shards - 1 sends in turn on the primary's TX, each written and acked
    arrive = hop + _waits(rng, (n,), rho_rx, w_rx) * nic_scale[:, 0] + (s / bw) * nic_scale[:, 0]
    if shards == 1:
        single: np.ndarray = arrive + d_lat[:, 0] + hop
        return single
    order = np.arange(1, shards, dtype=float)
    send_done = _waits(rng, (n, 1), rho_tx, w_tx) * nic_scale[:, :1] + order * svc * nic_scale[:, :1]
    replica = send_done + hop + d_lat[:, 1:] + hop
    done = np.maximum(d_lat[:, 0], replica.max(axis=1))
    total: np.ndarray = arrive + done + hop
    return total


# -- one NIC link simulated transfer by transfer: the check of the M/G/1 waits ---------------------------

@njit(cache=True)
def _lindley(rng: np.random.Generator, rate_per_s: float, service_s: np.ndarray, out: np.ndarray) -> None:
    """FIFO waits by Lindley's recursion W(n+1) = max(0, W(n) + S(n) - A(n+1)), Poisson arrivals."""
    w = 0.0
    n_s = service_s.size
    for i in range(out.size):
        out[i] = w
        s = service_s[int(rng.random() * n_s) % n_s]
        w = w + s - rng.exponential(1.0 / rate_per_s)
        if w < 0.0:
            w = 0.0


def simulate_link_waits(*, rate_per_s: float, service_s: np.ndarray, transfers: int, rng: np.random.Generator) -> np.ndarray:
    """Waits (s) of ``transfers`` successive transfers on one FIFO link with Poisson arrivals at
    ``rate_per_s`` and service times drawn from ``service_s``, starting empty. Below saturation
    their mean approaches ``mg1_mean_wait_s``; at rho >= 1 they grow without bound."""
    v: list[Violation] = []
    check_range(v, "rate_per_s", rate_per_s, 0, 1e12, lo_open=True, unit="1/s")
    check_range(v, "transfers", transfers, 1, 100_000_000, integer=True)
    svc = np.asarray(service_s, dtype=np.float64)
    if svc.ndim != 1 or svc.size == 0 or not np.all(np.isfinite(svc)) or np.any(svc < 0):
        v.append(Violation(field="service_s", reason="must be a non-empty 1-D array of finite times >= 0 s"))
    if v:
        raise InvalidInputError(v)
    out = np.empty(transfers)
    _lindley(rng, float(rate_per_s), svc, out)
    return out
