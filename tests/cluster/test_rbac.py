"""The chart's RBAC is enough and no more: the controller, holding only a token of the chart's
ServiceAccount bound to the chart's Role (rendered by helm, applied to the real API server), answers a
CapacityPlan; the same token is refused everything outside the Role."""

from __future__ import annotations

import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import grpc
import pytest
from kubernetes import client
from kubernetes.client.exceptions import ApiException

from arrayplan.v1 import planner_pb2 as pb
from arrayplan.v1 import planner_pb2_grpc as pb_grpc
from arrayplan_services.controller import resource as r

from .clusterlib import CHART, KUBE_VERSION, Cluster, Planner, start_controller, tool, wait_for

SPEC = {"workload": {"read_fraction": 0.7, "target_iops": 5000}, "constraints": {"usable_capacity_bytes": "1 TB"},
        "candidate_space": {"drive_models": ["intel-dc-s3700-400gb", "intel-dc-s3500-480gb"], "layouts": ["raid6"],
                            "max_drive_count": 12}, "seed": 5}


def test_chart_role_is_sufficient_and_minimal(cluster: Cluster, planner: Planner, tmp_path: Path) -> None:
    ns = cluster.new_namespace("rbac")
    other = cluster.new_namespace("elsewhere")
    rendered = subprocess.run([str(tool("helm")), "template", "rel", str(CHART), "--namespace", ns, "--kube-version", KUBE_VERSION,
                               "--set", f"controller.watchNamespace={ns}", "--show-only", "templates/serviceaccount.yaml",
                               "--show-only", "templates/rbac.yaml"], check=True, capture_output=True, text=True, timeout=60).stdout
    cluster.kubectl("apply", "-f", "-", input_=rendered)
    sa_config = cluster.service_account_kubeconfig(ns, "rel-arrayplan-controller", tmp_path / "sa.kubeconfig")

    admin = client.CustomObjectsApi(cluster.api_client())
    admin.create_namespaced_custom_object(r.GROUP, r.VERSION, ns, r.PLURAL,
                                          {"apiVersion": r.API_VERSION, "kind": r.KIND, "metadata": {"name": "rbac-plan"}, "spec": SPEC})
    admin.create_namespaced_custom_object(r.GROUP, r.VERSION, other, r.PLURAL,
                                          {"apiVersion": r.API_VERSION, "kind": r.KIND, "metadata": {"name": "not-mine"}, "spec": SPEC})
    ctl = start_controller(cluster, ns, planner.address, tmp_path / "controller.log", kubeconfig=sa_config, lease="rel-arrayplan-controller")
    try:
        def done() -> dict[str, Any] | None:
            obj = admin.get_namespaced_custom_object(r.GROUP, r.VERSION, ns, r.PLURAL, "rbac-plan")
            return obj if (obj.get("status") or {}).get("phase") in ("Succeeded", "Failed") else None

        try:
            obj = wait_for(done, 90, "the plan answered by the least-privilege controller")
        except TimeoutError:
            pytest.fail(f"controller with the chart's Role did not finish the plan:\n{ctl.log()[-4000:]}")
        assert obj["status"]["phase"] == "Succeeded", obj["status"]
        assert obj["status"]["recommendations"]
        log = ctl.log()
        assert "is the leader" in log
        # The kubernetes client reports a refusal as "(403)" with "Reason: Forbidden"; a bare "403"
        # can be part of a port number or a timestamp in the log.
        assert "(403)" not in log and "Forbidden" not in log, log
    finally:
        ctl.stop()
    with grpc.insecure_channel(planner.address) as ch:
        run = pb_grpc.PlannerServiceStub(ch).GetPlan(pb.GetPlanRequest(name=obj["status"]["runName"]), timeout=30)
        assert run.state == pb.Plan.STATE_SUCCEEDED

    sa_client = cluster.api_client(sa_config)
    custom, coord, core = client.CustomObjectsApi(sa_client), client.CoordinationV1Api(sa_client), client.CoreV1Api(sa_client)
    body = {"apiVersion": r.API_VERSION, "kind": r.KIND, "metadata": {"name": "sneaky"}, "spec": SPEC}
    refused: list[tuple[str, Callable[[], object]]] = [
        ("create a CapacityPlan", lambda: custom.create_namespaced_custom_object(r.GROUP, r.VERSION, ns, r.PLURAL, body)),
        ("change a plan's spec", lambda: custom.patch_namespaced_custom_object(r.GROUP, r.VERSION, ns, r.PLURAL, "rbac-plan",
                                                                               {"spec": {"seed": 9}})),
        ("delete a CapacityPlan", lambda: custom.delete_namespaced_custom_object(r.GROUP, r.VERSION, ns, r.PLURAL, "rbac-plan")),
        ("read plans in another namespace", lambda: custom.list_namespaced_custom_object(r.GROUP, r.VERSION, other, r.PLURAL)),
        ("write status in another namespace", lambda: custom.patch_namespaced_custom_object_status(
            r.GROUP, r.VERSION, other, r.PLURAL, "not-mine", {"status": {"phase": "Failed"}})),
        ("read another Lease", lambda: coord.read_namespaced_lease("kube-controller-manager", ns)),
        ("delete its own Lease", lambda: coord.delete_namespaced_lease("rel-arrayplan-controller", ns)),
        ("read Secrets", lambda: core.list_namespaced_secret(ns)),
        ("create ConfigMaps", lambda: core.create_namespaced_config_map(ns, {"metadata": {"name": "x"}, "data": {}})),
        ("list Pods", lambda: core.list_namespaced_pod(ns)),
    ]
    for what, call in refused:
        with pytest.raises(ApiException) as exc:
            call()
        assert exc.value.status == 403, f"{what}: expected 403 Forbidden, got {exc.value.status}"
    # And what the Role grants, it grants (kubectl's own authorization check, as the ServiceAccount).
    for args in (("watch", "capacityplans.arrayplan.io"), ("patch", "capacityplans.arrayplan.io", "--subresource=status"),
                 ("update", "leases.coordination.k8s.io/rel-arrayplan-controller")):
        res = cluster.kubectl("auth", "can-i", *args, "-n", ns, kubeconfig=sa_config, check=False)
        assert res.stdout.strip() == "yes", (args, res.stdout, res.stderr)
    res = cluster.kubectl("auth", "can-i", "update", "capacityplans.arrayplan.io", "--subresource=status", "-n", ns,
                          kubeconfig=sa_config, check=False)
    assert res.stdout.strip() == "no", "status is patched, never replaced"
    res = cluster.kubectl("auth", "can-i", "update", "leases.coordination.k8s.io/other", "-n", ns, kubeconfig=sa_config, check=False)
    assert res.stdout.strip() == "no"
