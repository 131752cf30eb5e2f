"""Drive catalog: every value of every drive with its provenance, read from data files.

A ``Drive`` is a flat, frozen record in SI units (bytes, seconds, bytes per second, watts, US
dollars). Every non-None value other than the identity fields (``name``, ``display_name``,
``vendor``, ``family``, ``kind``) carries a ``Provenance``: the source (a seed file, a shared data
file or a datasheet's web address) and the exact sentence or table row it came from, or
``assumed=True`` with the reason. The test suite checks that every seed quote really occurs in its
file.

The built-in drives live in catalog files shipped with the engine,
``arrayplan_engine/data/drives/NNN-name.toml``: one drive per file, the identity fields at the top
and one table per value (``value`` with ``source`` + ``quote``, or ``assumed = true`` with
``reason``). ``drive_to_toml`` writes one, ``drive_from_toml`` reads one back (every field
validated with its line and allowed range), ``load_catalog_files`` adds a site's files to a
catalog. The files are read with ``tomllib`` through ``importlib.resources`` (package data, no
other I/O).

Conventions (also in docs/catalog.md):

* ``capacity_bytes`` is the rated user capacity in decimal bytes (300 GB = 300e9 B).
  ``raw_nand_bytes`` is the physical NAND in binary multiples, as NAND is built: the SSD 320 300GB
  carries "320GB of NAND", which is 20 devices x 2 dies x 64 Gbit = 320 GiB. When a review writes
  "GB" for NAND it means GiB; when it writes "GB" for a rated capacity it means 10^9 bytes.
* ``spare_bytes_per_user_byte`` = (raw_nand_bytes - capacity_bytes) / capacity_bytes: spare NAND
  per byte of user capacity (S3500 240GB: 264 GiB / 240 GB -> 0.181). The reviews quote spare as a
  share of the NAND instead (SSD 320: "12.8% of the total NAND"); that is
  ``spare_fraction_of_raw``. Neither is the FTL's ``spare_factor`` (spare over the raw NAND left
  after internal parity, ``ssd.py``).
* ``random_write_iops`` is the fresh-out-of-box 4 KB spec (or, where marked assumed, a
  measurement standing in for it); ``steady_random_write_iops`` is the sustained / full-span 4 KB
  spec. Intel's enterprise tables in the 001 and 002 seeds give the sustained figure (the same
  table gives the SSD 320 600 IOPS, against 23K IOPS fresh in the 000 seed), so for the 710, X25-E,
  S3500, S3700 and 910 only ``steady_random_write_iops`` is known and ``random_write_iops`` is None.
* Family-wide "max" figures applied to a capacity the seed does not tie them to are marked
  ``assumed`` with the reason "family maximum ... upper bound for this capacity".
* ``channels`` counts NAND channels per controller; an SSD 910 has ``controllers`` of them.
* MB/s in the reviews is read as 10^6 B/s; "4KB" IOs as 4096 B.

Imports only the standard library and the engine's ``units`` / ``errors`` / ``provenance``.
"""

from __future__ import annotations

import json
import math
import re
import tomllib
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field, fields
from importlib import resources
from types import MappingProxyType
from typing import Any, Final, Literal

from arrayplan_engine import units
from arrayplan_engine.errors import InvalidInputError, Range, UnknownNameError, Violation
from arrayplan_engine.provenance import Provenance

__all__ = [
    "CATALOG_FILE_SCHEMA",
    "FORM_FACTORS",
    "ENDURANCE_RATING_WORKLOADS",
    "GC_POLICIES",
    "INTERFACES",
    "INTERFACE_BYTES_PER_S",
    "INTERNAL_PARITIES",
    "KINDS",
    "NAND_TYPES",
    "PROVENANCED_FIELDS",
    "RECORDINGS",
    "SEED_FILES",
    "Catalog",
    "CatalogFileError",
    "Drive",
    "Provenance",
    "all_drives",
    "builtin_catalog",
    "drive_from_fields",
    "drive_from_mapping",
    "drive_from_toml",
    "drive_to_toml",
    "drive_violations",
    "get_drive",
    "load_catalog_files",
    "with_user_drives",
]

Kind = Literal["ssd", "hdd"]
Interface = Literal["sata-1.5g", "sata-3g", "sata-6g", "sas-6g", "sas-12g", "sas-24g", "pcie-gen2-x4", "pcie-gen2-x8",
                    "pcie-gen3-x4", "pcie-gen4-x4", "pcie-gen5-x4"]
NandType = Literal["slc", "mlc", "emlc", "tlc", "qlc", "hdd"]
Recording = Literal["cmr", "smr-host-managed", "smr-drive-managed"]
InternalParity = Literal["none", "raid4-dies", "rain-7+1"]
GcPolicy = Literal["eager", "lazy"]
EnduranceRatingWorkload = Literal["jesd219-random", "sequential"]

KINDS: Final[tuple[str, ...]] = ("ssd", "hdd")
INTERFACES: Final[tuple[str, ...]] = (
    "sata-1.5g",
    "sata-3g",
    "sata-6g",
    "sas-6g",
    "sas-12g",
    "sas-24g",
    "pcie-gen2-x4",
    "pcie-gen2-x8",
    "pcie-gen3-x4",
    "pcie-gen4-x4",
    "pcie-gen5-x4",
)
#: PCIe 4.0 / 5.0 lanes (16 / 32 GT/s, 128b/130b) and 24G SAS (SAS-4: 22.5 Gbit/s, 128b/150b), payload.
PCIE_GEN4_LANE_BYTES_PER_S: Final = 1_969 * units.MB
PCIE_GEN5_LANE_BYTES_PER_S: Final = 3_938 * units.MB
SAS_24G_BYTES_PER_S: Final = 2_400 * units.MB
#: Payload bandwidth of each interface (after line encoding), from ``units``.
INTERFACE_BYTES_PER_S: Final[Mapping[str, int]] = MappingProxyType(
    {
        "sata-1.5g": units.SATA_1_5G_BYTES_PER_S,
        "sata-3g": units.SATA_3G_BYTES_PER_S,
        "sata-6g": units.SATA_6G_BYTES_PER_S,
        "sas-6g": units.SAS_6G_BYTES_PER_S,
        "sas-12g": units.SAS_12G_BYTES_PER_S,
        "sas-24g": SAS_24G_BYTES_PER_S,
        "pcie-gen2-x4": 4 * units.PCIE_GEN2_LANE_BYTES_PER_S,
        "pcie-gen2-x8": 8 * units.PCIE_GEN2_LANE_BYTES_PER_S,
        "pcie-gen3-x4": 4 * units.PCIE_GEN3_LANE_BYTES_PER_S,
        "pcie-gen4-x4": 4 * PCIE_GEN4_LANE_BYTES_PER_S,
        "pcie-gen5-x4": 4 * PCIE_GEN5_LANE_BYTES_PER_S,
    }
)
#: ``pcie-hh``: half-height PCIe card; ``pcie-hhhl``: half-height, half-length.
FORM_FACTORS: Final[tuple[str, ...]] = ("1.8in", "2.5in", "3.5in", "pcie-hh", "pcie-hhhl")
NAND_TYPES: Final[tuple[str, ...]] = ("slc", "mlc", "emlc", "tlc", "qlc", "hdd")
#: How a hard disk lays tracks: conventional, or shingled (host-managed: the host must write each
#: zone sequentially, so the disk takes no random writes; drive-managed: the disk remaps them).
RECORDINGS: Final[tuple[str, ...]] = ("cmr", "smr-host-managed", "smr-drive-managed")
INTERNAL_PARITIES: Final[tuple[str, ...]] = ("none", "raid4-dies", "rain-7+1")
GC_POLICIES: Final[tuple[str, ...]] = ("eager", "lazy")
#: The workload a drive's rated endurance (``endurance_bytes_written``) was measured under:
#: JEDEC JESD218's rating workload (JESD219: random writes over the whole drive, skewed for
#: enterprise drives), the default; or sequential writes, where the drive's own source says so
#: (QLC drives are often rated that way). ``endurance.rating_workload_write_amplification``
#: converts a sequential rating to its random-workload equivalent.
ENDURANCE_RATING_WORKLOADS: Final[tuple[str, ...]] = ("jesd219-random", "sequential")
#: Why a drive whose source does not name the rating workload is read as JESD219 random.
JESD219_DEFAULT_REASON: Final = (
    "not given: JEDEC JESD218 rates SSD endurance under the JESD219 workload (random writes over the whole drive), "
    "the reading unless the drive's source says its rating is for sequential writes")

S000: Final = "000_d5886dd2adcf9a04.txt"
S001: Final = "001_4993870e060cd6fa.txt"
S002: Final = "002_40abfca3ec444397.txt"
S003: Final = "003_8b1b5b682b53d3a1.txt"
S004: Final = "004_f48e2bb91ecb2076.txt"
SURVIVAL: Final = "data/reliability/survival.csv"
PRICES: Final = "data/reliability/prices.csv"
#: Every source a built-in provenance may name: the seed reviews by file name (the
#: quote checks read them from ``../shared/seeds/`` when present and skip otherwise) and the
#: reliability tables by their path under ``tests/data/`` (vendored with their licence).
SEED_FILES: Final[tuple[str, ...]] = (S000, S001, S002, S003, S004, SURVIVAL, PRICES)
USER_SOURCE: Final = "user"


# --------------------------------------------------------------------------------------------
# Records


USER_PROVENANCE: Final = Provenance(source=USER_SOURCE, quote="supplied by user")


@dataclass(frozen=True, slots=True, kw_only=True)
class Drive:
    """One drive model. SI units; None where not applicable (HDD NAND fields, SSD mechanics) or
    unknown. ``provenance`` maps every non-None field in ``PROVENANCED_FIELDS`` to its source."""

    name: str
    display_name: str
    vendor: str
    family: str
    kind: Kind
    interface: Interface
    form_factor: str | None = None
    capacity_bytes: int
    raw_nand_bytes: int | None = None
    nand_type: NandType
    page_bytes: int | None = None
    pages_per_block: int | None = None
    channels: int | None = None
    controllers: int | None = None
    internal_parity: InternalParity | None = None
    gc_policy: GcPolicy | None = None
    random_read_iops: float | None = None
    random_write_iops: float | None = None
    steady_random_write_iops: float | None = None
    seq_read_bytes_per_s: float | None = None
    seq_write_bytes_per_s: float | None = None
    # QLC (or TLC) drives that keep part of their NAND in SLC mode as a write cache: its size
    # (0 = no cache) and the cached sequential write rate; ``seq_write_bytes_per_s`` is then the
    # direct-to-QLC rate (after the cache is full). None: no cache figures (no cache modelled).
    slc_cache_bytes: int | None = None
    slc_write_bytes_per_s: float | None = None
    # A write buffer (DRAM or SRAM, backed by capacitors or the volatile cache a drive ships with
    # on): writes are acknowledged ("posted") once in it and drained by the flash back end. None:
    # no buffer.
    write_buffer_bytes: int | None = None
    read_latency_s: float | None = None
    write_latency_s: float | None = None
    endurance_bytes_written: int | None = None
    # The workload the rated endurance was measured under (``ENDURANCE_RATING_WORKLOADS``). A
    # catalog file that says nothing gets JESD219 random, marked assumed; a user's drive that says
    # nothing keeps None, which the wear model reads as JESD219 random too.
    endurance_rating_workload: EnduranceRatingWorkload | None = None
    pe_cycles: int | None = None
    rpm: int | None = None
    average_seek_s: float | None = None
    full_stroke_seek_s: float | None = None
    recording: Recording | None = None
    active_power_w: float | None = None
    idle_power_w: float | None = None
    price_usd: float | None = None
    price_year: int | None = None
    annual_failure_rate: float | None = None
    uber: float | None = None
    provenance: Mapping[str, Provenance] = field(hash=False, repr=False)

    @property
    def is_ssd(self) -> bool:
        return self.kind == "ssd"

    @property
    def spare_bytes_per_user_byte(self) -> float | None:
        """Spare NAND per byte of user capacity: (raw_nand_bytes - capacity_bytes) /
        capacity_bytes, raw in binary and capacity in decimal bytes (S3500 240GB: 264 GiB for
        240 GB -> 0.181). None for a hard disk."""
        if self.raw_nand_bytes is None:
            return None
        return (self.raw_nand_bytes - self.capacity_bytes) / self.capacity_bytes

    @property
    def spare_fraction_of_raw(self) -> float | None:
        """Spare as a share of the NAND, the reviews' convention (SSD 320 300GB: 320 GiB of NAND
        for 300 GB -> 0.127, "12.8% of the total NAND capacity as spare area")."""
        if self.raw_nand_bytes is None:
            return None
        return (self.raw_nand_bytes - self.capacity_bytes) / self.raw_nand_bytes

    @property
    def assumed_fields(self) -> tuple[str, ...]:
        """Names of the fields whose value is assumed, in field order."""
        return tuple(
            f for f in PROVENANCED_FIELDS if f in self.provenance and self.provenance[f].assumed
        )


_IDENTITY_FIELDS: Final = ("name", "display_name", "vendor", "family", "kind")
#: Fields that need a provenance whenever they are not None.
PROVENANCED_FIELDS: Final[tuple[str, ...]] = tuple(
    f.name for f in fields(Drive) if f.name not in (*_IDENTITY_FIELDS, "provenance")
)
_SSD_ONLY: Final = (
    "raw_nand_bytes",
    "page_bytes",
    "pages_per_block",
    "channels",
    "controllers",
    "internal_parity",
    "gc_policy",
    "pe_cycles",
    "slc_cache_bytes",
    "slc_write_bytes_per_s",
    "write_buffer_bytes",
    "endurance_rating_workload",
)
_HDD_ONLY: Final = ("rpm", "average_seek_s", "full_stroke_seek_s", "recording")


# --------------------------------------------------------------------------------------------
# The catalog container


def _key(text: str) -> str:
    return " ".join(text.split()).casefold()


class Catalog:
    """An immutable, ordered set of drives, looked up by name or display name (case-insensitive)."""

    __slots__ = ("_drives", "_index")

    _drives: tuple[Drive, ...]
    _index: Mapping[str, Drive]

    def __init__(self, drives: Iterable[Drive]) -> None:
        ordered = tuple(drives)
        index: dict[str, Drive] = {}
        for d in ordered:
            for k in {_key(d.name), _key(d.display_name)}:
                other = index.get(k)
                if other is not None and other is not d:
                    raise ValueError(f"drive {d.name!r} clashes with {other.name!r} on {k!r}")
                index[k] = d
        object.__setattr__(self, "_drives", ordered)
        object.__setattr__(self, "_index", MappingProxyType(index))

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError("Catalog is immutable")

    def get(self, name: str, field_path: str = "drive_model") -> Drive:
        """The drive called ``name`` (catalog key or display name, any case); raises
        ``UnknownNameError`` naming ``field_path`` and listing the known names."""
        drive = self._index.get(_key(name)) if isinstance(name, str) else None
        if drive is None:
            raise UnknownNameError(field_path, str(name), self.names())
        return drive

    def names(self) -> tuple[str, ...]:
        return tuple(d.name for d in self._drives)

    def __iter__(self) -> Iterator[Drive]:
        return iter(self._drives)

    def __len__(self) -> int:
        return len(self._drives)

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and _key(name) in self._index

    def __repr__(self) -> str:
        return f"Catalog({len(self._drives)} drives)"

    def with_drives(self, extra: Iterable[Drive]) -> Catalog:
        """A new catalog: these drives followed by ``extra``."""
        return Catalog((*self._drives, *extra))


# --------------------------------------------------------------------------------------------
# Validation of user-supplied drives


def _Num(integer: bool, low: float, high: float, *, low_open: bool = True) -> Range:
    """A drive field's range: ``(low, high]`` (``[low, high]`` with ``low_open=False``)."""
    return Range(lo=low, hi=high, lo_open=low_open, integer=integer)


_NUMERIC: Final[Mapping[str, Range]] = MappingProxyType(
    {
        "capacity_bytes": _Num(True, 0, 1e15),
        "raw_nand_bytes": _Num(True, 0, 2e15),
        "page_bytes": _Num(True, 512, 65_536, low_open=False),
        "pages_per_block": _Num(True, 1, 4_096, low_open=False),
        "channels": _Num(True, 1, 128, low_open=False),
        "controllers": _Num(True, 1, 16, low_open=False),
        "random_read_iops": _Num(False, 0, 1e8),
        "random_write_iops": _Num(False, 0, 1e8),
        "steady_random_write_iops": _Num(False, 0, 1e8),
        "seq_read_bytes_per_s": _Num(False, 0, 1e11),
        "seq_write_bytes_per_s": _Num(False, 0, 1e11),
        "slc_cache_bytes": _Num(True, 0, 1e15, low_open=False),
        "slc_write_bytes_per_s": _Num(False, 0, 1e11),
        "write_buffer_bytes": _Num(True, 0, 1e12, low_open=False),
        "read_latency_s": _Num(False, 0, 1.0),
        "write_latency_s": _Num(False, 0, 1.0),
        "endurance_bytes_written": _Num(True, 0, 1e20),
        "pe_cycles": _Num(True, 1, 10_000_000, low_open=False),
        "rpm": _Num(True, 3_600, 20_000, low_open=False),
        "average_seek_s": _Num(False, 0, 0.1),
        "full_stroke_seek_s": _Num(False, 0, 0.2),
        "active_power_w": _Num(False, 0, 1_000),
        "idle_power_w": _Num(False, 0, 1_000, low_open=False),
        "price_usd": _Num(False, 0, 10_000_000, low_open=False),
        "price_year": _Num(True, 1956, 2100, low_open=False),
        "annual_failure_rate": _Num(False, 0, 1, low_open=False),
        "uber": _Num(False, 0, 1e-6),
    }
)
_CHOICES: Final[Mapping[str, tuple[str, ...]]] = MappingProxyType(
    {
        "kind": KINDS,
        "interface": INTERFACES,
        "form_factor": FORM_FACTORS,
        "nand_type": NAND_TYPES,
        "internal_parity": INTERNAL_PARITIES,
        "gc_policy": GC_POLICIES,
        "recording": RECORDINGS,
        "endurance_rating_workload": ENDURANCE_RATING_WORKLOADS,
    }
)
_TEXT: Final = ("name", "display_name", "vendor", "family")
_NAME_RE: Final = re.compile(r"^[a-z0-9]+(?:[.-][a-z0-9]+)*$")
_ALLOWED_KEYS: Final[tuple[str, ...]] = tuple(
    f.name for f in fields(Drive) if f.name != "provenance"
)


def _fmt(x: float) -> str:
    return f"{x:g}"


def _check_number(value: Any, spec: Range) -> tuple[float | int | None, str | None]:
    """(the value, converted) or (None, the reason it is bad). A file may give a number as a
    string (``"1_000"``) and an integer as a float with no fraction (``3.0``)."""
    if isinstance(value, bool) or not isinstance(value, (int, float, str)):
        return None, f"{spec.allowed()}, got {value!r} ({type(value).__name__})"
    number: float | int
    if isinstance(value, str):
        try:
            number = float(value.strip().replace("_", ""))
        except ValueError:
            return None, f"{spec.allowed()}, got {value!r}"
    else:
        number = value
    if spec.integer and isinstance(number, float) and number.is_integer():
        number = int(number)
    elif not spec.integer:
        number = float(number)
    if not spec.contains(number):
        return None, f"{spec.allowed()}, got {value!r}"
    return number, None


def _validate(d: Any, prefix: str, *, spec_defaults: bool = False) -> tuple[dict[str, Any], list[Violation]]:
    """Check a mapping of drive fields; returns the cleaned values and the violations. With
    ``spec_defaults`` an SSD may leave out ``raw_nand_bytes`` and ``gc_policy`` (a spec sheet
    gives neither; ``drive_from_fields`` fills them in, marked assumed). The checks run in four
    steps, in this order: unknown keys, each field alone, the fields a kind requires, and the
    relations between fields."""
    out: list[Violation] = []

    def bad(key: str, reason: str) -> None:
        out.append(Violation(field=f"{prefix}.{key}" if key else prefix, reason=reason))

    if not isinstance(d, Mapping):
        bad("", f"must be a mapping of drive fields, got {type(d).__name__}")
        return {}, out
    for key in d:
        if not isinstance(key, str) or key not in _ALLOWED_KEYS:
            bad(str(key), "unknown field; allowed: " + ", ".join(_ALLOWED_KEYS))
    clean = _clean_fields(d, bad)
    supplied = {k for k in _ALLOWED_KEYS if k in d and d[k] is not None}
    _check_required(clean, supplied, bad, spec_defaults=spec_defaults)
    _check_relations(clean, supplied, bad)
    return clean, out


def _clean_fields(d: Mapping[str, Any], bad: Callable[[str, str], None]) -> dict[str, Any]:
    """Each text, choice and numeric field alone: its cleaned value, or a violation through ``bad``."""
    clean: dict[str, Any] = {}
    for key in _TEXT:
        if key not in d or d[key] is None:
            continue
        v = d[key]
        if not isinstance(v, str) or not v.strip() or len(v) > 128:
            bad(key, f"must be a non-empty string of at most 128 characters, got {v!r}")
        elif key == "name" and not _NAME_RE.match(v):
            bad(key, f"must be lowercase letters, digits and hyphens (e.g. 'my-ssd-480gb'), got {v!r}")
        else:
            clean[key] = v.strip()

    for key, allowed in _CHOICES.items():
        if key not in d or d[key] is None:
            continue
        v = d[key]
        if not isinstance(v, str) or v not in allowed:
            bad(key, f"must be one of {', '.join(allowed)}; got {v!r}")
        else:
            clean[key] = v

    for key, spec in _NUMERIC.items():
        if key not in d or d[key] is None:
            continue
        number, reason = _check_number(d[key], spec)
        if reason is not None:
            bad(key, reason)
        else:
            clean[key] = number
    return clean


def _check_required(clean: Mapping[str, Any], supplied: set[str], bad: Callable[[str, str], None], *,
                    spec_defaults: bool) -> None:
    """The fields every drive needs, and those its kind needs or forbids."""
    for key in ("name", "kind", "interface", "capacity_bytes"):
        if key not in supplied:
            bad(key, "is required")
    kind = clean.get("kind")
    if kind == "ssd":
        for key in ("raw_nand_bytes", "nand_type", "gc_policy", "random_read_iops"):
            if key not in supplied and not (spec_defaults and key in ("raw_nand_bytes", "gc_policy")):
                bad(key, "is required for kind 'ssd'")
        if not supplied & {"random_write_iops", "steady_random_write_iops"}:
            bad("random_write_iops", "is required for kind 'ssd' (or steady_random_write_iops)")
        if not supplied & {"endurance_bytes_written", "pe_cycles"}:
            bad("endurance_bytes_written", "is required for kind 'ssd' (or pe_cycles)")
        for key in _HDD_ONLY:
            if key in supplied:
                bad(key, "applies only to kind 'hdd'; omit it or set null")
        if clean.get("nand_type") == "hdd":
            bad("nand_type", "must be one of slc, mlc, emlc, tlc, qlc for kind 'ssd'; got 'hdd'")
    elif kind == "hdd":
        for key in ("rpm", "average_seek_s"):
            if key not in supplied:
                bad(key, "is required for kind 'hdd'")
        for key in _SSD_ONLY:
            if key in supplied:
                bad(key, "applies only to kind 'ssd'; omit it or set null")
        if "nand_type" in clean and clean["nand_type"] != "hdd":
            bad("nand_type", f"must be 'hdd' for kind 'hdd'; got {clean['nand_type']!r}")


def _check_relations(clean: Mapping[str, Any], supplied: set[str], bad: Callable[[str, str], None]) -> None:
    """Relations between fields, checked only when both sides are individually valid."""

    def pair(a: str, b: str) -> tuple[Any, Any] | None:
        if a in clean and b in clean:
            return clean[a], clean[b]
        return None

    if (p := pair("raw_nand_bytes", "capacity_bytes")) and p[0] < p[1]:
        bad("raw_nand_bytes", f"must be >= capacity_bytes ({p[1]}), got {p[0]}")
    if (p := pair("endurance_bytes_written", "capacity_bytes")) and p[0] < p[1]:
        bad("endurance_bytes_written", (
            f"must be in bytes written over the drive's life, at least its capacity ({p[1]}); got {p[0]}, which looks like "
            "TBW or drive writes per day: give TBW x 1e12, or DWPD x capacity_bytes x 365 x warranty years"))
    if "endurance_rating_workload" in clean and "endurance_bytes_written" not in supplied:
        bad("endurance_rating_workload", "says what endurance_bytes_written was rated under: give endurance_bytes_written or omit it")
    if (p := pair("steady_random_write_iops", "random_write_iops")) and p[0] > p[1]:
        bad("steady_random_write_iops", f"must be <= random_write_iops ({_fmt(p[1])}), got {_fmt(p[0])}")
    if (p := pair("full_stroke_seek_s", "average_seek_s")) and p[0] < p[1]:
        bad("full_stroke_seek_s", f"must be >= average_seek_s ({_fmt(p[1])}), got {_fmt(p[0])}")
    if (p := pair("idle_power_w", "active_power_w")) and p[0] > p[1]:
        bad("idle_power_w", f"must be <= active_power_w ({_fmt(p[1])}), got {_fmt(p[0])}")
    if clean.get("slc_cache_bytes"):
        # a cache needs its (fast) write rate, at least the direct rate, and fits in the drive
        if "slc_write_bytes_per_s" not in clean:
            bad("slc_write_bytes_per_s", "is required when slc_cache_bytes > 0 (the cached write rate)")
        elif "seq_write_bytes_per_s" not in clean:
            bad("seq_write_bytes_per_s", "is required when slc_cache_bytes > 0 (the direct-to-QLC write rate)")
        elif (p := pair("slc_write_bytes_per_s", "seq_write_bytes_per_s")) and p[0] < p[1]:
            bad("slc_write_bytes_per_s", f"must be >= seq_write_bytes_per_s ({_fmt(p[1])}), the direct rate; got {_fmt(p[0])}")
        if (p := pair("slc_cache_bytes", "capacity_bytes")) and p[0] >= p[1]:
            bad("slc_cache_bytes", f"must be < capacity_bytes ({p[1]}), got {p[0]}")
    iface = clean.get("interface")
    if iface is not None:
        cap = INTERFACE_BYTES_PER_S[iface]
        for key in ("seq_read_bytes_per_s", "seq_write_bytes_per_s", "slc_write_bytes_per_s"):
            if key in clean and clean[key] > cap:
                bad(key, f"must be <= {_fmt(cap)} (the {iface} interface), got {_fmt(clean[key])}")


def drive_from_mapping(d: Mapping[str, Any], field_prefix: str = "drives[0]") -> Drive:
    """A user-supplied drive (from the YAML/JSON the service reads), every field validated.

    Raises ``InvalidInputError`` with one ``Violation`` per bad field, each naming the field path
    (``drives[0].capacity_bytes``) and the allowed range; unknown keys are named too. Numbers may
    be given as numeric strings (YAML 1.1 reads ``480e9`` as a string). Defaults: ``display_name``
    = ``name``, ``vendor`` = "user", ``family`` = "", SSD ``controllers`` = 1 and
    ``internal_parity`` = "none", HDD ``nand_type`` = "hdd". Every value carries
    ``Provenance(source="user", quote="supplied by user")``.
    """
    clean, violations = _validate(d, field_prefix)
    if violations:
        raise InvalidInputError(violations)
    clean.setdefault("display_name", clean["name"])
    clean.setdefault("vendor", "user")
    clean.setdefault("family", "")
    if clean["kind"] == "ssd":
        clean.setdefault("controllers", 1)
        clean.setdefault("internal_parity", "none")
    else:
        clean.setdefault("nand_type", "hdd")
    prov = {k: USER_PROVENANCE for k in PROVENANCED_FIELDS if clean.get(k) is not None}
    return Drive(**clean, provenance=MappingProxyType(prov))


def drive_violations(drive: Drive, field_prefix: str = "drive") -> list[Violation]:
    """The violations ``drive_from_mapping`` would report for this drive's values (empty for a
    sound drive). Used by the tests to hold the built-in catalog to the same rules."""
    values = {k: getattr(drive, k) for k in _ALLOWED_KEYS}
    return _validate(values, field_prefix)[1]


def with_user_drives(
    extra: Iterable[Mapping[str, Any] | Drive],
    *,
    base: Catalog | None = None,
    field_prefix: str = "drives",
) -> Catalog:
    """The built-in catalog (or ``base``) plus user drives, so the planner can search the union.

    Mappings go through ``drive_from_mapping`` with paths ``drives[i]``; every violation of every
    drive is collected into one ``InvalidInputError``, including a name that is already taken.
    """
    base = builtin_catalog() if base is None else base
    added: list[Drive] = []
    violations: list[Violation] = []
    taken = {_key(n) for d in base for n in (d.name, d.display_name)}
    for i, item in enumerate(extra):
        path = f"{field_prefix}[{i}]"
        if isinstance(item, Drive):
            drive: Drive | None = item
        else:
            try:
                drive = drive_from_mapping(item, field_prefix=path)
            except InvalidInputError as e:
                violations.extend(e.violations)
                drive = None
        if drive is None:
            continue
        for attr in ("name", "display_name"):
            k = _key(getattr(drive, attr))
            if k in taken:
                violations.append(
                    Violation(
                        field=f"{path}.{attr}",
                        reason=f"{getattr(drive, attr)!r} is already in the catalog; pick another",
                    )
                )
        taken |= {_key(drive.name), _key(drive.display_name)}
        added.append(drive)
    if violations:
        raise InvalidInputError(violations)
    return base.with_drives(added)


# --------------------------------------------------------------------------------------------
# Catalog files (TOML): one drive per file, every value with its provenance

#: The version of the catalog file layout (docs/catalog.md, "Catalog files").
CATALOG_FILE_SCHEMA: Final = 1
_PROVENANCE_KEYS: Final = ("value", "source", "quote", "assumed", "reason")


class CatalogFileError(InvalidInputError):
    """A catalog file that does not load: every problem with its line (None when unknown).

    ``str()`` gives one ``path:line: field: reason`` line per problem; ``violations`` name the
    field (``capacity_bytes.value``) so an API error can re-prefix them."""

    def __init__(self, path: str, problems: list[tuple[int | None, str, str]]) -> None:
        self.path = path
        self.problems = problems
        super().__init__([Violation(field=f or "(file)", reason=r) for _, f, r in problems])
        self.args = ("\n".join(f"{path}:{line or '?'}: {f + ': ' if f else ''}{r}" for line, f, r in problems),)

    def __str__(self) -> str:
        return str(self.args[0])


def _toml_string(text: str) -> str:
    out = json.dumps(text, ensure_ascii=False)
    return out.replace("\x7f", "\\u007f")


def _toml_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if not math.isfinite(value):
            raise ValueError(f"a catalog value must be finite, got {value!r}")
        return repr(value)
    if isinstance(value, str):
        return _toml_string(value)
    raise TypeError(f"cannot write {type(value).__name__} to a catalog file")


def drive_to_toml(drive: Drive) -> str:
    """One drive as a catalog file (TOML): the identity fields at the top (a ``name = "..."``
    line first), then one table per value with its provenance. ``drive_from_toml`` reads it back
    to an equal ``Drive``."""
    lines = [
        f"# arrayplan drive catalog file (schema {CATALOG_FILE_SCHEMA}; docs/catalog.md): {drive.display_name}",
        "# Every value: `value` with `source` + `quote` (verbatim from the source), or `assumed = true`",
        "# with `reason`. SI units: bytes, seconds, bytes per second, watts, US dollars.",
    ]
    for key in _IDENTITY_FIELDS:
        if getattr(drive, key):  # an empty family is left out (and read back as empty)
            lines.append(f"{key} = {_toml_value(getattr(drive, key))}")
    for key in PROVENANCED_FIELDS:
        value = getattr(drive, key)
        if value is None:
            continue
        p = drive.provenance[key]
        lines += ["", f"[{key}]", f"value = {_toml_value(value)}"]
        if p.source:
            lines.append(f"source = {_toml_string(p.source)}")
        if p.quote:
            lines.append(f"quote = {_toml_string(p.quote)}")
        if p.assumed:
            lines.append("assumed = true")
        if p.reason:
            lines.append(f"reason = {_toml_string(p.reason)}")
    return "\n".join(lines) + "\n"


def _line_of_key(text: str, key: str) -> int | None:
    """The line of ``FIELD`` or ``FIELD.KEY`` in a catalog file: the key's line inside the
    ``[FIELD]`` table (``value`` for a bare field), else the table's header, else a top-level
    ``FIELD = ...`` line."""
    top, _, sub = key.partition(".")
    sub = sub or "value"
    lines = text.splitlines()
    header = re.compile(rf"^\s*\[\s*{re.escape(top)}\s*\]")
    assign = re.compile(rf"^\s*{re.escape(top)}\s*[=.]")
    for i, line in enumerate(lines, start=1):
        if header.match(line):
            inner = re.compile(rf"^\s*{re.escape(sub)}\s*=")
            for j in range(i, len(lines)):
                if lines[j].lstrip().startswith("["):
                    break
                if inner.match(lines[j]):
                    return j + 1
            return i
        if assign.match(line):
            return i
    return None


def split_provenance(
    data: Mapping[str, Any], prefix: str, *, bare: Provenance | None
) -> tuple[dict[str, Any], dict[str, Provenance], list[Violation]]:
    """Split drive fields given as ``{value, source, quote}`` / ``{value, assumed, reason}``
    tables (or, when ``bare`` is given, plain values carrying that provenance) into values and
    provenance. Violations name ``prefix.FIELD`` (or ``prefix.FIELD.KEY``)."""
    values: dict[str, Any] = {}
    prov: dict[str, Provenance] = {}
    out: list[Violation] = []

    def path(*parts: str) -> str:
        return ".".join(p for p in (prefix, *parts) if p)

    for key, item in data.items():
        if key in _IDENTITY_FIELDS or key not in PROVENANCED_FIELDS:
            values[key] = item  # identity text, or an unknown key _validate names
            continue
        if not isinstance(item, Mapping):
            if bare is None:
                out.append(Violation(field=path(key), reason=(
                    "must be a table with value and source + quote, or value, assumed = true and reason; "
                    f"got a bare {type(item).__name__}")))
                continue
            values[key] = item
            prov[key] = bare
            continue
        unknown = [k for k in item if k not in _PROVENANCE_KEYS]
        for k in unknown:
            out.append(Violation(field=path(key, str(k)), reason="unknown key; allowed: " + ", ".join(_PROVENANCE_KEYS)))
        if "value" not in item:
            out.append(Violation(field=path(key, "value"), reason="is required"))
            continue
        values[key] = item["value"]
        assumed = item.get("assumed", False)
        texts = {k: item.get(k, "") for k in ("source", "quote", "reason")}
        bad = False
        if not isinstance(assumed, bool):
            out.append(Violation(field=path(key, "assumed"), reason=f"must be true or false, got {assumed!r}"))
            bad = True
        for k, v in texts.items():
            if not isinstance(v, str):
                out.append(Violation(field=path(key, k), reason=f"must be a string, got {v!r}"))
                bad = True
        if bad:
            continue
        if assumed and not texts["reason"].strip():
            out.append(Violation(field=path(key, "reason"), reason="is required when assumed = true (say what the value is and why)"))
            continue
        if not assumed and not (texts["source"].strip() and texts["quote"].strip()):
            if bare is not None and not texts["source"] and not texts["quote"]:
                prov[key] = bare
                continue
            missing = "source" if not texts["source"].strip() else "quote"
            out.append(Violation(field=path(key, missing), reason=(
                "is required: a value needs source + quote (the sentence it was read from), or assumed = true with reason")))
            continue
        prov[key] = Provenance(source=texts["source"], quote=texts["quote"], assumed=assumed, reason=texts["reason"])
    return values, prov, out


def drive_from_fields(
    data: Mapping[str, Any], prefix: str = "", *, bare: Provenance | None = None, defaults_reason: str = ""
) -> Drive:
    """A drive from catalog-file fields (see ``split_provenance``), every value validated with
    its path and allowed range (``InvalidInputError``). Fields the file leaves out that the model
    has a default for (display name, vendor, family, one controller, no internal parity, HDD
    ``nand_type``) get that default, marked assumed with ``defaults_reason``."""
    if not isinstance(data, Mapping):
        raise InvalidInputError.one(prefix or "drive", f"must be a table of drive fields, got {type(data).__name__}")
    values, prov, out = split_provenance(data, prefix, bare=bare)
    clean, more = _validate(values, prefix or "_", spec_defaults=True)
    if not prefix:
        more = [v.at(v.field.removeprefix("_").removeprefix(".")) for v in more]
    out += more
    if out:
        raise InvalidInputError(out)
    for key, value in values.items():  # a whole number written as one stays one (loads back unchanged)
        if type(value) is int and isinstance(clean.get(key), float) and clean[key] == value:
            clean[key] = value
    clean.setdefault("display_name", clean["name"])
    clean.setdefault("vendor", "user" if bare is not None else "unknown")
    clean.setdefault("family", "")
    why = defaults_reason or "not given in the catalog file: the model's default"
    default_prov = Provenance(source="", quote="", assumed=True, reason=why)
    if clean["kind"] == "ssd":
        for key, value in (("controllers", 1), ("internal_parity", "none")):
            if key not in clean:
                clean[key] = value
                prov[key] = bare if bare is not None else default_prov
        if "raw_nand_bytes" not in clean:
            raw = units.GiB
            while raw <= clean["capacity_bytes"]:
                raw *= 2
            clean["raw_nand_bytes"] = raw
            prov["raw_nand_bytes"] = Provenance(assumed=True, reason=(
                f"not given: the smallest power-of-two GiB of NAND above the rated capacity ({raw / GiB:,.0f} GiB), how "
                "NAND is built (3.84 TB on 4 TiB, 7.68 TB on 8 TiB); a spec sheet rarely states it"))
        if bare is None and clean.get("endurance_bytes_written") and "endurance_rating_workload" not in clean:
            clean["endurance_rating_workload"] = "jesd219-random"
            prov["endurance_rating_workload"] = Provenance(assumed=True, reason=JESD219_DEFAULT_REASON)
        if "gc_policy" not in clean:
            clean["gc_policy"] = "eager"
            prov["gc_policy"] = Provenance(assumed=True, reason=(
                "not given: eager (background) cleaning, what data-centre SSD firmware does to bound write latency; "
                "a spec sheet does not say"))
    elif "nand_type" not in clean:
        clean["nand_type"] = "hdd"
        prov["nand_type"] = Provenance(source="", quote="", assumed=True, reason="a hard disk: no NAND")
    kept = {k: p for k, p in prov.items() if clean.get(k) is not None}
    return Drive(**clean, provenance=MappingProxyType(kept))


def drive_from_toml(text: str, path: str = "<catalog file>") -> Drive:
    """Parse one catalog file (TOML). Raises ``CatalogFileError`` naming the file, the line and
    the field of every problem."""
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        m = re.search(r"at line (\d+)", str(exc))
        raise CatalogFileError(path, [(int(m.group(1)) if m else None, "", f"not valid TOML: {exc}")]) from None
    try:
        return drive_from_fields(data)
    except InvalidInputError as exc:
        problems = []
        for v in exc.violations:
            problems.append((_line_of_key(text, v.field) if v.field else None, v.field, v.reason))
        raise CatalogFileError(path, problems) from None


# --------------------------------------------------------------------------------------------
# The built-in catalog: the data files shipped with the engine

GB = units.GB
GiB = units.GiB
TB = units.TB
PB = units.PB
MB = units.MB
KiB = units.KiB

#: The package folder holding the built-in catalog files.
BUILTIN_DATA_PACKAGE: Final = "arrayplan_engine.data.drives"


def _builtin_files() -> list[tuple[str, str]]:
    """(file name, text) of every built-in catalog file, by name (the catalog's order: the seed
    drives by family as the seeds introduce them, then today's drives, hard disks last)."""
    root = resources.files(BUILTIN_DATA_PACKAGE)
    return [(f.name, f.read_text(encoding="utf-8")) for f in sorted(root.iterdir(), key=lambda f: f.name)
            if f.name.endswith(".toml")]


def load_catalog_files(files: Iterable[tuple[str, str]], *, base: Catalog | None = None) -> Catalog:
    """A catalog of the drives in these (path, text) catalog files, after ``base``'s drives.
    Raises ``CatalogFileError`` naming the file, line and field of the first bad file, including
    a drive whose name is already taken."""
    drives = list(base) if base is not None else []
    taken = {_key(n): d.name for d in drives for n in (d.name, d.display_name)}
    for path, text in files:
        drive = drive_from_toml(text, path)
        for attr in ("name", "display_name"):
            other = taken.get(_key(getattr(drive, attr)))
            if other is not None:
                raise CatalogFileError(path, [(_line_of_key(text, attr), attr,
                                               f"{getattr(drive, attr)!r} is already in the catalog (drive {other!r}); pick another")])
        taken |= {_key(drive.name): drive.name, _key(drive.display_name): drive.name}
        drives.append(drive)
    return Catalog(drives)


_BUILTIN: Final[Catalog] = load_catalog_files(_builtin_files())


def builtin_catalog() -> Catalog:
    """The built-in catalog (immutable; the same object on every call)."""
    return _BUILTIN


def all_drives() -> tuple[Drive, ...]:
    """Every built-in drive, in a stable order (the seed drives by family as the seeds introduce
    them, then by capacity; today's drives; hard disks last)."""
    return tuple(_BUILTIN)


def get_drive(name: str) -> Drive:
    """The built-in drive called ``name`` (catalog key or display name, any case); raises
    ``UnknownNameError`` on field ``drive_model`` listing the known names."""
    return _BUILTIN.get(name, "drive_model")
