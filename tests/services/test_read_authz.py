"""Reads are authorised: with bearer tokens, a plan, its trace and its spec are read by its creator
and admin tokens only (GetPlan, GetPlanTrace, WatchPlan, ListPlans in both views); another
token gets PERMISSION_DENIED with the standard ErrorInfo, never the content and never the
creator's name; ListPlans lists a non-admin's own plans only. `serve --shared-reads` lets every
token read every plan (cancelling stays the creator's and the admins'); a server without tokens
reads as before. Real servers on 127.0.0.1 with a real token file."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import grpc
import pytest
from google.rpc import error_details_pb2
from grpc_status import rpc_status

from arrayplan.v1 import planner_pb2 as pb
from arrayplan.v1 import planner_pb2_grpc as pb_grpc
from arrayplan_services.connection import open_channel
from conftest import ADMIN, ALICE, BOB, TOKEN_FILE_TEXT, ServerProcess, start_server, tiny_spec

SPEC = tiny_spec()
# Plan ids that do not carry their creator's name (a refusal must not name the creator).
FIRST, SECOND, OTHER = "plans/first-plan", "plans/second-plan", "plans/third-plan"


@dataclass
class Setup:
    server: ServerProcess
    stubs: dict[str, pb_grpc.PlannerServiceStub]
    plans: dict[str, pb.Plan]  # by name, as their creators last read them (terminal)


@pytest.fixture(scope="module")
def tokens(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("tokens") / "tokens"
    path.write_text(TOKEN_FILE_TEXT)
    path.chmod(0o600)
    return path


def _setup(data: Path, *extra: str) -> Iterator[Setup]:
    """A server with ``extra`` flags; alice creates FIRST and SECOND, bob OTHER, each watched to its end."""
    server = start_server(data, extra=("--executor", "local", *extra))
    channels: list[grpc.Channel] = []
    try:
        stubs: dict[str, pb_grpc.PlannerServiceStub] = {}
        for who, token in (("alice", ALICE), ("bob", BOB), ("ops", ADMIN), ("anonymous", "")):
            channel = open_channel(server.address, token=token)
            channels.append(channel)
            stubs[who] = pb_grpc.PlannerServiceStub(channel)
        plans: dict[str, pb.Plan] = {}
        for who, name in (("alice", FIRST), ("alice", SECOND), ("bob", OTHER)):
            created = stubs[who].CreatePlan(pb.CreatePlanRequest(plan=pb.Plan(spec=SPEC), plan_id=name.removeprefix("plans/")),
                                            timeout=60)
            events = list(stubs[who].WatchPlan(pb.WatchPlanRequest(name=created.name), timeout=120))
            assert events[-1].plan.state == pb.Plan.STATE_SUCCEEDED, events[-1]
            plans[name] = events[-1].plan
        yield Setup(server=server, stubs=stubs, plans=plans)
    finally:
        for channel in channels:
            channel.close()
        server.stop()


@pytest.fixture(scope="module")
def strict(tmp_path_factory: pytest.TempPathFactory, tokens: Path) -> Iterator[Setup]:
    yield from _setup(tmp_path_factory.mktemp("strict-data"), "--auth-token-file", str(tokens))


@pytest.fixture(scope="module")
def shared(tmp_path_factory: pytest.TempPathFactory, tokens: Path) -> Iterator[Setup]:
    yield from _setup(tmp_path_factory.mktemp("shared-data"), "--auth-token-file", str(tokens), "--shared-reads")


def _refusal(fn: Callable[[], Any]) -> grpc.RpcError:
    try:
        result = fn()
        if isinstance(result, Iterator):
            list(result)
    except grpc.RpcError as exc:
        return exc
    raise AssertionError("the call was answered")


def _assert_denied(fn: Callable[[], Any], *not_in_message: str) -> str:
    """PERMISSION_DENIED with one ErrorInfo (reason PERMISSION_DENIED, our domain)."""
    exc = _refusal(fn)
    assert exc.code() == grpc.StatusCode.PERMISSION_DENIED, (exc.code(), exc.details())
    status = rpc_status.from_call(exc)  # type: ignore[arg-type]
    assert status is not None
    infos = []
    for detail in status.details:
        if detail.Is(error_details_pb2.ErrorInfo.DESCRIPTOR):
            info = error_details_pb2.ErrorInfo()
            detail.Unpack(info)
            infos.append(info)
    assert [(i.reason, i.domain) for i in infos] == [("PERMISSION_DENIED", "arrayplan.dev")], infos
    message = exc.details() or ""
    for word in not_in_message:
        assert word not in message, message
    return message


def _reads(stub: pb_grpc.PlannerServiceStub, name: str) -> dict[str, Callable[[], Any]]:
    """Every RPC that returns a stored plan's content, for the plan ``name``."""
    return {
        "GetPlan": lambda: stub.GetPlan(pb.GetPlanRequest(name=name), timeout=30),
        "GetPlanTrace": lambda: stub.GetPlanTrace(pb.GetPlanTraceRequest(name=name), timeout=30),
        "WatchPlan": lambda: list(stub.WatchPlan(pb.WatchPlanRequest(name=name), timeout=30)),
    }


def _assert_read(stub: pb_grpc.PlannerServiceStub, plan: pb.Plan) -> None:
    """Each read RPC answers ``plan``'s own content."""
    calls = _reads(stub, plan.name)
    got = calls["GetPlan"]()
    assert (got.name, got.creator, got.spec, got.result) == (plan.name, plan.creator, plan.spec, plan.result)
    trace = calls["GetPlanTrace"]()
    assert trace.trace_id == plan.trace_id and len(trace.spans) > 0
    events = calls["WatchPlan"]()
    assert events[-1].plan.name == plan.name and events[-1].plan.spec == plan.spec


def _list(stub: pb_grpc.PlannerServiceStub, view: int, page_size: int = 0) -> list[pb.Plan]:
    plans: list[pb.Plan] = []
    token = ""
    while True:
        page = stub.ListPlans(pb.ListPlansRequest(page_size=page_size, page_token=token, view=view), timeout=30)
        plans.extend(page.plans)
        token = page.next_page_token
        if not token:
            return plans


def test_the_creator_and_admins_read_a_plan_others_are_denied(strict: Setup) -> None:
    alice, bob, ops = strict.stubs["alice"], strict.stubs["bob"], strict.stubs["ops"]
    for name, plan in strict.plans.items():
        creator = alice if plan.creator == "alice" else bob
        _assert_read(creator, plan)
        _assert_read(ops, plan)  # the admin token reads everyone's
        other = bob if plan.creator == "alice" else alice
        for rpc, call in _reads(other, name).items():
            message = _assert_denied(call, plan.creator)  # the refusal never names the creator
            assert name in message and "creator or an admin" in message, (rpc, message)
    # An unknown plan is NOT_FOUND for everyone (the refusal is for plans that exist: docs/service.md).
    for stub in (alice, ops):
        assert _refusal(lambda stub=stub: stub.GetPlan(pb.GetPlanRequest(name="plans/none-such"), timeout=30)).code() \
            == grpc.StatusCode.NOT_FOUND


def test_list_plans_lists_a_non_admins_own_plans_only(strict: Setup) -> None:
    alice, bob, ops = strict.stubs["alice"], strict.stubs["bob"], strict.stubs["ops"]
    for view in (pb.PLAN_VIEW_UNSPECIFIED, pb.PLAN_VIEW_BASIC, pb.PLAN_VIEW_FULL):
        mine = _list(alice, view)
        assert [p.name for p in mine] == [SECOND, FIRST]  # newest first, bob's plan not among them
        assert {p.creator for p in mine} == {"alice"}
        assert [p.name for p in _list(bob, view)] == [OTHER]
        assert [p.name for p in _list(ops, view)] == [OTHER, SECOND, FIRST]
        if view == pb.PLAN_VIEW_FULL:
            assert all(p.spec == strict.plans[p.name].spec for p in mine)
    # Pages of one plan continue through alice's plans only (the token skips bob's in between).
    paged = _list(alice, pb.PLAN_VIEW_FULL, page_size=1)
    assert [p.name for p in paged] == [SECOND, FIRST]
    assert [p.name for p in _list(bob, pb.PLAN_VIEW_BASIC, page_size=1)] == [OTHER]
    assert [p.name for p in _list(ops, pb.PLAN_VIEW_BASIC, page_size=1)] == [OTHER, SECOND, FIRST]


def test_cancel_and_cancel_on_disconnect_stay_the_creators(strict: Setup) -> None:
    alice, bob = strict.stubs["alice"], strict.stubs["bob"]
    _assert_denied(lambda: bob.CancelPlan(pb.CancelPlanRequest(name=FIRST), timeout=30), "alice")
    _assert_denied(lambda: bob.WatchPlan(pb.WatchPlanRequest(name=FIRST, cancel_on_disconnect=True), timeout=30), "alice")
    # The creator may (the plan has finished: the stream answers it at once and cancels nothing).
    events = list(alice.WatchPlan(pb.WatchPlanRequest(name=FIRST, cancel_on_disconnect=True), timeout=30))
    assert events[-1].plan.state == pb.Plan.STATE_SUCCEEDED


def test_no_token_no_read(strict: Setup) -> None:
    anonymous = strict.stubs["anonymous"]
    for call in (*_reads(anonymous, FIRST).values(), lambda: anonymous.ListPlans(pb.ListPlansRequest(), timeout=30)):
        assert _refusal(call).code() == grpc.StatusCode.UNAUTHENTICATED


def test_shared_reads_let_every_token_read_but_not_cancel(shared: Setup) -> None:
    alice, bob = shared.stubs["alice"], shared.stubs["bob"]
    for plan in shared.plans.values():
        _assert_read(alice, plan)
        _assert_read(bob, plan)
    for view in (pb.PLAN_VIEW_BASIC, pb.PLAN_VIEW_FULL):
        assert [p.name for p in _list(bob, view)] == [OTHER, SECOND, FIRST]
    _assert_denied(lambda: bob.CancelPlan(pb.CancelPlanRequest(name=FIRST), timeout=30))
    message = _assert_denied(lambda: bob.WatchPlan(pb.WatchPlanRequest(name=FIRST, cancel_on_disconnect=True), timeout=30),
                             "alice")
    assert "cancel_on_disconnect" in message


def test_without_tokens_everything_stays_readable(tmp_path: Path) -> None:
    server = start_server(tmp_path / "data", extra=("--executor", "local"))
    try:
        with grpc.insecure_channel(server.address) as channel:
            stub = pb_grpc.PlannerServiceStub(channel)
            created = stub.CreatePlan(pb.CreatePlanRequest(plan=pb.Plan(spec=SPEC), plan_id="open-plan"), timeout=60)
            assert created.creator == ""
            final = list(stub.WatchPlan(pb.WatchPlanRequest(name=created.name, cancel_on_disconnect=True), timeout=120))[-1].plan
            _assert_read(stub, final)
            assert [p.name for p in _list(stub, pb.PLAN_VIEW_FULL)] == [created.name]
    finally:
        server.stop()
