"""The Helm chart: helm lint and template (default values and ci-values.yaml), every rendered manifest
validated offline against the Kubernetes 1.33 schemas (kubernetes-validate) and server-side
(`kubectl apply --dry-run=server`) against the real kube-apiserver, the values schema, the secure
defaults, the `# --` comments and the generated README."""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml

from .clusterlib import CHART, CRD, KUBE_VERSION, ROOT, Cluster, tool, venv_tool

VALUES = {"default": [], "ci": ["-f", str(CHART / "ci-values.yaml")]}


def helm(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(tool("helm")), *args], check=False, capture_output=True, text=True, timeout=120)


def _containers(doc: dict[str, Any]) -> list[tuple[dict[str, Any], dict[str, Any]]]:
    """(pod spec, container) for every container and init container of a workload."""
    out = []
    for pod in _pod_specs(doc):
        for c in pod.get("initContainers", []) + pod.get("containers", []):
            out.append((pod, c))
    return out


def _pod_specs(doc: dict[str, Any]) -> list[dict[str, Any]]:
    kind = doc["kind"]
    if kind == "Pod":
        return [doc["spec"]]
    if kind == "Deployment":
        return [doc["spec"]["template"]["spec"]]
    if kind == "RayCluster":
        spec = doc["spec"]
        return [spec["headGroupSpec"]["template"]["spec"]] + [g["template"]["spec"] for g in spec["workerGroupSpecs"]]
    return []


def _ray_pods(doc: dict[str, Any]) -> list[dict[str, Any]]:
    """A RayCluster's pod templates as Pods: the part of it Kubernetes' own schemas can check."""
    spec = doc["spec"]
    groups = [("head", spec["headGroupSpec"]["template"])] + [(g["groupName"], g["template"]) for g in spec["workerGroupSpecs"]]
    return [{"apiVersion": "v1", "kind": "Pod",
             "metadata": {"name": f"{doc['metadata']['name']}-{name}", "namespace": doc["metadata"]["namespace"],
                          "labels": tpl["metadata"].get("labels", {})},
             "spec": tpl["spec"]} for name, tpl in groups]


@pytest.mark.parametrize("values", sorted(VALUES))
def test_helm_lint(values: str) -> None:
    res = helm("lint", "--strict", str(CHART), "--kube-version", KUBE_VERSION, *VALUES[values])
    assert res.returncode == 0, res.stdout + res.stderr
    assert "0 chart(s) failed" in res.stdout


def test_template_objects(rendered: dict[str, list[dict[str, Any]]]) -> None:
    kinds = {name: sorted(d["kind"] for d in docs) for name, docs in rendered.items()}
    assert kinds["default"] == sorted(["Deployment", "Deployment", "Service", "PersistentVolumeClaim", "RayCluster", "Secret",
                                       "ServiceAccount", "ServiceAccount", "Role", "RoleBinding", "NetworkPolicy", "NetworkPolicy",
                                       "NetworkPolicy", "PodDisruptionBudget", "PodDisruptionBudget", "Pod"])
    # ci-values: external Ray (no RayCluster, no token Secret), emptyDir store (no PVC), the submitter Role.
    assert "RayCluster" not in kinds["ci"] and "PersistentVolumeClaim" not in kinds["ci"] and "Secret" not in kinds["ci"]
    assert kinds["ci"].count("Role") == 2
    ci_planner = next(d for d in rendered["ci"] if d["kind"] == "Deployment" and d["metadata"]["name"].endswith("-planner"))
    args = ci_planner["spec"]["template"]["spec"]["containers"][0]["args"]
    assert "--ray-address=ray://ray-head.ray.svc:10001" in args
    env = {e["name"]: e.get("value") for e in ci_planner["spec"]["template"]["spec"]["containers"][0]["env"]}
    assert env["OTEL_EXPORTER_OTLP_ENDPOINT"] == "http://otel-collector.observability.svc:4317"
    assert env["RAY_AUTH_MODE"] == "disabled"
    default_planner = next(d for d in rendered["default"] if d["kind"] == "Deployment" and d["metadata"]["name"].endswith("-planner"))
    dargs = default_planner["spec"]["template"]["spec"]["containers"][0]["args"]
    assert "--ray-address=ray://rel-arrayplan-ray-head-svc.arrayplan.svc:10001" in dargs, "the RayCluster's client port"


@pytest.mark.parametrize("values", sorted(VALUES))
def test_secure_defaults_and_labels(rendered: dict[str, list[dict[str, Any]]], values: str) -> None:
    docs = rendered[values]
    checked = 0
    for doc in docs:
        for pod, c in _containers(doc):
            where = f"{doc['kind']}/{doc['metadata']['name']} container {c['name']}"
            psc, sc = pod["securityContext"], c["securityContext"]
            assert psc["runAsNonRoot"] is True and psc["seccompProfile"]["type"] == "RuntimeDefault", where
            assert sc["readOnlyRootFilesystem"] is True, where
            assert sc["allowPrivilegeEscalation"] is False, where
            assert sc["capabilities"]["drop"] == ["ALL"], where
            assert sc["runAsNonRoot"] is True and sc["runAsUser"] != 0, where
            assert not c["image"].endswith((":latest", ":nightly")) and ":" in c["image"], where
            assert "limits" in c["resources"] and "memory" in c["resources"]["limits"], where
            mounts = {m["mountPath"] for m in c.get("volumeMounts", [])}
            if c["name"] not in ("controller", "grpc-health", "warm-numba-cache"):
                assert {"/tmp", "/var/cache/arrayplan/numba"} <= mounts, f"{where}: writable /tmp and numba cache"
            checked += 1
    assert checked >= 4
    for doc in docs:
        labels = doc["metadata"].get("labels", {})
        assert labels.get("app.kubernetes.io/name") == "arrayplan", doc["metadata"]["name"]
        assert labels.get("app.kubernetes.io/instance") == "rel"
        selector = (doc.get("spec") or {}).get("selector")
        if doc["kind"] in ("Deployment", "PodDisruptionBudget"):
            assert set(selector["matchLabels"]) == {"app.kubernetes.io/name", "app.kubernetes.io/instance",
                                                    "app.kubernetes.io/component"}, "selectors on name/instance (+component) only"
    planner = next(d for d in docs if d["kind"] == "Deployment" and d["metadata"]["name"].endswith("-planner"))
    c = planner["spec"]["template"]["spec"]["containers"][0]
    for probe in ("startupProbe", "livenessProbe", "readinessProbe"):
        assert c[probe]["grpc"]["port"] == 50051, probe
    assert planner["spec"]["template"]["spec"]["automountServiceAccountToken"] is False


def test_rbac_is_least_privilege(rendered: dict[str, list[dict[str, Any]]]) -> None:
    role = next(d for d in rendered["default"] if d["kind"] == "Role")
    rules = {(tuple(r["apiGroups"]), tuple(r["resources"]), tuple(r.get("resourceNames", ()))): sorted(r["verbs"]) for r in role["rules"]}
    assert rules == {
        (("arrayplan.io",), ("capacityplans",), ()): ["get", "list", "watch"],
        (("arrayplan.io",), ("capacityplans/status",), ()): ["patch"],
        (("coordination.k8s.io",), ("leases",), ()): ["create"],
        (("coordination.k8s.io",), ("leases",), ("rel-arrayplan-controller",)): ["get", "update"],
    }


def _validate_offline(docs: list[dict[str, Any]], tmp_path: Path) -> str:
    path = tmp_path / "manifests.yaml"
    path.write_text(yaml.safe_dump_all(docs, sort_keys=False))
    res = subprocess.run([str(venv_tool("kubernetes-validate")), "-k", KUBE_VERSION, "--strict", str(path)], check=False,
                         capture_output=True, text=True, timeout=300)
    out = res.stdout + res.stderr
    assert res.returncode == 0 and "ERROR" not in out, out
    return out


@pytest.mark.parametrize("values", sorted(VALUES))
def test_kubernetes_validate_offline(rendered: dict[str, list[dict[str, Any]]], values: str, tmp_path: Path) -> None:
    docs = [d for d in rendered[values] if d["kind"] != "RayCluster"]
    for d in rendered[values]:
        if d["kind"] == "RayCluster":
            docs.extend(_ray_pods(d))
    docs.append(yaml.safe_load(CRD.read_text()))
    out = _validate_offline(docs, tmp_path)
    passed = out.count(" passed for resource ")
    assert passed == len(docs), out


def test_raycluster_shape(rendered: dict[str, list[dict[str, Any]]]) -> None:
    """What kubernetes-validate cannot see (no KubeRay schema offline): the RayCluster fields the
    KubeRay v1 API requires, string rayStartParams, and a Ray version matching the one we test with."""
    import ray

    rc = next(d for d in rendered["default"] if d["kind"] == "RayCluster")
    assert rc["apiVersion"] == "ray.io/v1"
    spec = rc["spec"]
    assert spec["rayVersion"] == ray.__version__
    assert all(isinstance(v, str) for v in spec["headGroupSpec"]["rayStartParams"].values())
    (group,) = spec["workerGroupSpecs"]
    assert group["minReplicas"] <= group["replicas"] <= group["maxReplicas"]
    assert all(isinstance(v, str) for v in group["rayStartParams"].values())
    for pod in _pod_specs(rc):
        env = {e["name"]: e for e in pod["containers"][0]["env"]}
        assert env["RAY_AUTH_MODE"]["value"] == "token"
        assert env["RAY_AUTH_TOKEN"]["valueFrom"]["secretKeyRef"]["name"] == "rel-arrayplan-ray-auth"


@pytest.mark.parametrize("values", sorted(VALUES))
def test_kubectl_dry_run_server(cluster: Cluster, rendered: dict[str, list[dict[str, Any]]], values: str, tmp_path: Path) -> None:
    """Every rendered object passes the real API server's validation and admission (dry run): the
    RayCluster's pod templates as Pods (KubeRay's CRD is not installed here)."""
    from kubernetes import client

    core = client.CoreV1Api(cluster.api_client())
    for ns in ("arrayplan", "pipelines"):
        if ns not in {n.metadata.name for n in core.list_namespace().items}:
            core.create_namespace({"metadata": {"name": ns}})
    docs = [d for d in rendered[values] if d["kind"] != "RayCluster"]
    for d in rendered[values]:
        if d["kind"] == "RayCluster":
            docs.extend(_ray_pods(d))
    path = tmp_path / "manifests.yaml"
    path.write_text(yaml.safe_dump_all(docs, sort_keys=False))
    res = cluster.kubectl("apply", "--dry-run=server", "--validate=strict", "-f", str(path), check=False)
    assert res.returncode == 0, res.stdout + res.stderr
    lines = [ln for ln in res.stdout.splitlines() if ln.strip()]
    assert len(lines) == len(docs) and all("(server dry run)" in ln for ln in lines), res.stdout


@pytest.mark.parametrize(("sets", "message"), [
    (["--set", "planner.bogus=1"], "additional properties 'bogus' not allowed"),
    (["--set", "image.tag=latest"], "image"),
    (["--set", "planner.executor=spark"], "executor"),
    (["--set", "ray.address=10.0.0.5:6379"], "set either ray.address"),
    (["--set", "rayCluster.enabled=false"], "planner.executor is ray"),
    (["--set", "planner.replicas=2"], "one writer"),
    (["--set", "controller.renewDeadlineSeconds=20"], "renewDeadlineSeconds"),
], ids=["unknown-key", "latest-tag", "bad-executor", "ray-both", "ray-none", "sqlite-replicas", "lease-timing"])
def test_values_are_checked(sets: list[str], message: str) -> None:
    res = helm("template", "rel", str(CHART), "--kube-version", KUBE_VERSION, *sets)
    assert res.returncode != 0, f"{sets} should be refused"
    assert message in res.stderr, res.stderr


def test_values_schema_is_closed() -> None:
    schema = json.loads((CHART / "values.schema.json").read_text())
    values = yaml.safe_load((CHART / "values.yaml").read_text())

    def walk(node: dict[str, Any], value: Any, path: str) -> None:
        if "$ref" in node:
            node = schema["definitions"][node["$ref"].rsplit("/", 1)[1]]
        if node.get("type") == "object" and "properties" in node:
            assert node.get("additionalProperties") is False, f"{path or 'root'}: additionalProperties must be false"
            assert set(value) <= set(node["properties"]), f"{path}: values not in the schema: {set(value) - set(node['properties'])}"
            for k, v in value.items():
                walk(node["properties"][k], v, f"{path}.{k}" if path else k)

    walk(schema, values, "")


def test_every_value_has_a_doc_comment() -> None:
    """helm-docs style: every value (or the block holding it) has a `# --` comment right above it."""
    lines = (CHART / "values.yaml").read_text().splitlines()
    missing = []
    documented_indent: int | None = None
    for i, line in enumerate(lines):
        m = re.match(r"^(\s*)([A-Za-z0-9_.-]+):", line)
        if not m or line.lstrip().startswith("#"):
            continue
        indent = len(m.group(1))
        if documented_indent is not None and indent > documented_indent:
            continue  # inside a block documented as a whole
        documented_indent = None
        j = i - 1
        block = []
        while j >= 0 and lines[j].strip().startswith("#"):
            block.append(lines[j].strip())
            j -= 1
        if any(b.startswith("# --") for b in block):
            documented_indent = indent
            continue
        nxt = next((ln for ln in lines[i + 1:] if ln.strip() and not ln.strip().startswith("#")), "")
        is_parent = line.rstrip().endswith(":") and len(nxt) - len(nxt.lstrip()) > indent and not nxt.lstrip().startswith("- ")
        if not is_parent:
            missing.append(f"line {i + 1}: {line.strip()}")
    assert not missing, "values without a `# --` comment:\n" + "\n".join(missing)


def test_readme_is_generated_from_values() -> None:
    """helm/arrayplan/README.md is what helm-docs makes of values.yaml and README.md.gotmpl now."""
    helm_docs = tool("helm-docs")
    res = subprocess.run([str(helm_docs), "--skip-version-footer", "--log-level", "warning", "--dry-run"], check=False,
                         cwd=ROOT / "helm", capture_output=True, text=True, timeout=60)
    assert res.returncode == 0, res.stderr
    assert res.stdout.strip() == (CHART / "README.md").read_text().strip(), "stale README: run scripts/helm_docs.sh"
    values = yaml.safe_load((CHART / "values.yaml").read_text())
    assert f"| planner.candidateLimit | int | `{values['planner']['candidateLimit']}` |" in res.stdout


def test_notes_show_address_and_grpcurl(cluster: Cluster) -> None:
    """`helm install --dry-run=server` against the real API server renders NOTES.txt with the address
    and a grpcurl example (ci-values: the RayCluster kind needs KubeRay's CRD, not installed here)."""
    res = helm("install", "rel", str(CHART), "--dry-run=server", "--namespace", "arrayplan", "--create-namespace",
               "--kubeconfig", str(cluster.kubeconfig), "-f", str(CHART / "ci-values.yaml"), "--set", "controller.watchNamespace=arrayplan")
    assert res.returncode == 0, res.stderr
    notes = res.stdout.split("NOTES:", 1)[1]
    assert "rel-arrayplan-planner.arrayplan.svc:50051" in notes
    assert "grpcurl -plaintext 127.0.0.1:50051 grpc.health.v1.Health/Check" in notes
    assert "arrayplan submit" in notes


def test_crd_schema_accepts_every_example(tmp_path: Path) -> None:
    """Each examples/ plan file, as `arrayplan submit` sends it, passes the CRD's OpenAPI schema
    (offline, jsonschema), and reads back to the same PlanSpec."""
    import jsonschema

    from arrayplan_services.api.planfile import load_plan_file
    from arrayplan_services.controller import resource as r

    crd = yaml.safe_load(CRD.read_text())
    schema = crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]
    examples = sorted((ROOT / "examples").glob("*.yaml"))
    assert examples
    for path in examples:
        spec, _ = load_plan_file(path)
        doc = r.plan_spec_to_spec(spec)
        jsonschema.Draft4Validator(_to_json_schema(schema)).validate(doc)
        assert r.spec_to_plan_spec(doc) == spec, path.name


def _to_json_schema(node: Any) -> Any:
    """OpenAPI v3 (as Kubernetes uses it) -> JSON Schema draft 4 for jsonschema: drop the x- keys,
    turn int-or-string into a type list."""
    if isinstance(node, dict):
        out = {k: _to_json_schema(v) for k, v in node.items() if not k.startswith("x-kubernetes")}
        if node.get("x-kubernetes-int-or-string"):
            out["type"] = ["integer", "string"]
            out.pop("pattern", None)
        out.pop("format", None)
        return out
    if isinstance(node, list):
        return [_to_json_schema(v) for v in node]
    return node
