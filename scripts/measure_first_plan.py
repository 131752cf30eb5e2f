"""Time the first plan after a fresh server start: not a test (no timed tests),
a measurement to quote.

    python scripts/measure_first_plan.py warm   # fresh NUMBA_CACHE_DIR, `make setup`'s warm-up, then serve + plan
    python scripts/measure_first_plan.py cold   # fresh NUMBA_CACHE_DIR, no warm-up: the workers compile

Prints the warm-up time, server start to SERVING, and the first and second `arrayplan plan
examples/oltp.yaml` against it. Everything lives under a temporary directory.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

from conftest import start_server  # noqa: E402


def main(mode: str) -> int:
    with tempfile.TemporaryDirectory(prefix="arrayplan-first-plan-") as tmp:
        env = {"NUMBA_CACHE_DIR": str(Path(tmp) / "numba")}
        os.environ.update(env)
        if mode == "warm":
            t = time.monotonic()
            subprocess.run([sys.executable, "-m", "arrayplan_services.numba_cache", "--warm", "examples"], cwd=ROOT, check=True,
                           stdout=subprocess.DEVNULL)
            print(f"warm-up (make setup): {time.monotonic() - t:.1f} s", flush=True)
        t = time.monotonic()
        server = start_server(Path(tmp) / "data", env=env)
        print(f"server start to SERVING: {time.monotonic() - t:.1f} s", flush=True)
        try:
            for label, extra in (("first", ()), ("second", ("--seed", "2"))):
                t = time.monotonic()
                out = subprocess.run([sys.executable, "-m", "arrayplan_services.cli.main", "plan", "examples/oltp.yaml", "--server",
                                      server.address, "--format", "json", *extra], cwd=ROOT, capture_output=True, text=True)
                print(f"{mode}: {label} plan after SERVING: {time.monotonic() - t:.1f} s (exit {out.returncode})", flush=True)
        finally:
            server.stop()
    return 0


if __name__ == "__main__":
    if len(sys.argv) != 2 or sys.argv[1] not in ("warm", "cold"):
        print(__doc__, file=sys.stderr)
        sys.exit(2)
    sys.exit(main(sys.argv[1]))
