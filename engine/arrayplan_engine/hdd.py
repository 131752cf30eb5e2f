"""Hard disk service model and HDD equivalence.

Service time of one IO on a disk (the classic decomposition, e.g. Ruemmler & Wilkes, "An
introduction to disk drive modeling", IEEE Computer 1994):

    command overhead + seek + rotational delay + transfer

* **seek** from the head's last position: ``a + b sqrt(d)`` over a fraction ``d`` of the stroke
  (short seeks are dominated by acceleration, hence the square root). ``a`` and ``b`` are fitted in
  ``array._seek_curve`` so that random positions over the whole surface give the datasheet's
  average seek and, where the shape allows, its full-stroke seek. Short-stroking (a workload that
  touches a fraction of the disk) shortens every seek.
* **rotational delay**: uniform over one revolution, half a revolution on average (60/rpm/2).
* **transfer** at the sustained media rate; **command overhead** 0.1 ms (``assumed``: controller
  and protocol time of a modern SAS/SATA drive; it moves a 15K disk's QD1 IOPS by 2 %).
* A sequential IO that starts where the previous one ended has no seek and no rotational delay.
* Optional **queue reordering** (``array.ArraySpec.reorder_window``): with n IOs queued, a
  shortest-access-time-first drive serves the one with the shortest positioning time. The
  simulation approximates it as the minimum of n independent positioning draws (Worthington,
  Ganger & Patt, "Scheduling algorithms for modern disk drives", SIGMETRICS 1994, for SATF
  itself). Treating the queued IOs' positions as independent overstates the gain at large n; it
  is off by default (plain FCFS) and docs/array-model.md states where it matters.

QD1 4 KB random reads then land at 1 / (overhead + seek + rotation/2 + transfer): ~180 IOPS for a
15K disk (3.4 ms seek), ~137 for 10K (4.2 ms), ~78 for 7.2K (8.5 ms).

"How many disks of this model, in the same layout, carry the same workload at the same latency
percentile target" is ``simulation.equivalent_drive_count`` (given this module's service model),
the one search every HDD equivalence uses; this module imports no simulation.
"""

from __future__ import annotations

from typing import Any

from .errors import InvalidInputError, Range, Violation, check, check_fields
from .service_time import ServiceModel
from .units import MB, KiB

__all__ = [
    "COMMAND_OVERHEAD_S",
    "random_iops",
    "service_model",
]

#: Controller/protocol time per command (assumed, see the module docstring).
COMMAND_OVERHEAD_S = 0.1e-3


SERVICE_MODEL_RANGES = {
    "rpm": Range(lo=3_000, hi=20_000),
    "average_seek_s": Range(lo=0, hi=0.05, unit="s"),
    "full_stroke_seek_s": Range(lo=0, hi=0.1, unit="s", note="(0 = unknown)"),
    "media_bytes_per_s": Range(lo=1 * MB, hi=10_000 * MB, unit="bytes/s"),
    "command_overhead_s": Range(lo=0, hi=0.01, unit="s"),
    "write_extra_s": Range(lo=0, hi=0.01, unit="s"),
}


def service_model(drive: Any = None, *, rpm: float | None = None, average_seek_s: float | None = None,
                  full_stroke_seek_s: float | None = None, media_bytes_per_s: float | None = None,
                  command_overhead_s: float = COMMAND_OVERHEAD_S, write_extra_s: float = 0.0,
                  name: str | None = None) -> ServiceModel:
    """A mechanical ``ServiceModel`` from a catalog HDD (``catalog.Drive`` or its name) or from
    explicit figures; explicit figures override the drive's.

    ``write_extra_s`` adds to every write (datasheets give average write seeks ~0.5 ms longer
    than read seeks for the head to settle more precisely).
    """
    if isinstance(drive, str):
        from . import catalog

        drive = catalog.get_drive(drive)
    if drive is not None:
        if getattr(drive, "is_ssd", False):
            raise InvalidInputError.one("drive", f"{drive.name} is an SSD; hdd.service_model needs a hard disk")
        rpm = rpm if rpm is not None else drive.rpm
        average_seek_s = average_seek_s if average_seek_s is not None else drive.average_seek_s
        full_stroke_seek_s = full_stroke_seek_s if full_stroke_seek_s is not None else drive.full_stroke_seek_s
        media_bytes_per_s = media_bytes_per_s if media_bytes_per_s is not None else drive.seq_read_bytes_per_s
        name = name or drive.name
    v: list[Violation] = []
    if full_stroke_seek_s is None:
        full_stroke_seek_s = 0.0
    v.extend(check_fields({"rpm": rpm, "average_seek_s": average_seek_s, "full_stroke_seek_s": full_stroke_seek_s,
                           "media_bytes_per_s": media_bytes_per_s, "command_overhead_s": command_overhead_s,
                           "write_extra_s": write_extra_s}, SERVICE_MODEL_RANGES))
    check(v)
    assert rpm is not None and average_seek_s is not None and media_bytes_per_s is not None
    per_byte = 1.0 / float(media_bytes_per_s)
    return ServiceModel(
        drive_name=name or f"hdd-{int(rpm)}rpm",
        mechanical=True,
        parallel_units=1,
        read_fixed_s=float(command_overhead_s),
        read_per_byte_s=per_byte,
        write_fixed_s=float(command_overhead_s + write_extra_s),
        write_per_byte_s=per_byte,
        full_rotation_s=60.0 / float(rpm),
        average_seek_s=float(average_seek_s),
        full_stroke_seek_s=float(full_stroke_seek_s),
    )


def random_iops(model: ServiceModel, io_bytes: int = 4 * KiB, *, write: bool = False) -> float:
    """Analytic QD1 random IOPS of a mechanical model: 1 / (overhead + seek + rotation/2 + transfer)."""
    if not model.mechanical:
        raise InvalidInputError.one("model.mechanical", "must be True (a hard disk model)")
    fixed = model.write_fixed_s if write else model.read_fixed_s
    per_byte = model.write_per_byte_s if write else model.read_per_byte_s
    return 1.0 / (fixed + model.average_seek_s + 0.5 * model.full_rotation_s + io_bytes * per_byte)
