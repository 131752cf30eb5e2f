"""Cluster benchmark figures for ``make bench`` (docs/clusters.md).

* ``cluster_16x12_client_ops_per_s_per_core``: client operations per CPU second
  (``time.process_time``, best of three) of ``cluster_network.operation_latency_samples`` for a
  16-server x 12-drive cluster, EC 8+3, 1 MiB objects, 70 % reads, 1,000 ops/s, its shard
  latencies drawn from the array kernel's simulation of one 20 TB HDD at its share of the shard
  IOs; ``cluster_16x12_shard_ios_per_s_per_core`` the shard paths behind them (8 per read, 11 per
  write). Beside them ``cluster_kernel_one_drive_ios_per_s_per_core``: the single-box kernel on
  that drive, for comparison.
* ``cluster_16x12_read_p99_s``: the read p99 those samples give, so a speed-up that changes the
  answer shows up.
* ``cluster_16x12_event_client_ops_per_s_per_core``: the same cluster and workload (70/30 mix) as
  an event simulation of its IO stream (``cluster_sim.simulate_cluster_ops``: per-host NIC TX/RX
  and CPU queues, 300,000 operations), client operations per CPU second (best of three);
  ``cluster_16x12_event_shard_ios_per_s_per_core`` the shard IOs behind them (8 per read, 11 per
  write), ``cluster_16x12_event_read_p99_s`` its read p99.
* ``cluster_catalog_search_s``: CPU seconds of ``cluster_search.search_clusters`` over the whole
  built-in catalog x 4 pools (rep:3, ec:4+2, ec:8+3, minio) x 1-12 drives per server x 1-32
  servers for 100 TB (aim: <= 30 s on 2 cores), with ``cluster_catalog_search_evaluated``.
* ``cluster_plan_catalog_s``: CPU seconds of a plan's cluster stage (``cluster_plan.evaluate_clusters``)
  for examples/object-store-minio.yaml over the whole catalog: the search and the kernel checks of
  the candidates it reports (``cluster_plan_catalog_checked``), kernels already loaded.
* ``cluster_copysets_ramcloud_random_loss_probability`` (the paper: 99.99 %) and
  ``cluster_copysets_facebook_copyset_loss_probability`` (the paper: 0.78 %): Cidon et al.'s
  figures as the model reproduces them.
"""

from __future__ import annotations

import time

import numpy as np

from arrayplan_engine import array as arr
from arrayplan_engine import cluster, cluster_durability, cluster_network, cluster_plan, cluster_search, cluster_sim, simulation
from arrayplan_engine.catalog import builtin_catalog
from arrayplan_engine.layout import make_layout
from arrayplan_engine.units import TB, MiB
from arrayplan_engine.workload import Workload


def run() -> dict[str, object]:
    out: dict[str, object] = {}
    catalog = builtin_catalog()
    topo = cluster.ClusterTopology(server_count=16, drives_per_server=12)
    scheme = cluster.Scheme.ec(8, 3)
    w = cluster_network.ClusterWorkload(iops=1000.0, read_fraction=0.7, io_bytes=1 * MiB)
    reads, writes = cluster_network.shard_iops_per_drive(topo, scheme, w)
    wl = Workload(read_fraction=reads / (reads + writes), io_size_mix=((MiB // 8, 1.0),), queue_depth=32,
                  target_iops=reads + writes)
    spec = simulation.array_spec(catalog.get("wd-ultrastar-hc560-20tb"), make_layout("raid0", 1), 1, wl,
                                 fill_fraction=0.7, duration_s=300.0, seed=5)
    arr.simulate(spec)  # compile or load the kernel
    best = float("inf")
    for _ in range(3):
        t0 = time.process_time()
        result = arr.simulate(spec)
        best = min(best, time.process_time() - t0)
    ios = int(result.latency_histograms[0].sum())
    out["cluster_kernel_one_drive_ios_per_s_per_core"] = ios / best if best > 0 else None
    rng = np.random.default_rng(1)
    dr = cluster_network.drive_latency_samples(result, kind="read", samples=100_000, rng=rng)
    dw = cluster_network.drive_latency_samples(result, kind="write", samples=100_000, rng=rng)
    n = 500_000
    best = float("inf")
    lat = np.empty(0)
    for _ in range(3):
        t0 = time.process_time()
        lat = cluster_network.operation_latency_samples(topo, scheme, w, drive_read_s=dr, drive_write_s=dw, samples=n,
                                                        rng=rng, kind="read")
        best = min(best, time.process_time() - t0)
    out["cluster_16x12_client_ops_per_s_per_core"] = n / best
    out["cluster_16x12_shard_ios_per_s_per_core"] = n * 8 / best
    out["cluster_16x12_read_p99_s"] = float(np.quantile(lat, 0.99))
    ev_ops = 300_000
    kw = dict(iops=w.iops, read_fraction=w.read_fraction, io_bytes=w.io_bytes, drive_read_s=dr, drive_write_s=dw,
              ops=ev_ops, seed=3)
    sim = cluster_sim.simulate_cluster_ops(topo, scheme, **kw)  # type: ignore[arg-type]  # compile or load
    best = float("inf")
    for _ in range(3):
        t0 = time.process_time()
        sim = cluster_sim.simulate_cluster_ops(topo, scheme, **kw)  # type: ignore[arg-type]
        best = min(best, time.process_time() - t0)
    out["cluster_16x12_event_client_ops_per_s_per_core"] = ev_ops / best
    out["cluster_16x12_event_shard_ios_per_s_per_core"] = ev_ops * (0.7 * 8 + 0.3 * 11) / best
    out["cluster_16x12_event_read_p99_s"] = float(np.quantile(sim.read_latency_s, 0.99))
    drives = [catalog.get(name) for name in catalog.names()]
    question = cluster_search.ClusterQuestion(usable_bytes=100 * TB, max_server_count=32,
                                              server=cluster.ServerSpec(bay_count=12, cost_usd=6000.0, power_w=200.0),
                                              pools=("rep:3", "ec:4+2", "ec:8+3", "minio"))
    t0 = time.process_time()
    found = cluster_search.search_clusters(question, drives)
    out["cluster_catalog_search_s"] = time.process_time() - t0
    out["cluster_catalog_search_evaluated"] = found.evaluated
    # The object-store example question as a plan's cluster stage over the whole catalog (drive
    # models unset): the search, then each checked candidate's kernel runs and latency samples.
    from pathlib import Path

    from ..api.convert import plan_request_from_proto
    from ..api.planfile import load_plan_file

    example = Path(__file__).resolve().parents[3] / "examples" / "object-store-minio.yaml"
    plan_spec, _ = load_plan_file(example)
    plan_spec.candidate_space.ClearField("drive_models")
    req = plan_request_from_proto(plan_spec, "plan.spec", catalog)
    cluster_plan.evaluate_clusters(req, catalog, req.cluster)  # kernels loaded once
    t0 = time.process_time()
    planned = cluster_plan.evaluate_clusters(req, catalog, req.cluster)
    out["cluster_plan_catalog_s"] = time.process_time() - t0
    out["cluster_plan_catalog_checked"] = len(planned.recommendations)
    p = cluster_durability.set_loss_probability(node_count=5000, failed_count=50, set_size=3, tolerated=2)
    random_sets = cluster_durability.random_replication_set_count(node_count=5000, chunk_count=5000 * 8000 / 3, replicas=3)
    copyset_sets = cluster_durability.copyset_replication_set_count(node_count=5000, scatter_width=10, replicas=3)
    out["cluster_copysets_ramcloud_random_loss_probability"] = -np.expm1(random_sets * np.log1p(-p))
    out["cluster_copysets_facebook_copyset_loss_probability"] = -np.expm1(copyset_sets * np.log1p(-p))
    return out
