"""Arrays that span servers: topology, redundancy schemes, placement over failure domains, capacity.

A *cluster* is ``server_count`` identical servers (hosts), each with ``drives_per_server`` drives in
its bays, optionally spread evenly over ``rack_count`` racks. Data is cut into stripes (Ceph's
placement groups, MinIO's erasure sets, Backblaze's tomes); a stripe of ``width`` shards is either
``replicas`` full copies (replication xR) or ``k`` data + ``m`` parity shards (erasure coding k+m).

Placement puts each stripe's shards on distinct drives, at most ``shards_per_domain`` of them in
one failure domain (drive, host or rack). Ceph's ``crush-failure-domain=host`` is
``shards_per_domain = 1``; a CRUSH rule that takes several OSDs per host (rook/rook#17929: 10+4 on
5 hosts) and a MinIO erasure set wider than the server count put more than one shard in a host.
The rule this module enforces: one domain never holds more shards of a stripe than the stripe can
lose (``shards_per_domain <= m``), so the loss of any one domain is survived; a question that
cannot be placed so is refused with the field and the allowed range.

MinIO's erasure sets (``minio_erasure_sets``) follow ``cmd/endpoint-ellipses.go`` of minio/minio
at commit 0083d4940d032081e54b040bc3c92aba16acfc3b (``setSizes`` 2..16, ``getSetIndexes``,
``possibleSetCountsWithSymmetry``, ``commonSetDriveCount``) for one pool written as
``http://host{1...S}/disk{1...D}``, and the default parity of
``internal/config/storageclass/storage-class.go`` ``DefaultParityBlocks`` (EC:2 for 4-5 drives,
EC:3 for 6-7, EC:4 for 8-16). minio/minio PR #18725 ("choose max drives per set to be '8' by
default", EC:3 for 8) was closed without being merged; ``MinioPolicy.PR18725`` models it as an
option, not the default.

Capacity (``cluster_capacity``) is what an operator can fill: raw x scheme efficiency x (1 -
metadata overhead) x the fill ceiling, the lower of Ceph's ``nearfull_ratio`` (0.85) and the fill
that still lets one failed domain's data be re-protected on the survivors without passing
``backfillfull_ratio`` (0.90): ``backfillfull x (D - 1) / D`` for D domains. Pure: no I/O.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from enum import StrEnum
from typing import Final

from .errors import InvalidInputError, Violation, check_range

__all__ = [
    "EC_ENCODE_BYTES_PER_S",
    "CephRatios",
    "ClusterCapacity",
    "ClusterTopology",
    "FailureDomain",
    "MinioErasureSets",
    "MinioPolicy",
    "Placement",
    "Pool",
    "Scheme",
    "SchemeKind",
    "ServerSpec",
    "ceph_ec_pool",
    "ceph_replicated_pool",
    "ClusterCost",
    "cluster_capacity",
    "cluster_cost",
    "minio_default_parity",
    "minio_erasure_sets",
    "minio_pool",
    "place",
]

MAX_SERVERS: Final = 100_000
MAX_DRIVES_PER_SERVER: Final = 1_024
MAX_RACKS: Final = 10_000
MAX_WIDTH: Final = 64
MAX_REPLICAS: Final = 16
# MinIO: cmd/endpoint-ellipses.go ``setSizes`` at commit 0083d4940d03.
MINIO_SET_SIZES: Final = tuple(range(2, 17))
# minio/minio PR #18725 (closed, not merged): sets of at most 8 drives.
MINIO_PR18725_SET_SIZES: Final = tuple(range(2, 9))
# Ceph's defaults (mon_osd_nearfull_ratio, mon_osd_backfillfull_ratio, mon_osd_full_ratio):
# docs.ceph.com/en/latest/rados/configuration/mon-config-ref/ ("Storage Capacity").
CEPH_NEARFULL_RATIO: Final = 0.85
CEPH_BACKFILLFULL_RATIO: Final = 0.90
CEPH_FULL_RATIO: Final = 0.95


class FailureDomain(StrEnum):
    DRIVE = "drive"
    HOST = "host"
    RACK = "rack"


class SchemeKind(StrEnum):
    REPLICATED = "replicated"
    EC = "ec"


#: One core's Reed-Solomon encode rate: Ceph's ``ceph_erasure_code_benchmark``, jerasure
#: cauchy_good, k = 6, m = 2, 1 MiB objects, on one Xeon E3-1245 V2 core at 3.4 GHz: 4.2 GB/s
#: (Loic Dachary, "Benchmarking Ceph erasure code plugins",
#: https://ceph.com/en/news/blog/2013/benchmarking-ceph-erasure-code-plugins). ISA-L is faster
#: on newer cores; a host that encodes on several cores states a higher rate.
EC_ENCODE_BYTES_PER_S = 4.2e9


@dataclass(frozen=True, slots=True, kw_only=True)
class ServerSpec:
    """One server model: its bays, NIC and what it costs to own (drives not included)."""

    bay_count: int = 12
    nic_bytes_per_s: float = 25e9 / 8  # one 25 GbE port
    nic_hop_latency_s: float = 50e-6  # one switch hop and the receiving stack, each way
    cost_usd: float = 0.0
    power_w: float = 0.0
    # EC encode bytes per second at a primary (``EC_ENCODE_BYTES_PER_S``, one core; 0 = free)
    ec_encode_bytes_per_s: float = EC_ENCODE_BYTES_PER_S


@dataclass(frozen=True, slots=True, kw_only=True)
class ClusterTopology:
    """``server_count`` identical servers of ``drives_per_server`` drives, spread evenly over
    ``rack_count`` racks (0: no racks stated)."""

    server_count: int
    drives_per_server: int
    rack_count: int = 0
    server: ServerSpec = field(default_factory=ServerSpec)

    @property
    def drive_count(self) -> int:
        return self.server_count * self.drives_per_server

    def domain_count(self, domain: FailureDomain) -> int:
        if domain is FailureDomain.DRIVE:
            return self.drive_count
        if domain is FailureDomain.HOST:
            return self.server_count
        return self.rack_count

    def drives_per_domain(self, domain: FailureDomain) -> int:
        if domain is FailureDomain.DRIVE:
            return 1
        if domain is FailureDomain.HOST:
            return self.drives_per_server
        return self.drive_count // self.rack_count

    def validate(self, prefix: str = "topology") -> list[Violation]:
        v: list[Violation] = []
        check_range(v, f"{prefix}.server_count", self.server_count, 1, MAX_SERVERS, integer=True)
        check_range(v, f"{prefix}.drives_per_server", self.drives_per_server, 1, MAX_DRIVES_PER_SERVER, integer=True)
        check_range(v, f"{prefix}.rack_count", self.rack_count, 0, MAX_RACKS, integer=True, note="(0 = no racks)")
        s = self.server
        check_range(v, f"{prefix}.server.bay_count", s.bay_count, 1, MAX_DRIVES_PER_SERVER, integer=True)
        check_range(v, f"{prefix}.server.nic_bytes_per_s", s.nic_bytes_per_s, 0, 1e13, lo_open=True, unit="bytes/s")
        check_range(v, f"{prefix}.server.nic_hop_latency_s", s.nic_hop_latency_s, 0, 1.0, unit="s")
        check_range(v, f"{prefix}.server.ec_encode_bytes_per_s", s.ec_encode_bytes_per_s, 0, 1e13, unit="bytes/s",
                    note="(0 = free)")
        check_range(v, f"{prefix}.server.cost_usd", s.cost_usd, 0, 1e9, unit="USD")
        check_range(v, f"{prefix}.server.power_w", s.power_w, 0, 1e6, unit="W")
        if not v:
            check_range(v, f"{prefix}.drives_per_server", self.drives_per_server, 1, s.bay_count, hi_name="server.bay_count")
        if not v and self.rack_count > 0:
            if check_range(v, f"{prefix}.rack_count", self.rack_count, 0, self.server_count, hi_name="server_count") \
                    and self.server_count % self.rack_count:
                v.append(Violation(field=f"{prefix}.rack_count",
                                   reason=f"must divide server_count = {self.server_count} (racks hold equal numbers "
                                          f"of servers), got {self.rack_count}"))
        return v


@dataclass(frozen=True, slots=True, kw_only=True)
class Scheme:
    """Replication xR (``data_shards = 1``, ``parity_shards = R - 1``) or erasure coding k+m.
    ``min_size``: the shards a stripe needs to accept writes (Ceph's pool ``min_size``: 2 for
    size 3, k+1 for EC); reads need ``data_shards``."""

    kind: SchemeKind
    data_shards: int
    parity_shards: int
    min_size: int

    @classmethod
    def replicated(cls, size: int, min_size: int | None = None) -> Scheme:
        ms = (size // 2 + 1) if min_size is None else min_size  # Ceph: size - size/2 = 2 for size 3
        return cls(kind=SchemeKind.REPLICATED, data_shards=1, parity_shards=size - 1, min_size=ms)

    @classmethod
    def ec(cls, k: int, m: int, min_size: int | None = None) -> Scheme:
        return cls(kind=SchemeKind.EC, data_shards=k, parity_shards=m,
                   min_size=(k + 1 if m > 0 else k) if min_size is None else min_size)

    @property
    def width(self) -> int:
        return self.data_shards + self.parity_shards

    @property
    def efficiency(self) -> float:
        """User bytes per raw byte: 1/R or k/(k+m)."""
        return self.data_shards / self.width

    @property
    def name(self) -> str:
        if self.kind is SchemeKind.REPLICATED:
            return f"replicated x{self.width} (min_size {self.min_size})"
        return f"ec {self.data_shards}+{self.parity_shards} (min_size {self.min_size})"

    def validate(self, prefix: str = "scheme") -> list[Violation]:
        v: list[Violation] = []
        if self.kind is SchemeKind.REPLICATED:
            check_range(v, f"{prefix}.size", self.width, 1, MAX_REPLICAS, integer=True)
            if not v:
                check_range(v, f"{prefix}.min_size", self.min_size, 1, self.width, integer=True, hi_name="size")
            return v
        check_range(v, f"{prefix}.k", self.data_shards, 1, MAX_WIDTH - 1, integer=True)
        check_range(v, f"{prefix}.m", self.parity_shards, 0, MAX_WIDTH - 1, integer=True)
        if not v:
            check_range(v, f"{prefix}.m", self.parity_shards, 0, MAX_WIDTH - self.data_shards, integer=True,
                        note=f"(k + m <= {MAX_WIDTH})")
        if not v:
            check_range(v, f"{prefix}.min_size", self.min_size, self.data_shards, self.width, integer=True,
                        lo_name="k", hi_name="k + m")
        return v


@dataclass(frozen=True, slots=True, kw_only=True)
class Pool:
    """A scheme placed over a failure domain, at most ``shards_per_domain`` shards of a stripe in
    one domain (1: Ceph's ``crush-failure-domain``)."""

    scheme: Scheme
    failure_domain: FailureDomain = FailureDomain.HOST
    shards_per_domain: int = 1
    declustered: bool = True  # every surviving drive shares a rebuild (Ceph); False: onto a replacement (MinIO)
    label: str = ""


def ceph_replicated_pool(size: int = 3, min_size: int | None = None,
                         failure_domain: FailureDomain | str = FailureDomain.HOST) -> Pool:
    """A Ceph replicated pool (``osd pool create ... replicated``; defaults size 3, min_size 2)."""
    return Pool(scheme=Scheme.replicated(size, min_size), failure_domain=FailureDomain(failure_domain),
                label=f"ceph replicated size={size}")


def ceph_ec_pool(k: int, m: int, failure_domain: FailureDomain | str = FailureDomain.HOST, *,
                 shards_per_domain: int = 1, min_size: int | None = None) -> Pool:
    """A Ceph EC pool (erasure-code-profile ``k``, ``m``, ``crush-failure-domain``; min_size k+1)."""
    return Pool(scheme=Scheme.ec(k, m, min_size), failure_domain=FailureDomain(failure_domain),
                shards_per_domain=shards_per_domain, label=f"ceph ec k={k} m={m}")


# -- MinIO's erasure sets ------------------------------------------------------------------------------


class MinioPolicy(StrEnum):
    RELEASE = "release"  # cmd/endpoint-ellipses.go at 0083d4940d03: sets of 2..16 drives
    PR18725 = "pr18725"  # minio/minio PR #18725 (closed, unmerged): sets of 2..8, EC:3 for 8


def minio_default_parity(set_drive_count: int, policy: MinioPolicy | str = MinioPolicy.RELEASE) -> int:
    """``DefaultParityBlocks``: 1 -> 0, 2-3 -> 1, 4-5 -> 2, 6-7 -> 3, 8+ -> 4 (PR #18725: 8 -> 3)."""
    if set_drive_count == 1:
        return 0
    if set_drive_count <= 3:
        return 1
    if set_drive_count <= 5:
        return 2
    if set_drive_count <= 7:
        return 3
    if MinioPolicy(policy) is MinioPolicy.PR18725 and set_drive_count == 8:
        return 3
    return 4


@dataclass(frozen=True, slots=True, kw_only=True)
class MinioErasureSets:
    set_drive_count: int
    set_count: int
    parity: int
    servers_per_set: int  # distinct servers one set spans
    drives_per_server_per_set: int  # shards of one set on one server

    @property
    def data_shards(self) -> int:
        return self.set_drive_count - self.parity


def minio_erasure_sets(server_count: int, drives_per_server: int, *, parity: int | None = None,
                       policy: MinioPolicy | str = MinioPolicy.RELEASE) -> MinioErasureSets:
    """MinIO's set size for one pool ``http://host{1...S}/disk{1...D}``, as ``getSetIndexes`` chooses it.

    The supported sizes that divide S x D are kept if they are symmetric with the server count
    (``possibleSetCountsWithSymmetry`` tests the last ellipsis pattern of the argument, the hosts:
    S divisible by the size when S is larger, else the size divisible by S); of those,
    ``commonSetDriveCount`` takes the largest (the fewest sets).
    """
    v: list[Violation] = []
    check_range(v, "topology.server_count", server_count, 1, MAX_SERVERS, integer=True)
    check_range(v, "topology.drives_per_server", drives_per_server, 1, MAX_DRIVES_PER_SERVER, integer=True)
    if v:
        raise InvalidInputError(v)
    pol = MinioPolicy(policy)
    sizes = MINIO_SET_SIZES if pol is MinioPolicy.RELEASE else MINIO_PR18725_SET_SIZES
    total = server_count * drives_per_server
    if total < sizes[0]:
        raise InvalidInputError.one("topology.drives_per_server",
                                    f"a MinIO pool needs at least {sizes[0]} drives in all, got "
                                    f"{server_count} servers x {drives_per_server} drives = {total}")
    divisors = [s for s in sizes if total % s == 0]
    if not divisors:
        raise InvalidInputError.one("topology.drives_per_server",
                                    f"server_count x drives_per_server = {total} is divisible by none of MinIO's "
                                    f"erasure set sizes {sizes[0]}..{sizes[-1]}")
    symmetric = [s for s in divisors if (server_count % s == 0 if server_count > s else s % server_count == 0)]
    if not symmetric:
        raise InvalidInputError.one("topology.server_count",
                                    f"{server_count} servers x {drives_per_server} drives cannot be spread "
                                    f"symmetrically by any MinIO erasure set size dividing {total} ({divisors})")
    size = max(symmetric)  # commonSetDriveCount: the largest size, the fewest sets
    p = minio_default_parity(size, pol) if parity is None else parity
    check_range(v, "pool.parity", p, 0, size // 2, integer=True, note=f"(MinIO allows EC:0..EC:{size // 2} for sets of {size})")
    if v:
        raise InvalidInputError(v)
    servers_per_set = min(size, server_count)
    return MinioErasureSets(set_drive_count=size, set_count=total // size, parity=p,
                            servers_per_set=servers_per_set, drives_per_server_per_set=size // servers_per_set)


def minio_pool(server_count: int, drives_per_server: int, *, parity: int | None = None,
               policy: MinioPolicy | str = MinioPolicy.RELEASE) -> tuple[Pool, MinioErasureSets]:
    """MinIO's layout as a Pool: EC (set size - parity)+parity, its drives striped over the servers
    (``drives_per_server_per_set`` shards per host), healed onto the replacement (not declustered)."""
    sets = minio_erasure_sets(server_count, drives_per_server, parity=parity, policy=policy)
    k = sets.set_drive_count - sets.parity
    scheme = Scheme.ec(k, sets.parity, min_size=k + (1 if sets.parity == sets.set_drive_count // 2 else 0))
    pool = Pool(scheme=scheme, failure_domain=FailureDomain.HOST, shards_per_domain=sets.drives_per_server_per_set,
                declustered=False, label=f"minio EC:{sets.parity} sets of {sets.set_drive_count}")
    return pool, sets


# -- placement --------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True, kw_only=True)
class Placement:
    """Where a pool's stripes go on a topology, and what it survives."""

    pool: Pool
    topology: ClusterTopology
    domain_count: int
    domains_per_stripe: int  # distinct domains one stripe spans
    shards_per_domain: int
    domain_failures_tolerated: int  # whole domains a stripe survives losing
    drive_failures_tolerated: int  # drives (in distinct domains) a stripe survives losing
    can_reprotect_after_domain_failure: bool  # the survivors still hold a full stripe's domains
    notes: tuple[str, ...] = ()


def place(topology: ClusterTopology, pool: Pool) -> Placement:
    """Check that ``pool`` can be placed on ``topology`` and say what the placement survives.

    Refuses (``InvalidInputError`` naming the field and the allowed range): a scheme or topology
    out of range; racks as the domain with no racks; ``shards_per_domain`` above what the stripe
    can lose (m); fewer domains than the stripe needs (``ceil(width / shards_per_domain)``).
    """
    v = topology.validate() + pool.scheme.validate("pool.scheme")
    check_range(v, "pool.shards_per_domain", pool.shards_per_domain, 1, MAX_WIDTH, integer=True)
    try:
        domain = FailureDomain(pool.failure_domain)
    except ValueError:
        v.append(Violation(field="pool.failure_domain",
                           reason=f"must be one of {[d.value for d in FailureDomain]}, got {pool.failure_domain!r}"))
    if v:
        raise InvalidInputError(v)
    if domain is not pool.failure_domain:
        pool = replace(pool, failure_domain=domain)
    scheme = pool.scheme
    width, m, c = scheme.width, scheme.parity_shards, pool.shards_per_domain
    if domain is FailureDomain.RACK and topology.rack_count == 0:
        raise InvalidInputError.one("topology.rack_count", "must be >= 1 when pool.failure_domain is 'rack', got 0")
    if domain is FailureDomain.DRIVE and c != 1:
        raise InvalidInputError.one("pool.shards_per_domain", f"must be 1 when the failure domain is a drive, got {c}")
    if width > 1 and c > max(m, 1):
        raise InvalidInputError.one(
            "pool.shards_per_domain",
            f"must be in [1, m = {m}] so that losing one {domain.value} loses no more shards than "
            f"{scheme.name} can lose, got {c}")
    if width > topology.drive_count:
        raise InvalidInputError.one("topology.server_count",
                                    f"{scheme.name} needs {width} drives; the cluster has {topology.drive_count}")
    d_count = topology.domain_count(domain)
    need = math.ceil(width / c)
    if d_count < need:
        field_name = {FailureDomain.HOST: "topology.server_count", FailureDomain.RACK: "topology.rack_count",
                      FailureDomain.DRIVE: "topology.drives_per_server"}[domain]
        per = "one shard" if c == 1 else f"at most {c} shards"
        raise InvalidInputError.one(
            field_name, f"must be >= {need} for {scheme.name} with failure domain {domain.value} ({per} per "
                        f"{domain.value}), got {d_count}")
    if c > topology.drives_per_domain(domain):
        raise InvalidInputError.one(
            "pool.shards_per_domain",
            f"must be in [1, drives per {domain.value} = {topology.drives_per_domain(domain)}], got {c}")
    span = need
    notes: list[str] = []
    reprotect = (d_count - 1) * c >= width
    if not reprotect:
        notes.append(f"{d_count} {domain.value}s for a stripe of {width} shards at {c} per {domain.value}: after one "
                     f"{domain.value} fails its shards cannot be re-protected until it is replaced "
                     f"(ceph/ceph PR #35560: plan k+m+1 domains)")
    if domain is FailureDomain.DRIVE and topology.server_count > 1:
        notes.append("failure domain drive: a host failure can take several shards of a stripe")
    domain_tolerated = m // c if width > 1 else 0
    return Placement(pool=pool, topology=topology, domain_count=d_count, domains_per_stripe=span,
                     shards_per_domain=c, domain_failures_tolerated=domain_tolerated, drive_failures_tolerated=m,
                     can_reprotect_after_domain_failure=reprotect, notes=tuple(notes))


# -- capacity ------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True, kw_only=True)
class CephRatios:
    """Ceph's full ratios (defaults: nearfull 0.85, backfillfull 0.90, full 0.95)."""

    nearfull_ratio: float = CEPH_NEARFULL_RATIO
    backfillfull_ratio: float = CEPH_BACKFILLFULL_RATIO
    full_ratio: float = CEPH_FULL_RATIO

    def validate(self, prefix: str = "ratios") -> list[Violation]:
        v: list[Violation] = []
        check_range(v, f"{prefix}.nearfull_ratio", self.nearfull_ratio, 0, 1, lo_open=True)
        check_range(v, f"{prefix}.backfillfull_ratio", self.backfillfull_ratio, 0, 1, lo_open=True)
        check_range(v, f"{prefix}.full_ratio", self.full_ratio, 0, 1, lo_open=True)
        if not v:
            check_range(v, f"{prefix}.backfillfull_ratio", self.backfillfull_ratio, self.nearfull_ratio, self.full_ratio,
                        lo_name="nearfull_ratio", hi_name="full_ratio")
        return v


@dataclass(frozen=True, slots=True, kw_only=True)
class ClusterCapacity:
    raw_bytes: float
    efficiency: float  # user bytes per raw byte of the scheme
    metadata_overhead_fraction: float
    fill_ceiling_fraction: float  # of raw, the most an operator fills
    usable_bytes: float  # user data at the fill ceiling
    binding: str  # what sets the ceiling
    assumptions: tuple[str, ...]

    @property
    def usable_over_raw(self) -> float:
        return self.usable_bytes / self.raw_bytes if self.raw_bytes else 0.0


def cluster_capacity(placement: Placement, drive_capacity_bytes: float, *, ratios: CephRatios | None = None,
                     metadata_overhead_fraction: float = 0.0, reserve_domain_failure: bool = True) -> ClusterCapacity:
    """User bytes a cluster holds as operators run it.

    ``fill = min(nearfull, backfillfull x (D - 1) / D)`` of raw when ``reserve_domain_failure``
    (the survivors of one failed domain take its data back to full protection without crossing
    backfillfull); ``usable = raw x efficiency x (1 - metadata_overhead_fraction) x fill``.
    When the survivors cannot hold a stripe's domains (D - 1 < the stripe's span), or the pool
    heals onto replacements (MinIO), no reserve is kept; the answer says so.
    """
    r = ratios or CephRatios()
    v = r.validate()
    check_range(v, "drive_capacity_bytes", drive_capacity_bytes, 0, 1e16, lo_open=True, unit="bytes")
    check_range(v, "metadata_overhead_fraction", metadata_overhead_fraction, 0, 1, hi_open=True)
    if v:
        raise InvalidInputError(v)
    topo, scheme = placement.topology, placement.pool.scheme
    raw = topo.drive_count * float(drive_capacity_bytes)
    d = placement.domain_count
    fill, binding = r.nearfull_ratio, f"nearfull_ratio {r.nearfull_ratio:g}"
    assumptions = [f"metadata and allocation overhead {metadata_overhead_fraction:.1%} of raw (stated, not modelled: "
                   f"BlueStore's DB/WAL, MinIO's xl.meta, small-object padding)",
                   "data spread evenly over the drives (CRUSH's variance between OSDs not modelled)"]
    domain = placement.pool.failure_domain.value
    if reserve_domain_failure and not placement.pool.declustered:
        assumptions.append(f"no room kept for a failed {domain}: the pool heals onto replacements, not onto the "
                           f"other {domain}s")
    elif reserve_domain_failure:
        if placement.can_reprotect_after_domain_failure:
            reserve_fill = r.backfillfull_ratio * (d - 1) / d
            if reserve_fill < fill:
                fill, binding = reserve_fill, (f"room to re-protect one failed {domain}'s data on the other {d - 1} "
                                               f"below backfillfull_ratio {r.backfillfull_ratio:g}")
            assumptions.append(f"keeps room for one failed {domain}'s data to be re-protected on the survivors "
                               f"(fill <= backfillfull x {d - 1}/{d} = {r.backfillfull_ratio * (d - 1) / d:.3f})")
        else:
            assumptions.append(f"no room kept for a failed {domain}: with {d} {domain}s its shards cannot be "
                               f"re-protected until it is replaced")
    usable = raw * scheme.efficiency * (1.0 - metadata_overhead_fraction) * fill
    return ClusterCapacity(raw_bytes=raw, efficiency=scheme.efficiency, metadata_overhead_fraction=metadata_overhead_fraction,
                           fill_ceiling_fraction=fill, usable_bytes=usable, binding=binding, assumptions=tuple(assumptions))


# -- cost and power: a bay is never free --------------------------------------------------------------


@dataclass(frozen=True, slots=True, kw_only=True)
class ClusterCost:
    capex_usd: float
    power_w: float
    server_capex_usd: float  # servers (their bays, CPUs, NICs) without drives
    drive_capex_usd: float
    empty_bays: int  # bays bought and not filled

    def usd_per_usable_byte(self, capacity: ClusterCapacity) -> float:
        return self.capex_usd / capacity.usable_bytes if capacity.usable_bytes > 0 else math.inf


def cluster_cost(topology: ClusterTopology, *, drive_price_usd: float, drive_power_w: float) -> ClusterCost:
    """Purchase cost and power of the servers with their drives: ``servers x (server cost +
    drives_per_server x drive price)``; every bay is paid for with its server, filled or not."""
    v = topology.validate()
    check_range(v, "drive_price_usd", drive_price_usd, 0, 1e7, unit="USD")
    check_range(v, "drive_power_w", drive_power_w, 0, 1e4, unit="W")
    if v:
        raise InvalidInputError(v)
    s = topology.server
    servers = topology.server_count * s.cost_usd
    drives = topology.drive_count * drive_price_usd
    return ClusterCost(capex_usd=servers + drives, power_w=topology.server_count * s.power_w + topology.drive_count * drive_power_w,
                       server_capex_usd=servers, drive_capex_usd=drives,
                       empty_bays=topology.server_count * (s.bay_count - topology.drives_per_server))
