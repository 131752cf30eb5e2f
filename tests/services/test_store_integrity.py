"""The run store is checked at start and can be backed up and restored: a damaged store (a bad
header, a damaged b-tree page in the middle of a store of hundreds of plans, a file that is not
SQLite, a path that cannot be read) makes `arrayplan serve` exit 2 with one line naming the file
and the restore command, and never serve; `arrayplan store backup` taken while a real server writes
is consistent; `arrayplan store restore` brings the server back with the backup's plans."""

from __future__ import annotations

import hashlib
import json
import os
import signal
import sqlite3
import subprocess
import sys
import threading
from pathlib import Path

import grpc
import pytest
from google.protobuf import json_format

from arrayplan.v1 import planner_pb2 as pb
from arrayplan.v1 import planner_pb2_grpc as pb_grpc
from arrayplan_services.store import RunStore, StoreDamagedError, StoreUnavailableError, check_store, count_plans
from conftest import ROOT, free_port, oltp_spec, start_server, stop_process

CLI = [sys.executable, "-m", "arrayplan_services.cli.main"]
PLANS = 300
# A plan that finishes at once: every candidate is below the capacity (4 x 400 GB in RAID 10 < 1 TB),
# so no simulation runs.
SMALL = pb.PlanSpec(workload=pb.Workload(read_fraction=0.7, target_iops=1000),
                    constraints=pb.Constraints(usable_capacity_bytes=1_000_000_000_000),
                    candidate_space=pb.CandidateSpace(drive_models=["intel-dc-s3700-400gb"], layouts=["raid10"], max_drive_count=4))


def _filled_store(data_dir: Path, plans: int = PLANS) -> Path:
    """A real store with ``plans`` finished plans (a real spec, a result of a few KB each), its
    WAL checkpointed into the file."""
    path = data_dir / "runs.sqlite3"
    store = RunStore(path)
    spec_json = json_format.MessageToJson(oltp_spec(), indent=None, preserving_proto_field_name=True)
    result_json = json.dumps({"recommendations": [{"rank": i + 1, "headroom_fraction": 0.1 * i} for i in range(60)]})
    for i in range(plans):
        run_id = f"stored-{i:04d}"
        store.create(run_id, spec_json, "0" * 32, creator="")
        store.finish(run_id, "SUCCEEDED", result_json=result_json)
    store.close()  # and its live-store lock: `store restore` refuses a store some process holds open
    conn = sqlite3.connect(path)
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.close()
    return path


def _serve_exit(data_dir: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    """Start `arrayplan serve` on ``data_dir``; it must exit by itself (a server that stays up
    served over the store: stopped by PID and the test fails)."""
    cmd = [*CLI, "serve", "--port", str(free_port()), "--data-dir", str(data_dir), "--executor", "local", *extra]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=ROOT, start_new_session=True)
    try:
        out, err = proc.communicate(timeout=120)
    except subprocess.TimeoutExpired:
        stop_process(proc, signal.SIGKILL)  # type: ignore[arg-type]  # a text-mode Popen
        pytest.fail(f"arrayplan serve kept running on {data_dir}: it served over the store")
    return subprocess.CompletedProcess(cmd, proc.returncode, out, err)


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _assert_refused(result: subprocess.CompletedProcess[str], store: Path, *words: str) -> str:
    """Exit 2, no traceback, and one line naming the store file and the words."""
    assert result.returncode == 2, (result.returncode, result.stdout, result.stderr)
    assert "Traceback" not in result.stderr and "arrayplan serving" not in result.stdout, result.stderr
    lines = [line for line in result.stderr.splitlines() if line.startswith("arrayplan:")]
    assert len(lines) == 1, result.stderr
    line = lines[0]
    assert str(store) in line, line
    for w in words:
        assert w in line, (w, line)
    return line


def _runs_leaf_page(path: Path) -> tuple[int, int]:
    """A b-tree leaf page of the plans table in the middle of the file: (page number, page size)."""
    conn = sqlite3.connect(path)
    try:
        page_size = int(conn.execute("PRAGMA page_size").fetchone()[0])
        leaves = [int(r[0]) for r in conn.execute("SELECT pageno FROM dbstat WHERE name = 'runs' AND pagetype = 'leaf' ORDER BY pageno")]
    finally:
        conn.close()
    assert len(leaves) >= 100, leaves
    return leaves[len(leaves) // 2], page_size


def test_bad_header_exits_2_naming_the_file_and_the_restore(tmp_path: Path) -> None:
    store = _filled_store(tmp_path, plans=20)
    check_store(store)  # sound before
    with open(store, "r+b") as f:
        f.write(b"XQLite format 3\0")  # the first byte of the header, flipped
    before = _sha256(store)
    line = _assert_refused(_serve_exit(tmp_path), store, "is not a SQLite database", f"arrayplan store restore --data-dir {tmp_path}")
    assert "docs/service.md" in line
    assert _sha256(store) == before  # the server left the damaged file as it was


@pytest.mark.parametrize("damage", ["zeroed page (a lost write)", "garbage page header"])
def test_damage_in_the_middle_of_the_store_exits_2(tmp_path: Path, damage: str) -> None:
    store = _filled_store(tmp_path)
    page, page_size = _runs_leaf_page(store)
    assert page * page_size < store.stat().st_size - 50 * page_size  # well inside the file
    with open(store, "r+b") as f:
        f.seek((page - 1) * page_size)
        f.write(b"\0" * page_size if damage.startswith("zeroed") else b"\xff" * 16)
    # What the issue saw: the newest plans still list, so a listing does not reveal the damage...
    conn = sqlite3.connect(store)
    try:
        assert len(conn.execute("SELECT id FROM runs ORDER BY seq DESC LIMIT 50").fetchall()) == 50
        # ... but quick_check does (SQLite raises or lists the problems, depending on the damage).
        try:
            verdict = [r[0] for r in conn.execute("PRAGMA quick_check").fetchall()]
        except sqlite3.DatabaseError as exc:
            verdict = [str(exc)]
    finally:
        conn.close()
    assert verdict != ["ok"], verdict
    before = _sha256(store)
    _assert_refused(_serve_exit(tmp_path), store, "is damaged", f"arrayplan store restore --data-dir {tmp_path}")
    assert _sha256(store) == before
    # `arrayplan store check` says the same, with the same exit code, and so does a command whose
    # --local in-process server would open the store.
    for cmd in (["store", "check", "--data-dir", str(tmp_path)], ["runs", "--local", "--executor", "local", "--data-dir", str(tmp_path)]):
        out = subprocess.run([*CLI, *cmd], capture_output=True, text=True, timeout=120, cwd=ROOT)
        assert out.returncode == 2 and "is damaged" in out.stderr and str(store) in out.stderr, (cmd, out.stderr)
        assert "Traceback" not in out.stderr
    assert _sha256(store) == before


def test_a_file_that_is_not_sqlite_exits_2(tmp_path: Path) -> None:
    store = tmp_path / "runs.sqlite3"
    store.write_text("plans:\n  - name: not a database\n" * 200)
    _assert_refused(_serve_exit(tmp_path), store, "is not a SQLite database", "arrayplan store restore")
    assert store.read_text().startswith("plans:")


def test_a_store_path_that_cannot_be_read_exits_2(tmp_path: Path) -> None:
    store = tmp_path / "runs.sqlite3"
    store.mkdir()  # a directory where the file should be: unreadable as a store, even for root
    _assert_refused(_serve_exit(tmp_path), store, "is not a regular file", "move it aside")
    assert store.is_dir()


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads a file whatever its mode; the directory case above runs as root")
def test_a_store_without_read_permission_exits_2(tmp_path: Path) -> None:
    store = _filled_store(tmp_path, plans=3)
    store.chmod(0)
    try:
        _assert_refused(_serve_exit(tmp_path), store, "not readable and writable", "chmod")
    finally:
        store.chmod(0o600)


class _Writer(threading.Thread):
    """Writes to the store through the server until stopped: create a plan, cancel it, again."""

    def __init__(self, stub: pb_grpc.PlannerServiceStub) -> None:
        super().__init__(daemon=True)
        self.stub = stub
        self.created: list[str] = []
        self.errors: list[BaseException] = []
        self.stopping = threading.Event()
        self.changed = threading.Condition()

    def run(self) -> None:
        try:
            while not self.stopping.is_set():
                plan = self.stub.CreatePlan(pb.CreatePlanRequest(plan=pb.Plan(spec=SMALL)), timeout=30)
                self.stub.CancelPlan(pb.CancelPlanRequest(name=plan.name), timeout=30)
                with self.changed:
                    self.created.append(plan.name)
                    self.changed.notify_all()
        except BaseException as exc:  # noqa: BLE001 - reported by the test
            with self.changed:
                self.errors.append(exc)
                self.changed.notify_all()

    def wait_for(self, count: int, timeout_s: float = 120.0) -> None:
        with self.changed:
            assert self.changed.wait_for(lambda: len(self.created) >= count or bool(self.errors), timeout_s), \
                f"the server wrote {len(self.created)} plans, not {count}, within {timeout_s} s"
        assert not self.errors, self.errors


def test_backup_while_the_server_writes_then_restore(tmp_path: Path) -> None:
    data = tmp_path / "data"
    data.mkdir()
    store = _filled_store(data)
    server = start_server(data, extra=("--executor", "local", "--max-running-plans", "1"))
    backup = tmp_path / "backups" / "runs-1.sqlite3"
    backup.parent.mkdir()
    writer: _Writer | None = None
    try:
        with grpc.insecure_channel(server.address) as channel:
            writer = _Writer(pb_grpc.PlannerServiceStub(channel))
            writer.start()
            writer.wait_for(5)
            at_start = count_plans(store)
            out = subprocess.run([*CLI, "store", "backup", "--data-dir", str(data), str(backup)],
                                 capture_output=True, text=True, timeout=300, cwd=ROOT)
            writer.wait_for(len(writer.created) + 3)  # the server kept writing: the backup never blocked it
            writer.stopping.set()
            writer.join(60)
            assert not writer.errors, writer.errors
            assert out.returncode == 0, out.stderr
            assert str(backup) in out.stdout and "quick_check ok" in out.stdout
            # Consistent: integrity_check passes, no plan that was there is missing, and every plan in
            # the backup is the server's plan as stored (one commit's view, not a torn mix).
            check_store(backup, full=True)
            assert count_plans(backup) >= at_start >= PLANS + 5
            copy = sqlite3.connect(f"file:{backup}?mode=ro", uri=True)
            rows = {r[0]: (r[1], r[2]) for r in copy.execute("SELECT id, spec_json, creator FROM runs")}
            copy.close()
            live = sqlite3.connect(f"file:{store}?mode=ro", uri=True)
            live_rows = {r[0]: (r[1], r[2]) for r in live.execute("SELECT id, spec_json, creator FROM runs")}
            live.close()
            assert all(live_rows[k] == v for k, v in rows.items())
            assert all(f"stored-{i:04d}" in rows for i in range(PLANS))
            # A backup never overwrites a file.
            again = subprocess.run([*CLI, "store", "backup", "--data-dir", str(data), str(backup)],
                                   capture_output=True, text=True, timeout=120, cwd=ROOT)
            assert again.returncode == 2 and "never overwrites" in again.stderr
            # A restore onto the store the running server holds is refused, --force or not: the
            # server would keep writing to the old file and the restored plans would be lost.
            for force in ((), ("--force",)):
                live = subprocess.run([*CLI, "store", "restore", "--data-dir", str(data), str(backup), *force],
                                      capture_output=True, text=True, timeout=120, cwd=ROOT)
                assert live.returncode == 2 and "open in a running server" in live.stderr, live.stderr
                assert len(live.stderr.strip().splitlines()) == 1
            assert not list(data.glob("runs.sqlite3.replaced-*"))
    finally:
        if writer is not None:
            writer.stopping.set()
        server.stop()
    in_backup = count_plans(backup)

    # The store is damaged while the server is down: serve refuses it ...
    conn = sqlite3.connect(store)
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.close()
    page, page_size = _runs_leaf_page(store)
    with open(store, "r+b") as f:
        f.seek((page - 1) * page_size)
        f.write(b"\0" * page_size)
    damaged = _sha256(store)
    _assert_refused(_serve_exit(data), store, "is damaged")
    # ... `store restore` (the command the message names) puts the backup in place, keeps the
    # damaged file beside it, and the server serves the backup's plans again.
    out = subprocess.run([*CLI, "store", "restore", "--data-dir", str(data), str(backup)],
                         capture_output=True, text=True, timeout=120, cwd=ROOT)
    assert out.returncode == 0, out.stderr
    kept = [p for p in data.glob("runs.sqlite3.replaced-*") if not p.name.endswith(("-wal", "-shm"))]
    assert len(kept) == 1 and _sha256(kept[0]) == damaged
    assert count_plans(store) == in_backup
    # A sound store is not replaced without --force.
    refused = subprocess.run([*CLI, "store", "restore", "--data-dir", str(data), str(backup)],
                             capture_output=True, text=True, timeout=120, cwd=ROOT)
    assert refused.returncode == 2 and "--force" in refused.stderr
    server = start_server(data, extra=("--executor", "local"))
    try:
        with grpc.insecure_channel(server.address) as channel:
            stub = pb_grpc.PlannerServiceStub(channel)
            plan = stub.GetPlan(pb.GetPlanRequest(name=f"plans/stored-{PLANS // 2:04d}"), timeout=30)
            assert plan.state == pb.Plan.STATE_SUCCEEDED
            names: list[str] = []
            token = ""
            while True:
                page_resp = stub.ListPlans(pb.ListPlansRequest(page_size=1000, page_token=token), timeout=30)
                names.extend(p.name for p in page_resp.plans)
                token = page_resp.next_page_token
                if not token:
                    break
            assert len(names) == in_backup
    finally:
        server.stop()


def test_a_damaged_backup_is_not_restored(tmp_path: Path) -> None:
    data = tmp_path / "data"
    data.mkdir()
    _filled_store(data, plans=5)
    bad = tmp_path / "bad-backup.sqlite3"
    bad.write_bytes(b"not a backup" * 100)
    before = _sha256(data / "runs.sqlite3")
    out = subprocess.run([*CLI, "store", "restore", "--data-dir", str(data), "--force", str(bad)],
                         capture_output=True, text=True, timeout=120, cwd=ROOT)
    assert out.returncode == 2 and str(bad) in out.stderr and "nothing was changed" in out.stderr, out.stderr
    assert _sha256(data / "runs.sqlite3") == before
    with pytest.raises(StoreDamagedError):
        check_store(bad)


def test_backup_into_a_directory(tmp_path: Path) -> None:
    data = tmp_path / "data"
    data.mkdir()
    _filled_store(data, plans=12)
    out = subprocess.run([*CLI, "store", "backup", "--data-dir", str(data), f"{tmp_path / 'backups' / 'nightly'}/"],
                         capture_output=True, text=True, timeout=120, cwd=ROOT)
    assert out.returncode == 0, out.stderr
    (written,) = (tmp_path / "backups" / "nightly").glob("runs-*.sqlite3")
    assert str(written) in out.stdout and "12 plan(s)" in out.stdout
    check_store(written, full=True)
    assert count_plans(written) == 12
    assert not list(written.parent.glob("*-wal"))  # a self-contained file: no WAL to carry along
    # A data dir without a store is named, and no file is written.
    empty = subprocess.run([*CLI, "store", "backup", "--data-dir", str(tmp_path / "nowhere"), str(tmp_path / "x.sqlite3")],
                           capture_output=True, text=True, timeout=120, cwd=ROOT)
    assert empty.returncode == 2 and "no run store at" in empty.stderr and not (tmp_path / "x.sqlite3").exists()


def test_damage_met_while_serving_turns_the_store_unavailable_until_restored(tmp_path: Path) -> None:
    """The store a server has open: a read that meets a damaged page answers UNAVAILABLE
    (StoreUnavailableError, condition damaged) and the store stays unhealthy: the probe write that
    clears a full disk does not clear damage."""
    store_path = _filled_store(tmp_path)
    page, page_size = _runs_leaf_page(store_path)
    with open(store_path, "r+b") as f:
        f.seek((page - 1) * page_size)
        f.write(b"\0" * page_size)
    store = RunStore(store_path)  # opening reads the schema and the meta table only
    changes: list[bool] = []
    store.add_listener(changes.append)
    assert store.get(f"stored-{PLANS - 1:04d}") is not None  # the newest plan still reads
    with pytest.raises(StoreUnavailableError) as caught:
        store.list(page_size=1000, before_seq=None)  # the scan meets the zeroed page
    assert caught.value.condition == "damaged" and "restores it from a backup" in str(caught.value)
    assert not store.healthy and changes == [False]
    assert store.probe() is False and not store.healthy and changes == [False]
