"""Every ``--format json`` prints one convention (docs/json.md): numbers as numbers (int64 too),
durations in seconds under ``_s`` keys, no NaN, every field present (checked against
docs/json-schema.json where a command's output has a definition there). Each command runs as a
real process; the server-backed ones against the real server fixture."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from conftest import DATA, ROOT, ServerProcess

SCHEMA = json.loads((ROOT / "docs" / "json-schema.json").read_text())
EXAMPLE = ROOT / "examples" / "array-in-service"
PLAN = ROOT / "examples" / "oltp.yaml"

# proto3's JSON mapping, which the convention replaces: "0.005s" for a Duration, "9600000000000"
# for an int64.
_DURATION_TEXT = re.compile(r"^-?\d+(\.\d+)?s$")
# Maps keyed by a field name (telemetry's counter_sources: field -> where the counter came from).
_MAPS = {"counter_sources"}
# Units end numeric keys (docs/nomenclature.md; the API's int64 fields all carry one), so a string under
# such a key is a number printed as text (a label such as a drive family "7400" is not flagged).
_UNIT_KEY = re.compile(r"_(s|bytes|count|iops|fraction|usd|w|hours|years|per_day|per_second)$")


def _no_nan(text: str) -> Any:
    def refuse(token: str) -> Any:
        raise AssertionError(f"{token} in the JSON (the convention prints null)")
    return json.loads(text, parse_constant=refuse)


def check_convention(node: Any, path: str = "$", *, in_map: bool = False) -> int:
    """Walk the document; fail on a proto3-JSON duration string anywhere, or a unit-named key holding
    a string (proto3 JSON's int64 as text). Returns how many numbers it saw (so a test can tell it
    walked something)."""
    seen = 0
    if isinstance(node, dict):
        for k, v in node.items():
            where = f"{path}.{k}"
            if isinstance(v, str):
                assert not _DURATION_TEXT.match(v), f"{where} = {v!r}: a duration as proto3 text; want seconds under _s"
                assert in_map or not _UNIT_KEY.search(k), f"{where} = {v!r}: a unit-named key holds a string"
            seen += check_convention(v, where, in_map=k in _MAPS)
    elif isinstance(node, list):
        for i, v in enumerate(node):
            seen += check_convention(v, f"{path}[{i}]")
    elif isinstance(node, (int, float)) and not isinstance(node, bool):
        seen += 1
    return seen


def validate(body: Any, output: str) -> None:
    jsonschema.validate(body, {**SCHEMA, "$ref": SCHEMA["x-outputs"][output]})


def run_json(*args: str) -> Any:
    out = subprocess.run([sys.executable, "-m", "arrayplan_services.cli.main", *args], capture_output=True, text=True, cwd=ROOT,
                         timeout=600, check=False)
    assert out.returncode in (0, 3), f"{args}: exit {out.returncode}\n{out.stderr}"
    body = _no_nan(out.stdout)
    assert check_convention(body) > 0
    return body


def test_the_checker_catches_what_the_convention_forbids() -> None:
    with pytest.raises(AssertionError, match="duration as proto3 text"):
        check_convention({"latency_p50": "0.005s"})
    with pytest.raises(AssertionError, match="a unit-named key holds a string"):
        check_convention({"usable_capacity_bytes": "9600000000000"})
    with pytest.raises(AssertionError, match="NaN"):
        _no_nan('{"x": NaN}')
    assert check_convention({"serial": "123456", "latency_p50_s": 0.005, "drive_count": 4}) == 2


@pytest.mark.parametrize("method", ["markov", "closed-form", "binomial", "monte-carlo"])
def test_reliability(method: str) -> None:
    body = run_json("reliability", "--layout", "raid6", "--drives", "12", "--afr", "0.01", "--repair-hours", "24",
                    "--uber", "1e-15", "--drive-bytes", "16 TB", "--method", method, "--trials", "1000", "--format", "json")
    validate(body, "arrayplan reliability")  # every field, monte-carlo's own ones null for the others
    assert body["method"] == method and isinstance(body["drive_count"], int)
    assert (body["trials"] is None) == (method != "monte-carlo")


def test_forecast_and_telemetry() -> None:
    body = run_json("forecast", str(EXAMPLE / "array.yaml"), "--format", "json")
    validate(body, "arrayplan forecast")
    assert body["replan"] is None and body["replan_notes"] == []
    w = body["groups"][0]["wear_out"]
    assert isinstance(w["time_s"], float) and re.fullmatch(r"\d{4}-\d{2}-\d{2}", w["date"])
    records = run_json("telemetry", str(DATA / "smart"), "--format", "json")
    assert records and all(isinstance(r["capacity_bytes"], (int, float)) or r["capacity_bytes"] is None for r in records)


def test_ftl() -> None:
    body = run_json("ftl", "--spare-factor", "0.1", "--pages-per-block", "64", "--policy", "greedy", "--workload", "uniform",
                    "--user-pages", "131072", "--format", "json")
    assert isinstance(body["wa_measured"], float)


def test_consistency_and_local_simulate(tmp_path: Path) -> None:
    """Engine results through the same path: a 60 s consistency run never reaches the cliff, so its
    steady-state figures are undefined (NaN inside the engine) and print as null, never NaN. The
    in-process simulate, with the options only it takes (--plot, --parts, --reorder-window), prints
    the service's SimulateArray answer: its schema holds."""
    body = run_json("consistency", "intel-dc-s3700-200gb", "--duration-s", "60", "--fio-log-out", str(tmp_path / "run.log"),
                    "--format", "json")
    rows = body if isinstance(body, list) else [body]
    assert rows and all(isinstance(r["fob_iops"], float) for r in rows)
    sim = run_json("simulate", "--drive", "intel-dc-s3500-480gb", "--drives", "4", "--layout", "raid5", "--read-fraction", "0.7",
                   "--io-bytes", "4096", "--queue-depth", "8", "--duration-s", "0.5", "--parts", "1", "--reorder-window", "1",
                   "--local", "--plot", str(tmp_path / "sim.png"), "--format", "json")
    assert isinstance(sim["achieved_iops"], float)
    validate(sim, "arrayplan simulate (a server or --local)")
    assert (tmp_path / "sim.png").stat().st_size > 10_000


@pytest.mark.slow
def test_server_backed_commands(server: ServerProcess, tmp_path: Path) -> None:
    addr = ("--server", server.address)
    plan = run_json("plan", str(PLAN), "--format", "json", "--plan-id", "json-convention", "--seed", "1", *addr)
    validate(plan, "arrayplan plan / arrayplan runs NAME")
    best = plan["result"]["recommendations"][0]
    assert isinstance(best["usable_capacity_bytes"], int) and isinstance(best["latency_p50_s"], float)
    validate(run_json("runs", "plans/json-convention", "--format", "json", *addr), "arrayplan plan / arrayplan runs NAME")
    validate(run_json("runs", "--format", "json", *addr), "arrayplan runs")
    validate(run_json("trace", "plans/json-convention", "--format", "json", *addr), "arrayplan trace --format json")
    drives = run_json("drives", "--format", "json", *addr)
    assert len(drives) > 10
    sim = run_json("simulate", "--drive", "intel-dc-s3500-480gb", "--drives", "12", "--layout", "raid6", "--read-fraction",
                   "0.7", "--target-iops", "10000", "--duration-s", "2", "--format", "json", *addr)
    validate(sim, "arrayplan simulate (a server or --local)")

    # forecast --replan: the re-plan is the API's Plan under the same convention (was MessageToDict).
    text = (EXAMPLE / "array.yaml").read_text()
    text = text.replace("telemetry: [telemetry/]", f"telemetry: [{EXAMPLE / 'telemetry'}]").replace(
        "csv: capacity.csv", f"csv: {EXAMPLE / 'capacity.csv'}")
    (tmp_path / "array.yaml").write_text(text.split("replan:")[0] + (
        "replan:\n  service_life_years: 5\n  candidate_space:\n    drive_models: [intel-dc-s3700-800gb]\n    layouts: [raid5]\n"
        "    group_widths: [6]\n    min_drive_count: 12\n    max_drive_count: 18\n  seed: 1\n  max_recommendations: 1\n"))
    fc = run_json("forecast", str(tmp_path / "array.yaml"), "--replan", "--format", "json", *addr)
    validate(fc, "arrayplan forecast")
    rec = fc["replan"]["result"]["recommendations"][0]
    assert isinstance(rec["usable_capacity_bytes"], int) and isinstance(rec["latency_p50_s"], float)
    assert isinstance(fc["replan"]["spec"]["workload"]["daily_write_bytes"], float) and fc["replan_notes"]


def test_to_plain_on_engine_values() -> None:
    import dataclasses
    import datetime as dt
    import enum

    import numpy as np

    from arrayplan.v1 import planner_pb2 as pb
    from arrayplan_services import jsonout

    class Kind(enum.Enum):
        SSD = "ssd"

    @dataclasses.dataclass(frozen=True)
    class R:
        repair: dt.timedelta
        mttdl_hours: float
        count: np.int64
        kind: Kind
        history: tuple[tuple[float, float], ...]
        plan: pb.Plan
        note: str | None = None

    p = pb.Plan(name="plans/x")
    p.spec.constraints.usable_capacity_bytes = 9_600_000_000_000
    body = jsonout.to_plain(R(repair=dt.timedelta(milliseconds=5), mttdl_hours=float("inf"), count=np.int64(3), kind=Kind.SSD,
                              history=((1.0, float("nan")),), plan=p))
    assert body["repair_s"] == pytest.approx(0.005, rel=1e-12) and "repair" not in body
    assert body["mttdl_hours"] is None and body["count"] == 3 and type(body["count"]) is int
    assert body["kind"] == "ssd" and body["history"] == [[1.0, None]] and body["note"] is None
    assert body["plan"]["spec"]["constraints"]["usable_capacity_bytes"] == 9_600_000_000_000
    with pytest.raises(TypeError, match="no JSON form for object"):
        jsonout.to_plain({"x": object()})


def test_submit_prints_the_capacityplan_status_through_jsonout(capsys: pytest.CaptureFixture[str]) -> None:
    """``submit --format json`` prints the CRD's status as the API server returned it, through the one
    JSON path: a non-finite number (which a hand-written ``json.dumps`` printed as ``NaN``) is null."""
    from arrayplan_services.cli.cluster_commands import _render

    status = {"phase": "Succeeded", "observedGeneration": 2, "constraintsMet": True,
              "recommendations": [{"rank": 1, "usableCapacityBytes": 9_600_000_000_000, "headroomFraction": float("nan")}]}
    _render({"metadata": {"name": "ci-oltp", "namespace": "ns"}, "status": status}, "json")
    body = _no_nan(capsys.readouterr().out)
    assert body == {"name": "ci-oltp", "namespace": "ns",
                    "status": {**status, "recommendations": [{"rank": 1, "usableCapacityBytes": 9_600_000_000_000, "headroomFraction": None}]}}


def test_the_cli_writes_json_only_through_jsonout() -> None:
    """No CLI module calls ``json.dumps`` for its output, except the OTLP/JSON trace file, whose
    encoding is OpenTelemetry's (``telemetry.otlp_json``), not the ``--format json`` convention."""
    import ast

    by_hand = []
    for path in sorted((ROOT / "services" / "arrayplan_services" / "cli").glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "dumps"
                    and isinstance(node.func.value, ast.Name) and node.func.value.id == "json"
                    and "otlp" not in ast.unparse(node.args[0] if node.args else node)):
                by_hand.append(f"{path.name}:{node.lineno}: {ast.unparse(node)[:80]}")
    assert not by_hand, "JSON written by hand, not through arrayplan_services.jsonout:\n" + "\n".join(by_hand)
