"""The run store's contract (store/base.py PlanStore) on both backends: SQLite in a file and a real
PostgreSQL server from the Debian package (pgserver.py). Then PostgreSQL's own edges: leases
taken by exactly one of two claimants, and a URL that is bad, unreachable or refused stops
``arrayplan serve`` with exit 2 and one line that never holds the password."""

from __future__ import annotations

import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from pgserver import PASSWORD, PostgresServer, fresh_database, postgres  # noqa: F401 - fixtures

from arrayplan_engine.errors import InvalidInputError
from arrayplan_services.store import PlanStore, RunStore, StoreConnectError, StoreUrlError, open_store
from conftest import ROOT, free_port

BACKENDS = ("sqlite", "postgres")


@pytest.fixture(params=BACKENDS)
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[PlanStore]:
    if request.param == "sqlite":
        s: PlanStore = RunStore(tmp_path / "runs.sqlite3")
    else:
        s = open_store(data_dir=tmp_path, store_url=request.getfixturevalue("fresh_database"))
    yield s
    s.close()


def test_runs_are_created_read_listed_and_paged(store: PlanStore) -> None:
    for i in range(5):
        store.create(f"plan-{i}", f'{{"i": {i}}}', f"{i:032x}", "alice" if i % 2 else "bob")
    row = store.get("plan-3")
    assert row is not None and row.state == "PENDING" and row.spec_json == '{"i": 3}' and row.creator == "alice"
    assert store.exists("plan-0") and not store.exists("plan-9") and store.get("plan-9") is None
    page, next_seq = store.list(page_size=2, before_seq=None)
    assert [r.id for r in page] == ["plan-4", "plan-3"] and next_seq is not None
    page2, _ = store.list(page_size=10, before_seq=next_seq)
    assert [r.id for r in page2] == ["plan-2", "plan-1", "plan-0"]
    mine, end = store.list(page_size=10, before_seq=None, creator="alice")
    assert [r.id for r in mine] == ["plan-3", "plan-1"] and end is None
    with pytest.raises(InvalidInputError, match="plan_id: plans/plan-0 already exists"):  # ids are unique, on either backend
        store.create("plan-0", "{}", "")


def test_a_run_moves_to_one_terminal_state_and_keeps_it(store: PlanStore) -> None:
    store.create("run-a", "{}", "")
    store.set_state("run-a", "RUNNING", trace_id="ab" * 16, attempts_increment=True)
    store.set_progress("run-a", {"candidates_evaluated": 3})
    row = store.get("run-a")
    assert row is not None and (row.state, row.attempts, row.trace_id) == ("RUNNING", 1, "ab" * 16)
    assert row.progress_json == '{"candidates_evaluated": 3}'
    # a graceful hand-over takes back the start's attempt (never below 0): only crashes count
    store.forgive_attempt("run-a")
    store.forgive_attempt("run-a")
    assert store.get("run-a").attempts == 0  # type: ignore[union-attr]
    store.set_state("run-a", "RUNNING", attempts_increment=True)
    assert [r.id for r in store.interrupted()] == ["run-a"]
    assert store.finish("run-a", "SUCCEEDED", result_json='{"ok": true}', progress={"candidates_evaluated": 9})
    assert not store.finish("run-a", "CANCELLED", error_message="late", error_reason="CANCELLED")
    row = store.get("run-a")
    assert row is not None and row.state == "SUCCEEDED" and row.result_json == '{"ok": true}' and row.end_time is not None
    assert row.progress_json == '{"candidates_evaluated": 9}' and store.interrupted() == []
    # A late batch report from a server that lost the run changes nothing, on either backend.
    store.set_progress("run-a", {"candidates_evaluated": 4})
    row = store.get("run-a")
    assert row is not None and row.progress_json == '{"candidates_evaluated": 9}'


def test_a_finished_run_holds_no_lease_and_leases_run_on_the_store_clock(store: PlanStore) -> None:
    import time

    before = time.time()
    store.create("leased", "{}", "", lease_owner="replica-a", lease_s=30.0)
    row = store.get("leased")
    # the store's clock (SQLite: this machine's; PostgreSQL here: the same machine's) within 5 s
    assert row is not None and row.lease_owner == "replica-a" and before + 25.0 < row.lease_expiry < time.time() + 35.0
    assert not store.take_lease("leased", "replica-b", 30.0)  # held and unexpired
    assert store.renew_leases("replica-a", ["leased", "gone"], 60.0) == {"gone"}
    assert store.finish("leased", "SUCCEEDED", result_json="{}")
    row = store.get("leased")
    assert row is not None and (row.lease_owner, row.lease_expiry) == ("", 0.0)
    assert not store.take_lease("leased", "replica-b", 30.0)  # terminal runs are never leased


def test_checkpoints_round_trip_are_bounded_and_go_with_the_run(store: PlanStore) -> None:
    store.create("ckpt", "{}", "")
    payload = bytes(range(256)) * 3
    assert store.add_checkpoint("ckpt", first_index=0, candidate_count=2, fingerprint="f1", payload=payload, max_bytes=1000)
    assert not store.add_checkpoint("ckpt", first_index=2, candidate_count=2, fingerprint="f1", payload=b"y" * 600, max_bytes=1000)
    # The same batch written again replaces itself (a batch finished twice around a take-over).
    assert store.add_checkpoint("ckpt", first_index=0, candidate_count=2, fingerprint="f1", payload=payload, max_bytes=1000)
    assert store.checkpoints("ckpt") == [(0, 2, "f1", payload)]
    assert store.checkpoint_summary("ckpt") == (1, 2, len(payload))
    store.finish("ckpt", "CANCELLED", error_message="x", error_reason="CANCELLED")
    assert store.checkpoints("ckpt") == []
    assert not store.add_checkpoint("ckpt", first_index=4, candidate_count=1, fingerprint="f1", payload=b"z")
    assert not store.add_checkpoint("nope", first_index=0, candidate_count=1, fingerprint="f1", payload=b"z")
    assert store.drop_stale_checkpoints() == 0


def test_spans_are_kept_per_trace_in_start_order(store: PlanStore) -> None:
    def span(span_id: str, start_ns: int, name: str) -> dict[str, object]:
        return {"trace_id": "t" * 32, "span_id": span_id, "parent_span_id": "", "name": name, "kind": "INTERNAL",
                "start_ns": start_ns, "end_ns": start_ns + 5, "status": "OK", "attributes": {"arrayplan.n": 1}, "process": "server"}
    store.insert_spans([span("b" * 16, 2_000_000_000_000_000_000, "second"), span("a" * 16, 1, "first")])
    store.insert_spans([span("a" * 16, 1, "first-again")])  # the same span id replaces the row
    spans = store.spans("t" * 32)
    assert [(s["name"], s["start_ns"]) for s in spans] == [("first-again", 1), ("second", 2_000_000_000_000_000_000)]
    assert spans[0]["attributes"] == {"arrayplan.n": 1} and store.spans("u" * 32) == []


def test_a_lease_is_held_by_one_owner_until_it_expires(store: PlanStore) -> None:
    store.create("leased", "{}", "", lease_owner="replica-a", lease_s=600)
    row = store.get("leased")
    assert row is not None and row.lease_owner == "replica-a" and row.lease_expiry > 0
    assert not store.take_lease("leased", "replica-b", 600)
    assert store.claim_orphans("replica-b", 600) == []
    assert store.renew_leases("replica-a", ["leased"], 600) == set()
    # A lease that has run out (written here already expired: no waiting) is claimed by another owner.
    store.create("expired", "{}", "", lease_owner="replica-a", lease_s=-1)
    claimed = store.claim_orphans("replica-b", 600)
    assert [r.id for r in claimed] == ["expired"] and claimed[0].lease_owner == "replica-b"
    # The old owner's renew finds it lost; the new owner's holds.
    assert store.renew_leases("replica-a", ["leased", "expired"], 600) == {"expired"}
    assert store.renew_leases("replica-b", ["expired"], 600) == set()
    # A released lease is free at once; a terminal run has no lease to take or renew.
    store.release_lease("leased", "replica-a")
    assert store.take_lease("leased", "replica-b", 600)
    store.finish("leased", "CANCELLED", error_message="x", error_reason="CANCELLED")
    assert store.renew_leases("replica-b", ["leased"], 600) == {"leased"}
    assert not store.take_lease("leased", "replica-a", 600)
    # At a single server's start (SQLite) every interrupted run is claimed, whatever its lease.
    store.create("held", "{}", "", lease_owner="dead-process", lease_s=600)
    assert [r.id for r in store.claim_orphans("new-process", 600, include_unexpired=True)] == ["expired", "held"]


def test_two_claimants_never_take_the_same_run(store: PlanStore) -> None:
    for i in range(40):
        store.create(f"orphan-{i:02d}", "{}", "", lease_owner="dead", lease_s=-1)
    results: dict[str, list[str]] = {}
    barrier = threading.Barrier(2)

    def claim(owner: str) -> None:
        barrier.wait()
        got: list[str] = []
        while batch := store.claim_orphans(owner, 600, limit=3):
            got += [r.id for r in batch]
        results[owner] = got
    threads = [threading.Thread(target=claim, args=(owner,)) for owner in ("a", "b")]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=120)
    assert not set(results["a"]) & set(results["b"])
    assert sorted(results["a"] + results["b"]) == [f"orphan-{i:02d}" for i in range(40)]
    owners = {r.id: r.lease_owner for r in store.list(page_size=100, before_seq=None)[0]}
    assert all(owners[i] == "a" for i in results["a"]) and all(owners[i] == "b" for i in results["b"])


# -- PostgreSQL's start-up errors -----------------------------------------------------------

def test_bad_urls_are_named_without_their_password(tmp_path: Path, postgres: PostgresServer) -> None:  # noqa: F811
    with pytest.raises(StoreUrlError, match=r"must be a postgresql://") as bad_scheme:
        open_store(data_dir=tmp_path, store_url=f"mysql://u:{PASSWORD}@127.0.0.1/db")
    with pytest.raises(StoreUrlError, match=r"not a valid PostgreSQL URL") as bad_option:
        open_store(data_dir=tmp_path, store_url=f"postgresql://u:{PASSWORD}@127.0.0.1/db?nosuchoption=1")
    closed = free_port()
    with pytest.raises(StoreConnectError, match=rf"cannot open the run store postgresql://arrayplan@127.0.0.1:{closed}/db: ") as refused:
        open_store(data_dir=tmp_path, store_url=f"postgresql://arrayplan:{PASSWORD}@127.0.0.1:{closed}/db")
    wrong = postgres.url(password="not-the-password")
    with pytest.raises(StoreConnectError, match=r"password authentication failed") as denied:
        open_store(data_dir=tmp_path, store_url=wrong)
    for exc in (bad_scheme, bad_option, refused, denied):
        text = str(exc.value)
        assert PASSWORD not in text and "not-the-password" not in text and "\n" not in text, text


def _serve(*args: str, data_dir: Path) -> subprocess.CompletedProcess[str]:
    import os

    env = {**os.environ, "ARRAYPLAN_STORE_URL": ""}
    return subprocess.run([sys.executable, "-m", "arrayplan_services.cli.main", "serve", "--port", "0", "--data-dir", str(data_dir),
                           "--executor", "local", *args], capture_output=True, text=True, timeout=300, cwd=ROOT, env=env)


def test_serve_exits_2_with_one_line_for_a_store_it_cannot_open(tmp_path: Path, postgres: PostgresServer) -> None:  # noqa: F811
    closed = free_port()
    cases = {
        f"postgresql://arrayplan:{PASSWORD}@127.0.0.1:{closed}/x": f"cannot open the run store postgresql://arrayplan@127.0.0.1:{closed}/x",
        postgres.url(password="wrong-pw-123"): "password authentication failed",
        f"http://arrayplan:{PASSWORD}@127.0.0.1/x": "--store-url must be a postgresql://",
    }
    for url, expected in cases.items():
        out = _serve("--store-url", url, data_dir=tmp_path / "d")
        lines = [line for line in out.stderr.splitlines() if line.strip()]
        assert out.returncode == 2, out.stderr
        assert len(lines) == 1 and expected in lines[0], out.stderr
        assert PASSWORD not in out.stderr + out.stdout and "wrong-pw-123" not in out.stderr + out.stdout


@pytest.mark.parametrize(("flag", "value", "allowed"), [("--lease-s", "0.5", "[1, 3600]"), ("--max-running-heavy", "0", "[1, 1024]"),
                                                         ("--max-queued-heavy", "-1", "[0, 10000]"),
                                                         ("--max-heavy-per-caller", "2000", "[1, 1024]"), ("--lease-s", "nan", "[1, 3600]")])
def test_serve_flags_out_of_range_exit_2_naming_the_flag(tmp_path: Path, flag: str, value: str, allowed: str) -> None:
    out = _serve(flag, value, data_dir=tmp_path / "d")
    assert out.returncode == 2, out.stderr
    assert f"{flag} must be in {allowed}, got" in out.stderr
