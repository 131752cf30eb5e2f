"""Durability of a cluster under correlated failures, declustered rebuild times, availability.

Three pieces (docs/clusters.md has the derivations and the checks against published figures):

* **Simultaneous failures** (Cidon et al., "Copysets: Reducing the Frequency of Data Loss in Cloud
  Storage", USENIX ATC'13, section 3): F of N nodes fail at once (a power outage after which 1 %
  of the nodes do not come back). A stripe set of n nodes that survives t losses is lost with the
  hypergeometric probability p = P(X > t), X ~ Hypergeom(N, n, F); with S distinct stripe sets the
  cluster loses data with ``1 - (1 - p)^S``. S is what placement decides: random replication of
  many chunks makes S ~ the chunk count, Copyset Replication ``ceil(scatter / (R - 1)) x floor(N / R)``,
  MinIO's fixed erasure sets the set count.

* **Rebuild time** (``rebuild_time``): the bytes a failed drive or host held are re-created by
  reading ``k`` shards (1 copy for replication) for each one and writing it once. Declustered
  (Ceph): every surviving drive and NIC takes a share, each giving recovery at most
  ``recovery_fraction`` of its bandwidth (Ceph's backfill/mClock throttle), after
  ``detection_delay_s`` (Ceph's ``mon_osd_down_out_interval``, 600 s). Not declustered (MinIO's
  heal onto the replaced drive) or nowhere to re-protect (k+m domains exactly): after
  ``replacement_delay_s`` the replacement's own drive(s) and NIC take all the writes.

* **Loss over the service life** (``cluster_loss_probability``): a stripe holds at most ``c``
  shards on each of ``g`` hosts (host and rack domains) or sits on random distinct drives (drive
  domain). Two permanent failure kinds: a drive (rate ``lambda_d``, down for the drive rebuild
  ``tau_d``) and a whole host (``lambda_h``, down ``tau_h``, all its drives at once: the
  correlated failure). A stripe is lost when more than m of its shards are down together. First
  order in the down fractions ``x = lambda tau``: a down set T of h hosts and b drives (h + b <=
  m + 1) is entered through its last element e at rate ``x_h^h x_d^b / tau_e`` and is the first
  lethal state with probability ``L(T) - L(T - e)``, where ``L = 1 - (1 - p)^S`` is the chance that
  one of the S stripe sets is lost (Copysets' formula again) and p the chance for one stripe,
  averaged over placements (``_p_kill``). ``P(loss in L) = 1 - exp(-L x rate)``. A seeded Monte
  Carlo (``monte_carlo_cluster_loss``) of the same placement, failure by failure, checks it.

Transient host outages (reboots, network) make shards *unavailable*, not lost:
``unavailability_fraction`` is the time share during which some stripe has more than m shards
down or out (first order, as above, with rack outages for racks). Pure: no I/O.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from typing import Final

import numpy as np
from numba import njit

from .cluster import FailureDomain, Placement, SchemeKind
from .errors import InvalidInputError, Violation, check_range
from .units import YEAR_S

__all__ = [
    "ClusterDurability",
    "FailureModel",
    "MonteCarloClusterLoss",
    "RebuildTime",
    "RecoveryLimits",
    "cluster_loss_probability",
    "copyset_replication_set_count",
    "default_stripe_set_count",
    "monte_carlo_cluster_loss",
    "rack_window_set_count",
    "random_replication_set_count",
    "rebuild_time",
    "set_loss_probability",
    "simultaneous_failure_loss_probability",
    "unavailability_fraction",
    "windowed_random_set_count",
]

# Ceph: mon_osd_down_out_interval (docs.ceph.com, mon-osd-interaction: 600 s).
CEPH_DOWN_OUT_INTERVAL_S: Final = 600.0
# Ceph's autoscaler aims at mon_target_pg_per_osd = 100 PG replicas per OSD.
CEPH_TARGET_PG_PER_OSD: Final = 100
MAX_NODES: Final = 10_000_000


# -- simultaneous failures (Copysets) ----------------------------------------------------------------------

def set_loss_probability(*, node_count: int, failed_count: int, set_size: int, tolerated: int) -> float:
    """P(more than ``tolerated`` of a given ``set_size`` nodes are among ``failed_count`` of
    ``node_count`` failed at random): the hypergeometric tail, in exact integer arithmetic."""
    v: list[Violation] = []
    check_range(v, "node_count", node_count, 1, MAX_NODES, integer=True)
    if not v:
        check_range(v, "failed_count", failed_count, 0, node_count, integer=True, hi_name="node_count")
        check_range(v, "set_size", set_size, 1, node_count, integer=True, hi_name="node_count")
    if not v:
        check_range(v, "tolerated", tolerated, 0, set_size - 1, integer=True, hi_name="set_size - 1")
    if v:
        raise InvalidInputError(v)
    n, f, s = node_count, failed_count, set_size
    hits = sum(math.comb(s, j) * math.comb(n - s, f - j) for j in range(tolerated + 1, min(s, f) + 1))
    return float(Fraction(hits, math.comb(n, f)))


def simultaneous_failure_loss_probability(*, node_count: int, failed_count: int, set_size: int, tolerated: int,
                                          set_count: float) -> float:
    """Copysets' P(data loss) when ``failed_count`` random nodes fail at once: ``1 - (1 - p)^S``."""
    v: list[Violation] = []
    check_range(v, "set_count", set_count, 0, 1e30)
    if v:
        raise InvalidInputError(v)
    p = set_loss_probability(node_count=node_count, failed_count=failed_count, set_size=set_size, tolerated=tolerated)
    return _at_least_one(p, set_count)


def _at_least_one(p: float, count: float) -> float:
    if p <= 0.0 or count <= 0:
        return 0.0
    if p >= 1.0:
        return 1.0
    return -math.expm1(count * math.log1p(-p))


def random_replication_set_count(*, node_count: int, chunk_count: float, replicas: int) -> float:
    """Expected distinct copysets when ``chunk_count`` chunks each take ``replicas`` random nodes:
    ``C(N, R) (1 - (1 - 1/C(N, R))^chunks)`` (~ the chunk count while it is << C(N, R))."""
    total = math.comb(node_count, replicas)
    return total * -math.expm1(chunk_count * math.log1p(-1.0 / total))


def copyset_replication_set_count(*, node_count: int, scatter_width: int, replicas: int) -> int:
    """Copyset Replication's sets: ``P = ceil(S / (R - 1))`` permutations cut into ``floor(N / R)`` groups."""
    return math.ceil(scatter_width / (replicas - 1)) * (node_count // replicas)


def windowed_random_set_count(*, node_count: int, window: int, replicas: int) -> int:
    """Random replication inside a window: a chunk whose primary is node i puts its other R - 1
    replicas on random nodes among the next ``window`` (a ring): ``N C(window, R - 1)`` sets."""
    return node_count * math.comb(window, replicas - 1)


def rack_window_set_count(*, node_count: int, rack_window: int, machine_window: int) -> int:
    """HDFS-1094's placement (Facebook's HDFS, R = 3): the first replica anywhere; the second on a
    random rack among the next ``rack_window``, on a machine in a window of ``machine_window``
    machines; the third on another machine of the same window. Each primary makes
    ``rack_window x C(machine_window, 2)`` sets, none shared with another primary's (the primary
    is alone in its rack): ``N rack_window C(machine_window, 2)``."""
    return node_count * rack_window * math.comb(machine_window, 2)


def default_stripe_set_count(placement: Placement, *, pg_per_drive: int = CEPH_TARGET_PG_PER_OSD) -> int:
    """Distinct stripe sets: MinIO-style fixed sets (not declustered) -> drive_count / width;
    Ceph -> placement groups, ``pg_per_drive x drives / width`` rounded down to a power of two
    (as the autoscaler sets pg_num), at least 1."""
    width = placement.pool.scheme.width
    drives = placement.topology.drive_count
    if not placement.pool.declustered:
        return max(1, drives // width)
    target = max(1, pg_per_drive * drives // width)
    return 1 << (target.bit_length() - 1)


# -- rebuild time -----------------------------------------------------------------------------------------

@dataclass(frozen=True, slots=True, kw_only=True)
class RecoveryLimits:
    """What bounds a rebuild. ``drive_bytes_per_s``: a drive's sustained transfer rate (its
    datasheet figure); ``recovery_fraction``: the share of each drive's and NIC's bandwidth given to
    recovery (the throttle: Ceph's osd_max_backfills / mClock profile; an assumption to state);
    ``detection_delay_s``: before re-protection starts; ``replacement_delay_s``: when nothing can
    start before a part is replaced."""

    drive_bytes_per_s: float
    recovery_fraction: float = 0.5
    detection_delay_s: float = CEPH_DOWN_OUT_INTERVAL_S
    replacement_delay_s: float = 24 * 3600.0
    # a hard cap on one drive's recovery traffic (reads + writes), e.g. what osd_max_backfills and
    # osd_recovery_max_active let through for the pool's object size; inf: none
    max_recovery_bytes_per_s_per_drive: float = math.inf

    def validate(self, prefix: str = "recovery") -> list[Violation]:
        v: list[Violation] = []
        check_range(v, f"{prefix}.drive_bytes_per_s", self.drive_bytes_per_s, 0, 1e12, lo_open=True, unit="bytes/s")
        check_range(v, f"{prefix}.recovery_fraction", self.recovery_fraction, 0, 1, lo_open=True)
        check_range(v, f"{prefix}.detection_delay_s", self.detection_delay_s, 0, 1e7, unit="s")
        check_range(v, f"{prefix}.replacement_delay_s", self.replacement_delay_s, 0, 1e8, unit="s")
        if self.max_recovery_bytes_per_s_per_drive != math.inf:
            check_range(v, f"{prefix}.max_recovery_bytes_per_s_per_drive", self.max_recovery_bytes_per_s_per_drive,
                        0, 1e12, lo_open=True, unit="bytes/s", note="(or inf: no cap)")
        return v


@dataclass(frozen=True, slots=True, kw_only=True)
class RebuildTime:
    time_s: float  # from the failure to full protection
    transfer_s: float  # the data movement alone
    lost_bytes: float  # bytes the failed part held
    drive_io_bytes: float  # reads + writes on the drives
    network_bytes: float  # bytes crossing NICs
    binding: str  # "drives", "NICs", "replacement drive", "replacement host NIC", ...
    declustered: bool


def rebuild_time(placement: Placement, *, drive_capacity_bytes: float, fill_fraction: float, limits: RecoveryLimits,
                 failed: str = "drive") -> RebuildTime:
    """Time to re-protect the data of one failed ``drive`` or ``host``.

    Every lost shard byte costs ``r`` reads (r = k for EC, 1 for a copy) and one write. Declustered:
    ``drive_io = L (r + 1)`` over the surviving drives at ``recovery_fraction x drive_bytes_per_s``
    each; ``network = L (r + 1) (1 - 1/H)`` (a shard read or written on another host than the one
    decoding crosses a NIC) over the H surviving hosts' NICs, each direction at
    ``recovery_fraction x nic_bytes_per_s``; the slower sets the time, after the detection delay.
    Onto a replacement (not declustered, or no domain left to re-protect on): after the
    replacement delay, the replacement's drives take all writes and its NIC receives ``r L``.
    A drive failure in a pool with exactly as many hosts as a stripe spans re-places its shards
    on the same host's other drives (every other host already holds one): those d - 1 drives
    take the writes and that host's NIC receives ``L`` (Ceph's primaries decode and push).
    """
    v = limits.validate()
    check_range(v, "drive_capacity_bytes", drive_capacity_bytes, 0, 1e16, lo_open=True, unit="bytes")
    check_range(v, "fill_fraction", fill_fraction, 0, 1)
    if failed not in ("drive", "host"):
        v.append(Violation(field="failed", reason=f"must be 'drive' or 'host', got {failed!r}"))
    if v:
        raise InvalidInputError(v)
    topo, scheme = placement.topology, placement.pool.scheme
    d = topo.drives_per_server
    lost_drives = 1 if failed == "drive" else d
    lost = lost_drives * drive_capacity_bytes * fill_fraction
    reads = scheme.data_shards if scheme.kind is SchemeKind.EC else 1
    share = limits.recovery_fraction * limits.drive_bytes_per_s
    drive_bw = min(share, limits.max_recovery_bytes_per_s_per_drive)
    drive_bound = "recovery throttle" if drive_bw < share else "drives"
    nic_bw = limits.recovery_fraction * topo.server.nic_bytes_per_s
    hosts_left = topo.server_count - (1 if failed == "host" else 0)
    onto_replacement = not placement.pool.declustered or (
        failed == "host" and placement.pool.failure_domain is not FailureDomain.DRIVE
        and not placement.can_reprotect_after_domain_failure)
    if failed == "host" and placement.pool.failure_domain is FailureDomain.RACK:
        onto_replacement = not placement.pool.declustered  # a host's shards move within its rack
    if hosts_left == 0:
        # a one-server cluster that loses its server: nothing is left to re-create the data from
        return RebuildTime(time_s=math.inf, transfer_s=math.inf, lost_bytes=lost, drive_io_bytes=0.0,
                           network_bytes=0.0, binding="no surviving server: its data is lost with it",
                           declustered=placement.pool.declustered)
    if not onto_replacement:
        drives_left = topo.drive_count - lost_drives
        drive_io = lost * (reads + 1)
        network = drive_io * (1.0 - 1.0 / max(hosts_left, 1))
        t_drive = drive_io / (drives_left * drive_bw)
        t_nic = network / (max(hosts_left, 1) * nic_bw) if hosts_left > 1 else 0.0
        transfer, binding = (t_drive, drive_bound) if t_drive >= t_nic else (t_nic, "NICs")
        if (failed == "drive" and placement.pool.failure_domain is FailureDomain.HOST
                and not placement.can_reprotect_after_domain_failure and d > 1):
            # every other host already holds a shard of the drive's stripes: CRUSH re-places them on
            # the same host's other drives, which take all the writes; the PGs' primaries (spread)
            # decode and push the recovered shards in through that host's NIC
            t_local = lost / ((d - 1) * drive_bw)
            t_local_nic = lost / nic_bw
            if max(t_local, t_local_nic) > transfer:
                transfer = max(t_local, t_local_nic)
                binding = "the failed drive's host: its other drives" if t_local >= t_local_nic else \
                    "the failed drive's host: its NIC"
        return RebuildTime(time_s=limits.detection_delay_s + transfer, transfer_s=transfer, lost_bytes=lost,
                           drive_io_bytes=drive_io, network_bytes=network, binding=binding, declustered=True)
    # onto the replacement drive(s): writes land on lost_drives drives; reads spread over the stripe's others
    t_write = lost / (lost_drives * limits.drive_bytes_per_s)  # a replacement has no client load to spare it for
    peers = max(topo.drive_count - lost_drives, 1)
    t_read = lost * reads / (peers * drive_bw)
    network = lost * reads * (1.0 - 1.0 / max(topo.server_count, 1))
    t_nic = network / topo.server.nic_bytes_per_s
    transfer = max(t_write, t_read, t_nic)
    binding = ("replacement drive" if failed == "drive" else "replacement host drives") if transfer == t_write else (
        ("recovery throttle" if drive_bw < share else "surviving drives") if transfer == t_read else "replacement host NIC")
    return RebuildTime(time_s=limits.replacement_delay_s + transfer, transfer_s=transfer, lost_bytes=lost,
                       drive_io_bytes=lost * (reads + 1), network_bytes=network, binding=binding, declustered=False)


# -- loss over the service life ----------------------------------------------------------------------------

@dataclass(frozen=True, slots=True, kw_only=True)
class FailureModel:
    """Failure rates (per year) and down times. Permanent: drive failures and host losses (the host's
    drives' data must be re-created elsewhere). Transient: host outages and rack outages (shards
    unavailable, not lost)."""

    drive_annual_failure_rate: float
    host_annual_loss_rate: float = 0.0
    host_outages_per_year: float = 0.0
    host_outage_s: float = 0.0
    rack_outages_per_year: float = 0.0
    rack_outage_s: float = 0.0

    def validate(self, prefix: str = "failures") -> list[Violation]:
        v: list[Violation] = []
        check_range(v, f"{prefix}.drive_annual_failure_rate", self.drive_annual_failure_rate, 0, 100, unit="1/year")
        check_range(v, f"{prefix}.host_annual_loss_rate", self.host_annual_loss_rate, 0, 100, unit="1/year")
        check_range(v, f"{prefix}.host_outages_per_year", self.host_outages_per_year, 0, 10_000, unit="1/year")
        check_range(v, f"{prefix}.host_outage_s", self.host_outage_s, 0, YEAR_S, unit="s")
        check_range(v, f"{prefix}.rack_outages_per_year", self.rack_outages_per_year, 0, 10_000, unit="1/year")
        check_range(v, f"{prefix}.rack_outage_s", self.rack_outage_s, 0, YEAR_S, unit="s")
        return v


@dataclass(frozen=True, slots=True, kw_only=True)
class ClusterDurability:
    loss_rate_per_year: float  # expected data-loss events per year (first order)
    loss_probability: float  # over the service life
    service_life_years: float
    stripe_set_count: int
    by_pattern: tuple[tuple[int, int, float], ...]  # (hosts lost, drives lost, events/year) per minimal pattern
    drive_down_s: float
    host_down_s: float

    @property
    def nines(self) -> float:
        """-log10 of the annual loss probability."""
        annual = -math.expm1(-self.loss_rate_per_year)
        return math.inf if annual <= 0 else -math.log10(annual)


def _geometry(placement: Placement) -> tuple[int, int, int, int, int]:
    """(H hosts, g hosts per stripe, c shards per host, d drives per host, m) for host and rack
    domains (racks only constrain which hosts a stripe takes). Drive domains place shards on random
    distinct drives (``_p_kill``); their (g, c) here is the most even spread, for availability."""
    topo, scheme = placement.topology, placement.pool.scheme
    width, m = scheme.width, scheme.parity_shards
    h_count, d = topo.server_count, topo.drives_per_server
    if placement.pool.failure_domain is FailureDomain.HOST:
        c = placement.shards_per_domain
    elif placement.pool.failure_domain is FailureDomain.RACK:
        c = 1
    else:
        c = math.ceil(width / h_count)
    g = math.ceil(width / c)
    return h_count, g, c, d, m


def _hyper(pop: int, succ: int, draws: int, k: int) -> float:
    """P(exactly k successes) drawing ``draws`` of ``pop`` holding ``succ`` successes."""
    if k < 0 or k > draws or k > succ or draws - k > pop - succ:
        return 0.0
    return math.comb(succ, k) * math.comb(pop - succ, draws - k) / math.comb(pop, draws)


def _binom_tail(n: int, p: float, at_least: int) -> float:
    if at_least <= 0:
        return 1.0
    return math.fsum(math.comb(n, i) * p**i * (1 - p) ** (n - i) for i in range(at_least, n + 1))


def _p_kill(placement: Placement, h: int, b: int) -> float:
    """P(one stripe loses more than m shards when h whole hosts and b drives on other hosts are down)."""
    topo, scheme = placement.topology, placement.pool.scheme
    width, m = scheme.width, scheme.parity_shards
    h_count, d = topo.server_count, topo.drives_per_server
    if placement.pool.failure_domain is FailureDomain.DRIVE:
        # shards on `width` random distinct drives: the down drives are a set of h d + b of H d
        total, down = h_count * d, h * d + b
        return math.fsum(_hyper(total, down, width, i) for i in range(m + 1, min(width, down) + 1))
    _h, g, c, _d, _m = _geometry(placement)
    out = 0.0
    for j in range(0, min(h, g) + 1):  # lost hosts among the stripe's g
        pj = _hyper(h_count, g, h, j)
        if pj == 0.0:
            continue
        need = m + 1 - j * c
        if need <= 0:
            out += pj
            continue
        others = h_count - h
        bb = min(b, others)  # the b drives on distinct other hosts
        for k in range(need, min(bb, g - j) + 1):  # of those hosts, k in the stripe
            out += pj * _hyper(others, g - j, bb, k) * _binom_tail(k, c / d, need)
    return min(out, 1.0)


def cluster_loss_probability(placement: Placement, failures: FailureModel, *, drive_down_s: float, host_down_s: float,
                             service_life_years: float, stripe_set_count: int | None = None) -> ClusterDurability:
    """P(data loss) over ``service_life_years`` with drive failures and whole-host losses (first
    order; module docstring). ``drive_down_s`` / ``host_down_s``: mean time until a failed drive's /
    host's shards are re-protected (``rebuild_time(...).time_s``)."""
    v = failures.validate()
    check_range(v, "drive_down_s", drive_down_s, 0, YEAR_S, lo_open=True, unit="s")
    if placement.topology.server_count == 1 and host_down_s == math.inf:
        host_down_s = YEAR_S  # one server: a host loss is a data loss whatever its down time
    check_range(v, "host_down_s", host_down_s, 0, YEAR_S, lo_open=True, unit="s")
    check_range(v, "service_life_years", service_life_years, 0, 100, lo_open=True, unit="years")
    if stripe_set_count is not None:
        check_range(v, "stripe_set_count", stripe_set_count, 1, 1e15, integer=True)
    if v:
        raise InvalidInputError(v)
    sets = default_stripe_set_count(placement) if stripe_set_count is None else stripe_set_count
    h_count, g, c, d, m = _geometry(placement)
    lam_d = failures.drive_annual_failure_rate / YEAR_S
    lam_h = failures.host_annual_loss_rate / YEAR_S
    x_d, x_h = lam_d * drive_down_s, lam_h * host_down_s
    patterns: list[tuple[int, int, float]] = []
    total = 0.0
    lethal: dict[tuple[int, int], float] = {}

    def lethal_p(h: int, b: int) -> float:
        """P(some stripe is lost) with h hosts and b drives on other hosts down (0 for h or b < 0)."""
        if h < 0 or b < 0:
            return 0.0
        if (h, b) not in lethal:
            lethal[h, b] = _at_least_one(_p_kill(placement, h, b), sets)
        return lethal[h, b]

    # Every down set T of h hosts and b drives (h + b <= m + 1: larger sets are higher order) is
    # entered at rate prod(x) / tau_e through its last element e; it is the first lethal state
    # with probability L(T) - L(T - e) (lethality only grows with T).
    for h in range(0, min(m + 1, h_count) + 1):
        if h > 0 and lam_h == 0.0:
            break
        for b in range(0, m + 2 - h):
            if h + b == 0 or (b > 0 and lam_d == 0.0):
                continue
            if b > (h_count - h) * (d if placement.pool.failure_domain is FailureDomain.DRIVE else 1):
                break
            now = lethal_p(h, b)
            if now == 0.0:
                continue
            step = (h / host_down_s) * (now - lethal_p(h - 1, b)) + (b / drive_down_s) * (now - lethal_p(h, b - 1))
            if step <= 0.0:
                continue
            if placement.pool.failure_domain is FailureDomain.DRIVE:
                count = math.comb(h_count, h) * math.comb((h_count - h) * d, b)
            else:  # the b drives on distinct hosts, as _p_kill counts them
                count = math.comb(h_count, h) * math.comb(h_count - h, b) * d**b
            rate = count * (x_h ** h) * (x_d ** b) * step
            patterns.append((h, b, rate * YEAR_S))
            total += rate
    rate_year = total * YEAR_S
    return ClusterDurability(loss_rate_per_year=rate_year, loss_probability=-math.expm1(-rate_year * service_life_years),
                             service_life_years=service_life_years, stripe_set_count=sets, by_pattern=tuple(patterns),
                             drive_down_s=drive_down_s, host_down_s=host_down_s)


def unavailability_fraction(placement: Placement, failures: FailureModel, *, stripe_set_count: int | None = None,
                            for_writes: bool = False) -> float:
    """Share of time some stripe has more than t shards out (transient host and rack outages; first
    order): t = m for reads (k shards readable), t = width - min_size for writes (Ceph blocks a
    PG's IO below min_size). Host outages: ``C(H, u) y^u (1 - (1 - q)^S)`` with ``y`` = outages/year
    x outage duration / year and ``u = floor(t / c) + 1`` hosts out. Rack outages: each rack out
    for ``z`` of the time; a stripe is out when more than t of its shards sit in that rack."""
    v = failures.validate()
    if v:
        raise InvalidInputError(v)
    sets = default_stripe_set_count(placement) if stripe_set_count is None else stripe_set_count
    h_count, g, c, _d, m = _geometry(placement)
    if for_writes:
        m = placement.pool.scheme.width - placement.pool.scheme.min_size
    y = failures.host_outages_per_year * failures.host_outage_s / YEAR_S
    out = 0.0
    hosts = m // c + 1
    if y > 0 and hosts <= g:
        q = math.comb(g, hosts) / math.comb(h_count, hosts)
        out += math.comb(h_count, hosts) * y ** hosts * _at_least_one(min(q, 1.0), sets)
    racks = placement.topology.rack_count
    z = failures.rack_outages_per_year * failures.rack_outage_s / YEAR_S
    if z > 0 and racks > 0:
        if placement.pool.failure_domain is FailureDomain.RACK:
            # one shard per rack: m + 1 racks must be out together
            rr = m + 1
            if rr <= racks:
                q = math.comb(g, rr) / math.comb(racks, rr) if g >= rr else 0.0
                out += math.comb(racks, rr) * z ** rr * _at_least_one(min(q, 1.0), sets)
        else:
            per_rack = h_count // racks
            # hosts of one stripe in one rack: hypergeometric (H, per_rack, g); lost shards = c x that
            need = m // c + 1
            p_stripe = sum(math.comb(per_rack, j) * math.comb(h_count - per_rack, g - j)
                           for j in range(need, min(per_rack, g) + 1)) / math.comb(h_count, g)
            out += racks * z * _at_least_one(p_stripe, sets)
    return min(out, 1.0)


# -- Monte Carlo check ---------------------------------------------------------------------------------------

@dataclass(frozen=True, slots=True, kw_only=True)
class MonteCarloClusterLoss:
    trials: int
    losses: int
    loss_probability: float
    low: float  # 95 % Wilson interval
    high: float


def _stripes(rng: np.random.Generator, h_count: int, d: int, g: int, c: int, sets: int) -> np.ndarray:
    out = np.empty((sets, g * c), dtype=np.int64)
    for s in range(sets):
        hosts = rng.choice(h_count, size=g, replace=False)
        col = 0
        for host in hosts:
            for drive in rng.choice(d, size=c, replace=False):
                out[s, col] = host * d + drive
                col += 1
    return out


@njit(cache=True)
def _mc_kernel(rng: np.random.Generator, trials: int, stripes: np.ndarray, drive_stripes: np.ndarray, drive_stripe_count: np.ndarray,
               h_count: int, d: int, m: int, lam_d: float, lam_h: float, tau_d: float, tau_h: float,
               horizon: float) -> int:
    n_drives = h_count * d
    total_rate = n_drives * lam_d + h_count * lam_h
    losses = 0
    down_until = np.zeros(n_drives)
    affected = np.empty(d, dtype=np.int64)
    for _ in range(trials):
        down_until[:] = -1.0
        t = 0.0
        while True:
            t += rng.exponential(1.0 / total_rate)
            if t >= horizon:
                break
            u = rng.random() * total_rate
            if u < n_drives * lam_d:
                drv = min(int(u / lam_d), n_drives - 1)
                affected[0] = drv
                n_aff = 1
                end = t + rng.exponential(tau_d)
            else:
                host = min(int((u - n_drives * lam_d) / lam_h), h_count - 1)
                for j in range(d):
                    affected[j] = host * d + j
                n_aff = d
                end = t + rng.exponential(tau_h)
            for j in range(n_aff):
                if down_until[affected[j]] < end:
                    down_until[affected[j]] = end
            lost = False
            for j in range(n_aff):
                drv = affected[j]
                for s_i in range(drive_stripe_count[drv]):
                    s = drive_stripes[drv, s_i]
                    down = 0
                    for col in range(stripes.shape[1]):
                        if down_until[stripes[s, col]] > t:
                            down += 1
                    if down > m:
                        lost = True
                        break
                if lost:
                    break
            if lost:
                losses += 1
                break
    return losses


def monte_carlo_cluster_loss(placement: Placement, failures: FailureModel, *, drive_down_s: float, host_down_s: float,
                             service_life_years: float, stripe_set_count: int, trials: int,
                             rng: np.random.Generator) -> MonteCarloClusterLoss:
    """Simulate ``trials`` service lives of the placement, failure by failure (exponential times to
    failure and to re-protection with the given means), and count those that lose data. For
    checking the first-order model on small clusters with high failure rates."""
    v = failures.validate()
    check_range(v, "trials", trials, 1, 10_000_000, integer=True)
    check_range(v, "stripe_set_count", stripe_set_count, 1, 1_000_000, integer=True)
    if v:
        raise InvalidInputError(v)
    h_count, g, c, d, m = _geometry(placement)
    if placement.pool.failure_domain is FailureDomain.DRIVE:  # random distinct drives, hosts may repeat
        width = placement.pool.scheme.width
        stripes = np.stack([rng.choice(h_count * d, size=width, replace=False) for _ in range(stripe_set_count)])
    else:
        stripes = _stripes(rng, h_count, d, g, c, stripe_set_count)
    n_drives = h_count * d
    counts = np.zeros(n_drives, dtype=np.int64)
    for row in stripes:
        counts[row] += 1
    table = np.full((n_drives, max(1, int(counts.max()))), -1, dtype=np.int64)
    fill = np.zeros(n_drives, dtype=np.int64)
    for s, row in enumerate(stripes):
        for drv in row:
            table[drv, fill[drv]] = s
            fill[drv] += 1
    lam_d = failures.drive_annual_failure_rate / YEAR_S
    lam_h = max(failures.host_annual_loss_rate / YEAR_S, 1e-300)
    losses = _mc_kernel(rng, trials, stripes, table, counts, h_count, d, m, lam_d, lam_h, drive_down_s, host_down_s,
                        service_life_years * YEAR_S)
    p = losses / trials
    z = 1.959963984540054
    den = 1 + z * z / trials
    centre = (p + z * z / (2 * trials)) / den
    half = z * math.sqrt(p * (1 - p) / trials + z * z / (4 * trials * trials)) / den
    return MonteCarloClusterLoss(trials=trials, losses=losses, loss_probability=p, low=max(0.0, centre - half),
                                 high=min(1.0, centre + half))
