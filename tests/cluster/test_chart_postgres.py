"""The chart's shared run store: `runStore.type=postgres` takes the PostgreSQL URL from a Secret
(env ARRAYPLAN_STORE_URL, never in the manifest), passes the lease, creates no PersistentVolumeClaim,
replaces pods one by one, and is what allows more than one planner replica. The heavy-call limits
reach serve's flags. `helm template` checks,
and every rendered manifest validated offline against the Kubernetes schemas."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from .clusterlib import CHART, KUBE_VERSION, Cluster
from .test_chart import _validate_offline, helm

POSTGRES = ["--set", "runStore.type=postgres", "--set", "runStore.postgres.existingSecret=planner-db", "--set", "planner.replicas=2"]


def _render(*sets: str) -> list[dict[str, Any]]:
    res = helm("template", "rel", str(CHART), "--namespace", "arrayplan", "--kube-version", KUBE_VERSION, *sets)
    assert res.returncode == 0, res.stderr
    return [d for d in yaml.safe_load_all(res.stdout) if d]


def _planner(docs: list[dict[str, Any]]) -> dict[str, Any]:
    return next(d for d in docs if d["kind"] == "Deployment" and d["metadata"]["name"].endswith("-planner"))


def test_postgres_store_reads_the_url_from_the_secret_and_needs_no_volume() -> None:
    docs = _render(*POSTGRES, "--set", "runStore.postgres.secretKey=dsn", "--set", "runStore.postgres.leaseSeconds=15")
    assert "PersistentVolumeClaim" not in [d["kind"] for d in docs]
    planner = _planner(docs)
    assert planner["spec"]["replicas"] == 2
    assert planner["spec"]["strategy"] == {"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": 0, "maxSurge": 1}}
    pod = planner["spec"]["template"]["spec"]
    container = pod["containers"][0]
    env = {e["name"]: e for e in container["env"]}
    assert env["ARRAYPLAN_STORE_URL"] == {"name": "ARRAYPLAN_STORE_URL",
                                          "valueFrom": {"secretKeyRef": {"name": "planner-db", "key": "dsn"}}}
    assert "--lease-s=15" in container["args"]
    assert not any(a.startswith("--store-url") for a in container["args"]), "the URL (with its password) stays in the Secret"
    runs = next(v for v in pod["volumes"] if v["name"] == "runs")
    assert runs == {"name": "runs", "emptyDir": {}}


def test_sqlite_store_keeps_one_replica_its_volume_and_recreate() -> None:
    planner = _planner(_render())
    assert planner["spec"]["strategy"] == {"type": "Recreate"}
    container = planner["spec"]["template"]["spec"]["containers"][0]
    # The heavy-call admission limits reach serve's flags.
    assert {"--max-running-heavy=4", "--max-queued-heavy=16", "--max-heavy-per-caller=4"} <= set(container["args"])
    assert "ARRAYPLAN_STORE_URL" not in {e["name"] for e in container["env"]}
    assert not any(a.startswith("--lease-s") for a in container["args"])


@pytest.mark.parametrize(("sets", "message"), [
    (["--set", "planner.replicas=2"], "planner.replicas > 1 needs runStore.type=postgres"),
    (["--set", "planner.replicas=2", "--set", "runStore.type=existingClaim", "--set", "runStore.existingClaim=shared"],
     "planner.replicas > 1 needs runStore.type=postgres"),
    (["--set", "runStore.type=postgres"], "runStore.type=postgres needs runStore.postgres.existingSecret"),
    ([*POSTGRES, "--set", "runStore.postgres.leaseSeconds=0"], "leaseSeconds"),
    ([*POSTGRES, "--set", "runStore.postgres.bogus=1"], "additional properties 'bogus' not allowed"),
    (["--set", "runStore.type=mysql"], "runStore/type"),
    (["--set", "planner.maxRunningHeavy=0"], "maxRunningHeavy"),
], ids=["sqlite-replicas", "shared-claim-replicas", "no-secret", "lease-range", "unknown-key", "bad-type", "heavy-range"])
def test_store_values_are_checked(sets: list[str], message: str) -> None:
    res = helm("template", "rel", str(CHART), "--kube-version", KUBE_VERSION, *sets)
    assert res.returncode != 0, f"{sets} should be refused"
    assert message in res.stderr, res.stderr


def test_postgres_manifests_validate_offline(tmp_path: Path) -> None:
    docs = [d for d in _render(*POSTGRES) if d["kind"] != "RayCluster"]  # the RayCluster's pods: test_chart
    out = _validate_offline(docs, tmp_path)
    assert out.count(" passed for resource ") == len(docs), out


def test_postgres_manifests_pass_the_api_server(cluster: Cluster, tmp_path: Path) -> None:
    """The postgres store's objects pass the real API server's validation and admission (dry run)."""
    from kubernetes import client

    core = client.CoreV1Api(cluster.api_client())
    if "arrayplan" not in {n.metadata.name for n in core.list_namespace().items}:
        core.create_namespace({"metadata": {"name": "arrayplan"}})
    docs = [d for d in _render(*POSTGRES) if d["kind"] != "RayCluster"]
    path = tmp_path / "manifests.yaml"
    path.write_text(yaml.safe_dump_all(docs, sort_keys=False))
    res = cluster.kubectl("apply", "--dry-run=server", "--validate=strict", "-f", str(path), check=False)
    assert res.returncode == 0, res.stdout + res.stderr
    lines = [ln for ln in res.stdout.splitlines() if ln.strip()]
    assert len(lines) == len(docs) and all("(server dry run)" in ln for ln in lines), res.stdout
