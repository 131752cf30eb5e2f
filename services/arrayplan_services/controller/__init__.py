"""The CapacityPlan controller (``arrayplan controller``).

A provisioning pipeline applies a CapacityPlan; the controller runs its plan on the planner service
and writes the answer into its status (see ``reconciler.py`` for the guarantees and
docs/cluster.md for the design). Only the leader of a ``coordination.k8s.io`` Lease acts.
"""

from __future__ import annotations

import logging
import os
import signal
import socket
import threading
import uuid
from dataclasses import dataclass
from typing import Any

from .lease import LeaderElector
from .reconciler import Controller
from .resource import API_VERSION, GROUP, KIND, PLURAL, VERSION

__all__ = ["API_VERSION", "GROUP", "KIND", "PLURAL", "VERSION", "Controller", "ControllerConfig", "LeaderElector",
           "load_kube_config", "run_controller"]

log = logging.getLogger(__name__)
SA_NAMESPACE_FILE = "/var/run/secrets/kubernetes.io/serviceaccount/namespace"


@dataclass
class ControllerConfig:
    server_address: str
    namespace: str | None = None
    kubeconfig: str | None = None
    context: str | None = None
    lease_name: str = "arrayplan-controller"
    lease_namespace: str | None = None
    lease_duration_s: int = 15
    renew_deadline_s: float = 10.0
    retry_period_s: float = 2.0
    identity: str | None = None
    status_recommendations: int = 5


def load_kube_config(kubeconfig: str | None, context: str | None) -> Any:
    """An ApiClient from --kubeconfig, else in-cluster (service account), else ~/.kube/config."""
    from kubernetes import client, config

    configuration = client.Configuration()
    if kubeconfig:
        config.load_kube_config(config_file=kubeconfig, context=context, client_configuration=configuration)
    elif os.environ.get("KUBERNETES_SERVICE_HOST"):
        config.load_incluster_config(client_configuration=configuration)
    else:
        config.load_kube_config(context=context, client_configuration=configuration)
    return client.ApiClient(configuration)


def default_namespace(kubeconfig: str | None, context: str | None) -> str:
    if os.path.exists(SA_NAMESPACE_FILE) and not kubeconfig:
        with open(SA_NAMESPACE_FILE, encoding="utf-8") as f:
            return f.read().strip()
    try:
        from kubernetes import config

        _contexts, active = config.list_kube_config_contexts(config_file=kubeconfig)
        if context:
            active = next((c for c in _contexts if c["name"] == context), active)
        return str((active or {}).get("context", {}).get("namespace") or "default")
    except Exception:  # noqa: BLE001 - no kubeconfig: the default namespace
        return "default"


def run_controller(cfg: ControllerConfig, stop: threading.Event | None = None) -> int:
    """Wait for the lease, then reconcile until stopped (0) or the lease is lost (1)."""
    from kubernetes import client

    api_client = load_kube_config(cfg.kubeconfig, cfg.context)
    namespace = cfg.namespace or default_namespace(cfg.kubeconfig, cfg.context)
    identity = cfg.identity or f"{os.environ.get('POD_NAME') or socket.gethostname()}_{uuid.uuid4().hex[:8]}"
    stop = stop or threading.Event()
    lost = threading.Event()
    elector = LeaderElector(client.CoordinationV1Api(api_client), cfg.lease_namespace or namespace, cfg.lease_name, identity,
                            lease_duration_s=cfg.lease_duration_s, renew_deadline_s=cfg.renew_deadline_s,
                            retry_period_s=cfg.retry_period_s)
    controller = Controller(client.CustomObjectsApi(api_client), cfg.server_address, namespace,
                            status_recommendations=cfg.status_recommendations)

    def on_signal(*_: object) -> None:
        stop.set()
        controller.shutdown()

    if threading.current_thread() is threading.main_thread():
        for sig in (signal.SIGINT, signal.SIGTERM):
            signal.signal(sig, on_signal)
    log.info("arrayplan controller %s: namespace %s, planner %s, lease %s/%s", identity, namespace, cfg.server_address,
             cfg.lease_namespace or namespace, cfg.lease_name)
    print(f"arrayplan controller {identity} waiting for lease {cfg.lease_namespace or namespace}/{cfg.lease_name}", flush=True)
    if not elector.acquire(stop):
        return 0
    print(f"arrayplan controller {identity} is the leader; watching CapacityPlans in {namespace}", flush=True)

    def on_lost() -> None:
        lost.set()
        stop.set()
        controller.shutdown()

    elector.keep_renewing(stop, on_lost, lambda: controller.resource_version)
    try:
        controller.run(stop, start_resource_version=elector.saved_resource_version)
    finally:
        if not lost.is_set():
            elector.release()
        controller.channel.close()
    return 1 if lost.is_set() else 0
