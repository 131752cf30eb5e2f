"""Where the engine's numba kernels are cached, whether they are compiled, and warming them.

Every ``@njit(cache=True)`` kernel compiles once per install into ``NUMBA_CACHE_DIR``; the server
and the Ray workers it starts (which inherit its environment) read the same directory, so a plan
never compiles in every worker. ``configure()`` sets the default before numba is imported:
``$NUMBA_CACHE_DIR`` if set (the container image sets it), else ``$XDG_CACHE_HOME/arrayplan/numba``
(default ``~/.cache/arrayplan/numba``). ``make setup`` warms it (``python -m
arrayplan_services.numba_cache --warm``: the example plans and a few arrays through the real
server code, deploy/warm_numba.py); if a plan starts with a cold cache anyway, its progress says
it is compiling (``cold_kernels``).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

#: The kernels a plan runs (module, dispatcher): the array simulation and the FTL write paths.
#: Not here: ftl._trim_kernel and reliability._simulate_kernel (the ftl and reliability commands).
PLAN_KERNELS = (("arrayplan_engine.array", "_simulate_kernel"), ("arrayplan_engine.array", "_simulate_kernel_closed"),
                ("arrayplan_engine.ftl", "_write_kernel"), ("arrayplan_engine.ftl", "_timed_kernel"))


def default_cache_dir() -> Path:
    if os.environ.get("NUMBA_CACHE_DIR"):
        return Path(os.environ["NUMBA_CACHE_DIR"])
    xdg = os.environ.get("XDG_CACHE_HOME", "").strip()
    base = Path(xdg) if xdg and Path(xdg).is_absolute() else Path.home() / ".cache"
    return base / "arrayplan" / "numba"


def configure() -> Path:
    """Set ``NUMBA_CACHE_DIR`` for this process and its children (before numba is imported:
    numba reads it once). Returns the directory."""
    path = default_cache_dir()
    if "numba" in sys.modules and os.environ.get("NUMBA_CACHE_DIR") != str(path):
        import numba.core.config as numba_config

        os.environ["NUMBA_CACHE_DIR"] = str(path)
        numba_config.reload_config()
    os.environ.setdefault("NUMBA_CACHE_DIR", str(path))
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError:
        pass  # read-only: numba falls back to not caching; cold_kernels() says so
    return path


_ALL_WARM = False


def cold_kernels() -> list[str]:
    """The plan kernels (``PLAN_KERNELS``) with no compiled code in the cache for their current
    source (numba's own index, stamped with the source file's mtime and size). Empty when all are
    warm, or when numba's cache layout is not the one expected (then nothing is claimed). Once all
    are warm the answer holds for the rest of the process (a cache is not un-compiled under a
    running server), so later plans do not read the index again."""
    import importlib

    global _ALL_WARM
    if _ALL_WARM:
        return []
    cold = []
    for module_name, name in PLAN_KERNELS:
        kernel = getattr(importlib.import_module(module_name), name, None)
        try:
            index = kernel._cache._cache_file._load_index()  # type: ignore[union-attr]
        except Exception:  # noqa: BLE001 - numba internals or a renamed kernel: claim nothing
            return []
        if not index:
            cold.append(f"{module_name.rsplit('.', 1)[1]}.{name}")
    _ALL_WARM = not cold
    return cold


def warm(examples: Path) -> int:
    """Compile every kernel a plan uses into the cache, through the public API (the example plans
    and a few arrays, deploy/warm_numba.py). Returns its exit code."""
    import runpy

    script = Path(__file__).resolve().parents[2] / "deploy" / "warm_numba.py"
    configure()
    sys.argv = [str(script), str(examples)]
    try:
        runpy.run_path(str(script), run_name="__main__")
    except SystemExit as exc:
        return int(exc.code or 0)
    return 0


if __name__ == "__main__":
    if sys.argv[1:2] == ["--warm"] and len(sys.argv) == 3:
        sys.exit(warm(Path(sys.argv[2])))
    if sys.argv[1:] == ["--dir"]:
        print(default_cache_dir())
        sys.exit(0)
    if sys.argv[1:] == ["--cold"]:
        configure()
        print("\n".join(cold_kernels()))
        sys.exit(0)
    print("usage: python -m arrayplan_services.numba_cache --warm EXAMPLES_DIR | --dir | --cold", file=sys.stderr)
    sys.exit(2)
