"""The `arrayplan` command: plan files, exit codes CI gates on, output formats, catalog and runs."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from arrayplan_engine.units import parse_duration_s, parse_size_bytes
from arrayplan_services.api.planfile import PlanFileError, plan_spec_from_text
from conftest import ROOT, ServerProcess

EXAMPLES = ROOT / "examples"
# A small plan (8 candidates) for the in-process CLI tests: the examples' larger spaces are planned
# against the server (test_cli_against_running_server) and by the engine tests.
SMALL_PLAN = ("workload:\n  read_fraction: 0.7\n  io_size_mix: [{io_bytes: 8 KiB, weight: 1}]\n  target_iops: 5000\n"
              "  daily_write_bytes: 500 GB\nconstraints:\n  usable_capacity_bytes: 2 TB\n  latency_percentile: 99\n"
              "  latency_target: 5ms\ncandidate_space:\n  drive_models: [intel-dc-s3500-480gb, intel-dc-s3700-400gb]\n"
              "  layouts: [raid10, raid6]\n  max_drive_count: 16\nservice_life_years: 3\nseed: 2\n")


def small_plan(tmp_path: Path) -> str:
    path = tmp_path / "small.yaml"
    path.write_text(SMALL_PLAN)
    return str(path)


def run_cli(*args: str, cwd: Path = ROOT, timeout: float = 600) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "arrayplan_services.cli.main", *args], capture_output=True, text=True,
                          cwd=cwd, timeout=timeout)


def test_units_in_plan_files() -> None:
    assert parse_size_bytes("20 TB") == 20e12
    assert parse_size_bytes("4 KiB") == 4096
    assert parse_size_bytes("1.5TiB") == 1.5 * 1024**4
    assert parse_size_bytes(4096) == 4096
    assert parse_duration_s("2ms") == pytest.approx(0.002)
    assert parse_duration_s("500us") == pytest.approx(0.0005)
    assert parse_duration_s("1.5s") == 1.5
    with pytest.raises(ValueError, match="size"):
        parse_size_bytes("lots")
    with pytest.raises(ValueError, match="duration"):
        parse_duration_s("2 fortnights")


def test_example_plan_files_parse() -> None:
    for path in sorted(EXAMPLES.glob("*.yaml")):
        spec, _ = plan_spec_from_text(path.read_text(), str(path), EXAMPLES)
        assert spec.constraints.usable_capacity_bytes > 0, path


BAD_FILES = [
    ("workload:\n  read_fraction: 0.5\nconstraints: a: b\n", 3, "", "not valid YAML"),
    ("", 1, "", "empty"),
    ("workload:\n  read_fraction: 0.5\n", 1, "constraints", "is required"),
    ("workload:\n  read_fraction: 0.5\nconstraints:\n  usable_capacity_bytes: 20 TB\n  latency_target: soon\n", 5,
     "constraints.latency_target", "duration"),
    ("workload:\n  read_fraction: 0.5\n  colour: blue\nconstraints:\n  usable_capacity_bytes: 1 TB\n", 3, "workload.colour", "unknown field"),
    ("workload:\n  read_fraction: half\nconstraints:\n  usable_capacity_bytes: 1 TB\n", 2, "workload.read_fraction", "expected a number"),
    ("workload:\n  read_fraction: 0.5\nconstraints:\n  usable_capacity_bytes: many\n", 4, "constraints.usable_capacity_bytes", "size"),
    ("workload:\n  read_fraction: 0.5\nconstraints:\n  usable_capacity_bytes: 1 TB\nobjective: cheapest\n", 5, "objective", "allowed: total_cost_of_ownership"),
    ("workload:\n  read_fraction: 0.5\nconstraints:\n  usable_capacity_bytes: 1 TB\ncandidate_space:\n  layouts: raid6\n", 6,
     "candidate_space.layouts", "must be a list"),
    ("workload:\n  read_fraction: 0.5\n  io_size_mix:\n    - {io_bytes: 4 KiB, weight: 1, extra: 2}\nconstraints:\n  usable_capacity_bytes: 1 TB\n", 4,
     "workload.io_size_mix[0].extra", "unknown field"),
    ("workload:\n  read_fraction: 0.5\nconstraints:\n  usable_capacity_bytes: 1 TB\nseed: 1.5\n", 5, "seed", "integer"),
    ("workload:\n  read_fraction: 0.5\n  read_fraction: 0.6\nconstraints:\n  usable_capacity_bytes: 1 TB\n", 3, "workload.read_fraction", "twice"),
    ("- just\n- a list\n", 1, "", "mapping"),
]


@pytest.mark.parametrize(("text", "line", "field", "reason"), BAD_FILES, ids=[f"bad{i}" for i in range(len(BAD_FILES))])
def test_bad_plan_files_name_line_and_field(text: str, line: int, field: str, reason: str) -> None:
    with pytest.raises(PlanFileError) as err:
        plan_spec_from_text(text, "plan.yaml")
    problems = err.value.problems
    assert any(p[0] == line and p[1] == field and reason in p[2] for p in problems), problems
    assert f"plan.yaml:{line}:" in str(err.value)


def test_bad_plan_file_exits_2(tmp_path: Path) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text("workload:\n  read_fraction: 2.5\n  queue_depth: 0\nconstraints:\n  usable_capacity_bytes: 1 TB\n")
    out = run_cli("plan", str(bad), "--local", "--executor", "local", "--data-dir", str(tmp_path / "d"))
    assert out.returncode == 2, out.stderr
    # The server's field violations come back with the file's line numbers.
    assert "plan.spec.workload.read_fraction: must be in [0, 1], got 2.5" in out.stderr
    assert f"{bad}:2: plan.spec.workload.read_fraction" in out.stderr
    assert f"{bad}:3: plan.spec.workload.queue_depth" in out.stderr
    missing = run_cli("plan", str(tmp_path / "nope.yaml"), "--local", "--executor", "local")
    assert missing.returncode == 2 and "cannot read the plan file" in missing.stderr


def test_plan_exit_codes_and_formats_in_process(tmp_path: Path) -> None:
    data = str(tmp_path / "d")
    plan_file = small_plan(tmp_path)
    ok = run_cli("plan", plan_file, "--local", "--executor", "local", "--data-dir", data, "--format", "json")
    assert ok.returncode == 0, ok.stderr
    plan = json.loads(ok.stdout)
    assert plan["state"] == "STATE_SUCCEEDED" and plan["result"]["constraints_met"] is True
    assert len(plan["trace_id"]) == 32 and plan["name"].startswith("plans/")
    none = run_cli("plan", str(EXAMPLES / "impossible.yaml"), "--local", "--executor", "local", "--data-dir", data, "--format", "markdown")
    assert none.returncode == 3, none.stderr
    assert none.stdout.startswith("### arrayplan: plans/") and "No candidate meets every constraint" in none.stdout
    md = run_cli("plan", plan_file, "--local", "--executor", "local", "--data-dir", data, "--format", "markdown")
    assert md.returncode == 0
    assert "| # | drive | n | layout |" in md.stdout and "trace id `" in md.stdout
    gate = run_cli("plan", plan_file, "--local", "--executor", "local", "--data-dir", data, "--format", "json",
                   "--fail-if-headroom-below", "500")
    assert gate.returncode == 3 and "below --fail-if-headroom-below" in gate.stderr


def test_cli_against_running_server(server: ServerProcess) -> None:
    out = run_cli("plan", str(EXAMPLES / "oltp.yaml"), "--server", server.address)
    assert out.returncode == 0, out.stderr
    assert "progress:" in out.stderr, "progress is shown while candidates are simulated"
    assert "trace id:" in out.stdout and "stored run: plans/" in out.stdout
    name = out.stdout.split("stored run: ")[1].split()[0]
    runs = run_cli("runs", "--server", server.address)
    assert runs.returncode == 0 and name in runs.stdout
    shown = run_cli("runs", name, "--server", server.address, "--format", "json")
    assert shown.returncode == 0 and json.loads(shown.stdout)["name"] == name
    drives = run_cli("drives", "--server", server.address, "--format", "json")
    names = [d["name"] for d in json.loads(drives.stdout)]
    assert "intel-dc-s3500-480gb" in names and "hdd-15k-sas-300gb" in names
    one = run_cli("drives", "intel-dc-s3500-480gb", "--server", server.address)
    assert one.returncode == 0 and "001_4993870e060cd6fa.txt" in one.stdout
    unknown = run_cli("drives", "intel-ssd-999", "--server", server.address)
    # At most 10 suggestions, the closest first (errors fit the client's metadata limit).
    assert unknown.returncode == 2 and "did you mean intel-ssd-910-800gb" in unknown.stderr and "known:" in unknown.stderr
    trace = run_cli("trace", name, "--data-dir", str(server.data_dir))
    assert trace.returncode == 0 and "arrayplan.evaluate_batch [consumer, worker:" in trace.stdout


def test_unreachable_server_exits_1(tmp_path: Path) -> None:
    out = run_cli("plan", str(EXAMPLES / "oltp.yaml"), "--server", "127.0.0.1:1")
    assert out.returncode == 1 and "UNAVAILABLE" in out.stderr


def test_buf_lint_passes() -> None:
    buf = Path(sys.executable).parent / "buf"
    out = subprocess.run([str(buf), "lint"], cwd=ROOT / "proto", capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stdout + out.stderr


def test_simulate_cli_calls_the_service(server: ServerProcess, tmp_path: Path) -> None:
    args = ("simulate", "--drive", "intel-dc-s3500-480gb", "--drives", "12", "--layout", "raid6", "--read-fraction", "0.7",
            "--target-iops", "10000", "--duration-s", "2", "--format", "json")
    out = run_cli(*args, "--server", server.address)
    assert out.returncode == 0, out.stderr
    body = json.loads(out.stdout)
    assert body["achieved_iops"] == pytest.approx(10_000, rel=0.05)
    assert body["member_ios_per_host_io"] == pytest.approx(2.5, rel=0.03)
    assert body["usable_capacity_bytes"] == 10 * 480_000_000_000  # a JSON number (docs/json.md)
    bad = run_cli("simulate", "--drive", "intel-dc-s3500-480gb", "--drives", "12", "--layout", "raid7", "--read-fraction", "0.7",
                  "--server", server.address)
    assert bad.returncode == 2 and "layout" in bad.stderr
    # In-process, with the latency CDF / IOPS-vs-time picture.
    png = tmp_path / "sim.png"
    local = run_cli(*args, "--local", "--plot", str(png))
    assert local.returncode == 0, local.stderr
    assert json.loads(local.stdout)["member_ios_per_host_io"] == pytest.approx(2.5, rel=0.03)
    assert png.stat().st_size > 10_000


def test_plan_report_flag_writes_html_and_markdown(tmp_path: Path) -> None:
    out = run_cli("plan", small_plan(tmp_path), "--local", "--executor", "local", "--data-dir", str(tmp_path / "d"),
                  "--format", "json", "--report", str(tmp_path / "report"))
    assert out.returncode == 0, out.stderr
    html = (tmp_path / "report" / "index.html").read_text()
    md = (tmp_path / "report" / "report.md").read_text()
    trace_id = json.loads(out.stdout)["trace_id"]
    assert trace_id in html and trace_id in md
    assert html.count("data:image/png;base64,") >= 3


def test_full_plan_from_a_trace_to_a_report(tmp_path: Path) -> None:
    """A real block trace (SNIA MSR Cambridge excerpt, tests/data/traces) characterised into a
    workload, planned and reported."""
    import shutil

    from conftest import DATA

    # Beside the plan file: a plan file may only name files under its own directory.
    trace = shutil.copy(DATA / "traces" / "msr-cambridge1-sample.csv", tmp_path / "msr.csv")
    plan = tmp_path / "trace-plan.yaml"
    plan.write_text(
        f"workload:\n  trace: {Path(trace).name}\n  target_iops: 5000\n  daily_write_bytes: 500 GB\n"
        "constraints:\n  usable_capacity_bytes: 2 TB\n  latency_percentile: 99\n  latency_target: 5ms\n"
        "candidate_space:\n  drive_models: [intel-dc-s3500-480gb, intel-dc-s3700-400gb]\n  layouts: [raid10, raid6]\n"
        "  max_drive_count: 16\nservice_life_years: 3\n")
    out = run_cli("plan", str(plan), "--local", "--executor", "local", "--data-dir", str(tmp_path / "d"), "--format", "json",
                  "--report", str(tmp_path / "report"))
    assert out.returncode == 0, out.stderr
    body = json.loads(out.stdout)
    # The trace's read share (508 reads of 1,000 IOs, data README) became the plan's workload.
    assert body["spec"]["workload"]["read_fraction"] == pytest.approx(0.508)
    assert body["result"]["constraints_met"] is True
    assert (tmp_path / "report" / "index.html").stat().st_size > 50_000


def test_plan_quiet_prints_only_the_result(tmp_path: Path) -> None:
    """--quiet: the result on stdout and nothing on stderr for a plan that succeeds with no
    warnings (not the 'plan created' and 'run stored' lines); `plan --help` says what it keeps."""
    out = run_cli("plan", small_plan(tmp_path), "--local", "--executor", "local", "--data-dir", str(tmp_path / "d"),
                  "--format", "json", "--quiet")
    assert out.returncode == 0, out.stderr
    assert out.stderr == "", out.stderr
    assert json.loads(out.stdout)["state"] == "STATE_SUCCEEDED"
    loud = run_cli("plan", small_plan(tmp_path), "--local", "--executor", "local", "--data-dir", str(tmp_path / "d"),
                   "--format", "json")
    assert loud.returncode == 0 and "created (trace id" in loud.stderr and "stored in" in loud.stderr, loud.stderr
    helped = run_cli("plan", "--help")
    quiet_help = " ".join(helped.stdout.split()).split("--quiet ")[1]
    assert quiet_help.startswith("print only the result (stdout) and, on stderr, errors and the plan file's warnings")


def test_a_mistyped_drive_prints_its_error_once(tmp_path: Path) -> None:
    """The server's INVALID_ARGUMENT message is its field violations joined: each is printed once."""
    out = run_cli("simulate", "--local", "--drive", "intel-dc-s3500-48gb", "--drives", "8", "--layout", "raid10",
                  "--read-fraction", "0.7", cwd=tmp_path)
    assert out.returncode == 2, out.stderr
    assert out.stderr.count("unknown 'intel-dc-s3500-48gb'") == 1, out.stderr
    lines = out.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("arrayplan: INVALID_ARGUMENT: drive_model: unknown 'intel-dc-s3500-48gb'; "
                                                   "did you mean intel-dc-s3500-480gb"), out.stderr


def test_several_field_violations_are_listed_once_each() -> None:
    from arrayplan_services.cli.render import rpc_error_lines

    assert rpc_error_lines("NOT_FOUND", "plan 'x' not found", []) == ["NOT_FOUND: plan 'x' not found"]
    two = [("plan.spec.workload.read_fraction", "must be in [0, 1], got 2.5"), ("plan.spec.workload.queue_depth", "must be >= 1, got 0")]
    assert rpc_error_lines("INVALID_ARGUMENT", "; ".join(f"{f}: {r}" for f, r in two), two) == [
        "INVALID_ARGUMENT: 2 invalid fields", "  plan.spec.workload.read_fraction: must be in [0, 1], got 2.5",
        "  plan.spec.workload.queue_depth: must be >= 1, got 0"]
    # the server lists at most MAX_VIOLATIONS; its message says how many more there were
    assert rpc_error_lines("INVALID_ARGUMENT", "a: x; b: y; and 7 more (3 not listed)", [("a", "x")]) == [
        "INVALID_ARGUMENT: 4 invalid fields", "  a: x", "  ... and 3 more not listed"]
