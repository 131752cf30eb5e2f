"""A newcomer's first hour: the correctness bugs a first user hit, the one JSON
convention, and what a piped or pasted output looks like. Sample trace: tests/data/traces
(SNIA MSR Cambridge excerpt, 1,000 IOs of which 492 writes; tests/data/README.md)."""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from arrayplan.v1 import planner_pb2 as pb
from arrayplan_services import jsonout
from arrayplan_services.api.planfile import plan_spec_from_text
from arrayplan_services.api.workloads import load_workload
from conftest import DATA, ROOT, ServerProcess

MSR = DATA / "traces" / "msr-cambridge1-sample.csv"


def run_cli(*args: str, cwd: Path = ROOT, env: dict[str, str] | None = None, timeout: float = 600) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "arrayplan_services.cli.main", *args], capture_output=True, text=True,
                          cwd=cwd, timeout=timeout, env={**os.environ, **(env or {})})


# -- Part 6: correctness bugs --------------------------------------------------------------------

def test_trace_target_iops_override_rescales_the_write_volume() -> None:
    base, _ = load_workload({"trace": str(MSR)}, ROOT)
    assert 0 < base.target_iops < 100 and base.daily_write_bytes > 0  # ~7.9 IOPS over ~127 s
    w, warnings = load_workload({"trace": str(MSR), "target_iops": 20_000}, ROOT)
    factor = 20_000 / base.target_iops
    # Same mix at a higher rate writes proportionally more per day (rel 1e-9: pure arithmetic).
    assert w.daily_write_bytes == pytest.approx(base.daily_write_bytes * factor, rel=1e-9)
    assert any("daily_write_bytes scaled" in x and "20,000" in x for x in warnings)
    # An explicit volume wins and nothing is scaled.
    w2, warnings2 = load_workload({"trace": str(MSR), "target_iops": 20_000, "daily_write_bytes": 1e12}, ROOT)
    assert w2.daily_write_bytes == 1e12 and not any("scaled" in x for x in warnings2)
    # The plan-file path does the same and says so.
    spec, pf_warnings = plan_spec_from_text(
        f"workload:\n  trace: {MSR}\n  target_iops: 20000\nconstraints:\n  usable_capacity_bytes: 1 TB\n", "p.yaml", ROOT)
    assert spec.workload.daily_write_bytes == pytest.approx(base.daily_write_bytes * factor, rel=1e-9)
    assert any("daily_write_bytes scaled" in x for x in pf_warnings)


def test_simulate_workload_relative_fio_path_is_joined_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from arrayplan_services.cli import simulate_command

    (tmp_path / "jobs").mkdir()
    (tmp_path / "jobs" / "x.fio").write_text((DATA / "fio" / "jesd219.fio").read_text())
    monkeypatch.chdir(tmp_path)
    args = argparse.Namespace(read_fraction=None, random_fraction=None, io_bytes=None, queue_depth=None, target_iops=None,
                              workload="jobs/x.fio")
    wl = simulate_command._workload(args)
    assert wl.read_fraction == pytest.approx(0.4)  # rwmixread=40 in jesd219.fio


def test_local_store_is_per_user(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    from arrayplan_services.cli.common import user_data_dir

    monkeypatch.delenv("ARRAYPLAN_DATA_DIR", raising=False)
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg"))
    assert user_data_dir() == tmp_path / "xdg" / "arrayplan"
    monkeypatch.delenv("XDG_DATA_HOME")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert user_data_dir() == tmp_path / "home" / ".local" / "share" / "arrayplan"
    monkeypatch.setenv("ARRAYPLAN_DATA_DIR", str(tmp_path / "explicit"))
    assert user_data_dir() == tmp_path / "explicit"


def test_ray_token_auth_warning_is_silenced(server: ServerProcess) -> None:
    assert "Token authentication is" not in server.log()


@pytest.mark.slow
def test_first_plan_of_a_newcomer(tmp_path: Path) -> None:
    """plan --local from another directory: the store lands in the per-user dir and is named; the
    default endurance margin is applied and stated; the Markdown carries the import warnings and
    P(data loss); a piped table is not padded and explanations are one line each; the JSON is the
    one convention and validates against docs/json-schema.json."""
    import shutil

    plan_file = tmp_path / "trace-plan.yaml"
    shutil.copy(MSR, tmp_path / MSR.name)  # beside the plan file: plan files name only files under their directory
    plan_file.write_text(
        f"workload:\n  trace: {MSR.name}\n  target_iops: 2000\n"
        "constraints:\n  usable_capacity_bytes: 1 TB\n  latency_percentile: 99\n  latency_target: 5ms\n"
        "candidate_space:\n  drive_models: [intel-dc-s3500-480gb]\n  layouts: [raid10, raid6]\n  max_drive_count: 12\n"
        "service_life_years: 3\nmax_recommendations: 4\n")
    cwd = tmp_path / "elsewhere"
    cwd.mkdir()
    env = {"XDG_DATA_HOME": str(tmp_path / "xdg"), "ARRAYPLAN_DATA_DIR": ""}
    md = run_cli("plan", str(plan_file), "--local", "--executor", "local", "--format", "markdown", "--plan-id", "newcomer",
                 cwd=cwd, env=env)
    assert md.returncode in (0, 3), md.stderr
    store = tmp_path / "xdg" / "arrayplan" / "runs.sqlite3"
    assert store.is_file() and not (cwd / "data").exists()
    assert f"stored in {store}" in md.stderr
    # Markdown: the trace import warnings (incl. the write-volume rescale), P(data loss), the margin.
    assert "> [!WARNING]" in md.stdout and "daily_write_bytes scaled" in md.stdout
    assert "P(loss)" in md.stdout and "P(data loss) over the service life" in md.stdout
    assert "endurance margin 10% of rated endurance" in md.stdout

    js = run_cli("runs", "plans/newcomer", "--local", "--executor", "local", "--format", "json", cwd=cwd, env=env)
    assert js.returncode == 0, js.stderr
    body = json.loads(js.stdout)
    assert body["spec"]["constraints"]["endurance_margin_fraction"] == pytest.approx(0.1)
    best = body["result"]["recommendations"][0]
    endurance = next(c for c in best["checks"] if c["constraint"] == "endurance")
    assert endurance["required"] == pytest.approx(0.9)  # life used at most 1 - margin
    # The convention: int64 as numbers, durations in seconds under _s keys, zero fields present.
    assert isinstance(best["usable_capacity_bytes"], int) and best["usable_capacity_bytes"] > 1e12
    assert isinstance(best["latency_p50_s"], float) and 0 < best["latency_p50_s"] < 0.1
    assert "latency_p50" not in best and isinstance(body["result"]["constraints_met"], bool)
    assert body["spec"]["constraints"]["worst_second_latency_target_s"] is None
    import jsonschema

    schema = json.loads((ROOT / "docs" / "json-schema.json").read_text())
    jsonschema.validate(body, {**schema, "$ref": schema["x-outputs"]["arrayplan plan / arrayplan runs NAME"]})

    table = run_cli("runs", "plans/newcomer", "--local", "--executor", "local", cwd=cwd, env=env)
    assert table.returncode == 0, table.stderr
    lines = table.stdout.splitlines()
    assert not any(line != line.rstrip() for line in lines), "piped output padded with spaces"
    table_width = max(len(line) for line in lines if line.startswith(("┏", "┃", "┡", "│", "└")))
    assert table_width < 200
    for r in best, *body["result"]["recommendations"][1:3]:
        assert f"{r['rank']}. {r['explanation']}" in lines  # whole sentence on one line
    assert "\x1b[" not in table.stdout


# -- Part 3: one output convention ---------------------------------------------------------------

def test_json_convention_on_a_message() -> None:
    p = pb.Plan(name="plans/x")
    p.spec.constraints.usable_capacity_bytes = 9_600_000_000_000
    r = p.result.recommendations.add(drive_count=4)
    r.latency_p50.FromNanoseconds(628_736)
    body = json.loads(jsonout.dumps(p))
    assert body["spec"]["constraints"]["usable_capacity_bytes"] == 9_600_000_000_000
    assert body["result"]["recommendations"][0]["latency_p50_s"] == pytest.approx(0.000628736, rel=1e-12)
    assert body["result"]["constraints_met"] is False and body["error_message"] == ""
    assert body["create_time"] is None and body["result"]["recommendations"][0]["rebuild_duration_s"] is None
    assert body["state"] == "STATE_UNSPECIFIED" and body["result"]["pareto_front"] == []


def test_json_schema_in_docs_is_generated_from_the_proto() -> None:
    schema = jsonout.json_schema(jsonout.output_roots())
    assert json.loads((ROOT / "docs" / "json-schema.json").read_text()) == schema, \
        "regenerate: python -m arrayplan_services.jsonout > docs/json-schema.json"


def test_text_labels_seconds_with_their_unit() -> None:
    from arrayplan_services.cli.render import text_lines

    lines = text_lines({"latency_p99_s": 0.000628736, "duration_s": 10.0, "usable_capacity_bytes": 9.6e12, "latency": {"p50_s": 0.0021}})
    assert re.search(r"^latency_p99 +628\.7 µs$", lines[0]) and re.search(r"^duration +10 s$", lines[1])
    assert "9.6 TB" in lines[2] and re.search(r"^latency\.p50 +2\.1 ms$", lines[3])


# -- Part 4: CLI manners -------------------------------------------------------------------------

def test_version_and_help_on_every_flag() -> None:
    from arrayplan_services.cli.main import build_parser

    out = run_cli("--version")
    assert out.returncode == 0 and re.match(r"^arrayplan \d+\.\d+\.\d+ \(engine \d+\.\d+\.\d+, API arrayplan\.v1\)$", out.stdout.strip())
    parser = build_parser()
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    missing = [(name, a.option_strings or a.dest) for name, p in [("", parser), *sub.choices.items()] for a in p._actions
               if not isinstance(a, (argparse._HelpAction, argparse._SubParsersAction)) and not a.help]
    assert not missing, missing


def _complete(words: list[str], script: str) -> list[str]:
    line = " ".join(words)
    bash = (f"{script}\nCOMP_WORDS=({line}); COMP_CWORD={len(words) - 1}; _arrayplan; printf '%s\\n' \"${{COMPREPLY[@]}}\"")
    out = subprocess.run(["bash", "-c", bash], capture_output=True, text=True, timeout=30, check=True)
    return out.stdout.split()


def test_bash_completion_from_the_parser() -> None:
    out = run_cli("completion", "bash")
    assert out.returncode == 0
    assert _complete(["arrayplan", "pl"], out.stdout) == ["plan"]
    assert "--format" in _complete(["arrayplan", "plan", "--fo"], out.stdout)
    assert sorted(_complete(["arrayplan", "plan", "--format", "''"], out.stdout)) == ["json", "markdown", "table"]
    zsh = run_cli("completion", "zsh")
    # shtab writes a native zsh script (tests/services/test_completion.py loads it in a real zsh).
    assert zsh.returncode == 0 and zsh.stdout.startswith("#compdef arrayplan") and "_shtab_arrayplan()" in zsh.stdout


def test_did_you_mean_for_drives_layouts_presets_and_plan_keys() -> None:
    from arrayplan_engine.catalog import get_drive
    from arrayplan_engine.errors import InvalidInputError
    from arrayplan_engine.layout import make_layout
    from arrayplan_engine.presets import get_preset
    from arrayplan_services.api.planfile import PlanFileError

    for call, suggestion in ((lambda: get_drive("intel-dc-s350-480gb"), "did you mean intel-dc-s3500-480gb"),
                             (lambda: make_layout("riad6", 6), "did you mean 'raid6'"),
                             (lambda: get_preset("oracle-swingbnch"), "did you mean oracle-swingbench")):
        with pytest.raises(InvalidInputError) as exc:
            call()
        assert suggestion in exc.value.violations[0].reason
    with pytest.raises(PlanFileError) as pf:
        plan_spec_from_text("workload:\n  read_fraction: 0.5\n  quee_depth: 4\nconstraints:\n  usable_capacity_bytes: 1 TB\n")
    assert "workload.quee_depth: unknown field; did you mean 'queue_depth'?" in str(pf.value) and ":3:" in str(pf.value)


def test_one_size_and_duration_grammar() -> None:
    from arrayplan_engine.units import parse_duration_s, parse_size_bytes
    from arrayplan_services.api.planfile import PlanFileError, size_arg

    # fio's k is 1024 (fio HOWTO, "bs": "4k" = 4096 with the default kb_base=1024); KB is SI.
    assert parse_size_bytes("8k") == parse_size_bytes("8K") == parse_size_bytes("8KiB") == parse_size_bytes("8 kib") == 8192
    assert parse_size_bytes("8 KB") == parse_size_bytes("8kB") == 8000
    assert parse_size_bytes("20 TB") == 20e12 and parse_size_bytes("1M") == 1024**2 and parse_size_bytes("1 MB") == 1e6
    assert size_arg("8KiB") == 8192
    from arrayplan_services.api.planfile import seconds_arg

    assert seconds_arg("90") == 90 and seconds_arg("30min") == 1800 and seconds_arg("250ms") == pytest.approx(0.25)
    with pytest.raises(ValueError, match="unknown size unit 'KiBs'"):
        parse_size_bytes("8 KiBs")
    with pytest.raises(ValueError, match=r"needs a unit .* did you mean '5ms' or '5s'"):
        parse_duration_s(5)
    assert parse_duration_s("5 ms") == pytest.approx(0.005) and parse_duration_s("2 min") == 120
    spec, _ = plan_spec_from_text("workload:\n  read_fraction: 0.5\n  io_size_mix: [[8k, 1]]\nconstraints:\n  usable_capacity_bytes: 1 TB\n")
    assert spec.workload.io_size_mix[0].io_bytes == 8192
    with pytest.raises(PlanFileError, match=r":4: constraints.latency_target: a duration needs a unit"):
        plan_spec_from_text("workload:\n  read_fraction: 0.5\nconstraints:\n  latency_target: 5\n  usable_capacity_bytes: 1 TB\n")
    sim = ("simulate", "--drive", "intel-dc-s3500-480gb", "--drives", "4", "--layout", "raid10", "--read-fraction", "0.5",
           "--server", "127.0.0.1:1")
    accepted = run_cli(*sim, "--io-bytes", "8KiB")  # parsed, then the (absent) server is called
    assert accepted.returncode == 1 and "UNAVAILABLE" in accepted.stderr
    refused = run_cli(*sim, "--io-bytes", "8 parsecs")
    assert refused.returncode == 2 and "argument --io-bytes: unknown size unit 'parsecs'" in refused.stderr


# -- Part 5: traces you can open -----------------------------------------------------------------

SMALL_PLAN = ("workload:\n  read_fraction: 0.7\n  io_size_mix: [[8k, 1]]\n  target_iops: 5000\n"
              "constraints:\n  usable_capacity_bytes: 1 TB\n"
              "candidate_space:\n  drive_models: [intel-dc-s3700-400gb]\n  layouts: [raid10]\n  max_drive_count: 8\nseed: 3\n")


@pytest.mark.slow
def test_trace_against_a_server_with_attributes_and_otlp_json(server: ServerProcess, tmp_path: Path) -> None:
    plan_file = tmp_path / "small.yaml"
    plan_file.write_text(SMALL_PLAN)
    out = run_cli("plan", str(plan_file), "--server", server.address, "--format", "json", "--quiet")
    assert out.returncode in (0, 3), out.stderr
    plan = json.loads(out.stdout)
    otlp = tmp_path / "trace.json"
    tree = run_cli("trace", plan["name"], "--server", server.address, "--otlp-json", str(otlp), cwd=tmp_path)
    assert tree.returncode == 0, tree.stderr
    assert tree.stdout.startswith(f"trace {plan['trace_id']}:")
    assert "arrayplan.evaluate_batch [consumer, worker:" in tree.stdout
    assert re.search(r"^\s+\S+ = \S", tree.stdout, re.M), "span attributes are shown"
    body = json.loads(otlp.read_text())
    # Field names, enum numbers and int64-as-string times as the OTLP protobuf defines them (ids are
    # hex in OTLP/JSON, base64 in plain proto JSON: the field names and types are what this checks).
    from google.protobuf import json_format
    from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

    parsed = json_format.Parse(otlp.read_text(), ExportTraceServiceRequest())
    spans = [s for rs in body["resourceSpans"] for ss in rs["scopeSpans"] for s in ss["spans"]]
    assert sum(len(ss.spans) for rs in parsed.resource_spans for ss in rs.scope_spans) == len(spans)
    assert spans and all(s["traceId"] == plan["trace_id"] and len(s["spanId"]) == 16 for s in spans)
    assert all(int(s["endTimeUnixNano"]) >= int(s["startTimeUnixNano"]) > 1.6e18 for s in spans)
    ids = {s["spanId"] for s in spans}
    assert sum(1 for s in spans if s.get("parentSpanId") not in ids) == 1  # one root
    assert any(a["key"] for s in spans for a in s.get("attributes", []))  # a span without attributes has no key
    assert {5} <= {s["kind"] for s in spans}  # the Ray workers' CONSUMER spans
    missing = run_cli("trace", "plans/nope-nope", "--server", server.address)
    assert missing.returncode == 2 and "NOT_FOUND" in missing.stderr


# -- Part 1: kernels compiled once ---------------------------------------------------------------

def test_kernel_cache_dir_and_cold_detection(tmp_path: Path) -> None:
    """An empty NUMBA_CACHE_DIR is reported cold, kernel by kernel (what a plan's progress then
    says); the default directory is per user and shared by the server's Ray workers (they inherit
    the environment the CLI sets before numba is imported)."""
    env = {"NUMBA_CACHE_DIR": str(tmp_path / "numba")}
    out = subprocess.run([sys.executable, "-m", "arrayplan_services.numba_cache", "--cold"], capture_output=True, text=True,
                         timeout=300, env={**os.environ, **env}, check=True)
    assert "array._simulate_kernel" in out.stdout.split()
    default = subprocess.run([sys.executable, "-m", "arrayplan_services.numba_cache", "--dir"], capture_output=True, text=True,
                             timeout=60, env={**{k: v for k, v in os.environ.items() if k != "NUMBA_CACHE_DIR"},
                                              "XDG_CACHE_HOME": str(tmp_path / "xdg")}, check=True)
    assert default.stdout.strip() == str(tmp_path / "xdg" / "arrayplan" / "numba")


def test_progress_line_names_the_phase(capsys: pytest.CaptureFixture[str]) -> None:
    from arrayplan_services.cli.plan_commands import _progress_reporter

    update, _ = _progress_reporter(quiet=False)  # stderr is not a TTY under pytest: one line per change
    update(pb.PlanProgress(candidates_total=6, candidates_to_evaluate=6, phase="compiling the simulation kernels"))
    update(pb.PlanProgress(candidates_total=6, candidates_to_evaluate=6, candidates_evaluated=6))
    err = capsys.readouterr().err
    assert "progress: compiling the simulation kernels" in err and "progress: 6/6 candidates simulated" in err


def _shape(v: object) -> object:
    if isinstance(v, dict):
        return {k: _shape(x) for k, x in v.items()}
    if isinstance(v, list):
        return "list"
    return type(v).__name__ if v is not None else "null"


@pytest.mark.slow
def test_simulate_json_is_the_same_via_a_server_or_local(server: ServerProcess) -> None:
    """--local runs the server's own SimulateArray in-process: the same keys and types; figures that
    do not depend on the time-window split equal, the rest within sampling noise (5 %)."""
    args = ("simulate", "--drive", "intel-dc-s3500-480gb", "--drives", "12", "--layout", "raid6", "--read-fraction", "0.7",
            "--target-iops", "10000", "--duration-s", "2", "--io-bytes", "4k", "--format", "json")
    remote = run_cli(*args, "--server", server.address)
    local = run_cli(*args, "--local")
    assert remote.returncode == 0 and local.returncode == 0, remote.stderr + local.stderr
    r, loc = json.loads(remote.stdout), json.loads(local.stdout)
    assert _shape(r) == _shape(loc)
    for key in ("usable_capacity_bytes", "purchase_cost_usd", "models", "endurance_years"):
        assert r[key] == loc[key], key
    assert loc["achieved_iops"] == pytest.approx(r["achieved_iops"], rel=0.05)
    assert isinstance(loc["latency"]["p99_s"], float) and 0 < loc["latency"]["p99_s"] < 0.1
