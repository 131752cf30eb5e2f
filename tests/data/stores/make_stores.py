"""Write one run store per released SQLite schema (``schema-N.sqlite3``), as that release wrote it:
its schema script and its INSERT, copied from the release's services/arrayplan_services/store/
sqlite.py (schema 1: commit 7dbfa99, schema 2: 966e724, schema 3: ba46731; schema 3 with the
lease columns is the current one, made by the current code in the tests). Each holds two plans,
``old-succeeded`` (with a result) and ``old-failed``, and one span. Run from the repository root:
``.venv/bin/python tests/data/stores/make_stores.py``; the files are committed and the suite opens
copies of them (tests/services/test_store_upgrades.py)."""

from __future__ import annotations

import sqlite3
from pathlib import Path

_RUNS_1 = """CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS runs (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    id TEXT NOT NULL UNIQUE,
    state TEXT NOT NULL,
    spec_json TEXT NOT NULL,
    progress_json TEXT NOT NULL DEFAULT '{}',
    result_json TEXT,
    trace_id TEXT NOT NULL DEFAULT '',
    error_message TEXT NOT NULL DEFAULT '',
    error_reason TEXT NOT NULL DEFAULT '',
    attempts INTEGER NOT NULL DEFAULT 0,
    create_time REAL NOT NULL,
    update_time REAL NOT NULL,
    end_time REAL%s
);
CREATE TABLE IF NOT EXISTS spans (
    trace_id TEXT NOT NULL,
    span_id TEXT NOT NULL,
    parent_span_id TEXT NOT NULL,
    name TEXT NOT NULL,
    kind TEXT NOT NULL,
    start_ns INTEGER NOT NULL,
    end_ns INTEGER NOT NULL,
    status TEXT NOT NULL,
    attributes_json TEXT NOT NULL,
    process TEXT NOT NULL,
    PRIMARY KEY (trace_id, span_id)
);
CREATE INDEX IF NOT EXISTS spans_by_trace ON spans (trace_id, start_ns);
"""
SCHEMAS = {
    1: _RUNS_1 % "",
    2: _RUNS_1 % ",\n    creator TEXT NOT NULL DEFAULT ''",
    3: _RUNS_1 % ",\n    creator TEXT NOT NULL DEFAULT ''" + """CREATE INDEX IF NOT EXISTS runs_by_creator ON runs (creator, seq);
CREATE TABLE IF NOT EXISTS checkpoints (
    run_id TEXT NOT NULL,
    first_index INTEGER NOT NULL,
    candidate_count INTEGER NOT NULL,
    fingerprint TEXT NOT NULL,
    payload BLOB NOT NULL,
    PRIMARY KEY (run_id, first_index)
);
""",
}
SPEC_JSON = ('{"workload": {"readFraction": 0.7, "targetIops": 1000.0}, "constraints": {"usableCapacityBytes": "1000000000000"}, '
             '"candidateSpace": {"driveModels": ["intel-dc-s3700-400gb"], "layouts": ["raid10"], "maxDriveCount": 4}}')
RESULT_JSON = '{"constraintsMet": false}'
T0 = 1_760_000_000.0


def write(version: int, path: Path) -> None:
    path.unlink(missing_ok=True)
    conn = sqlite3.connect(path, isolation_level=None)
    conn.executescript(SCHEMAS[version])
    conn.execute("INSERT INTO meta VALUES ('schema_version', ?)", (str(version),))
    creator = version >= 2
    cols = "id, state, spec_json, trace_id, create_time, update_time" + (", creator" if creator else "")
    for i, (name, state) in enumerate((("old-succeeded", "SUCCEEDED"), ("old-failed", "FAILED"))):
        values = [f"plans/{name}", state, SPEC_JSON, f"{i + 1:032x}", T0 + i, T0 + i + 1] + (["alice"] if creator else [])
        conn.execute(f"INSERT INTO runs ({cols}) VALUES ({', '.join('?' * len(values))})", values)
    conn.execute("UPDATE runs SET result_json=?, end_time=update_time WHERE id='plans/old-succeeded'", (RESULT_JSON,))
    conn.execute("UPDATE runs SET error_message='no candidate fits', error_reason='NO_CANDIDATES', end_time=update_time "
                 "WHERE id='plans/old-failed'")
    conn.execute("INSERT INTO spans VALUES (?, ?, '', 'CreatePlan', 'SERVER', ?, ?, 'OK', '{}', 'planner')",
                 (f"{1:032x}", f"{1:016x}", int(T0 * 1e9), int((T0 + 1) * 1e9)))
    conn.execute("VACUUM")
    conn.close()


if __name__ == "__main__":
    here = Path(__file__).resolve().parent
    for v in SCHEMAS:
        write(v, here / f"schema-{v}.sqlite3")
        print(f"wrote {here / f'schema-{v}.sqlite3'}")
