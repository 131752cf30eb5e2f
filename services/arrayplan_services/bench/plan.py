"""End-to-end planning speed on the embedded default: PlanRunner + local Ray + SQLite store."""

from __future__ import annotations

import tempfile
import time
from pathlib import Path
from typing import Any

from arrayplan.v1 import planner_pb2 as pb

from .. import telemetry
from ..fanout import RayExecutor
from ..plan.planner import PlanRunner
from ..store import RunStore

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
)
WARM = pb.PlanSpec()
WARM.CopyFrom(SPEC)
WARM.candidate_space.max_drive_count = 4


def _run_once(runner: PlanRunner, spec: pb.PlanSpec = SPEC) -> tuple[float, int]:
    start = time.perf_counter()
    plan = runner.create(pb.Plan(spec=spec))
    for event in runner.watch(plan.name):
        if event.HasField("plan"):
            assert event.plan.state == pb.Plan.STATE_SUCCEEDED, event.plan.error_message
            return time.perf_counter() - start, event.plan.progress.candidates_evaluated
    raise RuntimeError("watch ended without a plan")


def run_with_cpus(num_cpus: int) -> dict[str, float]:
    import ray

    with tempfile.TemporaryDirectory() as tmp:
        store = RunStore(Path(tmp) / "runs.sqlite3")
        telemetry.configure_server(store)
        executor = RayExecutor(num_cpus=num_cpus)
        try:
            runner = PlanRunner(store, executor)
            _run_once(runner, WARM)  # warm workers, imports and numba caches
            wall, evaluated = _run_once(runner)
        finally:
            ray.shutdown()
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
        tops: Counter[tuple[str, str, int, int]] = Counter()
        for seed in STABILITY_SEEDS:
            recs = recommend.plan(replace(req, seed=seed)).recommendations
            c = recs[0].evaluation.candidate if recs else None
            tops[(c.drive_model, c.layout, c.group_width, c.drive_count) if c else ("", "", 0, 0)] += 1
        out[name] = tops.most_common(1)[0][1] / len(STABILITY_SEEDS)
    return out


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
    }
