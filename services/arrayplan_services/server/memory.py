"""Giving the memory of finished plans back to the operating system.

A plan's work in the server process (enumerating and pruning candidates, decoding results and
checkpoints, the executor's bookkeeping) runs on the plan's own thread, and glibc serves each
thread from its own malloc arena. When the plan ends Python frees those objects, but glibc keeps
the freed pages in the arenas: the server's resident memory stayed at its high-water mark after
big plans (issue: 189 -> 494 MB, not shrinking). ``malloc_trim(0)`` returns the free pages of every
arena to the kernel; the server calls it when plans have ended (``Trimmer``), which costs a few
milliseconds and changes nothing that is in use. On a C library without it (musl), nothing is done.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import functools
import logging
from collections.abc import Callable
from pathlib import Path

log = logging.getLogger(__name__)


@functools.cache
def _malloc_trim() -> Callable[[int], int] | None:
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        fn = libc.malloc_trim
    except (OSError, AttributeError):
        return None
    fn.argtypes = [ctypes.c_size_t]
    fn.restype = ctypes.c_int
    return fn


def rss_bytes() -> int:
    """This process's resident set size (0 where /proc is not there)."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    except OSError:
        pass
    return 0


def release_freed_memory() -> int:
    """Return freed heap pages to the kernel; returns the bytes of RSS given back (0 if none)."""
    fn = _malloc_trim()
    if fn is None:
        return 0
    before = rss_bytes()
    fn(0)
    return max(0, before - rss_bytes())


class Trimmer:
    """Call ``poll(held)`` now and then with the runs the server holds: when fewer are held than at
    the last poll (a plan ended), freed memory is returned."""

    def __init__(self) -> None:
        self._held = 0

    def poll(self, held: int) -> int:
        ended = held < self._held
        self._held = held
        if not ended:
            return 0
        given = release_freed_memory()
        if given >= 1 << 20:
            log.info("returned %.0f MiB of freed memory to the OS after plans ended", given / 2**20)
        return given
