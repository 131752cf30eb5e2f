"""`make bench`: one JSON object of speed and memory figures on stdout (progress on stderr).

Every module in this package with a ``run() -> dict`` contributes its keys; a module that fails
contributes ``"<module>_error"`` so one broken benchmark does not hide the others.
"""

from __future__ import annotations

import importlib
import json
import os
import platform
import sys
import time

MODULES = ("plan", "ftl", "array", "ray_scale")


def main() -> int:
    out: dict[str, object] = {"machine": {"cpus": os.cpu_count(), "python": platform.python_version(), "platform": platform.platform()}}
    status = 0
    for name in MODULES:
        try:
            module = importlib.import_module(f"arrayplan_services.bench.{name}")
        except ModuleNotFoundError as exc:
            if exc.name != f"arrayplan_services.bench.{name}":
                raise
            continue
        print(f"bench: {name} ...", file=sys.stderr, flush=True)
        start = time.perf_counter()
        try:
            out.update(module.run())
        except Exception as exc:  # noqa: BLE001 - report and continue
            out[f"{name}_error"] = f"{type(exc).__name__}: {exc}"
            status = 1
        print(f"bench: {name} done in {time.perf_counter() - start:.1f} s", file=sys.stderr, flush=True)
    print(json.dumps(out, sort_keys=True))
    return status


if __name__ == "__main__":
    sys.exit(main())
