"""Search clusters: servers x drives per server x drive model x pool, cheapest first.

For every drive model (catalog ``Drive``: capacity, sequential write rate, price, power, AFR), pool
choice (``rep:R``, ``ec:K+M`` with one shard per host, or ``minio``: MinIO's sets and parity) and
drives per server, the server count grows from the fewest that can place the pool until the pool
holds ``usable_bytes`` and loses data over the service life with probability at most
``max_loss_probability``; more servers only cost more, so the first that passes is that column's
candidate. Each candidate carries its capacity (at Ceph's full ratios, room for a failed host), its
rebuild times, its service-life loss, its purchase cost with every bay paid for, its energy over
the life, and the constraint with the least headroom (the binding one). The answer ranks the
feasible candidates by cost of ownership and keeps their Pareto front on (cost, loss probability).
Pure: no I/O.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Final

from .cluster import ClusterTopology, FailureDomain, Pool, Scheme, ServerSpec, cluster_capacity, cluster_cost, minio_pool, place
from .cluster_durability import FailureModel, RecoveryLimits, cluster_loss_probability, rebuild_time
from .errors import InvalidInputError, Violation, check_range
from .units import YEAR_HOURS

__all__ = ["ClusterCandidate", "ClusterQuestion", "ClusterSearchResult", "PoolChoice", "parse_pool_choice", "search_clusters"]

MAX_SERVER_COUNT: Final = 1_000


@dataclass(frozen=True, slots=True, kw_only=True)
class PoolChoice:
    """A pool with its failure domain and min_size (a plain string in ``pools`` is host domain,
    default min_size). ``min_size`` 0 = the scheme's default; both are ignored for ``minio``."""

    scheme: str
    failure_domain: str = "host"
    min_size: int = 0

    def validate(self, prefix: str) -> list[Violation]:
        v: list[Violation] = []
        try:
            s = parse_pool_choice(self.scheme)
        except InvalidInputError as exc:
            return [x.at(f"{prefix}.scheme") for x in exc.violations]
        if s is None:
            return v
        if self.failure_domain not in tuple(FailureDomain):
            from .errors import did_you_mean

            v.append(Violation(field=f"{prefix}.failure_domain",
                               reason=f"must be one of {', '.join(d.value for d in FailureDomain)}, got {self.failure_domain!r}"
                                      f"{did_you_mean(self.failure_domain, [str(d.value) for d in FailureDomain])}"))
        if self.min_size:
            lo, hi = (1, s.width) if s.kind.value == "replicated" else (s.data_shards, s.width)
            check_range(v, f"{prefix}.min_size", self.min_size, lo, hi, integer=True,
                        note="(0 = default; replication: [1, size]; EC: [k, k + m])")
        return v

    @property
    def label(self) -> str:
        if self.scheme.strip().lower() == "minio":
            return "minio"
        extra = f" min_size {self.min_size}" if self.min_size else ""
        return f"{self.scheme.strip().lower()}{'' if self.failure_domain == 'host' else ' by ' + self.failure_domain}{extra}"


@dataclass(frozen=True, slots=True, kw_only=True)
class ClusterQuestion:
    usable_bytes: float
    service_life_years: float = 5.0
    max_loss_probability: float = 1e-6
    server: ServerSpec = field(default_factory=ServerSpec)
    min_server_count: int = 1
    max_server_count: int = 64
    drives_per_server: tuple[int, ...] = ()  # () = 1 .. server.bay_count
    pools: tuple[str | PoolChoice, ...] = ("rep:3", "ec:4+2", "ec:8+3")
    rack_count: int = 0  # racks the servers spread over evenly (a server count they do not divide is skipped)
    host_annual_loss_rate: float = 0.01
    recovery_fraction: float = 0.5
    energy_usd_per_kwh: float = 0.0
    metadata_overhead_fraction: float = 0.0

    def validate(self) -> list[Violation]:
        v: list[Violation] = []
        check_range(v, "usable_bytes", self.usable_bytes, 0, 1e21, lo_open=True, unit="bytes")
        check_range(v, "service_life_years", self.service_life_years, 0, 100, lo_open=True, unit="years")
        check_range(v, "max_loss_probability", self.max_loss_probability, 0, 1, lo_open=True)
        check_range(v, "min_server_count", self.min_server_count, 1, MAX_SERVER_COUNT, integer=True)
        if not v:
            check_range(v, "max_server_count", self.max_server_count, self.min_server_count, MAX_SERVER_COUNT,
                        integer=True, lo_name="min_server_count")
        for i, n in enumerate(self.drives_per_server):
            check_range(v, f"drives_per_server[{i}]", n, 1, self.server.bay_count, integer=True, hi_name="server.bay_count")
        check_range(v, "host_annual_loss_rate", self.host_annual_loss_rate, 0, 100, unit="1/year")
        check_range(v, "recovery_fraction", self.recovery_fraction, 0, 1, lo_open=True)
        check_range(v, "energy_usd_per_kwh", self.energy_usd_per_kwh, 0, 100, unit="USD/kWh")
        check_range(v, "metadata_overhead_fraction", self.metadata_overhead_fraction, 0, 1, hi_open=True)
        if not self.pools:
            v.append(Violation(field="pools", reason="must name at least one pool ('rep:R', 'ec:K+M' or 'minio')"))
        check_range(v, "rack_count", self.rack_count, 0, MAX_SERVER_COUNT, integer=True)
        for i, p in enumerate(self.pools):
            if isinstance(p, PoolChoice):
                v.extend(p.validate(f"pools[{i}]"))
                continue
            try:
                parse_pool_choice(p)
            except InvalidInputError as exc:
                v.extend(x.at(f"pools[{i}]") for x in exc.violations)
        return v


def parse_pool_choice(text: str) -> Scheme | None:
    """``rep:R`` / ``ec:K+M`` -> a Scheme; ``minio`` -> None (MinIO chooses from the topology)."""
    t = text.strip().lower()
    if t == "minio":
        return None
    try:
        if t.startswith("ec:"):
            k, m = t[3:].split("+")
            scheme = Scheme.ec(int(k), int(m))
        elif t.startswith("rep:"):
            scheme = Scheme.replicated(int(t[4:]))
        else:
            raise ValueError(t)
    except ValueError:
        raise InvalidInputError.one("pool", f"must be 'rep:R', 'ec:K+M' or 'minio', got {text!r}") from None
    bad = scheme.validate("pool")
    if bad:
        raise InvalidInputError(bad)
    return scheme


@dataclass(frozen=True, slots=True, kw_only=True)
class ClusterCandidate:
    drive: str
    pool: str
    server_count: int
    drives_per_server: int
    usable_bytes: float
    capex_usd: float
    energy_usd: float
    cost_usd: float  # capex + energy over the service life
    power_w: float
    loss_probability: float
    drive_rebuild_s: float
    host_rebuild_s: float
    binding: str  # the constraint with the least headroom
    capacity_headroom_fraction: float  # usable / required - 1
    durability_headroom_decades: float  # log10(max_loss_probability / loss_probability)
    pool_index: int = 0  # which of the question's pools


@dataclass(frozen=True, slots=True, kw_only=True)
class ClusterSearchResult:
    candidates: tuple[ClusterCandidate, ...]  # feasible, cheapest first
    pareto: tuple[ClusterCandidate, ...]  # no other is both cheaper and less likely to lose data
    evaluated: int
    rejected: dict[str, int]  # reason -> count

    def as_dict(self) -> dict[str, Any]:
        return {"evaluated": self.evaluated, "rejected": dict(self.rejected), "feasible": len(self.candidates)}


def _pool_for(choice: str | PoolChoice, server_count: int, drives_per_server: int) -> Pool:
    text = choice.scheme if isinstance(choice, PoolChoice) else choice
    scheme = parse_pool_choice(text)
    if scheme is None:
        pool, _ = minio_pool(server_count, drives_per_server)
        return pool
    if isinstance(choice, PoolChoice):
        if choice.min_size:
            scheme = Scheme(kind=scheme.kind, data_shards=scheme.data_shards, parity_shards=scheme.parity_shards,
                            min_size=choice.min_size)
        return Pool(scheme=scheme, failure_domain=FailureDomain(choice.failure_domain), label=choice.label)
    return Pool(scheme=scheme, failure_domain=FailureDomain.HOST, label=choice)


def pool_for(choice: str | PoolChoice, server_count: int, drives_per_server: int) -> Pool:
    """The Pool a search column places (MinIO's chosen from the counts)."""
    return _pool_for(choice, server_count, drives_per_server)


def search_clusters(question: ClusterQuestion, drives: Sequence[Any]) -> ClusterSearchResult:
    """Every drive x pool x drives-per-server column's cheapest passing server count, ranked."""
    v = question.validate()
    if not drives:
        v.append(Violation(field="drives", reason="must name at least one drive model"))
    for i, d in enumerate(drives):
        for attr in ("capacity_bytes", "seq_write_bytes_per_s", "price_usd", "annual_failure_rate"):
            val = getattr(d, attr, None)
            if val is None or not (isinstance(val, (int, float)) and val > 0 and math.isfinite(val)):
                v.append(Violation(field=f"drives[{i}].{attr}", reason=f"must be a number > 0 for a cluster search "
                                                                       f"(drive {getattr(d, 'name', '?')!r}), got {val!r}"))
    if v:
        raise InvalidInputError(v)
    q = question
    per_server_options = q.drives_per_server or tuple(range(1, q.server.bay_count + 1))
    hours = q.service_life_years * YEAR_HOURS
    feasible: list[ClusterCandidate] = []
    rejected: dict[str, int] = {}
    evaluated = 0

    def reject(reason: str) -> None:
        rejected[reason] = rejected.get(reason, 0) + 1

    for d in drives:
        limits = RecoveryLimits(drive_bytes_per_s=float(d.seq_write_bytes_per_s), recovery_fraction=q.recovery_fraction)
        failures = FailureModel(drive_annual_failure_rate=float(d.annual_failure_rate),
                                host_annual_loss_rate=q.host_annual_loss_rate)
        power_drive = float(d.active_power_w or 0.0)
        for pool_index, choice in enumerate(q.pools):
            for dps in per_server_options:
                for servers in range(q.min_server_count, q.max_server_count + 1):
                    if q.rack_count and servers % q.rack_count:
                        continue  # racks hold whole, equal shares of the servers
                    topo = ClusterTopology(server_count=servers, drives_per_server=dps, server=q.server,
                                           rack_count=q.rack_count)
                    evaluated += 1
                    try:
                        placement = place(topo, _pool_for(choice, servers, dps))
                    except InvalidInputError:
                        reject("placement")
                        continue
                    cap = cluster_capacity(placement, float(d.capacity_bytes),
                                           metadata_overhead_fraction=q.metadata_overhead_fraction)
                    if cap.usable_bytes < q.usable_bytes:
                        reject("capacity")
                        continue
                    fill = cap.fill_ceiling_fraction
                    rd = rebuild_time(placement, drive_capacity_bytes=float(d.capacity_bytes), fill_fraction=fill,
                                      limits=limits, failed="drive")
                    rh = rebuild_time(placement, drive_capacity_bytes=float(d.capacity_bytes), fill_fraction=fill,
                                      limits=limits, failed="host")
                    loss = cluster_loss_probability(placement, failures, drive_down_s=rd.time_s, host_down_s=rh.time_s,
                                                    service_life_years=q.service_life_years).loss_probability
                    if loss > q.max_loss_probability:
                        reject("durability")
                        continue
                    cost = cluster_cost(topo, drive_price_usd=float(d.price_usd), drive_power_w=power_drive)
                    energy = cost.power_w / 1000.0 * hours * q.energy_usd_per_kwh
                    cap_head = cap.usable_bytes / q.usable_bytes - 1.0
                    dur_head = math.log10(q.max_loss_probability / loss) if loss > 0 else math.inf
                    # compare like with like: capacity headroom in decades too
                    binding = "capacity" if math.log10(1.0 + cap_head) <= dur_head else "durability"
                    feasible.append(ClusterCandidate(
                        drive=d.name, pool=placement.pool.label or str(choice), server_count=servers, drives_per_server=dps,
                        usable_bytes=cap.usable_bytes, capex_usd=cost.capex_usd, energy_usd=energy,
                        cost_usd=cost.capex_usd + energy, power_w=cost.power_w, loss_probability=loss,
                        drive_rebuild_s=rd.time_s, host_rebuild_s=rh.time_s, binding=binding,
                        capacity_headroom_fraction=cap_head, durability_headroom_decades=dur_head, pool_index=pool_index))
                    break  # more servers only cost more
    feasible.sort(key=lambda c: (c.cost_usd, c.loss_probability, c.drive, c.pool, c.server_count, c.drives_per_server))
    pareto: list[ClusterCandidate] = []
    best_loss = math.inf
    for c in feasible:
        if c.loss_probability < best_loss:
            pareto.append(c)
            best_loss = c.loss_probability
    return ClusterSearchResult(candidates=tuple(feasible), pareto=tuple(pareto), evaluated=evaluated, rejected=rejected)
