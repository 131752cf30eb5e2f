"""A plan survives its server's kill -9: finished batches are checkpointed in the run store and the
restarted server evaluates only the candidates no batch finished, giving the undisturbed answer bit
for bit. Real `arrayplan serve` processes on 127.0.0.1 over real SQLite, with the in-process
executor and with local Ray (2 CPUs)."""

from __future__ import annotations

import signal
import sqlite3
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import grpc
import pytest

from arrayplan.v1 import planner_pb2 as pb
from arrayplan.v1 import planner_pb2_grpc as pb_grpc
from arrayplan_services.store import RunStore
from arrayplan_services.store import checkpoints as ckpt
from conftest import start_server

# 124 candidates x 5 simulated years: tens of seconds in one process, in 16 batches of 8. Every
# kept candidate is simulated (exhaustive: the search would stop after a few waves, too soon to
# kill the server mid-plan; tests/engine/test_search.py checks that the search replays its waves
# over checkpointed evaluations).
LONG = pb.PlanSpec(workload=pb.Workload(read_fraction=0.7, target_iops=10_000),
                   constraints=pb.Constraints(usable_capacity_bytes=1_000_000_000),
                   candidate_space=pb.CandidateSpace(drive_models=["intel-dc-s3500-480gb", "intel-dc-s3700-400gb"],
                                                     layouts=["raid0", "raid10", "raid5", "raid6"], max_drive_count=24),
                   exhaustive=True)
PLAN_ID = "crash-resumed"
EXECUTORS = {"local": ("--executor", "local"), "ray": ("--executor", "ray")}
WATCH_S = 900
FAST_RECONNECT = [("grpc.initial_reconnect_backoff_ms", 50), ("grpc.min_reconnect_backoff_ms", 50),
                  ("grpc.max_reconnect_backoff_ms", 50)]


def _finish(stub: pb_grpc.PlannerServiceStub, name: str, wait_for_ready: bool = False) -> tuple[pb.Plan, list[pb.PlanProgress]]:
    """Watch a plan to its end: the final plan and every progress event seen on the way."""
    events = list(stub.WatchPlan(pb.WatchPlanRequest(name=name), timeout=WATCH_S, wait_for_ready=wait_for_ready))
    final = events[-1].plan
    assert final.state == pb.Plan.STATE_SUCCEEDED, final.error_message
    return final, [e.progress for e in events if e.HasField("progress")]


def _checkpointed(store_path: Path) -> tuple[int, int]:
    """(batches, candidates) checkpointed for the plan, read from the store file a dead server left."""
    with sqlite3.connect(store_path) as db:
        row = db.execute("SELECT count(*), COALESCE(SUM(candidate_count), 0) FROM checkpoints WHERE run_id=?",
                         (PLAN_ID,)).fetchone()
    return int(row[0]), int(row[1])


@pytest.mark.parametrize("executor", list(EXECUTORS))
def test_killed_server_resumes_from_checkpoints_with_the_same_answer(tmp_path: Path, executor: str) -> None:
    extra = EXECUTORS[executor]
    # The undisturbed answer, from a fresh server and data dir.
    reference_server = start_server(tmp_path / "reference", extra=extra)
    try:
        with grpc.insecure_channel(reference_server.address) as ch:
            stub = pb_grpc.PlannerServiceStub(ch)
            stub.CreatePlan(pb.CreatePlanRequest(plan=pb.Plan(spec=LONG), plan_id=PLAN_ID), timeout=60)
            reference, _ = _finish(stub, f"plans/{PLAN_ID}")
    finally:
        reference_server.stop()
    to_evaluate = reference.progress.candidates_to_evaluate
    assert to_evaluate > 20

    # The same plan on another server, killed with SIGKILL once some but not all batches finished.
    data = tmp_path / "data"
    first = start_server(data, extra=extra)
    try:
        with grpc.insecure_channel(first.address) as ch:
            stub = pb_grpc.PlannerServiceStub(ch)
            stub.CreatePlan(pb.CreatePlanRequest(plan=pb.Plan(spec=LONG), plan_id=PLAN_ID), timeout=60)
            seen = 0
            for event in stub.WatchPlan(pb.WatchPlanRequest(name=f"plans/{PLAN_ID}"), timeout=WATCH_S):
                if event.HasField("plan"):
                    pytest.fail("the plan finished before the server could be killed mid-plan")
                seen = event.progress.candidates_evaluated
                if seen >= 4:
                    break
    finally:
        first.stop(signal.SIGKILL)
    store_path = data / "runs.sqlite3"
    with sqlite3.connect(store_path) as db:
        state, stored_progress = db.execute("SELECT state, progress_json FROM runs WHERE id=?", (PLAN_ID,)).fetchone()
    assert state == "RUNNING", "the plan must have been killed mid-run for this test to mean anything"
    batches_at_kill, checkpointed = _checkpointed(store_path)
    # A batch is checkpointed before its progress is published: what the watcher saw is stored.
    assert seen <= checkpointed < to_evaluate, (seen, checkpointed, to_evaluate)
    assert batches_at_kill >= 1

    # The watch is opened before the second server starts (wait_for_ready, reconnecting every
    # 50 ms): it reaches the server as soon as it listens, before the resumed run can finish, so
    # the stored progress is its first event whatever the host's speed (watched after start-up,
    # a run with one batch left could end first and leave nothing to check).
    address = f"127.0.0.1:{first.port}"
    with ThreadPoolExecutor(1) as pool, grpc.insecure_channel(address, options=FAST_RECONNECT) as ch:  # closed first: a failed start ends the watch
        stub = pb_grpc.PlannerServiceStub(ch)
        watching = pool.submit(_finish, stub, f"plans/{PLAN_ID}", True)
        second = start_server(data, port=first.port, extra=extra)
        try:
            resumed, progress = watching.result(WATCH_S)
            plan_trace = stub.GetPlanTrace(pb.GetPlanTraceRequest(name=f"plans/{PLAN_ID}"), timeout=60)
            log = second.log()
        finally:
            second.stop()

    # Bit for bit: the serialized result of the resumed run is the undisturbed run's.
    assert resumed.result.SerializeToString(deterministic=True) == reference.result.SerializeToString(deterministic=True)
    assert resumed.progress.candidates_evaluated == resumed.progress.candidates_to_evaluate == to_evaluate
    # Progress after the restart never went back below what was stored before the kill (not from 0).
    assert progress, "the restarted run published progress"
    assert min(p.candidates_evaluated for p in progress) >= min(seen, checkpointed) > 0
    # Only the candidates without a checkpoint were simulated again.
    assert f"resuming plan {PLAN_ID} interrupted by a server restart ({checkpointed} candidate(s)" in log
    assert f"{checkpointed} of {to_evaluate} candidates restored from checkpoints" in log
    plan_spans = [s for s in plan_trace.spans if s.name == "arrayplan.plan"]
    assert [s.attributes["arrayplan.candidates_from_checkpoints"] for s in plan_spans] == [checkpointed]
    # The restarted run's trace holds one span per candidate it simulated: the others only.
    simulated = [s for s in plan_trace.spans if s.name == "arrayplan.simulate_candidate"]
    assert len(simulated) == to_evaluate - checkpointed
    # A finished plan keeps no checkpoints.
    assert _checkpointed(store_path) == (0, 0)


def test_old_store_gains_the_checkpoints_table_and_keeps_its_plans(tmp_path: Path) -> None:
    """A schema-2 store (no checkpoints table) opens: the migration adds the table, plans stay."""
    path = tmp_path / "runs.sqlite3"
    with sqlite3.connect(path) as db:
        db.executescript("""
            CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
            INSERT INTO meta VALUES ('schema_version', '2');
            CREATE TABLE runs (seq INTEGER PRIMARY KEY AUTOINCREMENT, id TEXT NOT NULL UNIQUE, state TEXT NOT NULL,
                spec_json TEXT NOT NULL, progress_json TEXT NOT NULL DEFAULT '{}', result_json TEXT,
                trace_id TEXT NOT NULL DEFAULT '', error_message TEXT NOT NULL DEFAULT '',
                error_reason TEXT NOT NULL DEFAULT '', attempts INTEGER NOT NULL DEFAULT 0, create_time REAL NOT NULL,
                update_time REAL NOT NULL, end_time REAL, creator TEXT NOT NULL DEFAULT '');
            INSERT INTO runs (id, state, spec_json, result_json, create_time, update_time, end_time, creator)
                VALUES ('old-plan', 'SUCCEEDED', '{}', '{"summary": "kept"}', 1.0, 2.0, 2.0, 'alice');
        """)
    store = RunStore(path)
    row = store.get("old-plan")
    assert row is not None and row.result_json == '{"summary": "kept"}' and row.creator == "alice"
    with sqlite3.connect(path) as db:
        assert db.execute("SELECT value FROM meta WHERE key='schema_version'").fetchone()[0] == "3"
        assert db.execute("SELECT count(*) FROM checkpoints").fetchone()[0] == 0


def test_checkpoints_are_bounded_and_dropped_when_the_run_ends(tmp_path: Path) -> None:
    store = RunStore(tmp_path / "runs.sqlite3")
    store.create("bounded", "{}", "0" * 32)
    store.set_state("bounded", "RUNNING")
    assert store.add_checkpoint("bounded", first_index=0, candidate_count=2, fingerprint="f", payload=b"x" * 600, max_bytes=1000)
    # Past the run's bound nothing is written (the run goes on; a resume re-evaluates the rest).
    assert not store.add_checkpoint("bounded", first_index=2, candidate_count=2, fingerprint="f", payload=b"y" * 600,
                                    max_bytes=1000)
    assert store.checkpoint_summary("bounded") == (1, 2, 600)
    assert store.finish("bounded", "CANCELLED", error_message="test", error_reason="CANCELLED")
    assert store.checkpoints("bounded") == []
    # A terminal run takes no checkpoints (a batch that finishes after a cancel).
    assert not store.add_checkpoint("bounded", first_index=4, candidate_count=1, fingerprint="f", payload=b"z")
    assert not store.add_checkpoint("no-such-plan", first_index=0, candidate_count=1, fingerprint="f", payload=b"z")
    # Checkpoints an older server left behind a run it finished are dropped at start-up.
    with sqlite3.connect(tmp_path / "runs.sqlite3") as db:
        db.execute("INSERT INTO checkpoints VALUES ('bounded', 9, 1, 'f', x'00')")
    assert store.drop_stale_checkpoints() == 1 and store.checkpoint_summary("bounded") == (0, 0, 0)


def test_a_damaged_checkpoint_is_named_not_trusted() -> None:
    with pytest.raises(ckpt.CheckpointFormatError, match=f"not a checkpoint of format {ckpt.FORMAT}"):
        ckpt.decode(b"not zlib at all")
    assert ckpt.decode(ckpt.encode([])) == []


def test_the_fingerprint_follows_the_request() -> None:
    """Checkpoints are reused only for the request (and catalog) that wrote them."""
    from arrayplan_engine.catalog import builtin_catalog
    from arrayplan_services.api.convert import plan_request_from_proto

    catalog = builtin_catalog()
    other = pb.PlanSpec()
    other.CopyFrom(LONG)
    other.seed = 7
    a, b = (plan_request_from_proto(s, "plan.spec", catalog) for s in (LONG, other))
    assert ckpt.fingerprint(a, catalog) == ckpt.fingerprint(plan_request_from_proto(LONG, "plan.spec", catalog), catalog)
    assert ckpt.fingerprint(a, catalog) != ckpt.fingerprint(b, catalog)
