"""The PostgreSQL run store's pool (psycopg_pool) across a database outage, on a PostgreSQL server
of its own (pgserver.py) that the test stops and starts again: a call while the database is down
fails as the store's UNAVAILABLE (not a hang, not a driver error), the store turns unhealthy and
its listeners hear it; once the database is back, the server's probe makes it healthy and the
pooled connections that died with the old server cost no call (each is checked as it leaves the
pool). The runs written before the outage are all still there."""

from __future__ import annotations

import shutil
import time
from pathlib import Path

import pytest
from pgserver import restart_postgres, start_postgres

from arrayplan_services.store import StoreUnavailableError, open_store
from arrayplan_services.store import postgres as pg_store


def test_a_down_database_fails_calls_and_flips_health_until_the_probe_reaches_it_again(tmp_path: Path) -> None:
    server = start_postgres()
    try:
        store = open_store(data_dir=tmp_path, store_url=server.url())
        assert isinstance(store, pg_store.PostgresRunStore)
        heard: list[bool] = []
        store.add_listener(heard.append)
        for i in range(3):
            store.create(f"before-{i}", "{}", f"{i:032x}")
        # more than one connection open, as under load: each of them dies with the server
        with store._conn(), store._conn():
            pass
        server.stop()
        with pytest.raises(StoreUnavailableError, match="unreachable"):
            store.get("before-0")
        assert not store.healthy and store.condition == "unreachable" and heard == [False]
        assert store.probe() is False  # still down: the probe says so and health stays off
        server = restart_postgres(server)
        # as the server's probe thread does (every STORE_PROBE_S): the pool's own reconnect attempt
        # may still be waiting out its back-off, so a probe or two can come before the connection
        deadline = time.monotonic() + 60
        while not store.probe():
            assert time.monotonic() < deadline, "the probe never reached the restarted database"
            time.sleep(0.5)
        assert store.healthy and heard == [False, True]
        for _ in range(pg_store.POOL_MAX // 8):  # the connections of the old server are replaced, not handed out
            assert [r.id for r in store.list(page_size=10, before_seq=None)[0]] == ["before-2", "before-1", "before-0"]
        store.close()
    finally:
        server.stop()
        shutil.rmtree(server.datadir.parent, ignore_errors=True)
