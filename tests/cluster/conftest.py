"""Fixtures for the cluster tests (helpers in clusterlib.py). tests/cluster is a package so this
conftest does not shadow tests/conftest.py, which other test modules import as ``conftest``."""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from typing import Any

import pytest
import yaml

from .clusterlib import (
    CHART,
    CRD,
    KUBE_VERSION,
    Cluster,
    Planner,
    _start_cluster,
    start_planner,
    tool,
)


@pytest.fixture(scope="session")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cluster]:
    """etcd + kube-apiserver v1.33 on 127.0.0.1, with the CapacityPlan CRD applied."""
    c = _start_cluster(tmp_path_factory.mktemp("kube"))
    try:
        c.kubectl("apply", "--server-side", "-f", str(CRD))
        c.kubectl("wait", "--for=condition=Established", "crd/capacityplans.arrayplan.io", "--timeout=60s")
        yield c
    finally:
        c.apiserver.stop()  # kube-apiserver first, then etcd
        c.etcd.stop()


@pytest.fixture(scope="session")
def planner(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Planner]:
    """A real `arrayplan serve` (in-process executor: the controller tests are about the controller)."""
    p = start_planner(tmp_path_factory.mktemp("planner"))
    yield p
    p.proc.stop()


@pytest.fixture(scope="session")
def rendered(tmp_path_factory: pytest.TempPathFactory) -> dict[str, list[dict[str, Any]]]:
    """`helm template` of the chart with the default values and with ci-values.yaml."""
    helm = tool("helm")
    out: dict[str, list[dict[str, Any]]] = {}
    for name, extra in (("default", []), ("ci", ["-f", str(CHART / "ci-values.yaml")])):
        res = subprocess.run([str(helm), "template", "rel", str(CHART), "--namespace", "arrayplan", "--kube-version", KUBE_VERSION,
                              *extra], check=False, capture_output=True, text=True, timeout=120)
        assert res.returncode == 0, f"helm template ({name}) failed:\n{res.stderr}"
        out[name] = [d for d in yaml.safe_load_all(res.stdout) if d]
    return out
