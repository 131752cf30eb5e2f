"""The cluster's IO stream as an event simulation: per-host NIC and CPU queues in the IO path.

``cluster_network.operation_latency_samples`` adds an M/G/1 wait at the hosts' *average* load to
each shard's path. This module simulates the stream instead: client operations arrive as a
Poisson process, each at a primary host chosen uniformly; every transfer queues FIFO at the
NICs it crosses and every EC write at its primary's CPU, event by event in time order (each
operation's size drawn from the workload's size mix), so a
host's queue is whatever the operations that happen to land on it make it, and an operation
waits for the slowest host it touches.

The path of an operation of ``s`` bytes (shards of ``u = s / k`` for EC k+m, ``u = s`` for R
copies; ``hop`` is ``nic_hop_latency_s``, each message's one-way time outside the queues):

* replicated read: a request hop; the primary's drive reads; its TX sends ``s``; a hop to the
  client;
* EC read: a request hop; the primary's drive reads its shard; k - 1 other shard hosts (a further
  request hop) read theirs and send ``u`` on their TX into the primary's RX; when all k are in,
  the primary's TX sends ``s``; a hop;
* replicated write: ``s`` into the primary's RX; its drive writes; its TX sends R - 1 copies one
  after the other into the replicas' RX; each writes and acknowledges (a hop); the last
  acknowledgement completes the write (a hop to the client);
* EC write: ``s`` into the primary's RX; the primary's CPU encodes (``s / ec_encode_bytes_per_s``);
  its TX sends k + m - 1 shards of ``u`` one after the other; each shard host's RX, drive,
  acknowledgement; the last completes it.

A transfer holds the sender's TX and the receiver's RX (cut-through): it starts on the receiver's
RX when its first byte arrives (sender's start + hop) and the RX is free, takes ``bytes / bw``
there, and ends no earlier than its last byte left the sender plus a hop. Each TX, RX and CPU
is one FIFO server (Lindley's recursion at the event's time, events in time order: exact FIFO).
The client's own link is not modelled (clients are many and not the question).

**Drives** are the single-box kernel's: each shard IO takes a latency drawn from the kernel's
simulation of one drive at its share of the shard IOs (``cluster_network.drive_latency_samples``;
queueing, cleaning, caches, positioning at that load). The drive stage is thus a delay drawn
independently per shard IO (the drive's own queue is inside the draw), not a queue this kernel
holds; see docs/clusters.md ("The network in the IO path") for why and what it leaves out.

**Fail-slow hosts**: hosts ``0 .. slow_host_count - 1`` are ``slow_factor`` times slower: their
drives' latencies are multiplied by it and their NIC and CPU rates divided by it. A slow host
then queues more (its utilization rises by the factor) and sets the time of every stripe that
touches it.

The kernel draws from xoshiro256+ (``array._rnd``) seeded per call, so a compiled run equals
the same Python run without the JIT bit for bit (``tests/engine/test_kernel_reference.py``).
Pure: no I/O.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

import numpy as np
from numba import njit

from .array import _rnd
from .cluster import EC_ENCODE_BYTES_PER_S, ClusterTopology, Scheme, SchemeKind
from .cluster_network import ClusterWorkload, _bytes_per_op, _check_drive_samples
from .errors import InvalidInputError, Violation, check_range
from .event_heap import heap_pop, heap_push

__all__ = ["EC_ENCODE_BYTES_PER_S", "ClusterSimResult", "simulate_cluster_ops"]

MAX_OPS: Final = 2_000_000
_HEAP_CAP: Final = 1 << 20

# stages of an event (low 4 bits of its id; then 8 bits of shard, then the operation)
_E_DRIVE_R, _E_TX_R, _E_RX_R, _E_REPLY, _E_PRX, _E_CPU, _E_SEND, _E_WRX = range(8)
# counters
_N_DONE, _N_SATURATED, _N_MAX_EV = range(3)


@njit(cache=True, _nrt=False, inline="always")
def _fifo(free, h, t, svc, busy, row, meas):
    """Host ``h``'s FIFO server (``free``: when each host's is next free) takes a job of ``svc``
    seconds arriving at ``t`` (Lindley's recursion); its busy time counts in ``busy[row, h]`` for
    a measured operation. Returns the job's start."""
    st0 = max(t, free[h])
    free[h] = st0 + svc
    if meas:
        busy[row, h] += svc
    return st0


@njit(cache=True, _nrt=False, inline="always")
def _receive(rx_free, h, t, svc, arrived, busy, meas):
    """Host ``h``'s RX takes a transfer of ``svc`` seconds whose first byte arrives at ``t``
    (cut-through: it ends no earlier than ``arrived``, its last byte's arrival); returns its end."""
    st0 = max(t, rx_free[h])
    end = max(st0 + svc, arrived)
    rx_free[h] = end
    if meas:
        busy[1, h] += svc
    return end


@njit(cache=True, _nrt=False, inline="always")
def _shard_done(op_mark, op_pend, i, done):
    """A shard of operation ``i`` is done at ``done``; returns whether it was the last one pending."""
    op_mark[i] = max(op_mark[i], done)
    op_pend[i] -= 1
    return op_pend[i] == 0


@njit(cache=True, _nrt=False, inline="always")
def _complete(lat, op_t0, counters, i, end, t_w1):
    """Operation ``i`` completes at ``end``: its latency, the count; returns the window's new end."""
    lat[i] = end - op_t0[i]
    counters[_N_DONE] += 1
    return max(t_w1, end)


@njit(cache=True, _nrt=False, inline="always")
def _draw_hosts(rng, perm, hosts, i, p, H, width):
    """Operation ``i``'s stripe hosts into ``hosts[i]``: the primary ``p`` first, then distinct
    others in random order (cycling when the stripe is wider than the cluster)."""
    for j in range(H):
        perm[j] = j
    perm[0], perm[p] = p, 0
    for j in range(1, H):
        r = j + np.int64(_rnd(rng) * (H - j))
        if r >= H:
            r = H - 1
        perm[j], perm[r] = perm[r], perm[j]
    for j in range(width):
        hosts[i, j] = perm[j % H]


@njit(cache=True, _nrt=False, inline="always")
def _draw_size(rng, sizes, size_cum):
    """An operation's size from the mix (``size_cum``: cumulative weights; one size: no draw)."""
    n_sizes = sizes.shape[0]
    sz = sizes[0]
    if n_sizes > 1:
        x = _rnd(rng) * size_cum[n_sizes - 1]
        for q in range(n_sizes):
            if x < size_cum[q]:
                sz = sizes[q]
                break
            sz = sizes[q]
    return sz


@njit(cache=True, _nrt=False)
def _cluster_kernel(par, bw, cpu, dfac, drive_r, drive_w, sizes, size_cum, rng, hosts, op_t0, op_mark, op_pend, op_prim,
                    op_rd, op_s, shard_end, perm, ev_t, ev_id, lat, busy, counters):
    """The event loop (module docstring). ``par``: rate, read fraction, hosts, width, shards a read
    needs, EC (1) or copies (0), op bytes, shard bytes, hop, ops, warm-up ops. ``bw``, ``cpu``,
    ``dfac``: per host NIC bytes/s (each direction), CPU encode bytes/s (0: none), drive factor.
    ``sizes``, ``size_cum``: operation sizes and their cumulative weights (one size: no draw).
    ``busy``: per host TX, RX, CPU busy seconds of the measured operations' window.

    Why it is one function of over 100 lines: it is the kernel's event loop, one ``while`` over
    the events with all state in preallocated arrays, dispatching on the event's stage. Its
    pieces that stand alone (the FIFO servers, the draws, the heap) are inlined helpers already;
    splitting the dispatch itself would pass the loop's two dozen arrays to a call per event."""
    lam, read_frac = par[0], par[1]
    H, width, need, ec = np.int64(par[2]), np.int64(par[3]), np.int64(par[4]), par[5] != 0.0
    kdiv, hop = par[7], par[8]  # bytes per shard = op bytes / kdiv (k for EC, 1 for copies)
    n_ops, n_warm = np.int64(par[9]), np.int64(par[10])
    n_dr, n_dw = drive_r.shape[0], drive_w.shape[0]
    tx_free = busy[3]
    rx_free = busy[4]
    cpu_free = busy[5]
    cap = ev_t.shape[0]
    n_ev = 0
    i_next = 0
    t_next = -math.log(1.0 - _rnd(rng)) / lam
    t_w0 = np.inf
    t_w1 = -np.inf
    max_ev = 0
    while True:
        if i_next < n_ops and (n_ev == 0 or t_next <= ev_t[0]):
            # an operation arrives
            i = i_next
            t = t_next
            i_next += 1
            t_next = t + -math.log(1.0 - _rnd(rng)) / lam
            if i == n_warm:
                t_w0 = t
            rd = _rnd(rng) < read_frac
            p = np.int64(_rnd(rng) * H)
            if p >= H:
                p = H - 1
            _draw_hosts(rng, perm, hosts, i, p, H, width)
            op_t0[i] = t
            op_mark[i] = t
            op_prim[i] = p
            op_rd[i] = 1 if rd else 0
            op_s[i] = _draw_size(rng, sizes, size_cum)
            if rd:
                op_pend[i] = need
                for j in range(need):
                    tj = t + hop if hosts[i, j] == p else t + 2.0 * hop
                    n_ev = heap_push(ev_t, ev_id, n_ev, tj, (i << 12) | (j << 4) | _E_DRIVE_R)
            else:
                op_pend[i] = width
                n_ev = heap_push(ev_t, ev_id, n_ev, t + hop, (i << 12) | _E_PRX)
            if n_ev + width + 2 >= cap:
                counters[_N_SATURATED] = 1
                break
            max_ev = max(max_ev, n_ev)
            continue
        if n_ev == 0:
            break
        t = ev_t[0]
        ident = ev_id[0]
        n_ev = heap_pop(ev_t, ev_id, n_ev)
        i = ident >> 12
        j = (ident >> 4) & 255
        st = ident & 15
        p = op_prim[i]
        meas = i >= n_warm
        s = op_s[i]
        u = s / kdiv
        if st == _E_DRIVE_R:
            h = hosts[i, j]
            done = t + drive_r[np.int64(_rnd(rng) * n_dr) % n_dr] * dfac[h]
            if h == p:
                if _shard_done(op_mark, op_pend, i, done):
                    n_ev = heap_push(ev_t, ev_id, n_ev, op_mark[i], (i << 12) | _E_REPLY)
            else:
                n_ev = heap_push(ev_t, ev_id, n_ev, done, (i << 12) | (j << 4) | _E_TX_R)
        elif st == _E_TX_R:
            h = hosts[i, j]
            svc = u / bw[h]
            st0 = _fifo(tx_free, h, t, svc, busy, 0, meas)
            shard_end[i, j] = st0 + svc + hop
            n_ev = heap_push(ev_t, ev_id, n_ev, st0 + hop, (i << 12) | (j << 4) | _E_RX_R)
        elif st == _E_RX_R:
            end = _receive(rx_free, p, t, u / bw[p], shard_end[i, j], busy, meas)
            if _shard_done(op_mark, op_pend, i, end):
                n_ev = heap_push(ev_t, ev_id, n_ev, op_mark[i], (i << 12) | _E_REPLY)
        elif st == _E_REPLY:
            svc = s / bw[p]
            st0 = _fifo(tx_free, p, t, svc, busy, 0, meas)
            t_w1 = _complete(lat, op_t0, counters, i, st0 + svc + hop, t_w1)
        elif st == _E_PRX:
            svc = s / bw[p]
            st0 = _fifo(rx_free, p, t, svc, busy, 1, meas)
            nxt = _E_CPU if ec and cpu[p] > 0.0 else _E_SEND
            n_ev = heap_push(ev_t, ev_id, n_ev, st0 + svc, (i << 12) | nxt)
        elif st == _E_CPU:
            svc = s / cpu[p]
            st0 = _fifo(cpu_free, p, t, svc, busy, 2, meas)
            n_ev = heap_push(ev_t, ev_id, n_ev, st0 + svc, (i << 12) | _E_SEND)
        elif st == _E_SEND:
            for jj in range(width):
                h = hosts[i, jj]
                if h == p:
                    # a shard on the primary: written locally
                    _shard_done(op_mark, op_pend, i, t + drive_w[np.int64(_rnd(rng) * n_dw) % n_dw] * dfac[h])
                else:
                    svc = u / bw[p]
                    st0 = _fifo(tx_free, p, t, svc, busy, 0, meas)
                    shard_end[i, jj] = st0 + svc + hop
                    n_ev = heap_push(ev_t, ev_id, n_ev, st0 + hop, (i << 12) | (jj << 4) | _E_WRX)
            if op_pend[i] == 0:
                t_w1 = _complete(lat, op_t0, counters, i, op_mark[i] + hop, t_w1)
        elif st == _E_WRX:
            h = hosts[i, j]
            end = _receive(rx_free, h, t, u / bw[h], shard_end[i, j], busy, meas)
            done = end + drive_w[np.int64(_rnd(rng) * n_dw) % n_dw] * dfac[h] + hop
            if _shard_done(op_mark, op_pend, i, done):
                t_w1 = _complete(lat, op_t0, counters, i, op_mark[i] + hop, t_w1)
        if n_ev + width + 2 >= cap:
            counters[_N_SATURATED] = 1
            break
        max_ev = max(max_ev, n_ev)
    counters[_N_MAX_EV] = max_ev
    busy[6, 0] = t_w0
    busy[6, 1] = t_w1


@dataclass(frozen=True, slots=True, kw_only=True, eq=False)
class ClusterSimResult:
    """Latencies (s) of the measured operations (after the warm-up), per kind, and each host's
    utilization of its TX, RX and CPU over the measured window."""

    read_latency_s: np.ndarray
    write_latency_s: np.ndarray
    tx_utilization: np.ndarray  # per host
    rx_utilization: np.ndarray
    cpu_utilization: np.ndarray
    window_s: float
    saturated: bool  # a queue grows without bound (offered utilization >= 1, or the event queue overflowed)
    completed: int
    offered_utilization: float  # the busiest host queue's (NIC direction or CPU), analytic

    @property
    def latency_s(self) -> np.ndarray:
        out: np.ndarray = np.concatenate([self.read_latency_s, self.write_latency_s])
        return out


def simulate_cluster_ops(topology: ClusterTopology, scheme: Scheme, *, iops: float, read_fraction: float,
                         io_bytes: float, drive_read_s: np.ndarray, drive_write_s: np.ndarray, ops: int,
                         seed: int, warmup_ops: int = -1, stripe_units: int = 0,
                         ec_encode_bytes_per_s: float | None = None, slow_host_count: int = 0,
                         slow_factor: float = 1.0, io_size_mix: Sequence[tuple[float, float]] = ()) -> ClusterSimResult:
    """Simulate ``ops`` client operations arriving at ``iops`` (Poisson) on the cluster
    (module docstring). ``warmup_ops`` (default a tenth) are simulated but not measured.
    ``drive_read_s`` / ``drive_write_s``: one drive's shard IO latencies (s) to draw from (zeros
    for a network-only question). ``ec_encode_bytes_per_s``: a host's EC encode rate (0: free;
    default the topology's ``server.ec_encode_bytes_per_s``). ``io_size_mix``: (bytes, weight)
    pairs, each operation's size drawn from them (then ``io_bytes`` is not used); empty: every
    operation is ``io_bytes``."""
    if ec_encode_bytes_per_s is None:
        ec_encode_bytes_per_s = topology.server.ec_encode_bytes_per_s
    v = topology.validate() + scheme.validate("pool.scheme")
    check_range(v, "workload.iops", iops, 0, 1e12, lo_open=True, unit="ops/s")
    check_range(v, "workload.read_fraction", read_fraction, 0, 1)
    check_range(v, "workload.io_bytes", io_bytes, 1, 1e12, unit="bytes")
    check_range(v, "ops", ops, 1, MAX_OPS, integer=True)
    check_range(v, "warmup_ops", warmup_ops, -1, max(ops - 1, 0), integer=True, note="(-1 = a tenth)")
    check_range(v, "workload.stripe_units", stripe_units, 0, 64, integer=True, note="(0 = k)")
    check_range(v, "ec_encode_bytes_per_s", ec_encode_bytes_per_s, 0, 1e13, unit="bytes/s", note="(0 = free)")
    check_range(v, "slow_host_count", slow_host_count, 0, topology.server_count, integer=True, hi_name="server_count")
    check_range(v, "slow_factor", slow_factor, 1, 1e6)
    for j, (b, wt) in enumerate(io_size_mix):
        check_range(v, f"workload.io_size_mix[{j}].io_bytes", b, 1, 1e12, unit="bytes")
        check_range(v, f"workload.io_size_mix[{j}].weight", wt, 0, 1e12, lo_open=True)
    if scheme.width > 255:
        v.append(Violation(field="pool.scheme", reason=f"must be at most 255 shards wide, got {scheme.width}"))
    _check_drive_samples(v, drive_read_s, drive_write_s)
    if v:
        raise InvalidInputError(v)
    h = topology.server_count
    ec = scheme.kind is SchemeKind.EC
    width = scheme.width
    if ec:
        k = scheme.data_shards
        need = k if stripe_units == 0 else min(stripe_units, k)
        kdiv = float(k)
    else:
        need, kdiv = 1, 1.0
    mix = tuple(io_size_mix) if io_size_mix else ((io_bytes, 1.0),)
    sizes = np.array([float(b) for b, _ in mix])
    size_cum = np.cumsum([float(wt) for _, wt in mix])
    io_bytes = float(np.dot(sizes, np.diff(size_cum, prepend=0.0)) / size_cum[-1])  # the mean
    warm = ops // 10 if warmup_ops < 0 else warmup_ops
    par = np.array([iops, read_fraction, h, width, need, 1.0 if ec else 0.0, io_bytes, kdiv,
                    topology.server.nic_hop_latency_s, ops, warm], dtype=np.float64)
    f = np.ones(h)
    f[:slow_host_count] = slow_factor
    bw = topology.server.nic_bytes_per_s / f
    cpu = np.zeros(h) if ec_encode_bytes_per_s <= 0 else ec_encode_bytes_per_s / f
    ss = np.random.SeedSequence([seed, 0xC1A5])
    rng = ss.generate_state(4, dtype=np.uint64)
    hosts = np.zeros((ops, width), dtype=np.int64)
    shard_end = np.zeros((ops, width))
    op_t0, op_mark = np.zeros(ops), np.zeros(ops)
    op_pend, op_prim = np.zeros(ops, dtype=np.int64), np.zeros(ops, dtype=np.int64)
    op_rd = np.zeros(ops, dtype=np.int8)
    op_s = np.zeros(ops)
    perm = np.zeros(h, dtype=np.int64)
    ev_t, ev_id = np.zeros(_HEAP_CAP), np.zeros(_HEAP_CAP, dtype=np.int64)
    lat = np.full(ops, np.nan)
    busy = np.zeros((7, h))
    counters = np.zeros(3, dtype=np.int64)
    _cluster_kernel(par, bw, cpu, f, np.ascontiguousarray(drive_read_s, dtype=np.float64),
                    np.ascontiguousarray(drive_write_s, dtype=np.float64), sizes, size_cum, rng, hosts, op_t0, op_mark,
                    op_pend, op_prim, op_rd, op_s, shard_end, perm, ev_t, ev_id, lat, busy, counters)
    window = float(busy[6, 1] - busy[6, 0]) if busy[6, 1] > busy[6, 0] else math.nan
    # offered utilization of the busiest queue (a slow host's NIC and CPU carry the average load at
    # 1 / slow_factor the rate): at 1 or more its queue grows without bound however long the run
    tx_op, rx_op = _bytes_per_op(topology, scheme, ClusterWorkload(iops=iops, read_fraction=read_fraction,
                                                                    io_bytes=io_bytes, stripe_units=stripe_units))
    per_host = iops / h
    worst = max(slow_factor if slow_host_count > 0 else 1.0, 1.0)
    offered = per_host * max(tx_op, rx_op) / topology.server.nic_bytes_per_s * worst
    if ec and ec_encode_bytes_per_s > 0:
        offered = max(offered, per_host * (1.0 - read_fraction) * io_bytes / ec_encode_bytes_per_s * worst)
    m = slice(warm, ops)
    lm, rd = lat[m], op_rd[m] != 0
    ok = np.isfinite(lm)
    return ClusterSimResult(read_latency_s=lm[ok & rd], write_latency_s=lm[ok & ~rd],
                            tx_utilization=busy[0] / window, rx_utilization=busy[1] / window,
                            cpu_utilization=busy[2] / window, window_s=window,
                            saturated=bool(counters[_N_SATURATED]) or offered >= 1.0, offered_utilization=offered,
                            completed=int(counters[_N_DONE]))
