"""deploy/Dockerfile (no Docker engine here: lint it, and run what it runs): hadolint, the image's
conventions, its entrypoint + default command as a real `arrayplan serve`, its health probe and its
numba warm-up."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

from .clusterlib import ROOT, free_port, start_proc, venv_tool, wait_for

DOCKERFILE = ROOT / "deploy" / "Dockerfile"
PROBE = ROOT / "deploy" / "grpc_health_probe.py"


def _instructions() -> list[tuple[str, str]]:
    text = re.sub(r"\\\n", " ", DOCKERFILE.read_text())
    out = []
    for line in text.splitlines():
        line = line.strip()
        if line and not line.startswith("#"):
            word, _, rest = line.partition(" ")
            out.append((word.upper(), rest.strip()))
    return out


def test_hadolint_clean() -> None:
    res = subprocess.run([str(venv_tool("hadolint")), "--failure-threshold", "style", "--format", "json", str(DOCKERFILE)],
                         check=False, capture_output=True, text=True, timeout=60)
    findings = json.loads(res.stdout or "[]")
    assert res.returncode == 0 and findings == [], json.dumps(findings, indent=2)


def test_image_conventions() -> None:
    ins = _instructions()
    froms = [rest for word, rest in ins if word == "FROM"]
    assert len(froms) == 2 and " AS build" in froms[0] and " AS runtime" in froms[1], "multi-stage: build -> runtime"
    args = dict(rest.split("=", 1) for word, rest in ins if word == "ARG" and "=" in rest)
    base = args["PYTHON_IMAGE"]
    assert re.match(r"^python:\d+\.\d+\.\d+-slim-\w+$", base), f"pinned base image, got {base}"
    runtime = ins[[i for i, (w, _) in enumerate(ins) if w == "FROM"][1]:]
    user = [rest for word, rest in runtime if word == "USER"]
    assert user and user[-1].split(":")[0].isdigit() and user[-1].split(":")[0] != "0", "numeric non-root user"
    assert any(w == "HEALTHCHECK" and "grpc_health_probe.py" in r for w, r in runtime)
    entry = json.loads(next(r for w, r in runtime if w == "ENTRYPOINT"))
    assert entry == ["arrayplan", "serve"], "the image runs the same `arrayplan serve` the tests run"
    build = "\n".join(r for w, r in ins if w == "RUN")
    assert "grpc_tools.protoc" in build, "stubs are generated in the image build"
    assert "warm_numba.py" in build, "the numba cache is warmed in the image build"


def test_entrypoint_and_cmd_serve_and_probe(tmp_path: Path) -> None:
    """ENTRYPOINT + CMD as the container runs them (port and data dir moved to temp), probed with the
    image's own health probe."""
    runtime = _instructions()
    entry = json.loads(next(r for w, r in reversed(runtime) if w == "ENTRYPOINT"))
    cmd = json.loads(next(r for w, r in reversed(runtime) if w == "CMD"))
    port = free_port()
    cmd = [str(port) if c == "50051" else str(tmp_path / "data") if c == "/var/lib/arrayplan" else c for c in cmd]
    cmd = ["127.0.0.1" if c == "0.0.0.0" else c for c in cmd]  # loopback only on the test machine
    argv = [sys.executable, "-m", "arrayplan_services.cli.main", *entry[1:], *cmd, "--executor", "local"]
    proc = start_proc(argv, tmp_path / "serve.log", env={"NUMBA_CACHE_DIR": str(tmp_path / "numba")})
    try:
        def probe() -> bool:
            res = subprocess.run([sys.executable, str(PROBE), "--addr", f"127.0.0.1:{port}", "--timeout", "2"], check=False,
                                 capture_output=True, text=True, timeout=30)
            if not proc.alive():
                raise RuntimeError(proc.log())
            return res.returncode == 0 and "SERVING" in res.stdout

        wait_for(probe, 120, "the image's command to serve", interval_s=0.5)
        res = subprocess.run([sys.executable, str(PROBE), "--addr", f"127.0.0.1:{port}", "--service", "arrayplan.v1.PlannerService"],
                             check=False, capture_output=True, text=True, timeout=30)
        assert res.returncode == 0, res.stdout + res.stderr
    finally:
        proc.stop()
    dead = subprocess.run([sys.executable, str(PROBE), "--addr", f"127.0.0.1:{free_port()}", "--timeout", "1"], check=False,
                          capture_output=True, text=True, timeout=30)
    assert dead.returncode == 1 and "UNAVAILABLE" in dead.stderr


def test_numba_warm_up_runs(tmp_path: Path) -> None:
    """The image's warm-up step into its own cache directory: it plans every plan file it is given,
    simulates its arrays and reports the cache's index files. Two of the examples here (one with no
    answer, one with custom drives): every example is planned by the same script in `make setup`,
    which fails when one does not succeed. The cache starts as a copy of the one `make setup`
    warmed (on a clean clone that run is the empty-cache case, compiling every kernel; compiling
    them all again here cost this test 141 s of the suite's CPU), so what is left to compile here
    is only what setup did not reach."""
    import shutil

    from arrayplan_services.numba_cache import default_cache_dir

    examples = tmp_path / "examples"
    examples.mkdir()
    for name in ("custom-drive.yaml", "impossible.yaml"):
        shutil.copy(ROOT / "examples" / name, examples / name)
    if default_cache_dir().is_dir():
        shutil.copytree(default_cache_dir(), tmp_path / "cache")
    res = subprocess.run([sys.executable, str(ROOT / "deploy" / "warm_numba.py"), str(examples)], check=False,
                         capture_output=True, text=True, timeout=900, cwd=tmp_path,
                         env={**os.environ, "NUMBA_CACHE_DIR": str(tmp_path / "cache")})
    assert res.returncode == 0, res.stdout + res.stderr
    assert res.stdout.count("warm: custom-drive.yaml: STATE_SUCCEEDED") == 1
    assert res.stdout.count("warm: impossible.yaml: STATE_SUCCEEDED") == 1
    assert "numba cache index files" in res.stdout and len(list((tmp_path / "cache").rglob("*.nbi"))) >= 5
