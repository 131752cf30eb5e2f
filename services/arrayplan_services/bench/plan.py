"""End-to-end planning speed on the embedded default: PlanRunner + local Ray + SQLite store.

* ``plan_candidates_per_s``: a fixed 1,000-candidate plan, every candidate simulated
  (``exhaustive``), on 1 and 2 Ray CPUs.
* ``plan_catalog_s``: the issue's three questions (an OLTP database of 25K IOPS and 8 TB, a 100 TB
  archive of 1 MiB IOs, a 200K-IOPS 50 TB database) over the default candidate space (every
  catalog drive, the default layouts and stripe units), answered by the search; target <= 10 s
  each on 2 cores.
* ``plan_catalog_s.oltp_growing``: a question with growing years and a percentile target (60K
  IOPS and 40 TB growing 20 %/year for 5 years, p99.9 <= 5 ms), the kind the three above miss.
  Its time goes to the search's 31 candidates (10 establish the top ten, 20 more are the Pareto
  front's, 18 array simulations each) and the winner's hard-disk comparison (the nearline 8 TB
  disk: no number of them holds 5 ms, so the count that carries the IOPS without the target is
  sized, 74 array simulations of ~3,000-disk arrays, ~5 CPU seconds). The comparison is a stage
  of its own that starts once the top recommendations are established, one Ray task beside the
  Pareto phase's batches (before: after the search, serially, 109 simulations). Measured on the
  shared 2-core machine (load 2-5 from other jobs), whole process, median of 3, paired with the
  code before: through a running server (``arrayplan plan --server``) 7.6 s against 12.3 s
  (ratio 0.61); ``arrayplan plan --local`` 17.9 s against 20.4 s (0.88), of which ~4 s start
  Ray, ~1 s warm its two workers and ~1.5 s stop it. The answer is the same before and after
  (the JSON output byte for byte but for names and times). Its shortlist (``AGREEMENT_DRIVES``)
  agrees with ``--exhaustive`` on all ten recommendations.
* ``plan_growing_end_to_end_s``: the same growing-years question end to end, the median of
  ``END_TO_END_RUNS``: ``service`` through a running ``arrayplan serve`` (its local Ray warm; the
  client's CreatePlan to the terminal WatchPlan reply), ``local`` as ``arrayplan plan --local``
  (the whole process: Ray's start and stop included). The plan runs the engine's stage sequence:
  the winner's hard-disk sizing runs as a Ray task beside the search's Pareto phase.
* ``plan_10k_s``: a space of 10,556 candidates answered by the search (target <= 30 s).
* ``plan_agreement_shortlist``: the search's top recommendations equal ``--exhaustive``'s on the
  three questions, each over a stated shortlist of drives (``AGREEMENT_DRIVES``, in the JSON as
  ``plan_agreement_shortlist_drives``: the drives of the whole-catalog search's top ten and the
  near misses), every layout, stripe unit and count of the default space; ``plan_exhaustive_s``
  times the exhaustive runs, ``plan_simulated`` counts what each simulated. Not the whole
  catalog: its exhaustive runs simulate every kept candidate (1,353, 2,493 and 749), 364, 261
  and 356 CPU seconds in-process, over 10 minutes on the shared 2-core machine;
  ``tests/engine/test_search.py`` checks agreement on smaller spaces on every run.

Set ``ARRAYPLAN_BENCH_PLAN=fast`` to leave the exhaustive runs out.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from arrayplan.v1 import planner_pb2 as pb

from .. import telemetry
from ..fanout import RayExecutor
from ..plan.planner import PlanRunner
from ..store import RunStore
from .clients import start_server, stop_server

# Exactly 1,000 candidates, none pruned: 10 drives x RAID 0 of 1..100 drives, 1 GB needed.
DRIVES = ["intel-dc-s3500-80gb", "intel-dc-s3500-240gb", "intel-dc-s3500-480gb", "intel-dc-s3500-800gb",
          "intel-dc-s3700-200gb", "intel-dc-s3700-400gb", "intel-dc-s3700-800gb", "intel-ssd-320-300gb",
          "intel-ssd-710-200gb", "micron-p320h-700gb"]
SPEC = pb.PlanSpec(
    workload=pb.Workload(read_fraction=0.7, io_size_mix=[pb.IoSizeShare(io_bytes=8192, weight=1)], queue_depth=32),
    constraints=pb.Constraints(usable_capacity_bytes=1_000_000_000, latency_percentile=99.9),
    candidate_space=pb.CandidateSpace(drive_models=DRIVES, layouts=["raid0"], max_drive_count=100),
    service_life_years=1,
    seed=1,
    exhaustive=True,
)
WARM = pb.PlanSpec()
WARM.CopyFrom(SPEC)
WARM.candidate_space.max_drive_count = 4


KiB = 1024

# The three questions, over the default candidate space (every catalog drive).
QUESTIONS = {
    "oltp": pb.PlanSpec(
        workload=pb.Workload(read_fraction=0.7, random_fraction=1.0, io_size_mix=[pb.IoSizeShare(io_bytes=8 * KiB, weight=1)],
                             queue_depth=32, target_iops=25_000),
        constraints=pb.Constraints(usable_capacity_bytes=8_000_000_000_000, latency_percentile=99.9),
        seed=1),
    "archive": pb.PlanSpec(
        workload=pb.Workload(read_fraction=0.05, random_fraction=0.05, io_size_mix=[pb.IoSizeShare(io_bytes=1024 * KiB, weight=1)],
                             queue_depth=8, target_iops=300),
        constraints=pb.Constraints(usable_capacity_bytes=100_000_000_000_000),
        seed=1),
    "db200k": pb.PlanSpec(
        workload=pb.Workload(read_fraction=0.7, random_fraction=1.0, io_size_mix=[pb.IoSizeShare(io_bytes=8 * KiB, weight=1)],
                             queue_depth=64, target_iops=200_000),
        constraints=pb.Constraints(usable_capacity_bytes=50_000_000_000_000, latency_percentile=99.0),
        seed=1),
}
# A question with growing years and a percentile target (the three above have neither): an OLTP
# database of 60K IOPS and 40 TB, both growing 20 % a year for 5 years, p99.9 <= 5 ms. Its parity
# candidates run fully mapped (discards auto: docs/array-model.md "The array as built").
QUESTIONS["oltp_growing"] = pb.PlanSpec(
    workload=pb.Workload(read_fraction=0.7, random_fraction=1.0, io_size_mix=[pb.IoSizeShare(io_bytes=8 * KiB, weight=1)],
                         queue_depth=64, target_iops=60_000, growth_fraction_per_year=0.2),
    constraints=pb.Constraints(usable_capacity_bytes=40_000_000_000_000, latency_percentile=99.9),
    service_life_years=5, seed=1)
QUESTIONS["oltp_growing"].constraints.latency_target.FromMilliseconds(5)
QUESTIONS["oltp"].constraints.latency_target.FromMilliseconds(5)
QUESTIONS["db200k"].constraints.latency_target.FromMilliseconds(2)

# plan_agreement's shortlists: per question, the drives of the whole-catalog search's top ten
# (seed 1) and a drive that nearly ranks, so the exhaustive run holds the contest that decides
# the answer at about a tenth of the whole catalog's cost.
AGREEMENT_DRIVES = {
    "oltp": ("intel-d5-p4320-7680gb", "intel-d7-p5500-7680gb", "intel-d7-p5600-6400gb", "micron-7400-pro-7680gb",
             "intel-dc-s3500-800gb"),
    "archive": ("hdd-7k2-nearline-8tb", "wd-ultrastar-hc570-22tb", "kioxia-cm6-r-30720gb"),
    "db200k": ("intel-d7-p5500-7680gb", "kioxia-cd6-r-15360gb", "micron-7400-pro-7680gb", "intel-d7-p5600-6400gb"),
    "oltp_growing": ("micron-7400-pro-7680gb", "intel-d7-p5500-7680gb", "intel-d5-p4320-7680gb", "intel-d7-p5600-6400gb"),
}


def agreement_spec(name: str, *, exhaustive: bool) -> pb.PlanSpec:
    """The question ``name`` over its ``AGREEMENT_DRIVES`` shortlist."""
    spec = pb.PlanSpec()
    spec.CopyFrom(QUESTIONS[name])
    spec.candidate_space.drive_models[:] = list(AGREEMENT_DRIVES[name])
    spec.exhaustive = exhaustive
    return spec

# 10,556 candidates: the OLTP question over every drive, the default layouts, up to 60
# drives, and two short-stroke fractions for the SSDs.
SPACE_10K = pb.PlanSpec()
SPACE_10K.CopyFrom(QUESTIONS["oltp"])
SPACE_10K.candidate_space.CopyFrom(pb.CandidateSpace(max_drive_count=60, over_provisioning_fractions=[0.0, 0.1]))


def _run_plan(runner: PlanRunner, spec: pb.PlanSpec) -> tuple[float, pb.Plan]:
    start = time.perf_counter()
    plan = runner.create(pb.Plan(spec=spec))
    for event in runner.reads.watch(plan.name):
        if event.HasField("plan"):
            assert event.plan.state == pb.Plan.STATE_SUCCEEDED, event.plan.error_message
            return time.perf_counter() - start, event.plan
    raise RuntimeError("watch ended without a plan")


def _run_once(runner: PlanRunner, spec: pb.PlanSpec = SPEC) -> tuple[float, int]:
    wall, plan = _run_plan(runner, spec)
    return wall, plan.progress.candidates_evaluated


def _top(plan: pb.Plan) -> list[tuple[str, str, int, int, float, int]]:
    return [(r.drive_model, r.layout, r.group_width, r.drive_count, r.over_provisioning_fraction, r.stripe_unit_bytes)
            for r in plan.result.recommendations]


def run_catalog(num_cpus: int = 2, *, exhaustive: bool = True) -> dict[str, object]:
    """The three questions by the search (and, with ``exhaustive``, by --exhaustive), and the
    10,000-candidate space, on ``num_cpus`` Ray CPUs."""
    times: dict[str, float] = {}
    simulated: dict[str, object] = {}
    full_s: dict[str, float] = {}
    agree: dict[str, bool] = {}
    with _warm_runner(num_cpus) as runner:
        for name, spec in QUESTIONS.items():
            wall, fast = _run_plan(runner, spec)
            times[name] = round(wall, 2)
            simulated[name] = {"fast": fast.progress.candidates_evaluated,
                               "kept": fast.progress.candidates_total - fast.progress.candidates_pruned}
            if exhaustive:
                _, short = _run_plan(runner, agreement_spec(name, exhaustive=False))
                wall_full, full = _run_plan(runner, agreement_spec(name, exhaustive=True))
                full_s[name] = round(wall_full, 1)
                simulated[name]["shortlist"] = short.progress.candidates_evaluated  # type: ignore[index]
                simulated[name]["shortlist_exhaustive"] = full.progress.candidates_evaluated  # type: ignore[index]
                agree[name] = _top(short) == _top(full)
        wall_10k, big = _run_plan(runner, SPACE_10K)
    out: dict[str, object] = {"plan_catalog_s": times, "plan_simulated": simulated, "plan_10k_s": round(wall_10k, 2),
                              "plan_10k_candidates": big.progress.candidates_total, "plan_10k_simulated": big.progress.candidates_evaluated}
    if exhaustive:
        out["plan_exhaustive_s"] = full_s
        out["plan_agreement_shortlist"] = agree
        out["plan_agreement_shortlist_drives"] = {k: list(v) for k, v in AGREEMENT_DRIVES.items()}
    return out


@contextlib.contextmanager
def _warm_runner(num_cpus: int) -> Iterator[PlanRunner]:
    """A PlanRunner on a fresh SQLite store and a local Ray of ``num_cpus``, its workers, imports
    and numba caches warmed by one small plan; Ray is shut down on leaving."""
    import ray

    with tempfile.TemporaryDirectory() as tmp:
        store = RunStore(Path(tmp) / "runs.sqlite3")
        telemetry.configure_server(store)
        executor = RayExecutor(num_cpus=num_cpus)
        try:
            runner = PlanRunner(store, executor)
            _run_once(runner, WARM)
            yield runner
        finally:
            ray.shutdown()


def run_with_cpus(num_cpus: int) -> dict[str, float]:
    with _warm_runner(num_cpus) as runner:
        wall, evaluated = _run_once(runner)
    assert evaluated == 1000, evaluated
    return {"candidates_per_s": evaluated / wall, "wall_s": wall}


# plan_seed_stability: small questions planned in-process with seeds 0-4; the figure is the share
# of the 5 seeds whose top recommendation is the most common one (1.0 = the same for every seed),
# the lowest over the questions.
STABILITY_SEEDS = (0, 1, 2, 3, 4)


def stability_questions() -> dict[str, Any]:
    from arrayplan_engine import plan_request
    from arrayplan_engine.units import TB, KiB, MiB
    from arrayplan_engine.workload import Workload

    oltp = Workload(read_fraction=0.7, target_iops=25_000, daily_write_bytes=1.5 * TB, io_size_mix=((8 * KiB, 1.0),),
                    growth_per_year=0.2)
    archive = Workload(read_fraction=0.05, random_fraction=0.05, io_size_mix=((1 * MiB, 1.0),), queue_depth=8, target_iops=300)
    return {
        "oltp": plan_request.PlanRequest(
            workload=oltp, service_life_years=2,
            constraints=plan_request.Constraints(usable_capacity_bytes=8 * TB, latency_percentile=99.9, latency_target_s=0.005),
            candidate_space=plan_request.CandidateSpace(drive_models=("intel-dc-s3500-800gb", "intel-dc-s3700-800gb"),
                                                        layouts=("raid10", "raid6"), group_widths=(8, 12), max_drive_count=40)),
        "archive": plan_request.PlanRequest(
            workload=archive, service_life_years=2,
            constraints=plan_request.Constraints(usable_capacity_bytes=100 * TB, latency_percentile=99.0),
            candidate_space=plan_request.CandidateSpace(drive_models=("hdd-7k2-nearline-8tb",), layouts=("raid5", "raid6"),
                                                        group_widths=(4, 6), max_drive_count=40)),
    }


def seed_stability() -> dict[str, float]:
    """Per question, the share of ``STABILITY_SEEDS`` giving its most common top recommendation."""
    from collections import Counter
    from dataclasses import replace

    from arrayplan_engine import recommend

    out: dict[str, float] = {}
    for name, req in stability_questions().items():
        tops: Counter[tuple[str, str, int, int, int]] = Counter()
        for seed in STABILITY_SEEDS:
            recs = recommend.plan(replace(req, seed=seed)).recommendations
            c = recs[0].evaluation.candidate if recs else None
            tops[(c.drive_model, c.layout, c.group_width, c.drive_count, c.stripe_unit_bytes) if c else ("", "", 0, 0, 0)] += 1
        out[name] = tops.most_common(1)[0][1] / len(STABILITY_SEEDS)
    return out


END_TO_END_RUNS = 3

GROWING_PLAN_YAML = """\
workload:
  read_fraction: 0.7
  random_fraction: 1.0
  io_size_mix: [{io_bytes: 8 KiB, weight: 1}]
  queue_depth: 64
  target_iops: 60000
  growth_fraction_per_year: 0.2
constraints:
  usable_capacity_bytes: 40 TB
  latency_percentile: 99.9
  latency_target: 5ms
service_life_years: 5
seed: 1
"""


def growing_end_to_end(runs: int = END_TO_END_RUNS) -> dict[str, object]:
    """The growing-years question end to end: through a running server, and as ``plan --local``."""
    import statistics
    import subprocess
    import sys

    import grpc

    from arrayplan.v1 import planner_pb2_grpc as pb_grpc

    service: list[float] = []
    local: list[float] = []
    tops: list[list[tuple[str, str, int, int, float, int]]] = []
    with tempfile.TemporaryDirectory() as tmp:
        data = Path(tmp) / "server-data"
        data.mkdir()
        proc, address = start_server(data, ("--num-cpus", "2"), timeout_s=180)
        try:
            with grpc.insecure_channel(address) as channel:
                stub = pb_grpc.PlannerServiceStub(channel)

                def one(spec: pb.PlanSpec) -> tuple[float, pb.Plan]:
                    start = time.perf_counter()
                    created = stub.CreatePlan(pb.CreatePlanRequest(plan=pb.Plan(spec=spec)), timeout=60)
                    final = list(stub.WatchPlan(pb.WatchPlanRequest(name=created.name), timeout=600))[-1].plan
                    assert final.state == pb.Plan.STATE_SUCCEEDED, final.error_message
                    return time.perf_counter() - start, final
                one(WARM)  # the workers' imports and kernels
                for _ in range(runs):
                    wall, plan = one(QUESTIONS["oltp_growing"])
                    service.append(wall)
                    tops.append(_top(plan))
        finally:
            stop_server(proc)
        plan_file = Path(tmp) / "growing.yaml"
        plan_file.write_text(GROWING_PLAN_YAML)
        for i in range(runs):
            start = time.perf_counter()
            done = subprocess.run([sys.executable, "-m", "arrayplan_services.cli.main", "plan", str(plan_file), "--local",
                                   "--num-cpus", "2", "--data-dir", str(Path(tmp) / f"local-{i}"), "--format", "json"],
                                  capture_output=True, text=True, timeout=600, env={**os.environ, "RAY_DISABLE_USAGE_STATS": "1"})
            local.append(time.perf_counter() - start)
            assert done.returncode == 0, done.stderr[-2000:]
    return {"service": round(statistics.median(service), 2), "local": round(statistics.median(local), 2),
            "runs": runs, "service_runs_s": [round(x, 2) for x in service], "local_runs_s": [round(x, 2) for x in local],
            "same_answer_every_run": all(t == tops[0] for t in tops)}


def run() -> dict[str, object]:
    one = run_with_cpus(1)
    two = run_with_cpus(2)
    stability = seed_stability()
    return {
        "plan_candidates_per_s": {"1": round(one["candidates_per_s"], 1), "2": round(two["candidates_per_s"], 1)},
        "plan_wall_s": round(two["wall_s"], 3),
        "plan_candidates": 1000,
        "plan_seed_stability": min(stability.values()),
        "plan_seed_stability_by_question": stability,
        **run_catalog(2, exhaustive=os.environ.get("ARRAYPLAN_BENCH_PLAN", "") != "fast"),
        "plan_growing_end_to_end_s": growing_end_to_end(),
    }
