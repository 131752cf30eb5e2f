"""The numba kernel cache after `make setup`'s warm-up: every kernel a plan runs is in it, so a plan
(and `arrayplan serve`) does not say it is compiling; the FTL kernels (`arrayplan ftl`, the SSD
calibration) are warmed too and load from the cache in a new process."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

SMALL_PLAN = ("workload:\n  read_fraction: 0.7\n  io_size_mix: [{io_bytes: 8 KiB, weight: 1}]\n  target_iops: 5000\n"
              "constraints:\n  usable_capacity_bytes: 2 TB\n  latency_target: 5ms\n"
              "candidate_space:\n  drive_models: [intel-dc-s3500-480gb]\n  layouts: [raid10]\n  max_drive_count: 12\nseed: 2\n")


def _run(*args: str, env: dict[str, str], cwd: Path, timeout: float = 900) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, *args], capture_output=True, text=True, timeout=timeout, cwd=cwd,
                          env={**os.environ, **env}, check=False)


@pytest.mark.slow
@pytest.mark.timeout(1800)  # on an empty cache the warm-up compiles every kernel (minutes on 2 busy cores)
def test_after_warming_no_kernel_is_cold_and_a_plan_does_not_say_compiling(tmp_path: Path) -> None:
    """The warm-up (`python -m arrayplan_services.numba_cache --warm`, what `make setup` runs) on a
    copy of the set-up's cache without the FTL kernels (what a plan alone leaves: no plan runs
    them; on a clean clone, the empty-cache case: it compiles everything)."""
    from arrayplan_services.numba_cache import default_cache_dir

    cache = tmp_path / "cache"
    if default_cache_dir().is_dir():
        shutil.copytree(default_cache_dir(), cache)
        for entry in cache.rglob("ftl.*"):
            entry.unlink()
    examples = tmp_path / "examples"
    examples.mkdir()
    (examples / "small.yaml").write_text(SMALL_PLAN)
    env = {"NUMBA_CACHE_DIR": str(cache)}
    warm = _run("-m", "arrayplan_services.numba_cache", "--warm", str(examples), env=env, cwd=tmp_path)
    assert warm.returncode == 0, warm.stdout + warm.stderr
    assert "warm: small.yaml: STATE_SUCCEEDED" in warm.stdout

    for flag in ("--cold", "--cold-ftl"):
        cold = _run("-m", "arrayplan_services.numba_cache", flag, env=env, cwd=tmp_path, timeout=300)
        assert cold.returncode == 0 and cold.stdout.strip() == "", f"{flag}: still cold after warming: {cold.stdout}{cold.stderr}"

    plan = _run("-m", "arrayplan_services.cli.main", "plan", str(examples / "small.yaml"), "--local", "--executor", "local",
                "--data-dir", str(tmp_path / "data"), "--format", "json", env=env, cwd=tmp_path)
    assert plan.returncode in (0, 3), plan.stderr
    assert "compiling" not in plan.stderr, plan.stderr

    # The timed FTL kernel (and its siblings) load from the cache in a new process: hits, no misses.
    probe = ("from arrayplan_services import numba_cache\nnumba_cache.configure()\nnumba_cache.warm_ftl()\n"
             "from arrayplan_engine import ftl\n"
             "for k in (ftl._write_kernel, ftl._timed_kernel, ftl._trim_kernel):\n"
             "    print(k.__name__, sum(k.stats.cache_hits.values()), sum(k.stats.cache_misses.values()))\n")
    loaded = _run("-c", probe, env=env, cwd=tmp_path, timeout=300)
    assert loaded.returncode == 0, loaded.stderr
    counts = {name: (int(hits), int(misses)) for name, hits, misses in (line.split() for line in loaded.stdout.splitlines())}
    assert counts == {"_write_kernel": (1, 0), "_timed_kernel": (1, 0), "_trim_kernel": (1, 0)}, counts

