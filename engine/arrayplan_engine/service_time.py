"""The per-IO service-time model of one drive: the contract between the drive models
(``ssd``, ``hdd``) and the array simulation (``array``).

A drive model turns a catalog entry (plus fill level, spare factor, workload) into a
``ServiceModel``; the array simulation draws each member IO's service time from it. Keeping the
contract to plain numbers and numpy arrays lets the array kernel stay a numba ``@njit`` function.

Service time of one IO of ``io_bytes`` on one of the drive's ``parallel_units``:

* SSD read:  ``read_fixed_s + io_bytes * read_per_byte_s`` on its unit (the command and data
  path, fitted to the FOB rates); its latency has ``max(read_fixed_s, read_array_s) + io_bytes *
  read_per_byte_s``: the fixed part is at least the die's array read tR, every read senses a page
  (a 512 B read is never cheaper than tR plus its transfer). The unit does not wait for the part
  of tR beyond the fitted fixed time (the die senses while the unit serves other IOs), so the
  units' rates, the FOB figures, are unchanged
* SSD write: ``write_fixed_s + io_bytes * write_per_byte_s`` (the fresh-drive command and data
  path). With ``cleaning`` the drive also carries its own free-space state in the simulation
  (docs/ssd-model.md, "Cleaning as work"): every write takes free 4 KiB pages and its pages pass
  through the drive's back end (``host_page_s`` each); cleaning reclaims free pages from the
  blocks with the fewest valid pages (greedy) at a cost of ``relocation_page_s`` per relocated page and
  ``erase_page_s`` per cleaned page, eager drives in idle time and small steps, lazy drives only
  once the pool is low and in the foreground when it has run out. A write that does not cover
  whole 4 KiB pages reads the page first (read-modify-write). With an SLC write cache
  (``slc_cache_pages`` > 0, QLC drives) a host page costs ``slc_page_s`` while the cache has room
  and ``host_page_s`` (direct to QLC) once it is full; idle back-end time folds cached pages into
  QLC at ``fold_page_s`` each (docs/ssd-model.md, "SLC write cache").
* ``write_multiplier_profile`` / ``read_multiplier_profile``: optional cyclic multipliers of the
  service time by wall-clock slot (``profile_slot_s``, each drive at its own random phase). The
  drive models leave them at 1.0; they remain a generic way to give a drive a time-varying speed
  (the array tests use them to check fork-join order statistics).
* HDD (``mechanical``): ``seek(distance) + U(0, full_rotation_s) + io_bytes * per_byte`` with a
  random seek of mean ``average_seek_s`` bounded by ``full_stroke_seek_s``.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

#: The FTL's mapping unit: writes are programmed in whole units of this size.
MAP_BYTES = 4096


def _ones() -> np.ndarray:
    return np.ones(1, dtype=np.float64)


@dataclass(frozen=True, slots=True, kw_only=True, eq=False)
class ServiceModel:
    """Numbers the array simulation needs to time one member IO on one drive."""

    drive_name: str
    mechanical: bool = False
    parallel_units: int = 1
    read_fixed_s: float
    read_per_byte_s: float
    write_fixed_s: float
    write_per_byte_s: float
    # SSD reads: the die's array read (tR, ``ssd.NAND_OPS``), the least fixed time of a read's
    # latency. 0: none (disks, custom models).
    read_array_s: float = 0.0
    # Mechanical drives only (zero for SSDs).
    full_rotation_s: float = 0.0
    average_seek_s: float = 0.0
    full_stroke_seek_s: float = 0.0
    # Optional cyclic multipliers of the service time, one value per slot (1.0: none).
    profile_slot_s: float = 1.0
    write_multiplier_profile: np.ndarray = field(default_factory=_ones)
    read_multiplier_profile: np.ndarray = field(default_factory=_ones)
    # Cleaning as work (SSDs): the drive's free-space state, in 4 KiB pages, and its costs.
    cleaning: bool = False
    gc_eager: bool = True                 # eager: clean in idle time, small steps; lazy: defer
    span_pages: float = 0.0               # logical pages the workload writes (fill x user capacity)
    raw_pages: float = 0.0                # flash pages for data (internal parity excluded)
    precondition_drive_writes: float = 0.0  # 0: freshly filled; > 0: that many span writes before
    low_free_pages: float = 0.0           # eager: below this writes wait for cleaning; lazy: idle cleaning starts
    high_free_pages: float = 0.0          # eager: idle cleaning target; lazy: a burst cleans up to here
    step_pages: float = 1.0               # flash pages cleaned per background step
    block_pages: float = 256.0            # pages per erase block of the FTL: the victims' valid counts run 0 .. this
    host_page_s: float = 0.0              # back-end (data path / program) time per host page
    relocation_page_s: float = 0.0        # back-end time per relocated page
    erase_page_s: float = 0.0             # erase time per cleaned page (block erase / pages per block)
    relocation_scale: float = 1.0         # relocations per uniform greedy relocation (skew, random share)
    write_amplification: float = 1.0      # the steady-state target (wa.py) the scale was set for
    # An SLC write cache (QLC drives, docs/ssd-model.md "SLC write cache"); 0 pages = none. Host
    # pages land in the cache at ``slc_page_s`` each while it has room, else go direct to QLC at
    # ``host_page_s``; idle back-end time folds cached pages into QLC at ``fold_page_s`` each.
    slc_cache_pages: float = 0.0
    slc_page_s: float = 0.0
    fold_page_s: float = 0.0
    # A write buffer writes are posted to (docs/ssd-model.md, "Posted writes"); 0 pages = none. A
    # write is acknowledged ``posted_write_fixed_s + bytes x posted_write_per_byte_s`` after it
    # reaches the drive while the drain behind it (units and back end) is within
    # ``write_buffer_s`` of it (the buffer's pages at the drive's fresh write pace); otherwise
    # when the drain is that close. The drain itself is the write's ordinary service.
    write_buffer_pages: float = 0.0
    write_buffer_s: float = 0.0
    posted_write_fixed_s: float = 0.0
    posted_write_per_byte_s: float = 0.0
    # NAND operations on the dies (docs/ssd-model.md, "NAND operations"): every
    # ``nand_program_pages`` pages programmed (host writes and relocations) are one program of
    # ``nand_program_s`` on the next of the ``nand_dies`` dies, every ``nand_erase_pages`` pages
    # cleaned one erase of ``nand_erase_s``; a read whose die (a hash of its page) has an
    # operation in flight waits for it, at most ``nand_suspend_s`` on a drive that suspends
    # programs and erases for reads (0: it does not). ``nand_dies`` 0: no NAND operations
    # (disks, custom models). The dies may stand for more real dies (pages per operation scaled).
    nand_dies: int = 0
    nand_program_pages: float = 0.0
    nand_erase_pages: float = 0.0
    nand_program_s: float = 0.0
    nand_erase_s: float = 0.0
    nand_suspend_s: float = 0.0
    # programs' times by page type in programming order, relative to ``nand_program_s`` (mean 1;
    # empty: every program takes ``nand_program_s``): QLC's lower pages program faster than its
    # upper ones (``ssd.NAND_OPS``), and a read waits for what is left of the one in flight
    nand_program_spread: tuple[float, ...] = ()
    # A card of several controllers behind a bridge in RAID 0 (SSD 910, 002 seed): every number
    # above is one controller's; the simulation runs ``controllers`` of them per member and sends
    # each member IO to the controller of its 64 KiB chunk.
    controllers: int = 1

    def unloaded_read_s(self, io_bytes: float) -> float:
        """An SSD read's latency on an idle drive: its fixed time, at least the die's array read
        (``read_array_s``), and its bytes' transfer (a disk's positioning not included)."""
        return max(self.read_fixed_s, self.read_array_s) + io_bytes * self.read_per_byte_s
