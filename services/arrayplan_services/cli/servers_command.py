"""``arrayplan servers``: a storage pool spread over servers (Ceph-style or MinIO-style), run in-process.

    arrayplan servers --servers 16 --drives-per-server 12 --scheme ec:8+3 --failure-domain host \\
        --drive-bytes 20TB --drive-mbps 250 --afr 0.015 --host-loss-rate 0.01 --fill 0.7 --format text
    arrayplan servers --servers 16 --drives-per-server 12 --minio --drive-bytes 20TB --drive-mbps 250 --afr 0.015
    arrayplan servers search --usable 100TB --bays 12 --server-cost 6000 --server-power 200 --format text

prints the placement (domains, what a stripe survives, whether a failed domain can be re-protected),
the capacity at Ceph's full ratios with its binding limit and assumptions, the rebuild time after a
drive and after a host failure (and what bounds each) and the probability of data loss over the
service life with whole-host failures (``servers pool``, the default verb). ``servers search``
(formerly ``servers-search``, still accepted) searches the built-in catalog's drives x pools x
drives per server x servers for the cheapest clusters that hold ``--usable`` and meet
``--max-loss`` (ranked, with the binding constraint and the Pareto front). docs/clusters.md has
the models. (``arrayplan controller`` / ``submit`` are about running arrayplan on Kubernetes, a
different kind of cluster.)

Bad input exits 2 with the engine's field-naming message on stderr (and the flag it came from).
"""

from __future__ import annotations

import argparse
from typing import Any

from arrayplan_engine import cluster, cluster_durability
from arrayplan_engine.errors import ArrayplanError, InvalidInputError
from arrayplan_engine.units import MB

from .common import EXIT_BAD_INPUT, EXIT_OK, EXIT_UNMET, add_format_flag, add_verbs, engine_error, print_fields, print_json

_FLAGS = {
    "topology.server_count": "--servers",
    "topology.drives_per_server": "--drives-per-server",
    "topology.rack_count": "--racks",
    "topology.server.bay_count": "--bays",
    "topology.server.nic_bytes_per_s": "--nic-gbps",
    "pool.scheme.size": "--scheme",
    "pool.scheme.k": "--scheme",
    "pool.scheme.m": "--scheme",
    "pool.scheme.min_size": "--min-size",
    "pool.shards_per_domain": "--shards-per-domain",
    "pool.parity": "--minio-parity",
    "drive_capacity_bytes": "--drive-bytes",
    "recovery.drive_bytes_per_s": "--drive-mbps",
    "recovery.recovery_fraction": "--recovery-fraction",
    "recovery.max_recovery_bytes_per_s_per_drive": "--recovery-cap-mbps",
    "fill_fraction": "--fill",
    "failures.drive_annual_failure_rate": "--afr",
    "failures.host_annual_loss_rate": "--host-loss-rate",
    "failures.host_outages_per_year": "--host-outages-per-year",
    "failures.host_outage_s": "--host-outage-minutes",
    "service_life_years": "--service-life-years",
    "metadata_overhead_fraction": "--metadata-overhead",
    "scheme": "--scheme",
    "usable_bytes": "--usable",
    "max_loss_probability": "--max-loss",
    "max_server_count": "--max-servers",
    "energy_usd_per_kwh": "--energy-usd-per-kwh",
    "host_annual_loss_rate": "--host-loss-rate",
    "drives": "--drives",
}


def parse_scheme(text: str, min_size: int | None) -> cluster.Scheme:
    """``rep:3`` / ``x3`` (replicated size 3) or ``ec:8+3``."""
    t = text.strip().lower()
    try:
        if t.startswith("ec:"):
            k, m = t[3:].split("+")
            return cluster.Scheme.ec(int(k), int(m), min_size)
        if t.startswith("rep:") or t.startswith("x"):
            return cluster.Scheme.replicated(int(t.split(":")[-1].lstrip("x")), min_size)
    except ValueError:
        pass
    raise InvalidInputError.one("scheme", f"must be 'rep:R' (or 'xR') or 'ec:K+M', got {text!r}")


def answer(args: argparse.Namespace) -> dict[str, Any]:
    """The whole answer as plain data (the handler prints it)."""
    server = cluster.ServerSpec(bay_count=args.bays or args.drives_per_server, nic_bytes_per_s=args.nic_gbps * 1e9 / 8)
    topo = cluster.ClusterTopology(server_count=args.servers, drives_per_server=args.drives_per_server,
                                   rack_count=args.racks, server=server)
    sets = None
    if args.minio:
        pool, sets = cluster.minio_pool(args.servers, args.drives_per_server, parity=args.minio_parity,
                                        policy=args.minio_policy)
    else:
        scheme = parse_scheme(args.scheme, args.min_size)
        pool = cluster.Pool(scheme=scheme, failure_domain=cluster.FailureDomain(args.failure_domain),
                            shards_per_domain=args.shards_per_domain)
    placement = cluster.place(topo, pool)
    cap = cluster.cluster_capacity(placement, args.drive_bytes, metadata_overhead_fraction=args.metadata_overhead)
    cap_bps = args.recovery_cap_mbps * MB if args.recovery_cap_mbps is not None else float("inf")
    limits = cluster_durability.RecoveryLimits(drive_bytes_per_s=args.drive_mbps * MB,
                                               recovery_fraction=args.recovery_fraction,
                                               max_recovery_bytes_per_s_per_drive=cap_bps)
    rd = cluster_durability.rebuild_time(placement, drive_capacity_bytes=args.drive_bytes, fill_fraction=args.fill,
                                         limits=limits, failed="drive")
    rh = cluster_durability.rebuild_time(placement, drive_capacity_bytes=args.drive_bytes, fill_fraction=args.fill,
                                         limits=limits, failed="host")
    failures = cluster_durability.FailureModel(drive_annual_failure_rate=args.afr, host_annual_loss_rate=args.host_loss_rate,
                                               host_outages_per_year=args.host_outages_per_year,
                                               host_outage_s=args.host_outage_minutes * 60.0)
    dur = cluster_durability.cluster_loss_probability(placement, failures, drive_down_s=rd.time_s, host_down_s=rh.time_s,
                                                      service_life_years=args.service_life_years)
    out: dict[str, Any] = {
        "pool": pool.label or "custom",
        "scheme": pool.scheme.name,
        "failure_domain": pool.failure_domain.value,
        "domain_count": placement.domain_count,
        "shards_per_domain": placement.shards_per_domain,
        "domain_failures_tolerated": placement.domain_failures_tolerated,
        "drive_failures_tolerated": placement.drive_failures_tolerated,
        "can_reprotect_after_domain_failure": placement.can_reprotect_after_domain_failure,
        "notes": list(placement.notes),
        "raw_bytes": cap.raw_bytes,
        "usable_bytes": cap.usable_bytes,
        "usable_fraction_of_raw": cap.usable_over_raw,
        "fill_ceiling_fraction": cap.fill_ceiling_fraction,
        "capacity_binding": cap.binding,
        "assumptions": [*cap.assumptions, f"recovery gets {args.recovery_fraction:.0%} of each drive's and NIC's bandwidth",
                        f"drives {args.fill:.0%} full when one fails"],
        "drive_rebuild_s": rd.time_s,
        "drive_rebuild_binding": rd.binding,
        "host_rebuild_s": rh.time_s,
        "host_rebuild_binding": rh.binding,
        "stripe_set_count": dur.stripe_set_count,
        "loss_rate_per_year": dur.loss_rate_per_year,
        "service_life_years": args.service_life_years,
        "service_life_loss_probability": dur.loss_probability,
        "annual_nines": dur.nines if dur.loss_rate_per_year > 0 else None,
        "read_unavailability_fraction": cluster_durability.unavailability_fraction(placement, failures),
        "write_unavailability_fraction": cluster_durability.unavailability_fraction(placement, failures, for_writes=True),
    }
    if sets is not None:
        out["minio_set_drive_count"] = sets.set_drive_count
        out["minio_set_count"] = sets.set_count
        out["minio_parity"] = sets.parity
    return out


def _handler(args: argparse.Namespace) -> int:
    try:
        out = answer(args)
    except ArrayplanError as exc:
        engine_error(exc, "servers", _FLAGS)
        return EXIT_BAD_INPUT
    if args.format == "json":
        print_json(out)
    else:
        print_fields(out)
    return EXIT_OK


def register(subparsers: Any) -> None:
    """Add ``servers`` with its verbs ``pool`` (the default: ``servers --servers 16 ...``) and
    ``search``; ``servers-search`` stays as the search's former name (not listed in the help)."""
    p = subparsers.add_parser(
        "servers", help="a pool spread over servers (Ceph, MinIO): servers [pool] for one, servers search for the cheapest",
        description="Capacity, rebuild times and durability of a pool spread over servers (`servers [pool] ...`, pool is "
                    "the default verb), or the cheapest clusters for a capacity and durability (`servers search`). "
                    "docs/clusters.md.")
    verbs = add_verbs(p, "servers_command", default="pool")
    _add_pool(verbs.add_parser(
        "pool", help="capacity, rebuild times and durability of one pool spread over servers (the default verb)",
        description="Placement over failure domains, usable capacity at Ceph's full ratios, declustered rebuild "
                    "times after a drive and a host failure, and P(data loss) over the service life with whole-host "
                    "failures, for servers x drives per server. docs/clusters.md."))
    search_description = ("Search the built-in catalog's drives x pools x drives per server x servers for the clusters "
                          "that hold --usable with P(data loss) over the service life at most --max-loss, cheapest "
                          "first (servers, drives and energy), with the binding constraint and the Pareto front. "
                          "Exit 3 when none passes. docs/clusters.md.")
    _add_search(verbs.add_parser(
        "search", help="cheapest clusters (servers x drives x model x pool) for a capacity and durability",
        description=search_description))
    _add_search(subparsers.add_parser("servers-search", prog="arrayplan servers search", description=search_description))


def _add_pool(p: argparse.ArgumentParser) -> None:
    from ..api.planfile import int_arg, size_arg

    p.add_argument("--servers", type=int_arg, required=True, help="servers (hosts) in the pool")
    p.add_argument("--drives-per-server", type=int_arg, required=True, help="drives in each server")
    p.add_argument("--bays", type=int_arg, default=0, help="drive bays per server (default: --drives-per-server)")
    p.add_argument("--racks", type=int_arg, default=0, help="racks holding the servers evenly (default 0: none stated)")
    p.add_argument("--nic-gbps", type=float, default=25.0, help="NIC line rate per server, Gbit/s (default 25)")
    p.add_argument("--scheme", default="rep:3", help="rep:R (replicated size R) or ec:K+M (default rep:3)")
    p.add_argument("--min-size", type=int_arg, default=None, help="shards a stripe needs for writes (default Ceph's)")
    p.add_argument("--failure-domain", choices=[d.value for d in cluster.FailureDomain], default="host",
                   help="drive | host | rack (default host)")
    p.add_argument("--shards-per-domain", type=int_arg, default=1, help="at most this many shards of a stripe per domain (default 1)")
    p.add_argument("--minio", action="store_true", help="MinIO's erasure sets chosen from the servers and drives")
    p.add_argument("--minio-parity", type=int_arg, default=None, help="MinIO parity (default: by set size)")
    p.add_argument("--minio-policy", choices=[m.value for m in cluster.MinioPolicy], default="release",
                   help="release (endpoint-ellipses.go, sets up to 16) | pr18725 (unmerged proposal: up to 8)")
    p.add_argument("--drive-bytes", type=size_arg, required=True, metavar="SIZE", help="drive capacity (20TB, 2e13)")
    p.add_argument("--drive-mbps", type=float, required=True, help="drive sustained transfer rate, MB/s (datasheet)")
    p.add_argument("--recovery-fraction", type=float, default=0.5,
                   help="share of each drive's and NIC's bandwidth recovery may use (throttle; default 0.5)")
    p.add_argument("--recovery-cap-mbps", type=float, default=None,
                   help="cap on one drive's recovery traffic, MB/s (a backfill limit; default none)")
    p.add_argument("--fill", type=float, default=0.7, help="fraction of each drive holding data when one fails (default 0.7)")
    p.add_argument("--afr", type=float, required=True, help="drive annual failure rate, failures per drive-year")
    p.add_argument("--host-loss-rate", type=float, default=0.0,
                   help="whole-host losses per host-year whose data must be re-created (default 0)")
    p.add_argument("--host-outages-per-year", type=float, default=0.0,
                   help="transient outages per host-year (reboots, network): shards unavailable, not lost (default 0)")
    p.add_argument("--host-outage-minutes", type=float, default=0.0, help="mean length of a host outage, minutes (default 0)")
    p.add_argument("--service-life-years", type=float, default=5.0, help="service life in years (default 5)")
    p.add_argument("--metadata-overhead", type=float, default=0.0, help="metadata overhead fraction of raw (default 0)")
    add_format_flag(p)
    p.set_defaults(func=_handler)


def _search_handler(args: argparse.Namespace) -> int:
    from arrayplan_engine import cluster_search
    from arrayplan_engine.catalog import builtin_catalog

    try:
        catalog = builtin_catalog()
        names = [n.strip() for n in args.drives.split(",") if n.strip()] if args.drives else list(catalog.names())
        drives = []
        for n in names:
            if n not in catalog.names():
                from arrayplan_engine.errors import UnknownNameError

                raise UnknownNameError("drives", n, catalog.names())
            drives.append(catalog.get(n))
        server = cluster.ServerSpec(bay_count=args.bays, nic_bytes_per_s=args.nic_gbps * 1e9 / 8,
                                    cost_usd=args.server_cost, power_w=args.server_power)
        question = cluster_search.ClusterQuestion(
            usable_bytes=args.usable, service_life_years=args.service_life_years, max_loss_probability=args.max_loss,
            server=server, max_server_count=args.max_servers,
            pools=tuple(p.strip() for p in args.pools.split(",") if p.strip()),
            host_annual_loss_rate=args.host_loss_rate, energy_usd_per_kwh=args.energy_usd_per_kwh)
        result = cluster_search.search_clusters(question, drives)
    except ArrayplanError as exc:
        engine_error(exc, "servers", _FLAGS)
        return EXIT_BAD_INPUT
    top = list(result.candidates[:args.top])
    if args.format == "json":
        print_json({**result.as_dict(), "candidates": top, "pareto": list(result.pareto)})
        return EXIT_OK if result.candidates else EXIT_UNMET
    print(f"evaluated {result.evaluated}, feasible {len(result.candidates)}, rejected {result.rejected}")
    header = f"{'drive':<28} {'pool':<24} {'servers':>7} {'drives':>6} {'usable TB':>9} {'cost USD':>10} {'P(loss)':>9}  binding"
    for title, rows in (("cheapest", top), ("Pareto front (cost, P(loss))", list(result.pareto))):
        print(title)
        print(header)
        for x in rows:
            print(f"{x.drive:<28} {x.pool:<24} {x.server_count:>7} {x.drives_per_server:>6} {x.usable_bytes / 1e12:>9.1f} "
                  f"{x.cost_usd:>10.0f} {x.loss_probability:>9.2e}  {x.binding}")
    return EXIT_OK if result.candidates else EXIT_UNMET


def _add_search(p: argparse.ArgumentParser) -> None:
    from ..api.planfile import int_arg, size_arg

    p.add_argument("--usable", type=size_arg, required=True, metavar="SIZE", help="user data the cluster must hold (100TB)")
    p.add_argument("--bays", type=int_arg, default=12, help="drive bays per server (default 12)")
    p.add_argument("--server-cost", type=float, default=0.0, help="price of one server without drives, USD (default 0)")
    p.add_argument("--server-power", type=float, default=0.0, help="power of one server without drives, W (default 0)")
    p.add_argument("--nic-gbps", type=float, default=25.0, help="NIC line rate per server, Gbit/s (default 25)")
    p.add_argument("--pools", default="rep:3,ec:4+2,ec:8+3,minio", help="comma list of rep:R, ec:K+M, minio")
    p.add_argument("--drives", default="", help="comma list of catalog drive names (default: the whole catalog)")
    p.add_argument("--max-servers", type=int_arg, default=32, help="largest server count tried (default 32)")
    p.add_argument("--max-loss", type=float, default=1e-6, help="largest P(data loss) over the service life (default 1e-6)")
    p.add_argument("--service-life-years", type=float, default=5.0, help="service life in years (default 5)")
    p.add_argument("--host-loss-rate", type=float, default=0.01, help="whole-host losses per host-year (default 0.01)")
    p.add_argument("--energy-usd-per-kwh", type=float, default=0.0, help="energy price for the cost of ownership (default 0)")
    p.add_argument("--top", type=int_arg, default=10, help="candidates shown (default 10)")
    add_format_flag(p)
    p.set_defaults(func=_search_handler)
