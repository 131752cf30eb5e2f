"""The array kernel against its reference: the same kernel's Python, run without the JIT.

``array._event_loop`` and the stages it inlines are plain Python that numba compiles. With
``NUMBA_DISABLE_JIT=1`` the interpreter runs that Python instead: integers are Python's and numpy's
scalars, no loop is vectorised, no branch is turned into a select, no stage is inlined, the event
queue, the cleaning rows and the NAND dies are the same arrays read one element at a time. A
compiled run must give the same answer bit for bit: every counter, every histogram bucket, every
per-second series, the cleaning drives' pages. What this catches is what the speed work risks:
an optimisation whose compiled meaning differs from the code as written (an unsigned index that
wraps, a float folded into a different order, a select that evaluates both sides, a cast that
truncates), and a kernel that depends on uninitialised memory.

The specs are small (tens of milliseconds of simulated time after a short warm-up, a few thousand
host IOs: the interpreter runs a host IO in ~1 ms) and cover each layout family (RAID 0, RAID 1,
RAID 10, RAID 5, RAID 6, k+m), SSDs with and without cleaning and NAND operations (read-only
arrays and full write-heavy ones), a QLC drive's SLC cache, a multi-controller drive, a
mechanical disk with its reorder window, a degraded array rebuilding, a fail-slow member,
coordinated reads, open and closed loop, random and sequential IO. The cluster kernel
(``cluster_sim._cluster_kernel``: per-host NIC and CPU queues) is held to the same rule on a
replicated and an EC pool with a fail-slow host. The reference runs in a child
process (numba reads ``NUMBA_DISABLE_JIT`` once, at import), which writes its results to a pickle;
this module is also that child's script.
"""

from __future__ import annotations

import os
import pickle
import subprocess
import sys
from dataclasses import fields, replace
from pathlib import Path

import numpy as np
import pytest

from arrayplan_engine import array as arr
from arrayplan_engine import fail_slow, simulation
from arrayplan_engine.catalog import Drive, builtin_catalog, drive_from_mapping
from arrayplan_engine.cluster import ClusterTopology, Scheme, ServerSpec
from arrayplan_engine.cluster_sim import ClusterSimResult, simulate_cluster_ops
from arrayplan_engine.layout import make_layout
from arrayplan_engine.workload import Workload

KiB = 1024


# A QLC drive with an SLC write cache (no catalog drive has one): the Samsung 870 QVO 4TB of
# tests/engine/test_qlc_cache.py, its figures from kitguru's review cited there.
QVO = drive_from_mapping(dict(
    name="qvo-4tb", kind="ssd", interface="sata-6g", capacity_bytes=4_000_000_000_000, raw_nand_bytes=4096 * 2**30,
    nand_type="qlc", gc_policy="eager", random_read_iops=98_000.0, random_write_iops=88_000.0, seq_read_bytes_per_s=560e6,
    seq_write_bytes_per_s=160e6, endurance_bytes_written=1_440_000_000_000_000, slc_cache_bytes=6_000_000_000,
    slc_write_bytes_per_s=530e6))


def _spec(drive: str | Drive, layout: str, width: int | None, count: int, *, read: float, qd: int = 4, iops: float = 0.0,
          io_bytes: int = 4 * KiB, random: float = 1.0, fill: float = 1.0, seconds: float = 0.03, warmup: float = 0.02,
          failed: int = 0, rebuild: float = 0.0, reorder: int = 1) -> arr.ArraySpec:
    wl = Workload(read_fraction=read, io_size_mix=((io_bytes, 1.0),), queue_depth=qd, target_iops=iops,
                  random_fraction=random)
    return simulation.array_spec(builtin_catalog().get(drive) if isinstance(drive, str) else drive, make_layout(layout, width), count, wl, fill_fraction=fill,
                                 duration_s=seconds, warmup_s=warmup, seed=7, failed_drives=failed,
                                 rebuild_rate_bytes_per_s=rebuild, reorder_window=reorder)


def specs() -> dict[str, arr.ArraySpec]:
    """Name -> spec: the cases both paths run (the child process builds the same ones)."""
    s3500, s3700, p5500 = "intel-dc-s3500-480gb", "intel-dc-s3700-200gb", "intel-d7-p5500-7680gb"
    raid5 = _spec(s3500, "raid5", 4, 4, read=0.7)
    return {
        # no cleaning, no NAND waits: reads only, on a drive at a tenth full
        "raid0 reads, MLC": _spec(s3700, "raid0", 2, 2, read=1.0, qd=2, fill=0.1),
        # cleaning and NAND programs/erases: a full drive at 30 % writes
        "raid10 70/30 full, MLC": _spec(s3500, "raid10", 4, 4, read=0.7),
        "raid1 writes, MLC": _spec(s3700, "raid1", 2, 2, read=0.0, qd=2),
        "raid5 70/30 open loop": _spec(s3500, "raid5", 4, 4, read=0.7, iops=20_000),
        "raid6 50/50, QLC with its SLC cache": _spec(QVO, "raid6", 6, 6, read=0.5, seconds=0.06),
        "ec:4+2 degraded and rebuilding, TLC": _spec(p5500, "ec:4+2", None, 6, read=0.7, failed=1, rebuild=200e6,
                                                    seconds=0.02),
        "raid5 sequential 128 KiB writes": _spec(s3500, "raid5", 4, 4, read=0.0, io_bytes=128 * KiB, random=0.0, qd=2,
                                                  seconds=0.15),
        "raid10 disks, reorder window": _spec("hdd-15k-sas-300gb", "raid10", 4, 4, read=0.7, qd=8, seconds=0.5,
                                              warmup=0.05, reorder=4),
        "raid0 multi-controller drive": _spec("intel-ssd-910-800gb", "raid0", 2, 2, read=0.7, qd=8),
        "raid5 with a 4x slow member": fail_slow.with_slow_members(raid5, {1: 4.0}),
        "raid5 coordinated reads": replace(raid5, coordinated_reads=True),
    }


def _run_all() -> dict[str, arr.ArrayResult]:
    return {name: arr.simulate(spec) for name, spec in specs().items()}


def cluster_cases() -> dict[str, dict[str, object]]:
    """Name -> ``simulate_cluster_ops`` arguments: 16 hosts x 12 drives, drive latencies drawn
    from a fixed lognormal sample, a 70/30 mix at about half the NICs' capacity."""
    drive = np.random.default_rng(3).lognormal(np.log(4e-3), 0.5, 64)
    topo = ClusterTopology(server_count=16, drives_per_server=12, server=ServerSpec(nic_bytes_per_s=1.25e9))
    base = dict(topology=topo, iops=1_500.0, read_fraction=0.7, io_bytes=4 * 2**20, drive_read_s=drive,
                drive_write_s=drive * 1.5, ops=3_000, seed=7)
    return {
        "cluster rep:3": dict(base, scheme=Scheme.replicated(3)),
        "cluster ec:8+3, a 3x slow host, a 2 GB/s encoder": dict(base, scheme=Scheme.ec(8, 3), slow_host_count=1,
                                                                 slow_factor=3.0, ec_encode_bytes_per_s=2e9),
    }


def _run_clusters() -> dict[str, ClusterSimResult]:
    return {name: simulate_cluster_ops(**kw) for name, kw in cluster_cases().items()}  # type: ignore[arg-type]


@pytest.fixture(scope="module")
def references(tmp_path_factory: pytest.TempPathFactory) -> tuple[dict[str, arr.ArrayResult], dict[str, ClusterSimResult]]:
    out = tmp_path_factory.mktemp("reference") / "results.pkl"
    env = {**os.environ, "NUMBA_DISABLE_JIT": "1"}
    # the kernel's uint64 hashes and xoshiro wrap by design; numpy scalars warn where LLVM wraps silently
    proc = subprocess.run([sys.executable, "-W", "ignore::RuntimeWarning", __file__, str(out)], env=env,
                          capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, proc.stderr[-4000:]
    with out.open("rb") as f:
        results: tuple[dict[str, arr.ArrayResult], dict[str, ClusterSimResult]] = pickle.load(f)
    return results


@pytest.fixture(scope="module")
def reference(references: tuple[dict[str, arr.ArrayResult], dict[str, ClusterSimResult]]) -> dict[str, arr.ArrayResult]:
    return references[0]


def _differences(a: arr.ArrayResult | ClusterSimResult, b: arr.ArrayResult | ClusterSimResult) -> list[str]:
    diffs = []
    for f in fields(type(a)):
        x, y = getattr(a, f.name), getattr(b, f.name)
        if isinstance(x, np.ndarray):
            if x.shape != y.shape or not np.array_equal(x, y, equal_nan=True):
                where = np.argwhere(~((x == y) | (np.isnan(x) & np.isnan(y)))) if x.shape == y.shape else "shape"
                diffs.append(f"{f.name}: differs at {where[:5] if isinstance(where, np.ndarray) else where}")
        elif x != y and not (isinstance(x, float) and np.isnan(x) and np.isnan(y)):
            diffs.append(f"{f.name}: {x!r} != {y!r}")
    return diffs


@pytest.mark.slow
@pytest.mark.parametrize("name", list(specs()))
def test_compiled_kernel_equals_its_python(name: str, reference: dict[str, arr.ArrayResult]) -> None:
    compiled = arr.simulate(specs()[name])
    ref = reference[name]
    assert ref.host_ios > 200, f"{name}: the reference ran only {ref.host_ios} host IOs"
    assert _differences(compiled, ref) == [], name


@pytest.mark.slow
@pytest.mark.parametrize("name", list(cluster_cases()))
def test_compiled_cluster_kernel_equals_its_python(
        name: str, references: tuple[dict[str, arr.ArrayResult], dict[str, ClusterSimResult]]) -> None:
    compiled = simulate_cluster_ops(**cluster_cases()[name])  # type: ignore[arg-type]
    ref = references[1][name]
    assert ref.completed > 2_000 and ref.read_latency_s.size > 1_000 and ref.write_latency_s.size > 500, name
    assert _differences(compiled, ref) == [], name


def test_the_specs_exercise_what_they_name() -> None:
    """The cases are what their names say, so a kernel path cannot drop out of the comparison
    unseen: every layout family, cleaning and NAND dies where the drive is full, an SLC cache, a
    mechanical disk, a rebuild, a slow member, coordinated reads, an offered rate."""
    s = specs()
    assert len({sp.layout.kind for sp in s.values()}) == 6
    full, reads = s["raid10 70/30 full, MLC"].service_models[0], s["raid0 reads, MLC"].service_models[0]
    assert full.cleaning and full.nand_dies > 0 and reads.nand_dies > 0
    assert s["raid6 50/50, QLC with its SLC cache"].service_models[0].slc_cache_pages > 0
    assert s["raid10 disks, reorder window"].service_models[0].mechanical
    assert s["ec:4+2 degraded and rebuilding, TLC"].failed_drives == 1
    slow = s["raid5 with a 4x slow member"].service_models
    assert slow[1].read_fixed_s == pytest.approx(4 * slow[0].read_fixed_s)
    assert s["raid5 coordinated reads"].coordinated_reads
    assert s["raid5 70/30 open loop"].workload.target_iops == 20_000
    c = cluster_cases()
    assert {str(kw["scheme"].kind) for kw in c.values()} == {"replicated", "ec"}  # type: ignore[attr-defined]
    assert any(kw.get("slow_host_count") == 1 and kw.get("ec_encode_bytes_per_s") for kw in c.values())


def test_cleaning_and_rebuild_happen_in_the_compiled_runs() -> None:
    """The full write-heavy arrays relocate pages (write amplification above 1) inside even these
    short runs, the read-only one writes nothing, and the degraded one rebuilds: the comparison
    above covers the cleaning and rebuild paths, not only their set-up."""
    s = specs()
    assert arr.simulate(s["raid10 70/30 full, MLC"]).write_amplification > 1.0
    assert arr.simulate(s["raid0 reads, MLC"]).drive_host_pages.sum() == 0
    assert arr.simulate(s["ec:4+2 degraded and rebuilding, TLC"]).rebuild_chunks_done > 0


if __name__ == "__main__":
    assert os.environ.get("NUMBA_DISABLE_JIT") == "1", "the reference path runs with NUMBA_DISABLE_JIT=1"
    with Path(sys.argv[1]).open("wb") as fh:
        pickle.dump((_run_all(), _run_clusters()), fh)
