"""Workloads: the IO mix an array must carry.

A ``Workload`` is what every model consumes: read share, random share, IO size mix, how IOs arrive
(closed loop at a queue depth, or open loop at a target rate), daily write volume, working-set skew
and growth per year. Presets from the seeds live in ``presets``; fio job files and block traces are
reduced to a ``Workload`` by ``fio`` and ``trace`` (the services layer opens the files).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from .errors import FRACTION, NON_NEGATIVE, POSITIVE, InvalidInputError, Range, Violation, check, check_fields
from .units import KiB, MiB


@dataclass(frozen=True, slots=True, kw_only=True)
class Workload:
    """An IO mix. Fractions are in [0, 1]; sizes in bytes; rates per second."""

    name: str = "custom"
    read_fraction: float
    random_fraction: float = 1.0
    # (io_bytes, weight) pairs; weights are normalised. Default: all 4 KiB.
    io_size_mix: tuple[tuple[int, float], ...] = ((4 * KiB, 1.0),)
    queue_depth: int = 32
    # Open-loop arrival rate the array must sustain (host IOs per second); 0 = closed loop at
    # queue_depth (the array runs as fast as it can).
    target_iops: float = 0.0
    # Host bytes written per day (drives wear from this). 0 = derive from target_iops.
    daily_write_bytes: float = 0.0
    # Skew: hot_write_fraction of writes go to hot_space_fraction of the space (1, 1 = uniform).
    hot_write_fraction: float = 1.0
    hot_space_fraction: float = 1.0
    # Fraction of the array's usable space the workload touches (fill level of the drives).
    working_set_fraction: float = 1.0
    # Fractional growth per year of IO rate, write volume and capacity (0.2 = 20 %/year).
    growth_per_year: float = 0.0
    # Where the numbers came from (seed file and quote, fio file, trace file).
    source: str = ""
    notes: tuple[str, ...] = field(default=())
    # Bytes of distinct data the workload touches (a trace's working set, a database's size);
    # 0 = unknown (working_set_fraction of the array is used instead).
    working_set_bytes: float = 0.0
    # Busiest second's IO rate over the mean rate (1 = steady; from a trace's per-second counts).
    peak_to_mean_iops_ratio: float = 1.0

    def __post_init__(self) -> None:
        check(validate(self))

    @property
    def mean_io_bytes(self) -> float:
        total = sum(w for _, w in self.io_size_mix)
        return sum(b * w for b, w in self.io_size_mix) / total

    @property
    def write_fraction(self) -> float:
        return 1.0 - self.read_fraction

    def daily_write_bytes_effective(self) -> float:
        """Bytes written per day: the stated volume, or the target rate kept up all day."""
        if self.daily_write_bytes > 0:
            return self.daily_write_bytes
        return self.target_iops * self.write_fraction * self.mean_io_bytes * 86_400.0

    def grown(self, years: float) -> Workload:
        """This workload after ``years`` of growth (rate and write volume compound)."""
        g = (1.0 + self.growth_per_year) ** years
        return replace(self, target_iops=self.target_iops * g, daily_write_bytes=self.daily_write_bytes * g)


MAX_IO_BYTES = 64 * MiB
MAX_QUEUE_DEPTH = 65_536
_SHARE = Range(lo=0, hi=1, lo_open=True)  # a share that cannot be empty: (0, 1]
_FRACTION_RANGES = {"read_fraction": FRACTION, "random_fraction": FRACTION, "hot_write_fraction": _SHARE,
                    "hot_space_fraction": _SHARE, "working_set_fraction": _SHARE}
_RANGES = {
    "queue_depth": Range(lo=1, hi=MAX_QUEUE_DEPTH, integer=True),
    "target_iops": NON_NEGATIVE,
    "daily_write_bytes": NON_NEGATIVE,
    "working_set_bytes": NON_NEGATIVE,
    "peak_to_mean_iops_ratio": Range(lo=1),
    "growth_per_year": Range(lo=0, hi=10, note="(fraction per year)"),
}


def validate(w: Workload, prefix: str = "workload") -> list[Violation]:
    """Every violation in ``w``, each naming its field under ``prefix``."""
    v: list[Violation] = []
    v.extend(check_fields(w, _FRACTION_RANGES, prefix))
    if not w.io_size_mix:
        v.append(Violation(field=f"{prefix}.io_size_mix", reason="must list at least one (io_bytes, weight)"))
    for i, pair in enumerate(w.io_size_mix):
        try:
            size, weight = pair
        except (TypeError, ValueError):
            v.append(Violation(field=f"{prefix}.io_size_mix[{i}]", reason=f"must be (io_bytes, weight), got {pair!r}"))
            continue
        if not isinstance(size, int) or not (512 <= size <= MAX_IO_BYTES) or size % 512:
            v.append(Violation(field=f"{prefix}.io_size_mix[{i}].io_bytes",
                               reason=f"must be a multiple of 512 in [512, {MAX_IO_BYTES}], got {size!r}"))
        POSITIVE.check(v, f"{prefix}.io_size_mix[{i}].weight", weight)
    v.extend(check_fields(w, _RANGES, prefix))
    if (
        not v
        and w.hot_space_fraction < 1.0
        and w.hot_write_fraction < w.hot_space_fraction
    ):
        v.append(Violation(field=f"{prefix}.hot_write_fraction",
                           reason=f"must be >= hot_space_fraction ({w.hot_space_fraction}) for a hot/cold skew, got {w.hot_write_fraction}"))
    return v


_FIELDS = {
    "name", "read_fraction", "random_fraction", "io_size_mix", "queue_depth", "target_iops",
    "daily_write_bytes", "hot_write_fraction", "hot_space_fraction", "working_set_fraction",
    "growth_per_year", "source", "notes", "working_set_bytes", "peak_to_mean_iops_ratio",
}


def workload_from_mapping(d: Mapping[str, Any], prefix: str = "workload") -> Workload:
    """Build a ``Workload`` from plain data (a parsed plan file), naming every bad field."""
    unknown = sorted(set(d) - _FIELDS)
    if unknown:
        raise InvalidInputError(
            [Violation(field=f"{prefix}.{k}", reason=f"unknown field; allowed: {', '.join(sorted(_FIELDS))}") for k in unknown]
        )
    kwargs = dict(d)
    if "io_size_mix" in kwargs:
        mix = kwargs["io_size_mix"]
        if isinstance(mix, Mapping):
            mix = list(mix.items())
        try:
            kwargs["io_size_mix"] = tuple((int(s), float(w)) for s, w in mix)
        except (TypeError, ValueError) as exc:
            raise InvalidInputError.one(f"{prefix}.io_size_mix", f"must be a list of [io_bytes, weight] pairs ({exc})") from None
    if "notes" in kwargs:
        kwargs["notes"] = tuple(kwargs["notes"])
    if "read_fraction" not in kwargs:
        raise InvalidInputError.one(f"{prefix}.read_fraction", "is required (a number in [0, 1])")
    try:
        return Workload(**kwargs)
    except InvalidInputError as exc:
        if prefix == "workload":
            raise
        raise InvalidInputError(
            [v.at(prefix + v.field[len("workload"):]) for v in exc.violations]
        ) from None
