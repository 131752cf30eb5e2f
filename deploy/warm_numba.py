"""Warm the numba cache at image build time (NUMBA_CACHE_DIR), through the public API only.

Starts the real server in-process (in-process executor, throw-away run store), runs every example
plan file and simulates a few arrays (RAID 10, RAID 6, erasure coding, degraded), so the kernels a
pod runs first are compiled into the cache. Any failed call fails the build (exit 1) rather than
ship a cold image; the count of cached kernels is printed (the engine decides which paths are
numba-compiled, so the count follows the engine).
    python deploy/warm_numba.py EXAMPLES_DIR
"""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path


def main(examples: Path) -> int:
    import grpc
    from google.protobuf import duration_pb2

    from arrayplan.v1 import planner_pb2 as pb
    from arrayplan.v1 import planner_pb2_grpc as pb_grpc
    from arrayplan_services.api.planfile import load_plan_file
    from arrayplan_services.server.app import build_server

    cache = Path(os.environ.get("NUMBA_CACHE_DIR", ""))
    if not cache.name:
        print("NUMBA_CACHE_DIR is not set", file=sys.stderr)
        return 1
    with tempfile.TemporaryDirectory() as tmp:
        server = build_server(port=0, data_dir=Path(tmp), executor_kind="local")
        try:
            with grpc.insecure_channel(f"127.0.0.1:{server.port}") as channel:
                stub = pb_grpc.PlannerServiceStub(channel)
                for path in sorted(examples.glob("*.yaml")):
                    spec, _ = load_plan_file(path)
                    plan = stub.CreatePlan(pb.CreatePlanRequest(plan=pb.Plan(spec=spec)), timeout=60)
                    final = list(stub.WatchPlan(pb.WatchPlanRequest(name=plan.name), timeout=1800))[-1].plan
                    print(f"warm: {path.name}: {pb.Plan.State.Name(final.state)}")
                    if final.state != pb.Plan.STATE_SUCCEEDED:
                        print(f"warm: {path.name} did not succeed: {final.error_reason} {final.error_message}", file=sys.stderr)
                        return 1
                workload = pb.Workload(read_fraction=0.7, io_size_mix=[pb.IoSizeShare(io_bytes=8192, weight=1)], queue_depth=32)
                drive = stub.ListDrives(pb.ListDrivesRequest(kind=pb.DRIVE_KIND_SSD), timeout=30).drives[0].name
                for layout, count, failed in (("raid10", 8, 0), ("raid6", 8, 0), ("raid6", 8, 1), ("ec:4+2", 12, 0)):
                    stub.SimulateArray(pb.SimulateArrayRequest(drive_model=drive, drive_count=count, layout=layout, workload=workload,
                                                               failed_drive_count=failed, duration=duration_pb2.Duration(seconds=1), seed=1),
                                       timeout=600)
                    print(f"warm: simulate {layout} x{count} failed={failed}")
        finally:
            server.stop(grace_s=1.0)
    entries = list(cache.rglob("*.nbi"))
    print(f"warm: {len(entries)} numba cache index files in {cache}")
    return 0


if __name__ == "__main__":
    sys.exit(main(Path(sys.argv[1] if len(sys.argv) > 1 else "examples")))
