"""The CapacityPlan controller against a real kube-apiserver (+ etcd) and a real `arrayplan serve`:
valid, invalid and huge CapacityPlans, status through Succeeded with recommendations, one run per
generation (also across a controller killed mid-plan, and a run created before a crash), leader
election through a Lease, watch resume from the saved resourceVersion and the 410 Gone fallback."""

from __future__ import annotations

import json
import signal
import subprocess
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import grpc
import pytest
import yaml
from kubernetes import client
from kubernetes.client.exceptions import ApiException

from arrayplan.v1 import planner_pb2 as pb
from arrayplan.v1 import planner_pb2_grpc as pb_grpc
from arrayplan_services.api.planfile import load_plan_file
from arrayplan_services.controller import resource as r
from arrayplan_services.controller.lease import RESOURCE_VERSION_ANNOTATION

from .clusterlib import ROOT, Cluster, Planner, Proc, arrayplan_command, start_controller, wait_for

TWO_DRIVES = ["intel-dc-s3700-400gb", "intel-dc-s3500-480gb"]
# ~10 simulated candidates: a second or so.
SMALL = {"workload": {"read_fraction": 0.7, "target_iops": 5000, "io_size_mix": [{"io_bytes": "8 KiB", "weight": 1}]},
         "constraints": {"usable_capacity_bytes": "1 TB", "latency_target": "5ms"},
         "candidate_space": {"drive_models": TWO_DRIVES, "layouts": ["raid6"], "max_drive_count": 12}, "seed": 1}
# ~120 simulated candidates: long enough (about ten seconds in-process) to stop a controller mid-plan
# (exhaustive: the search would answer from a few of them, before the controller stops).
LONG = {"workload": {"read_fraction": 0.7}, "constraints": {"usable_capacity_bytes": "1 GB"},
        "candidate_space": {"drive_models": [*TWO_DRIVES, "intel-ssd-320-300gb"], "layouts": ["raid10", "raid6"],
                            "group_widths": [4, 8], "max_drive_count": 48}, "seed": 7, "exhaustive": True}


@pytest.fixture()
def ns(cluster: Cluster) -> str:
    return cluster.new_namespace("cp")


@pytest.fixture()
def api(cluster: Cluster) -> client.CustomObjectsApi:
    return client.CustomObjectsApi(cluster.api_client())


@pytest.fixture()
def stub(planner: Planner) -> Iterator[pb_grpc.PlannerServiceStub]:
    with grpc.insecure_channel(planner.address) as ch:
        yield pb_grpc.PlannerServiceStub(ch)


@pytest.fixture()
def controllers(tmp_path: Path) -> Iterator[list[Proc]]:
    procs: list[Proc] = []
    yield procs
    for p in procs:
        p.stop()


def create(api: client.CustomObjectsApi, ns: str, name: str, spec: dict[str, Any]) -> dict[str, Any]:
    body = {"apiVersion": r.API_VERSION, "kind": r.KIND, "metadata": {"name": name}, "spec": spec}
    return api.create_namespaced_custom_object(r.GROUP, r.VERSION, ns, r.PLURAL, body, field_validation="Strict")


def get(api: client.CustomObjectsApi, ns: str, name: str) -> dict[str, Any]:
    return api.get_namespaced_custom_object(r.GROUP, r.VERSION, ns, r.PLURAL, name)


def wait_status(api: client.CustomObjectsApi, ns: str, name: str, pred: Callable[[dict[str, Any]], bool], timeout_s: float,
                what: str, procs: list[Proc] = ()) -> dict[str, Any]:
    def check() -> dict[str, Any] | None:
        obj = get(api, ns, name)
        return obj if pred(obj.get("status") or {}) else None

    try:
        return wait_for(check, timeout_s, f"{name}: {what}", interval_s=0.3)
    except TimeoutError as exc:
        logs = "\n".join(p.log()[-3000:] for p in procs)
        raise AssertionError(f"{exc}\nstatus: {get(api, ns, name).get('status')}\ncontroller logs:\n{logs}") from None


def finished(gen: int) -> Callable[[dict[str, Any]], bool]:
    return lambda s: s.get("observedGeneration") == gen and s.get("phase") in ("Succeeded", "Failed")


def conditions(status: dict[str, Any]) -> dict[str, tuple[str, str]]:
    return {c["type"]: (c["status"], c["reason"]) for c in status.get("conditions", [])}


def runs_of(stub: pb_grpc.PlannerServiceStub, obj: dict[str, Any]) -> list[pb.Plan]:
    """The planner's runs for this object (every generation): ids start with its run-id prefix."""
    prefix = "plans/" + r.run_id({**obj, "metadata": {**obj["metadata"], "generation": 0}}).rsplit("-g", 1)[0] + "-g"
    out, token = [], ""
    while True:
        resp = stub.ListPlans(pb.ListPlansRequest(page_size=1000, page_token=token), timeout=30)
        out.extend(p for p in resp.plans if p.name.startswith(prefix))
        token = resp.next_page_token
        if not token:
            return out


def controller(cluster: Cluster, ns: str, planner: Planner, procs: list[Proc], tmp_path: Path, tag: str, **kw: Any) -> Proc:
    p = start_controller(cluster, ns, planner.address, tmp_path / f"controller-{tag}.log", **kw)
    procs.append(p)
    return p


def barrier(api: client.CustomObjectsApi, ns: str, name: str, procs: list[Proc]) -> None:
    """Wait until the controller has reconciled everything it was told before now: a CapacityPlan
    the planner refuses (an unknown drive; no run) is created, and its Failed status is written by
    the one reconcile worker, which takes names in the order the watch delivered their events. So
    every earlier event has been reconciled once that status is there."""
    create(api, ns, name, {**SMALL, "candidate_space": {"drive_models": ["intel-ssd-999"]}})
    obj = wait_status(api, ns, name, finished(1), 60, "the barrier plan reconciled (Failed)", procs)
    assert obj["status"]["phase"] == "Failed", obj["status"]


def leader_renews_through_a_lease_duration(cluster: Cluster, ns: str, timeout_s: float = 60) -> client.V1Lease:
    """Wait until the lease's holder has renewed it over more than one lease duration (its
    renewTimes, read from the API server), failing at once if the holder changes: a standby that
    would wrongly take a renewed lease has had a whole duration to do it."""
    coord = client.CoordinationV1Api(cluster.api_client())
    first = coord.read_namespaced_lease("arrayplan-controller", ns)
    holder, duration_s = first.spec.holder_identity, first.spec.lease_duration_seconds
    assert holder and duration_s, first.spec
    deadline = time.monotonic() + timeout_s
    while True:
        lease = coord.read_namespaced_lease("arrayplan-controller", ns)
        if lease.spec.holder_identity != holder:
            pytest.fail(f"the lease moved from {holder} to {lease.spec.holder_identity} while {holder} renewed it")
        if (lease.spec.renew_time - first.spec.renew_time).total_seconds() > duration_s:
            return lease
        if time.monotonic() > deadline:
            pytest.fail(f"{holder} did not renew the lease through {duration_s} s of renewals within {timeout_s} s "
                        f"(renewTime {first.spec.renew_time} -> {lease.spec.renew_time})")
        time.sleep(0.1)


def test_plan_succeeds_with_recommendations(cluster: Cluster, planner: Planner, ns: str, api: client.CustomObjectsApi,
                                            stub: pb_grpc.PlannerServiceStub, controllers: list[Proc], tmp_path: Path) -> None:
    spec, _ = load_plan_file(ROOT / "examples" / "oltp.yaml")
    ctl = controller(cluster, ns, planner, controllers, tmp_path, "a")
    create(api, ns, "oltp", r.plan_spec_to_spec(spec))
    obj = wait_status(api, ns, "oltp", finished(1), 120, "Succeeded", controllers)
    status = obj["status"]
    assert status["phase"] == "Succeeded", status
    assert conditions(status) == {"Accepted": ("True", "RunCreated"), "Running": ("False", "Finished"),
                                  "Succeeded": ("True", "ConstraintsMet"), "Failed": ("False", "Succeeded")}
    assert all(c["observedGeneration"] == 1 for c in status["conditions"])
    recs = status["recommendations"]
    assert 1 <= len(recs) <= 5 and [x["rank"] for x in recs] == list(range(1, len(recs) + 1))
    assert status["constraintsMet"] is True and recs[0]["meetsConstraints"] is True
    assert status["runName"] == f"plans/{r.run_id(obj)}" and len(status["traceId"]) == 32
    # The status is the planner's stored run, not a copy of something else.
    run = stub.GetPlan(pb.GetPlanRequest(name=status["runName"]), timeout=30)
    assert run.state == pb.Plan.STATE_SUCCEEDED and run.trace_id == status["traceId"]
    best = run.result.recommendations[0]
    assert (best.drive_model, best.drive_count, best.layout) == (recs[0]["driveModel"], recs[0]["driveCount"], recs[0]["layout"])
    assert status["best"].startswith(f"{best.drive_count} x {best.drive_model} {best.layout}")
    assert status["progress"]["candidatesEvaluated"] == run.progress.candidates_evaluated
    printed = cluster.kubectl("-n", ns, "get", "capacityplans", "oltp", "-o", "wide").stdout
    assert "Succeeded" in printed and status["runName"] in printed

    # A metadata-only change keeps the generation: nothing runs again.
    api.patch_namespaced_custom_object(r.GROUP, r.VERSION, ns, r.PLURAL, "oltp", {"metadata": {"labels": {"team": "storage"}}})
    # A spec change is a new generation: exactly one new run, and the status moves to it.
    api.patch_namespaced_custom_object(r.GROUP, r.VERSION, ns, r.PLURAL, "oltp", {"spec": {"max_recommendations": 3}})
    obj2 = wait_status(api, ns, "oltp", finished(2), 120, "generation 2 Succeeded", controllers)
    assert obj2["metadata"]["generation"] == 2
    assert obj2["status"]["runName"].endswith("-g2") and len(obj2["status"]["recommendations"]) <= 3
    barrier(api, ns, "after-oltp", controllers)  # every oltp event (labels, spec, status writes) reconciled
    assert sorted(p.name for p in runs_of(stub, obj2)) == sorted([status["runName"], obj2["status"]["runName"]])
    assert ctl.log().count("created run") == 2


@pytest.mark.parametrize(("case", "spec", "field"), [
    ("read_fraction>1", {**SMALL, "workload": {"read_fraction": 1.5}}, "spec.workload.read_fraction"),
    ("unknown layout", {**SMALL, "candidate_space": {"layouts": ["raid7"]}}, "spec.candidate_space.layouts[0]"),
    ("max<min drives", {**SMALL, "candidate_space": {"min_drive_count": 10, "max_drive_count": 4}}, "spec.candidate_space.max_drive_count"),
    ("size units", {**SMALL, "constraints": {"usable_capacity_bytes": "2 XB"}}, "spec.constraints.usable_capacity_bytes"),
    ("no capacity", {**SMALL, "constraints": {"latency_target": "5ms"}}, "spec.constraints.usable_capacity_bytes"),
    ("unknown field", {**SMALL, "workload": {**SMALL["workload"], "reads": 0.7}}, "spec.workload.reads"),
    ("too many models", {**SMALL, "candidate_space": {"drive_models": [f"d{i}" for i in range(300)]}}, "spec.candidate_space.drive_models"),
], ids=["read-fraction", "unknown-layout", "max-below-min", "size-units", "no-capacity", "unknown-field", "too-many-models"])
def test_schema_rejects_invalid_specs(api: client.CustomObjectsApi, ns: str, case: str, spec: dict[str, Any], field: str) -> None:
    """The CRD's OpenAPI schema refuses these server-side, naming the field (nothing reaches the controller)."""
    with pytest.raises(ApiException) as exc:
        create(api, ns, "bad", spec)
    assert exc.value.status in (400, 422), exc.value.body
    assert field in exc.value.body, exc.value.body


def test_planner_rejections_become_failed_conditions(cluster: Cluster, planner: Planner, ns: str, api: client.CustomObjectsApi,
                                                     stub: pb_grpc.PlannerServiceStub, controllers: list[Proc], tmp_path: Path) -> None:
    """Specs the schema lets through but the planner refuses: Failed naming the field (InvalidSpec),
    or SearchSpaceTooLarge for a huge candidate space; no run is created for either."""
    controller(cluster, ns, planner, controllers, tmp_path, "a")
    create(api, ns, "unknown-drive", {**SMALL, "candidate_space": {"drive_models": ["intel-ssd-999"]}})
    create(api, ns, "hot-share", {**SMALL, "workload": {**SMALL["workload"], "hot_write_fraction": 0.1, "hot_space_fraction": 0.5}})
    create(api, ns, "no-mix", {**SMALL, "workload": {"target_iops": 1000}})
    create(api, ns, "huge", {**SMALL, "candidate_space": {"layouts": ["raid0", "raid10", "raid5", "raid6"],
                                                          "group_widths": list(range(3, 65)), "max_drive_count": 1024}})
    expect = {"unknown-drive": ("InvalidSpec", "spec.candidate_space.drive_models[0]"),
              "hot-share": ("InvalidSpec", "spec.workload.hot_write_fraction"),
              "no-mix": ("InvalidSpec", "spec.workload.read_fraction"),
              "huge": ("SearchSpaceTooLarge", "spec.candidate_space")}
    for name, (reason, field) in expect.items():
        obj = wait_status(api, ns, name, finished(1), 60, "Failed", controllers)
        status = obj["status"]
        assert status["phase"] == "Failed", (name, status)
        cond = {c["type"]: c for c in status["conditions"]}
        assert cond["Failed"]["status"] == "True" and cond["Failed"]["reason"] == reason, (name, cond)
        assert field in cond["Failed"]["message"], (name, cond["Failed"]["message"])
        assert cond["Accepted"]["status"] == "False" and cond["Accepted"]["reason"] == reason
        assert "runName" not in status
        with pytest.raises(grpc.RpcError) as exc:
            stub.GetPlan(pb.GetPlanRequest(name=f"plans/{r.run_id(obj)}"), timeout=30)
        assert exc.value.code() == grpc.StatusCode.NOT_FOUND, "a refused spec starts no run"
    assert "over the limit" in get(api, ns, "huge")["status"]["conditions"][-1]["message"]


def test_controller_killed_mid_plan_never_runs_twice(cluster: Cluster, planner: Planner, ns: str, api: client.CustomObjectsApi,
                                                    stub: pb_grpc.PlannerServiceStub, controllers: list[Proc], tmp_path: Path) -> None:
    first = controller(cluster, ns, planner, controllers, tmp_path, "first")
    create(api, ns, "long", LONG)
    running = wait_status(api, ns, "long", lambda s: s.get("phase") == "Running" and s.get("progress", {}).get("candidatesToEvaluate", 0) > 0,
                          120, "Running", controllers)
    run_name = running["status"]["runName"]
    # Wait for a lease renewal that carries the watch past the Running status (resourceVersions are
    # etcd revisions here, so they compare as integers), then kill without any clean-up.
    coord = client.CoordinationV1Api(cluster.api_client())
    seen = int(running["metadata"]["resourceVersion"])
    wait_for(lambda: int((coord.read_namespaced_lease("arrayplan-controller", ns).metadata.annotations or {})
                         .get(RESOURCE_VERSION_ANNOTATION, "0")) >= seen, 30,
             f"a lease renewal saving resourceVersion >= {seen} (the Running status)")
    first.stop(signal.SIGKILL)
    assert stub.GetPlan(pb.GetPlanRequest(name=run_name), timeout=30).state == pb.Plan.STATE_RUNNING, "the run goes on without a controller"

    second = controller(cluster, ns, planner, controllers, tmp_path, "second")
    obj = wait_status(api, ns, "long", finished(1), 240, "Succeeded after the restart", controllers)
    assert obj["status"]["phase"] == "Succeeded" and obj["status"]["runName"] == run_name
    log = second.log()
    assert "resuming the CapacityPlan watch from resourceVersion" in log, log
    assert f"following run {run_name} started earlier" in log, log
    assert "created run" not in log
    runs = runs_of(stub, obj)
    assert [p.name for p in runs] == [run_name], "one run for the generation, not two"
    assert runs[0].state == pb.Plan.STATE_SUCCEEDED


def test_run_created_before_a_crash_is_adopted(cluster: Cluster, planner: Planner, ns: str, api: client.CustomObjectsApi,
                                               stub: pb_grpc.PlannerServiceStub, controllers: list[Proc], tmp_path: Path) -> None:
    """A controller that died after CreatePlan but before writing status: the run id is derived from
    uid + generation, so the next controller finds the run and adopts it."""
    obj = create(api, ns, "adopt", SMALL)
    spec = r.spec_to_plan_spec(SMALL)
    made = stub.CreatePlan(pb.CreatePlanRequest(plan=pb.Plan(spec=spec), plan_id=r.run_id(obj)), timeout=30)
    ctl = controller(cluster, ns, planner, controllers, tmp_path, "a")
    done = wait_status(api, ns, "adopt", finished(1), 60, "Succeeded", controllers)
    assert done["status"]["runName"] == made.name
    assert conditions(done["status"])["Accepted"] == ("True", "RunAdopted")
    assert "adopting it (not starting it again)" in ctl.log() and "created run" not in ctl.log()
    assert [p.name for p in runs_of(stub, done)] == [made.name]


def test_leader_election_one_acts_then_failover(cluster: Cluster, planner: Planner, ns: str, api: client.CustomObjectsApi,
                                                stub: pb_grpc.PlannerServiceStub, controllers: list[Proc], tmp_path: Path) -> None:
    a = controller(cluster, ns, planner, controllers, tmp_path, "a")
    wait_for(lambda: "is the leader" in a.log(), 30, "the first replica to lead")
    b = controller(cluster, ns, planner, controllers, tmp_path, "b")
    wait_for(lambda: "waiting for lease" in b.log(), 30, "the second replica to start")
    create(api, ns, "one", SMALL)
    obj = wait_status(api, ns, "one", finished(1), 60, "Succeeded", controllers)
    lease = leader_renews_through_a_lease_duration(cluster, ns)
    assert "is the leader" not in b.log() and "created run" not in b.log(), "the standby replica does nothing"
    assert len(runs_of(stub, obj)) == 1
    assert lease.spec.holder_identity and lease.spec.holder_identity in a.log()

    a.stop(signal.SIGKILL)  # no release: b must wait out the lease
    wait_for(lambda: "is the leader" in b.log(), 60, "the standby to take over once the killed leader's lease expired")
    create(api, ns, "two", {**SMALL, "seed": 2})
    wait_status(api, ns, "two", finished(1), 60, "Succeeded under the new leader", controllers)
    lease = client.CoordinationV1Api(cluster.api_client()).read_namespaced_lease("arrayplan-controller", ns)
    assert lease.spec.lease_transitions >= 1 and lease.spec.holder_identity in b.log()


def test_deleted_while_down_is_seen_by_resuming_the_watch(cluster: Cluster, planner: Planner, ns: str, api: client.CustomObjectsApi,
                                                          stub: pb_grpc.PlannerServiceStub, controllers: list[Proc],
                                                          tmp_path: Path) -> None:
    """A clean stop saves the watch's resourceVersion in the Lease; a plan deleted while no controller
    runs is still seen (a DELETED event replayed from that version) and its run is cancelled."""
    a = controller(cluster, ns, planner, controllers, tmp_path, "a")
    create(api, ns, "doomed", {**LONG, "seed": 11})
    obj = wait_status(api, ns, "doomed", lambda s: s.get("phase") == "Running", 120, "Running", controllers)
    run_name = obj["status"]["runName"]
    assert a.stop(signal.SIGTERM) == 0
    lease = client.CoordinationV1Api(cluster.api_client()).read_namespaced_lease("arrayplan-controller", ns)
    saved = (lease.metadata.annotations or {}).get(RESOURCE_VERSION_ANNOTATION)
    assert saved and not lease.spec.holder_identity, "released, with the resourceVersion saved"
    api.delete_namespaced_custom_object(r.GROUP, r.VERSION, ns, r.PLURAL, "doomed")
    assert stub.GetPlan(pb.GetPlanRequest(name=run_name), timeout=30).state == pb.Plan.STATE_RUNNING

    b = controller(cluster, ns, planner, controllers, tmp_path, "b")
    wait_for(lambda: stub.GetPlan(pb.GetPlanRequest(name=run_name), timeout=30).state == pb.Plan.STATE_CANCELLED, 60,
             "the deleted plan's run to be cancelled")
    assert f"resuming the CapacityPlan watch from resourceVersion {saved}" in b.log()
    # the controller logs after CancelPlan returns, so the run can be CANCELLED a moment before the line
    wait_for(lambda: f"cancelled run {run_name}: CapacityPlan doomed was deleted" in b.log(), 30, "the controller's cancel log line")


def test_watch_410_gone_falls_back_to_a_list(cluster: Cluster, planner: Planner, ns: str, api: client.CustomObjectsApi,
                                             controllers: list[Proc], tmp_path: Path) -> None:
    """A saved resourceVersion the API server no longer has: the watch gets 410 Gone, the controller
    lists again and still answers every plan."""
    coord = client.CoordinationV1Api(cluster.api_client())
    coord.create_namespaced_lease(ns, {"metadata": {"name": "arrayplan-controller", "annotations": {RESOURCE_VERSION_ANNOTATION: "1"}},
                                       "spec": {"holderIdentity": "", "leaseDurationSeconds": 1}})
    create(api, ns, "before", SMALL)
    ctl = controller(cluster, ns, planner, controllers, tmp_path, "a")
    wait_status(api, ns, "before", finished(1), 60, "Succeeded", controllers)
    log = ctl.log()
    assert "resuming the CapacityPlan watch from resourceVersion 1" in log
    assert "watch from resourceVersion 1 expired (410 Gone): listing again" in log, log
    create(api, ns, "after", {**SMALL, "seed": 3})
    wait_status(api, ns, "after", finished(1), 60, "Succeeded", controllers)


def test_submit_exit_codes(cluster: Cluster, planner: Planner, ns: str, api: client.CustomObjectsApi, controllers: list[Proc],
                           tmp_path: Path) -> None:
    """`arrayplan submit` as a pipeline runs it: 0 met, 3 none met, 2 bad input (plan file, schema,
    InvalidSpec, SearchSpaceTooLarge), 1 no answer within --timeout."""
    controller(cluster, ns, planner, controllers, tmp_path, "a")

    def submit(plan_file: Path, *extra: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([*arrayplan_command(), "submit", str(plan_file), "--kubeconfig", str(cluster.kubeconfig), "-n", ns,
                               "--quiet", *extra], check=False, capture_output=True, text=True, timeout=180, cwd=ROOT)

    # a plan file a pipeline keeps beside its code (the small spec: the exit codes, not the search,
    # are under test; test_plan_succeeds_with_recommendations runs examples/oltp.yaml)
    small = tmp_path / "small.yaml"
    small.write_text(yaml.safe_dump(SMALL))
    ok = submit(small, "--format", "markdown", "--name", "ci-small")
    assert ok.returncode == 0, ok.stderr
    assert "### CapacityPlan `ci-small`: Succeeded (constraints met)" in ok.stdout and "| 1 |" in ok.stdout
    same = submit(small, "--format", "json", "--name", "ci-small")  # the same spec: answered at once
    assert same.returncode == 0, same.stderr
    body = json.loads(same.stdout)  # through jsonout: strict JSON, the CRD's status as the API server holds it
    assert body["name"] == "ci-small" and body["namespace"] == ns and body["status"]["phase"] == "Succeeded"
    assert body["status"]["recommendations"][0]["rank"] == 1
    assert submit(small, "--name", "ci-small", "--fail-if-headroom-below", "95").returncode == 3
    assert submit(ROOT / "examples" / "impossible.yaml").returncode == 3
    bad_file = tmp_path / "bad.yaml"
    bad_file.write_text("workload: {read_fraction: lots}\nconstraints: {usable_capacity_bytes: 1 TB}\n")
    res = submit(bad_file)
    assert res.returncode == 2 and "workload.read_fraction" in res.stderr
    schema = tmp_path / "schema.yaml"
    schema.write_text("workload: {read_fraction: 1.5}\nconstraints: {usable_capacity_bytes: 1 TB}\n")
    res = submit(schema)
    assert res.returncode == 2 and "spec.workload.read_fraction" in res.stderr
    unknown = tmp_path / "unknown.yaml"
    unknown.write_text("workload: {read_fraction: 0.5}\nconstraints: {usable_capacity_bytes: 1 TB}\n"
                       "candidate_space: {drive_models: [intel-ssd-999]}\n")
    res = submit(unknown)
    assert res.returncode == 2 and "InvalidSpec" in res.stderr and "spec.candidate_space.drive_models[0]" in res.stderr
    huge = tmp_path / "huge.yaml"
    huge.write_text("workload: {read_fraction: 0.5}\nconstraints: {usable_capacity_bytes: 1 GB}\n"
                    "candidate_space: {layouts: [raid0, raid10, raid5, raid6], group_widths: [3,4,5,6,7,8,9,10,11,12,13,14,15,16], "
                    "max_drive_count: 1024}\n")
    assert submit(huge).returncode == 2
    other = cluster.new_namespace("nobody")  # no controller watches it
    res = subprocess.run([*arrayplan_command(), "submit", str(ROOT / "examples" / "oltp.yaml"), "--kubeconfig", str(cluster.kubeconfig),
                          "-n", other, "--quiet", "--timeout", "3"], check=False, capture_output=True, text=True, timeout=60, cwd=ROOT)
    assert res.returncode == 1 and "--timeout" in res.stderr
