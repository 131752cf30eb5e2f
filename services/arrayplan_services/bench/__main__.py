"""`make bench`: one JSON object of speed and memory figures on stdout (progress on stderr).

Every module in this package with a ``run() -> dict`` contributes its keys; a module that fails
contributes ``"<module>_error"`` so one broken benchmark does not hide the others. Each module runs
in its own interpreter, so one benchmark's Ray session (local, or the two-node loopback cluster)
cannot disturb the next.
"""

from __future__ import annotations

import importlib
import importlib.util
import json
import os
import platform
import subprocess
import sys
import time

MODULES = ("plan", "ftl", "array", "ray_scale", "cluster", "clients")


def _cpu() -> dict[str, object]:
    """The processor the figures were measured on (Linux /proc/cpuinfo; empty elsewhere)."""
    info: dict[str, object] = {}
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as fh:
            for line in fh:
                key, _, value = line.partition(":")
                key, value = key.strip(), value.strip()
                if key == "model name" and "cpu_model" not in info:
                    info["cpu_model"] = value
                elif key == "cpu MHz" and "cpu_mhz" not in info:
                    info["cpu_mhz"] = float(value)
    except (OSError, ValueError):
        pass
    return info


def main() -> int:
    out: dict[str, object] = {"machine": {"cpus": os.cpu_count(), "python": platform.python_version(), "platform": platform.platform(), **_cpu()}}
    status = 0
    for name in MODULES:
        if importlib.util.find_spec(f"arrayplan_services.bench.{name}") is None:
            continue
        print(f"bench: {name} ...", file=sys.stderr, flush=True)
        start = time.perf_counter()
        code = f"import json; from arrayplan_services.bench import {name}; print('BENCH-JSON ' + json.dumps({name}.run()))"
        proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
        lines = [ln for ln in proc.stdout.splitlines() if ln.startswith("BENCH-JSON ")]
        if proc.returncode == 0 and lines:
            out.update(json.loads(lines[-1][len("BENCH-JSON "):]))
        else:
            tail = (proc.stderr or proc.stdout).strip().splitlines()[-3:]
            out[f"{name}_error"] = " | ".join(tail) or f"exit {proc.returncode}"
            status = 1
        print(f"bench: {name} done in {time.perf_counter() - start:.1f} s", file=sys.stderr, flush=True)
    print(json.dumps(out, sort_keys=True))
    return status


if __name__ == "__main__":
    sys.exit(main())
