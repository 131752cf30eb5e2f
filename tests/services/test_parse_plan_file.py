"""ParsePlanFile: the server parses a plan file's text with the CLI's own parser, so a client in
another language (the Go client, the OpenTofu provider) sends plan files without a grammar of
its own. The same text gives the same PlanSpec as `arrayplan plan` reads; each problem is a
violation of the request's `text` described as the CLI prints it: `line N: FIELD: reason`."""

from __future__ import annotations

from pathlib import Path

import grpc
import pytest
from google.rpc import error_details_pb2
from grpc_status import rpc_status

from arrayplan.v1 import planner_pb2 as pb
from arrayplan_services.api.planfile import load_plan_file
from conftest import ROOT


def _violations(err: grpc.RpcError) -> list[tuple[str, str]]:
    status = rpc_status.from_call(err)  # type: ignore[arg-type]
    assert status is not None
    bad = error_details_pb2.BadRequest()
    assert any(d.Unpack(bad) for d in status.details)
    return [(v.field, v.description) for v in bad.field_violations]


@pytest.mark.parametrize("name", ["oltp.yaml", "custom-drive.yaml", "archive-budget.yaml"])
def test_an_example_plan_file_parses_to_the_spec_the_cli_reads(stub, name: str) -> None:  # type: ignore[no-untyped-def]
    path = ROOT / "examples" / name
    local, local_warnings = load_plan_file(path)
    response = stub.ParsePlanFile(pb.ParsePlanFileRequest(text=path.read_text()), timeout=30)
    assert response.spec == local
    assert list(response.warnings) == local_warnings


def test_errors_name_the_field_and_line_with_the_clis_hints(stub) -> None:  # type: ignore[no-untyped-def]
    text = ("workload:\n"
            "  read_fracton: 0.7\n"            # line 2: misspelt
            "constraints:\n"
            "  usable_capacity_bytes: 1 TX\n"  # line 4: no such unit
            "  latency_target: 5\n"            # line 5: a duration needs its unit
            "objective: cheapest\n")           # line 6: no such objective
    with pytest.raises(grpc.RpcError) as err:
        stub.ParsePlanFile(pb.ParsePlanFileRequest(text=text), timeout=30)
    assert err.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    violations = _violations(err.value)
    assert {field for field, _ in violations} == {"text"}
    got = {d.split(": ")[1]: d for _, d in violations}
    assert set(got) == {"workload.read_fracton", "constraints.usable_capacity_bytes", "constraints.latency_target", "objective"}
    assert got["workload.read_fracton"].startswith("line 2: workload.read_fracton: unknown field; did you mean 'read_fraction'")
    assert got["constraints.usable_capacity_bytes"].startswith("line 4: constraints.usable_capacity_bytes: ")
    assert got["constraints.latency_target"].startswith("line 5: constraints.latency_target: ")
    assert got["objective"].startswith("line 6: objective: unknown value 'cheapest'; allowed: total_cost_of_ownership, purchase_cost")


def test_workload_files_and_empty_text_are_refused(stub, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    secret = tmp_path / "job.fio"
    secret.write_text("[job]\nrw=randread\nbs=4k\n")
    for key in ("fio", "trace"):
        with pytest.raises(grpc.RpcError) as err:
            stub.ParsePlanFile(pb.ParsePlanFileRequest(text=f"workload: {{{key}: {secret}}}\nconstraints: {{usable_capacity_bytes: 1 TB}}\n"),
                               timeout=30)
        assert err.value.code() == grpc.StatusCode.INVALID_ARGUMENT
        [(field, description)] = _violations(err.value)
        assert field == "text" and description.startswith(f"line 1: workload.{key}: a workload file names a path on the caller's machine")
        assert "randread" not in description
    with pytest.raises(grpc.RpcError) as err:
        stub.ParsePlanFile(pb.ParsePlanFileRequest(text=""), timeout=30)
    assert _violations(err.value) == [("text", "line 1: the file is empty; a plan needs at least workload and constraints")]
