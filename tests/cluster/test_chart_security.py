"""The chart's TLS, token and admission values: the planner gets its certificate and
token file from Secrets (cert-manager optional), probes use the plaintext health-only port while
TLS is on, and the controller reaches the planner with the CA and its own token."""

from __future__ import annotations

from typing import Any

import yaml

from .clusterlib import CHART, KUBE_VERSION
from .test_chart import helm

SECURE = ["--set", "planner.executor=local", "--set", "planner.tls.certManager.enabled=true",
          "--set", "planner.tls.certManager.issuerRef.name=ca-issuer", "--set", "planner.tls.clientCaSecretName=client-ca",
          "--set", "planner.auth.tokenSecretName=planner-tokens", "--set", "planner.reflection=false",
          "--set", "planner.maxRunningPlans=2", "--set", "planner.maxQueuedPlans=10"]


def _render(*sets: str) -> list[dict[str, Any]]:
    res = helm("template", "rel", str(CHART), "--kube-version", KUBE_VERSION, *sets)
    assert res.returncode == 0, res.stderr
    return [d for d in yaml.safe_load_all(res.stdout) if d]


def _deployment(docs: list[dict[str, Any]], component: str) -> dict[str, Any]:
    return next(d for d in docs if d["kind"] == "Deployment" and d["metadata"]["labels"]["app.kubernetes.io/component"] == component)


def test_tls_tokens_and_admission_from_secrets() -> None:
    docs = _render(*SECURE)
    pod = _deployment(docs, "planner")["spec"]["template"]["spec"]
    planner = next(c for c in pod["containers"] if c["name"] == "planner")
    args = planner["args"]
    for arg in ("--max-running-plans=2", "--max-queued-plans=10", "--no-reflection", "--tls-cert=/etc/arrayplan/tls/tls.crt",
                "--tls-key=/etc/arrayplan/tls/tls.key", "--tls-client-ca=/etc/arrayplan/client-ca/ca.crt",
                "--auth-token-file=/etc/arrayplan/auth/tokens", "--health-port=50052"):
        assert arg in args, args
    secrets = {v["name"]: v["secret"]["secretName"] for v in pod["volumes"] if "secret" in v}
    assert secrets == {"tls": "rel-arrayplan-planner-tls", "client-ca": "client-ca", "auth": "planner-tokens"}
    for probe in ("startupProbe", "livenessProbe", "readinessProbe"):
        assert planner[probe]["grpc"]["port"] == 50052, "kubelet gRPC probes cannot speak TLS: the health-only port"
    cert = next(d for d in docs if d["kind"] == "Certificate")
    assert cert["spec"]["secretName"] == "rel-arrayplan-planner-tls"
    assert "rel-arrayplan-planner.default.svc" in cert["spec"]["dnsNames"]
    controller = _deployment(docs, "controller")["spec"]["template"]["spec"]["containers"][0]
    env = {e["name"]: e for e in controller["env"]}
    assert env["ARRAYPLAN_TLS_CA"]["value"] == "/etc/arrayplan/planner-ca/ca.crt"
    assert env["ARRAYPLAN_TOKEN"]["valueFrom"]["secretKeyRef"] == {"name": "planner-tokens", "key": "controller-token"}
    test_pod = next((d for d in docs if d["kind"] == "Pod" and d["metadata"]["name"].endswith("test-health")), None)
    if test_pod is not None:  # helm test probes over TLS with the planner's CA
        assert "--tls-ca=/etc/arrayplan/planner-ca/ca.crt" in test_pod["spec"]["containers"][0]["args"]


def test_defaults_stay_plaintext_without_tokens() -> None:
    docs = _render("--set", "planner.executor=local")
    planner = _deployment(docs, "planner")["spec"]["template"]["spec"]["containers"][0]
    assert not [a for a in planner["args"] if a.startswith(("--tls", "--auth", "--no-reflection", "--health-port"))]
    assert "--max-running-plans=4" in planner["args"] and planner["livenessProbe"]["grpc"]["port"] == 50051
    assert not [d for d in docs if d["kind"] == "Certificate"]


def test_cert_manager_needs_an_issuer() -> None:
    res = helm("template", "rel", str(CHART), "--kube-version", KUBE_VERSION, "--set", "planner.executor=local",
               "--set", "planner.tls.certManager.enabled=true")
    assert res.returncode != 0 and "issuerRef.name" in res.stderr
