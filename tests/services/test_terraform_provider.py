"""The OpenTofu/Terraform provider (clients/terraform): its acceptance tests (terraform-plugin-testing
driving a real OpenTofu binary, bin/tofu from `make test-setup`, against a real server; docs/terraform.md)
pass. Here so that `make test` runs them."""

from __future__ import annotations

import os
import shutil
import subprocess

import pytest

from conftest import BIN, ROOT

PROVIDER = ROOT / "clients" / "terraform"


def test_provider_acceptance_tests_pass_against_opentofu_and_the_real_server() -> None:
    go = shutil.which("go")
    if go is None:
        pytest.skip("go is not installed (the provider's tests need it)")
    if not (BIN / "tofu").exists():
        pytest.skip("bin/tofu is missing: `make test-setup` builds OpenTofu (scripts/cluster_tools.sh tofu)")
    env = {**os.environ, "ARRAYPLAN_REPO": str(ROOT), "TF_ACC": "1"}
    out = subprocess.run([go, "test", "-count=1", "./..."], cwd=PROVIDER, capture_output=True, text=True, timeout=900, env=env)
    assert out.returncode == 0, out.stdout[-6000:] + out.stderr[-3000:]
    assert "ok  \tgithub.com/arrayplan/arrayplan/clients/terraform/internal/provider" in out.stdout, out.stdout
