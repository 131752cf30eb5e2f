"""End-to-end planning speed on the embedded default: PlanRunner + local Ray + SQLite store."""

from __future__ import annotations

import tempfile
import time
from pathlib import Path

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


def run() -> dict[str, object]:
    one = run_with_cpus(1)
    two = run_with_cpus(2)
    return {
        "plan_candidates_per_s": {"1": round(one["candidates_per_s"], 1), "2": round(two["candidates_per_s"], 1)},
        "plan_wall_s": round(two["wall_s"], 3),
        "plan_candidates": 1000,
    }
