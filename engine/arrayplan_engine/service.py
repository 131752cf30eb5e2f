"""The per-IO service-time model of one drive: the contract between the drive models
(``ssd``, ``hdd``) and the array simulation (``array``).

A drive model turns a catalog entry (plus fill level, spare factor, workload) into a
``ServiceModel``; the array simulation draws each member IO's service time from it. Keeping the
contract to plain numbers and numpy arrays lets the array kernel stay a numba ``@njit`` function.

Service time of one IO of ``io_bytes`` on one of the drive's ``parallel_units``:

* SSD read:  ``read_fixed_s + io_bytes * read_per_byte_s``
* SSD write: ``(write_fixed_s + io_bytes * write_per_byte_s) * m(t)`` where ``m(t)`` is the
  garbage-collection multiplier ``write_multiplier_profile[(t + phase) // profile_slot_s % len]``
  (1.0 on a fresh drive; the steady-state write amplification's cost, with its dips, once the
  spare area is used). Each drive in an array gets its own random ``phase``, so the drives'
  garbage collection is independent. ``read_multiplier_profile`` does the same for reads (reads
  that queue behind GC on the same die).
* HDD (``mechanical``): ``seek(distance) + U(0, full_rotation_s) + io_bytes * per_byte`` with a
  random seek of mean ``average_seek_s`` bounded by ``full_stroke_seek_s``.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np


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
    # Mechanical drives only (zero for SSDs).
    full_rotation_s: float = 0.0
    average_seek_s: float = 0.0
    full_stroke_seek_s: float = 0.0
    # Garbage collection (SSDs): cyclic multipliers of the service time, one value per slot.
    profile_slot_s: float = 1.0
    write_multiplier_profile: np.ndarray = field(default_factory=_ones)
    read_multiplier_profile: np.ndarray = field(default_factory=_ones)
