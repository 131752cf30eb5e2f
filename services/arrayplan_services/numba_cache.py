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

#: The kernels a plan runs (module, dispatcher): the array simulation, open and closed loop. Its
#: SSD service models, consistency runs and reports run on the array kernel too, so the FTL
#: kernels are not here: a plan never compiles them, and listing them kept a warmed cache "cold"
#: (every plan and `serve` start said it was compiling). They and reliability._simulate_kernel
#: serve the ``ftl``, ``reliability`` commands and the SSD calibration; ``warm`` compiles the FTL
#: ones too (``FTL_KERNELS``).
PLAN_KERNELS = (("arrayplan_engine.array", "_simulate_kernel"), ("arrayplan_engine.array", "_simulate_kernel_closed"))
#: The FTL kernels (``arrayplan ftl``, ``ssd.trim_experiment``, ``ssd.calibration_report``).
FTL_KERNELS = (("arrayplan_engine.ftl", "_write_kernel"), ("arrayplan_engine.ftl", "_timed_kernel"),
               ("arrayplan_engine.ftl", "_trim_kernel"))


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


def cold_kernels(kernels: tuple[tuple[str, str], ...] = PLAN_KERNELS) -> list[str]:
    """The plan kernels (``PLAN_KERNELS``, or ``kernels``) with no compiled code in the cache for
    their current source (numba's own index, stamped with the source file's mtime and size). Empty
    when all are warm, or when numba's cache layout is not the one expected (then nothing is
    claimed). Once all plan kernels are warm the answer holds for the rest of the process (a cache
    is not un-compiled under a running server), so later plans do not read the index again."""
    import importlib

    global _ALL_WARM
    if _ALL_WARM and kernels == PLAN_KERNELS:
        return []
    cold = []
    for module_name, name in kernels:
        kernel = getattr(importlib.import_module(module_name), name, None)
        try:
            index = kernel._cache._cache_file._load_index()  # type: ignore[union-attr]
        except Exception:  # noqa: BLE001 - numba internals or a renamed kernel: claim nothing
            return []
        if not index:
            cold.append(f"{module_name.rsplit('.', 1)[1]}.{name}")
    if kernels == PLAN_KERNELS:
        _ALL_WARM = not cold
    return cold


def warm_ftl() -> None:
    """Compile the FTL kernels (``FTL_KERNELS``) into the cache: a small steady-state run, a
    timed run and a TRIM, through the engine's public functions (seconds once compiled)."""
    from arrayplan_engine import ftl

    config = ftl.FtlConfig(user_pages=1 << 12, pages_per_block=64, spare_fraction_of_raw=0.2)
    ftl.simulate(config, seed=0, max_drive_writes=3)
    st = ftl.new_state(config, seed=0)
    ftl.fill_sequential(st)
    ftl.timed_run(st, ftl.FtlWorkload(), ftl.TimedCosts(controller_s=1e-5, nand_s=1e-5, relocation_s=1e-5, erase_s=1e-3,
                                                         ios_per_write=1.0), duration_s=1)
    ftl.trim(st, 0, config.user_pages)


def warm(examples: Path) -> int:
    """Compile every kernel a plan uses into the cache, through the public API (the example plans
    and a few arrays, deploy/warm_numba.py), then the FTL kernels the ``ftl`` command and the SSD
    calibration use (``warm_ftl``). Returns the exit code."""
    import runpy

    script = Path(__file__).resolve().parents[2] / "deploy" / "warm_numba.py"
    configure()
    sys.argv = [str(script), str(examples)]
    try:
        runpy.run_path(str(script), run_name="__main__")
    except SystemExit as exc:
        if exc.code:
            return int(exc.code)
    warm_ftl()
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
    if sys.argv[1:] == ["--cold-ftl"]:
        configure()
        print("\n".join(cold_kernels(FTL_KERNELS)))
        sys.exit(0)
    print("usage: python -m arrayplan_services.numba_cache --warm EXAMPLES_DIR | --dir | --cold | --cold-ftl", file=sys.stderr)
    sys.exit(2)
