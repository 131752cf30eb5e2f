"""Drive catalog: every drive in the five seed reviews, each value with its provenance.

A ``Drive`` is a flat, frozen record in SI units (bytes, seconds, bytes per second, watts, US
dollars). Every non-None value other than the identity fields (``name``, ``display_name``,
``vendor``, ``family``, ``kind``) carries a ``Provenance``: the seed file and the exact sentence or
table row it came from, or ``assumed=True`` with the reason when the seeds do not give it. The test
suite checks that every quote really occurs in its file.

Conventions (also in docs/catalog.md):

* ``capacity_bytes`` is the rated user capacity in decimal bytes (300 GB = 300e9 B).
  ``raw_nand_bytes`` is the physical NAND in binary multiples, as NAND is built: the SSD 320 300GB
  carries "320GB of NAND", which is 20 devices x 2 dies x 64 Gbit = 320 GiB. When a review writes
  "GB" for NAND it means GiB; when it writes "GB" for a rated capacity it means 10^9 bytes.
* ``spare_factor`` = (raw_nand_bytes - capacity_bytes) / capacity_bytes: spare NAND per byte of
  user capacity (S3500 240GB: 264 GiB / 240 GB -> 0.181). The reviews quote spare as a share of
  the NAND instead (SSD 320: "12.8% of the total NAND"); that is ``spare_fraction_of_raw``.
* ``random_write_iops`` is the fresh-out-of-box 4 KB spec (or, where marked assumed, a
  measurement standing in for it); ``steady_random_write_iops`` is the sustained / full-span 4 KB
  spec. Intel's enterprise tables in the 001 and 002 seeds give the sustained figure (the same
  table gives the SSD 320 600 IOPS, against 23K IOPS fresh in the 000 seed), so for the 710, X25-E,
  S3500, S3700 and 910 only ``steady_random_write_iops`` is known and ``random_write_iops`` is None.
* Family-wide "max" figures applied to a capacity the seed does not tie them to are marked
  ``assumed`` with the reason "family maximum ... upper bound for this capacity".
* ``channels`` counts NAND channels per controller; an SSD 910 has ``controllers`` of them.
* MB/s in the reviews is read as 10^6 B/s; "4KB" IOs as 4096 B.

Pure: no file I/O; imports only the standard library and the engine's ``units`` / ``errors``.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field, fields
from types import MappingProxyType
from typing import Any, Final, Literal

from arrayplan_engine import units
from arrayplan_engine.errors import InvalidInputError, UnknownNameError, Violation

__all__ = [
    "FORM_FACTORS",
    "GC_POLICIES",
    "INTERFACES",
    "INTERFACE_BYTES_PER_S",
    "INTERNAL_PARITIES",
    "KINDS",
    "NAND_TYPES",
    "PROVENANCED_FIELDS",
    "SEED_FILES",
    "Catalog",
    "Drive",
    "Provenance",
    "all_drives",
    "builtin_catalog",
    "catalog_markdown",
    "drive_from_mapping",
    "drive_violations",
    "get_drive",
    "with_user_drives",
]

Kind = Literal["ssd", "hdd"]
Interface = Literal["sata-1.5g", "sata-3g", "sata-6g", "sas-6g", "pcie-gen2-x4", "pcie-gen2-x8"]
NandType = Literal["slc", "mlc", "emlc", "hdd"]
InternalParity = Literal["none", "raid4-dies", "rain-7+1"]
GcPolicy = Literal["eager", "lazy"]

KINDS: Final[tuple[str, ...]] = ("ssd", "hdd")
INTERFACES: Final[tuple[str, ...]] = (
    "sata-1.5g",
    "sata-3g",
    "sata-6g",
    "sas-6g",
    "pcie-gen2-x4",
    "pcie-gen2-x8",
)
#: Payload bandwidth of each interface (after line encoding), from ``units``.
INTERFACE_BYTES_PER_S: Final[Mapping[str, int]] = MappingProxyType(
    {
        "sata-1.5g": units.SATA_1_5G_BYTES_PER_S,
        "sata-3g": units.SATA_3G_BYTES_PER_S,
        "sata-6g": units.SATA_6G_BYTES_PER_S,
        "sas-6g": units.SAS_6G_BYTES_PER_S,
        "pcie-gen2-x4": 4 * units.PCIE_GEN2_LANE_BYTES_PER_S,
        "pcie-gen2-x8": 8 * units.PCIE_GEN2_LANE_BYTES_PER_S,
    }
)
#: ``pcie-hh``: half-height PCIe card; ``pcie-hhhl``: half-height, half-length.
FORM_FACTORS: Final[tuple[str, ...]] = ("1.8in", "2.5in", "3.5in", "pcie-hh", "pcie-hhhl")
NAND_TYPES: Final[tuple[str, ...]] = ("slc", "mlc", "emlc", "hdd")
INTERNAL_PARITIES: Final[tuple[str, ...]] = ("none", "raid4-dies", "rain-7+1")
GC_POLICIES: Final[tuple[str, ...]] = ("eager", "lazy")

S000: Final = "000_d5886dd2adcf9a04.txt"
S001: Final = "001_4993870e060cd6fa.txt"
S002: Final = "002_40abfca3ec444397.txt"
S003: Final = "003_8b1b5b682b53d3a1.txt"
S004: Final = "004_f48e2bb91ecb2076.txt"
SURVIVAL: Final = "data/reliability/survival.csv"
PRICES: Final = "data/reliability/prices.csv"
#: Every source a built-in provenance may name. Seed files live in ``../shared/seeds/``; the
#: ``data/...`` paths are relative to ``../shared/``.
SEED_FILES: Final[tuple[str, ...]] = (S000, S001, S002, S003, S004, SURVIVAL, PRICES)
USER_SOURCE: Final = "user"


# --------------------------------------------------------------------------------------------
# Records


@dataclass(frozen=True, slots=True, kw_only=True)
class Provenance:
    """Where one value came from.

    ``source`` is a seed file name (``"001_4993870e060cd6fa.txt"``), a shared data file
    (``"data/reliability/survival.csv"``) or ``"user"``; ``quote`` is the exact sentence or table
    row (a verbatim substring of the file, up to whitespace). ``assumed=True`` marks a value the
    sources do not give; ``reason`` then says what it is and why (an assumed value may still quote
    the sentence that supports it). On a quoted value ``reason`` is an optional note (how a table
    was read, the arithmetic from the quote to the value).
    """

    source: str
    quote: str
    assumed: bool = False
    reason: str = ""

    def __post_init__(self) -> None:
        if self.assumed and not self.reason:
            raise ValueError("an assumed value needs a reason")
        if not self.assumed and not (self.source and self.quote):
            raise ValueError("a sourced value needs a source and a quote")


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
    read_latency_s: float | None = None
    write_latency_s: float | None = None
    endurance_bytes_written: int | None = None
    pe_cycles: int | None = None
    rpm: int | None = None
    average_seek_s: float | None = None
    full_stroke_seek_s: float | None = None
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
    def spare_factor(self) -> float | None:
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
)
_HDD_ONLY: Final = ("rpm", "average_seek_s", "full_stroke_seek_s")


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


@dataclass(frozen=True, slots=True)
class _Num:
    integer: bool
    low: float
    high: float
    low_open: bool = True  # value must be > low (else >= low)


_NUMERIC: Final[Mapping[str, _Num]] = MappingProxyType(
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
    }
)
_TEXT: Final = ("name", "display_name", "vendor", "family")
_NAME_RE: Final = re.compile(r"^[a-z0-9]+(?:[.-][a-z0-9]+)*$")
_ALLOWED_KEYS: Final[tuple[str, ...]] = tuple(
    f.name for f in fields(Drive) if f.name != "provenance"
)


def _fmt(x: float) -> str:
    return f"{x:g}"


def _range_text(spec: _Num) -> str:
    kind = "an integer" if spec.integer else "a number"
    op = ">" if spec.low_open else ">="
    return f"must be {kind} {op} {_fmt(spec.low)} and <= {_fmt(spec.high)}"


def _check_number(value: Any, spec: _Num) -> tuple[float | int | None, str | None]:
    """(the value, converted) or (None, the reason it is bad)."""
    if isinstance(value, bool) or not isinstance(value, (int, float, str)):
        return None, f"{_range_text(spec)}, got {value!r} ({type(value).__name__})"
    number: float | int
    if isinstance(value, str):
        try:
            number = float(value.strip().replace("_", ""))
        except ValueError:
            return None, f"{_range_text(spec)}, got {value!r}"
    else:
        number = value
    if isinstance(number, float) and not math.isfinite(number):
        return None, f"{_range_text(spec)}, got {value!r}"
    if spec.integer:
        if isinstance(number, float):
            if not number.is_integer():
                return None, f"{_range_text(spec)}, got {value!r}"
            number = int(number)
    else:
        number = float(number)
    below = number <= spec.low if spec.low_open else number < spec.low
    if below or number > spec.high:
        return None, f"{_range_text(spec)}, got {value!r}"
    return number, None


def _validate(d: Any, prefix: str) -> tuple[dict[str, Any], list[Violation]]:
    """Check a mapping of drive fields; returns the cleaned values and the violations."""
    out: list[Violation] = []

    def bad(key: str, reason: str) -> None:
        out.append(Violation(field=f"{prefix}.{key}" if key else prefix, reason=reason))

    if not isinstance(d, Mapping):
        bad("", f"must be a mapping of drive fields, got {type(d).__name__}")
        return {}, out

    clean: dict[str, Any] = {}
    for key in d:
        if not isinstance(key, str) or key not in _ALLOWED_KEYS:
            bad(str(key), "unknown field; allowed: " + ", ".join(_ALLOWED_KEYS))

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

    supplied = {k for k in _ALLOWED_KEYS if k in d and d[k] is not None}

    # Required fields.
    for key in ("name", "kind", "interface", "capacity_bytes"):
        if key not in supplied:
            bad(key, "is required")
    kind = clean.get("kind")
    if kind == "ssd":
        for key in ("raw_nand_bytes", "nand_type", "gc_policy", "random_read_iops"):
            if key not in supplied:
                bad(key, "is required for kind 'ssd'")
        if not supplied & {"random_write_iops", "steady_random_write_iops"}:
            bad("random_write_iops", "is required for kind 'ssd' (or steady_random_write_iops)")
        if not supplied & {"endurance_bytes_written", "pe_cycles"}:
            bad("endurance_bytes_written", "is required for kind 'ssd' (or pe_cycles)")
        for key in _HDD_ONLY:
            if key in supplied:
                bad(key, "applies only to kind 'hdd'; omit it or set null")
        if clean.get("nand_type") == "hdd":
            bad("nand_type", "must be one of slc, mlc, emlc for kind 'ssd'; got 'hdd'")
    elif kind == "hdd":
        for key in ("rpm", "average_seek_s"):
            if key not in supplied:
                bad(key, "is required for kind 'hdd'")
        for key in _SSD_ONLY:
            if key in supplied:
                bad(key, "applies only to kind 'ssd'; omit it or set null")
        if "nand_type" in clean and clean["nand_type"] != "hdd":
            bad("nand_type", f"must be 'hdd' for kind 'hdd'; got {clean['nand_type']!r}")

    # Relations between fields, checked only when both sides are individually valid.
    def pair(a: str, b: str) -> tuple[Any, Any] | None:
        if a in clean and b in clean:
            return clean[a], clean[b]
        return None

    if (p := pair("raw_nand_bytes", "capacity_bytes")) and p[0] < p[1]:
        bad("raw_nand_bytes", f"must be >= capacity_bytes ({p[1]}), got {p[0]}")
    if (p := pair("steady_random_write_iops", "random_write_iops")) and p[0] > p[1]:
        bad("steady_random_write_iops", f"must be <= random_write_iops ({_fmt(p[1])}), got {_fmt(p[0])}")
    if (p := pair("full_stroke_seek_s", "average_seek_s")) and p[0] < p[1]:
        bad("full_stroke_seek_s", f"must be >= average_seek_s ({_fmt(p[1])}), got {_fmt(p[0])}")
    if (p := pair("idle_power_w", "active_power_w")) and p[0] > p[1]:
        bad("idle_power_w", f"must be <= active_power_w ({_fmt(p[1])}), got {_fmt(p[0])}")
    iface = clean.get("interface")
    if iface is not None:
        cap = INTERFACE_BYTES_PER_S[iface]
        for key in ("seq_read_bytes_per_s", "seq_write_bytes_per_s"):
            if key in clean and clean[key] > cap:
                bad(key, f"must be <= {_fmt(cap)} (the {iface} interface), got {_fmt(clean[key])}")
    return clean, out


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
# Building the built-in catalog

_Val = tuple[Any, Provenance]


def _q(source: str, quote: str, note: str = "") -> Provenance:
    """A quoted value; ``note`` says how the quote was read."""
    return Provenance(source=source, quote=quote, reason=note)


def _a(reason: str, source: str = "", quote: str = "") -> Provenance:
    """An assumed value with its reason (and the sentence that supports it, if any)."""
    return Provenance(source=source, quote=quote, assumed=True, reason=reason)


def _drive(
    *, name: str, display_name: str, vendor: str, family: str, kind: Kind, **values: _Val | None
) -> Drive:
    kwargs: dict[str, Any] = {}
    prov: dict[str, Provenance] = {}
    for key, pair in values.items():
        if pair is None:
            continue
        value, p = pair
        kwargs[key] = value
        if value is not None:
            prov[key] = p
    return Drive(
        name=name,
        display_name=display_name,
        vendor=vendor,
        family=family,
        kind=kind,
        **kwargs,
        provenance=MappingProxyType(prov),
    )


GB = units.GB
GiB = units.GiB
TB = units.TB
PB = units.PB
MB = units.MB
KiB = units.KiB


def _iops_from_mb_s(mb_s: float) -> float:
    """A review's 4 KB random MB/s as IOPS (MB = 10^6 B, 4 KB = 4096 B)."""
    return mb_s * MB / (4 * KiB)


# Quotes used by several drives.
_Q_PAGE_4K_TO_8K = (
    "You may remember that with the move to 25nm Intel also increased page size from 4KB to 8KB."
)
_Q_10_CHANNEL = (
    "Intel's controller is a 10-channel architecture and thus drive capacities are still a little "
    "wonky compared to the competition."
)
_Q_LATE_CLEAN = (
    "The 320 behaves a lot like the old X25-M G2 did when tortured. Minimum performance drops "
    "pretty low - Intel prefers cleaning up as late as possible to extend drive longevity."
)
_Q_INTEL_EARLY = (
    "Clean early and often and you'll do well. Put off cleaning until later and you'll enjoy tons "
    "of free time early but you'll quickly run into a problem. It's an oversimplification, but "
    "the latter is what most SSD controllers have done historically, and the former is what Intel "
    "always believed in."
)
_Q_OTHERS_LATE = (
    "It's an oversimplification, but the latter is what most SSD controllers have done "
    "historically"
)
_Q_NO_REDUNDANCY_G2 = (
    "Things like full disk encryption and NAND redundancy never made it out in G2 but are here in "
    "the 320 all thanks to new firmware."
)
_Q_G2_AFR = (
    "Intel claims the 510 should have the same failure rate as the 34nm X25-M G2 at ~0.6% per year."
)
_Q_000_YEAR = (
    "The SF-1200 was the king of 2010. This year is shaping up to be all about the SF-2200 and the "
    "G3 isn't quite as competitive there."
)
_Q_001_YEAR = "by Anand Lal Shimpi on June 11, 2013 6:10 PM EST"
_Q_002_YEAR = "by Anand Lal Shimpi on August 9, 2012 1:00 PM EST"
_Q_004_YEAR = "Date: Oct 15, 2012"
_Q_000_HEADER = (
    "X25-M G2 160GB Intel SSD 320 40GB Intel SSD 320 80GB Intel SSD 320 120GB Intel SSD 320 "
    "160GB Intel SSD 320 300GB Intel SSD 320 600GB SSD 510 120GB SSD 510 250GB"
)
_Q_000_RREAD = (
    "Random Read Performance Up to 35K IOPS Up to 30K IOPS Up to 38K IOPS Up to 38K IOPS Up to "
    "39K IOPS Up to 39.5K IOPS Up to 39.5K IOPS Up to 20K IOPS Up to 20K IOPS"
)
_Q_000_RWRITE = (
    "Random Write Performance Up to 8.6K IOPS Up to 3.7K IOPS Up to 10K IOPS Up to 14K IOPS Up "
    "to 21K IOPS Up to 23K IOPS Up to 23K IOPS Up to 8K IOPS Up to 8K IOPS"
)
_Q_000_SREAD = (
    "Sequential Read Performance Up to 250MB/s Up to 200MB/s Up to 270MB/s Up to 400MB/s (6Gbps) "
    "Up to 500MB/s (6Gbps)"
)
_N_000_SREAD = (
    "the row has 5 values for 9 columns (merged cells), read as: X25-M G2 250, SSD 320 40GB 200, "
    "SSD 320 80-600GB 270, SSD 510 120GB 400, SSD 510 250GB 500 MB/s; the 001 seed's SSD 320 "
    "maximum of 270 MB/s agrees"
)
_Q_000_SWRITE = (
    "Sequential Write Performance Up to 100MB/s Up to 45MB/s Up to 90MB/s Up to 130MB/s Up to "
    "165MB/s Up to 205MB/s Up to 220MB/s Up to 210MB/s (6Gbps) Up to 315MB/s (6Gbps)"
)
_Q_000_PRICE = "Price $404 $89 $159 $209 $289 $529 $1069 $284 $584"
_Q_001_CAPS = (
    "Capacities | 100 / 200 / 400 / 800GB | 80 / 120 / 160 / 240 / 300 / 400 / 480 / 600 / 800GB "
    "| 100 / 200 / 300GB | 32 / 64GB | 80 / 120 / 160 / 300 / 600GB |"
)
_Q_001_NAND = "NAND | 25nm HET MLC | 20nm MLC | 25nm HET MLC | 50nm SLC | 25nm MLC |"
_Q_001_SEQ = (
    "Max Sequential Performance (Reads/Writes) | 500 / 460 MBps | 500 / 450 MBps | 270 / 210 MBps "
    "| 250 / 170 MBps | 270 / 220 MBps |"
)
_Q_001_RAND = (
    "Max Random Performance (Reads/Writes) | 76K / 36K | 75K / 11.5K | 38.5K / 2.7K IOPS | 35K / "
    "3.3K IOPS | 39.5K / 600 IOPS |"
)
_Q_001_ENDURANCE = (
    "Endurance (Max Data Written) | 1.83 - 14.6PB | 45 - 450TB | 500TB - 1.5PB | 1 - 2PB | 5 - "
    "60TB |"
)
_Q_002_IFACE = "Interface | PCIe 2.0 x8 | SATA 3Gbps | SATA 3Gbps | SATA 3Gbps |"
_Q_002_NAND = "NAND | 25nm MLC-HET | 25nm MLC-HET | 50nm SLC | 25nm MLC |"
_Q_NO_6G = "To date Intel still hasn't released a 6Gbps SATA controller based on its own IP."
_N_FAMILY_MAX = "family maximum from the seed's table; no per-capacity figure is given, so this is an upper bound for this capacity"
_N_STEADY_TABLE = (
    "Intel's enterprise table gives the sustained full-span 4 KB figure (the same row gives the "
    "SSD 320 600 IOPS against 23K fresh in the 000 seed), so it is the steady-state spec"
)

# Assumption reasons shared by several drives.
_R_UBER_CLIENT = (
    "JEDEC JESD218 client-class requirement (UBER <= 1e-15), the usual datasheet figure for "
    "consumer SATA SSDs of 2008-2011; the seeds give no error rate"
)
_R_UBER_ENTERPRISE = (
    "JEDEC JESD218 enterprise-class requirement (UBER <= 1e-16); Intel and Micron datasheets of "
    "the period quote 1e-16 to 1e-17, the bound is the conservative choice; the seeds give none"
)
_R_AFR_ENTERPRISE = (
    "enterprise SSD datasheets of the period rate 2 million hours MTBF -> 8766 h / 2e6 h = 0.44% "
    "per year; the seeds give no figure (001 only says Intel's enterprise drives 'have typically "
    "done very well in terms of reliability')"
)
_R_POWER_SATA_ACTIVE = (
    "typical 2.5-inch SATA 3Gbps SSD of 2008-2011 under sustained random writes (~3 W); the seeds "
    "give no figure for this drive (000 only compares it qualitatively)"
)
_R_POWER_SATA_IDLE = (
    "typical idle draw of a 2.5-inch SATA SSD of 2008-2011 without device sleep (~0.1 W); the "
    "seeds give no figure"
)
_R_FORM_25 = "a 2.5-inch SATA drive (the seeds show no other form factor for it)"
_R_ONE_CONTROLLER = "a single-controller SATA drive; only the SSD 910 carries several controllers"
_R_PPB_4K = "typical 4 KiB-page MLC NAND of 50/34nm: 128 pages per block (512 KiB blocks); the seeds give no block size"
_R_PPB_8K = "typical 8 KiB-page 25/20nm MLC NAND: 256 pages per block (2 MiB blocks); the seeds give no block size"
_R_PPB_SLC = "typical SLC NAND: 64 pages per block; the seeds give no block size"
_R_NO_PARITY = "the seeds describe no internal (die-level) parity for this drive"
_R_EAGER_INTEL = (
    "Intel controller; the 001 seed says cleaning early and often 'is what Intel always believed "
    "in', and this drive's large spare area lets it clean early. Note the 000 seed says the "
    "SSD 320 / X25-M G2 firmware 'prefers cleaning up as late as possible'; no seed describes this "
    "drive's GC directly"
)
_R_LAZY_OTHER = (
    "non-Intel controller; the 001 seed says cleaning late 'is what most SSD controllers have done "
    "historically'; no seed describes this drive's GC directly"
)


def _x25m_g1() -> list[Drive]:
    return [
        _drive(
            name="intel-x25-m-g1-80gb",
            display_name="Intel X25-M G1 80GB",
            vendor="Intel",
            family="X25-M G1",
            kind="ssd",
            interface=(
                "sata-3g",
                _a("X25-M G1 is SATA 3Gbps; the seed rules out 6Gbps for every Intel-controller drive", S002, _Q_NO_6G),
            ),
            form_factor=("2.5in", _a(_R_FORM_25)),
            capacity_bytes=(
                80 * GB,
                _q(
                    S003,
                    "close to 800$ included VAT here in Norway for the 80GB version in December 08",
                    "a reader's X25-M bought in December 2008, before the G2 shipped, so a G1",
                ),
            ),
            raw_nand_bytes=(
                80 * GiB,
                _a(
                    "Intel's 10-channel consumer drives carry binary NAND equal to the decimal "
                    "rating (80 GiB for 80 GB, ~7.4% spare); the seeds give the G1's DRAM but not its NAND"
                ),
            ),
            nand_type=("mlc", _a("50nm MLC: the X25-M is Intel's mainstream MLC line; the seeds contrast it with the SLC X25-E")),
            page_bytes=(
                4 * KiB,
                _q(S000, _Q_PAGE_4K_TO_8K, "so Intel NAND before 25nm (50nm G1) used 4 KB pages"),
            ),
            pages_per_block=(128, _a(_R_PPB_4K)),
            channels=(10, _a("Intel's X25-M controllers are 10-channel (000 says so of the G2/320 controller)", S000, _Q_10_CHANNEL)),
            controllers=(1, _a(_R_ONE_CONTROLLER)),
            internal_parity=("none", _a("NAND redundancy first shipped with the SSD 320", S000, _Q_NO_REDUNDANCY_G2)),
            gc_policy=(
                "lazy",
                _a(
                    "same Intel controller lineage as the G2/320, which 000 says cleans 'as late as "
                    "possible'; 003 shows the G1 losing 36% of its random-write speed when used "
                    "(40.8 -> 26.3 MB/s), a deep drop",
                    S000,
                    _Q_LATE_CLEAN,
                ),
            ),
            random_read_iops=(
                35_000.0,
                _a(
                    "no G1 spec in the seeds; the G2 spec is 35K (000 table) and 003 measures the "
                    "Intel drives alike ('roughly 60MB/s of random read performance'), so the G2 figure is used",
                    S003,
                    "The Intel drives kick it up a notch and give you roughly 60MB/s of random read performance.",
                ),
            ),
            random_write_iops=(
                _iops_from_mb_s(40.8),
                _a(
                    "no spec in the seeds; the fresh 4 KB random-write measurement (QD3, 8 GB span) "
                    "stands in for it: 40.8e6 B/s / 4096 B = 9961 IOPS (the same test gives the G2 "
                    "36.1 MB/s = 8813 IOPS against its 8.6K spec)",
                    S003,
                    "Intel's X25-M G1 drops from 40.8MB/s when new down to 26.3MB/s in a well used state.",
                ),
            ),
            seq_read_bytes_per_s=(250 * MB, _a("X25-M G1 datasheet rating (250 MB/s); not in the seeds")),
            seq_write_bytes_per_s=(
                70 * MB,
                _a(
                    "X25-M G1 datasheet rating (70 MB/s); not in the seeds, which say the X25-M's "
                    "limited sequential write 'plagued' it",
                    S000,
                    "The one thing that plagued Intel's X25-M was its limited sequential write performance.",
                ),
            ),
            pe_cycles=(10_000, _a("typical rating of 50nm MLC NAND; 000 notes ratings fell with each shrink since 50nm but gives no figure")),
            active_power_w=(3.0, _a(_R_POWER_SATA_ACTIVE)),
            idle_power_w=(0.1, _a(_R_POWER_SATA_IDLE)),
            price_usd=(
                640.0,
                _a(
                    "the seed's only price is a reader's ~800 USD including Norwegian VAT (25%): "
                    "800 / 1.25 = 640 USD",
                    S003,
                    "close to 800$ included VAT here in Norway for the 80GB version in December 08",
                ),
            ),
            price_year=(2008, _q(S003, "close to 800$ included VAT here in Norway for the 80GB version in December 08")),
            annual_failure_rate=(0.006, _a("no G1 figure; the G2's ~0.6% per year is used", S000, _Q_G2_AFR)),
            uber=(1e-15, _a(_R_UBER_CLIENT)),
        )
    ]


def _x25m_g2() -> list[Drive]:
    out = []
    for cap in (80, 160):
        seed_col = cap == 160

        def fam(value: Any, quote: str, note: str = "", *, _seed: bool = seed_col) -> _Val:
            if _seed:
                return (value, _q(S000, quote, note))
            return (
                value,
                _a(
                    "the seeds give only the 160GB's figure; used for the 80GB as an upper bound",
                    S000,
                    quote,
                ),
            )

        out.append(
            _drive(
                name=f"intel-x25-m-g2-{cap}gb",
                display_name=f"Intel X25-M G2 {cap}GB",
                vendor="Intel",
                family="X25-M G2",
                kind="ssd",
                interface=(
                    "sata-3g",
                    _q(
                        S000,
                        "Given that the controller hasn't changed since 2009, the 320 doesn't support 6Gbps SATA.",
                        "the 320 uses the G2's controller, so the G2 is SATA 3Gbps too",
                    ),
                ),
                form_factor=("2.5in", _a(_R_FORM_25)),
                capacity_bytes=(
                    cap * GB,
                    _q(S000, _Q_000_HEADER)
                    if seed_col
                    else _q(
                        S003,
                        "The G2's I've discovered REALLY don't like to be filled up more than 80% or so. When I had 8GB free on the 80GB drive",
                    ),
                ),
                raw_nand_bytes=(
                    cap * GiB,
                    _a(
                        "Intel's 10-channel consumer drives carry binary NAND equal to the decimal "
                        "rating (~7.4% spare); 000 gives the 320's NAND but not the G2's, and says the "
                        "G2 has no NAND redundancy to make room for"
                    ),
                ),
                nand_type=("mlc", _a("34nm MLC: the X25-M is Intel's mainstream MLC line; 000 gives the process ('Postville was the 34nm Intel X25-M G2') but not the cell type")),
                page_bytes=(4 * KiB, _q(S000, _Q_PAGE_4K_TO_8K, "so the 34nm G2 used 4 KB pages")),
                pages_per_block=(128, _a(_R_PPB_4K)),
                channels=(10, _q(S000, _Q_10_CHANNEL, "the 320's controller is the G2's")),
                controllers=(1, _a(_R_ONE_CONTROLLER)),
                internal_parity=("none", _q(S000, _Q_NO_REDUNDANCY_G2)),
                gc_policy=("lazy", _q(S000, _Q_LATE_CLEAN)),
                random_read_iops=fam(35_000.0, _Q_000_RREAD),
                random_write_iops=fam(8_600.0, _Q_000_RWRITE),
                seq_read_bytes_per_s=fam(250 * MB, _Q_000_SREAD, _N_000_SREAD),
                seq_write_bytes_per_s=fam(100 * MB, _Q_000_SWRITE),
                pe_cycles=(5_000, _a("typical rating of 34nm MLC NAND; the seeds give no P/E figure")),
                active_power_w=(3.0, _a(_R_POWER_SATA_ACTIVE)),
                idle_power_w=(0.1, _a(_R_POWER_SATA_IDLE)),
                price_usd=(
                    (404.0, _q(S000, _Q_000_PRICE))
                    if seed_col
                    else (202.0, _a("proportional to the 160GB's 404 USD (000 table): 404 x 80/160", S000, _Q_000_PRICE))
                ),
                price_year=(2011, _q(S000, _Q_000_YEAR, "the 000 review dates from 2011")),
                annual_failure_rate=(0.006, _q(S000, _Q_G2_AFR)),
                uber=(1e-15, _a(_R_UBER_CLIENT)),
            )
        )
    return out


def _ssd320() -> list[Drive]:
    caps = (40, 80, 120, 160, 300, 600)
    rread = (30_000.0, 38_000.0, 38_000.0, 39_000.0, 39_500.0, 39_500.0)
    rwrite = (3_700.0, 10_000.0, 14_000.0, 21_000.0, 23_000.0, 23_000.0)
    sread = (200, 270, 270, 270, 270, 270)
    swrite = (45, 90, 130, 165, 205, 220)
    price = (89.0, 159.0, 209.0, 289.0, 529.0, 1069.0)
    out = []
    for cap, rr, rw, sr, sw, usd in zip(caps, rread, rwrite, sread, swrite, price, strict=True):
        if cap == 300:
            raw: _Val = (
                320 * GiB,
                _q(
                    S000,
                    "That works out to be 320GB of NAND for a drive whose rated capacity is 300GB.",
                    "20 devices x 2 dies x 64 Gbit = 320 GiB",
                ),
            )
        else:
            dies = math.ceil(cap * 16 / 15 / 8)
            raw = (
                dies * 8 * GiB,
                _a(
                    f"the seed gives only the 300GB's NAND (320 GiB for 300 GB); the same ratio, "
                    f"rounded up to whole 64 Gbit (8 GiB) dies: ceil({cap} x 16/15 / 8) = {dies} dies",
                    S000,
                    "Each NAND device is 16GB in size and features two 64Gbit 25nm 2-bit MLC NAND die.",
                ),
            )
        if cap == 80:
            endurance: _Val = (5 * TB, _q(S001, _Q_001_ENDURANCE, "range minimum, read as the smallest capacity in the 001 table (80GB)"))
        elif cap == 600:
            endurance = (60 * TB, _q(S001, _Q_001_ENDURANCE, "range maximum, read as the largest capacity (600GB)"))
        elif cap == 40:
            endurance = (
                int(2.5 * TB),
                _a("the 001 table omits the 40GB; the 80GB's rate (5 TB per 80 GB) gives 2.5 TB", S001, _Q_001_ENDURANCE),
            )
        else:
            tbw = 5 + 55 * (cap - 80) / (600 - 80)
            endurance = (
                round(tbw * 10) * TB // 10,
                _a(
                    f"the seed gives only the range 5 - 60 TB over 80-600 GB; interpolated linearly "
                    f"in capacity: 5 + 55 x ({cap} - 80)/520 = {tbw:.1f} TB",
                    S001,
                    _Q_001_ENDURANCE,
                ),
            )
        out.append(
            _drive(
                name=f"intel-ssd-320-{cap}gb",
                display_name=f"Intel SSD 320 {cap}GB",
                vendor="Intel",
                family="SSD 320",
                kind="ssd",
                interface=("sata-3g", _q(S002, _Q_002_IFACE, "last column: Intel SSD 320")),
                form_factor=("2.5in", _a(_R_FORM_25)),
                capacity_bytes=(cap * GB, _q(S000, _Q_000_HEADER)),
                raw_nand_bytes=raw,
                nand_type=("mlc", _q(S000, "Each NAND device is 16GB in size and features two 64Gbit 25nm 2-bit MLC NAND die.")),
                page_bytes=(8 * KiB, _q(S000, _Q_PAGE_4K_TO_8K)),
                pages_per_block=(256, _a(_R_PPB_8K)),
                channels=(10, _q(S000, _Q_10_CHANNEL)),
                controllers=(1, _a(_R_ONE_CONTROLLER)),
                internal_parity=(
                    "raid4-dies",
                    _q(S000, "Instead of striping parity data across all NAND devices in the drive, Intel creates a RAID-4 style system."),
                ),
                gc_policy=("lazy", _q(S000, _Q_LATE_CLEAN)),
                random_read_iops=(rr, _q(S000, _Q_000_RREAD)),
                random_write_iops=(rw, _q(S000, _Q_000_RWRITE)),
                steady_random_write_iops=(
                    600.0,
                    _a(_N_FAMILY_MAX + "; " + _N_STEADY_TABLE, S001, _Q_001_RAND),
                ),
                seq_read_bytes_per_s=(sr * MB, _q(S000, _Q_000_SREAD, _N_000_SREAD)),
                seq_write_bytes_per_s=(sw * MB, _q(S000, _Q_000_SWRITE)),
                endurance_bytes_written=endurance,
                pe_cycles=(3_000, _a("typical rating of 25nm MLC NAND; 000 notes the 'hefty reduction in rated program/erase cycles' but gives no figure")),
                active_power_w=(3.0, _a(_R_POWER_SATA_ACTIVE)),
                idle_power_w=(0.1, _a(_R_POWER_SATA_IDLE)),
                price_usd=(usd, _q(S000, _Q_000_PRICE)),
                price_year=(2011, _q(S000, _Q_000_YEAR, "the 000 review dates from 2011")),
                annual_failure_rate=(
                    0.006,
                    _a(
                        "Intel expects the 320 to beat the 510/X25-M's ~0.6% per year; that rate is "
                        "used as a conservative bound",
                        S000,
                        "Intel expects the 25nm SSD 320 to be even more reliable than the 510 or X25-M.",
                    ),
                ),
                uber=(1e-15, _a(_R_UBER_CLIENT)),
            )
        )
    return out


def _ssd510() -> list[Drive]:
    out = []
    for cap, sr, sw, usd in ((120, 400, 210, 284.0), (250, 500, 315, 584.0)):
        out.append(
            _drive(
                name=f"intel-ssd-510-{cap}gb",
                display_name=f"Intel SSD 510 {cap}GB",
                vendor="Intel",
                family="SSD 510",
                kind="ssd",
                interface=("sata-6g", _q(S000, _Q_000_SREAD, "'(6Gbps)' on the 510's columns")),
                form_factor=("2.5in", _a(_R_FORM_25)),
                capacity_bytes=(cap * GB, _q(S000, _Q_000_HEADER)),
                raw_nand_bytes=(
                    (128 if cap == 120 else 256) * GiB,
                    _a("binary NAND in power-of-two packages (128/256 GiB) behind a Marvell controller; not in the seeds"),
                ),
                nand_type=("mlc", _a("34nm Intel MLC ('the 34nm Intel SSD 510'); the seeds give the process, not the cell type", S000, "the 25nm Intel SSD 320 is cheaper than the 34nm Intel SSD 510")),
                page_bytes=(4 * KiB, _q(S000, _Q_PAGE_4K_TO_8K, "so the 34nm NAND in the 510 uses 4 KB pages")),
                pages_per_block=(128, _a(_R_PPB_4K)),
                channels=(
                    8,
                    _a(
                        "the 510's Marvell controller is an 8-channel design; the seeds name the controller but not its channels",
                        S000,
                        "Intel's controller scales simlarly with transfer size as the Marvell controller used in the 510.",
                    ),
                ),
                controllers=(1, _a(_R_ONE_CONTROLLER)),
                internal_parity=("none", _a(_R_NO_PARITY)),
                gc_policy=("lazy", _a(_R_LAZY_OTHER, S001, _Q_OTHERS_LATE)),
                random_read_iops=(20_000.0, _q(S000, _Q_000_RREAD)),
                random_write_iops=(8_000.0, _q(S000, _Q_000_RWRITE)),
                seq_read_bytes_per_s=(sr * MB, _q(S000, _Q_000_SREAD, _N_000_SREAD)),
                seq_write_bytes_per_s=(sw * MB, _q(S000, _Q_000_SWRITE)),
                pe_cycles=(5_000, _a("typical rating of 34nm MLC NAND; the seeds give no P/E figure")),
                active_power_w=(3.0, _a(_R_POWER_SATA_ACTIVE)),
                idle_power_w=(0.1, _a(_R_POWER_SATA_IDLE)),
                price_usd=(usd, _q(S000, _Q_000_PRICE)),
                price_year=(2011, _q(S000, _Q_000_YEAR, "the 000 review dates from 2011")),
                annual_failure_rate=(0.006, _q(S000, _Q_G2_AFR)),
                uber=(1e-15, _a(_R_UBER_CLIENT)),
            )
        )
    return out


def _ssd710() -> list[Drive]:
    out = []
    q_op = "Intel SSD 710 | 200GB | 320GB | 186GB | $800 |"
    q_price = "Intel SSD 710 | 200GB | $790 | $3.950 |"
    for cap in (100, 200, 300):
        ref = cap == 200
        raw: _Val = (
            (320 * GiB, _q(S001, q_op, "320 GiB of NAND for 200 GB"))
            if ref
            else (cap * 8 // 5 * GiB, _a(f"the seeds give only the 200GB's NAND (320 GiB); same ratio: {cap} x 1.6 GiB", S001, q_op))
        )
        if cap == 100:
            endurance: _Val = (500 * TB, _q(S001, _Q_001_ENDURANCE, "range minimum, read as the smallest capacity (100GB)"))
        elif cap == 300:
            endurance = (int(1.5 * PB), _q(S001, _Q_001_ENDURANCE, "range maximum, read as the largest capacity (300GB)"))
        else:
            endurance = (
                1 * PB,
                _a("between the range ends 500 TB (100GB) and 1.5 PB (300GB), which are both 5000 drive writes; 200 GB x 5000 = 1 PB", S001, _Q_001_ENDURANCE),
            )
        price: _Val = (
            (790.0, _q(S002, q_price, "the 001 seed lists an 800 USD MSRP for the same drive"))
            if ref
            else (cap * 3.95, _a(f"proportional to the 200GB's 3.95 USD/GB (002 table): {cap} x 3.95", S002, q_price))
        )
        out.append(
            _drive(
                name=f"intel-ssd-710-{cap}gb",
                display_name=f"Intel SSD 710 {cap}GB",
                vendor="Intel",
                family="SSD 710",
                kind="ssd",
                interface=("sata-3g", _q(S002, _Q_002_IFACE, "second column: Intel SSD 710")),
                form_factor=(
                    "2.5in",
                    _q(S002, 'Intel uses copious amounts of NAND as spare area in all of its enterprise class SSDs (the 2.5" 200GB Intel SSD 710 used 320GB of NAND).'),
                ),
                capacity_bytes=(cap * GB, _q(S001, _Q_001_CAPS)),
                raw_nand_bytes=raw,
                nand_type=("emlc", _q(S001, _Q_001_NAND, "25nm HET MLC")),
                page_bytes=(8 * KiB, _q(S000, _Q_PAGE_4K_TO_8K, "the 710 uses 25nm NAND")),
                pages_per_block=(256, _a(_R_PPB_8K)),
                channels=(10, _a("Intel's SATA controller of the 320 generation is 10-channel; the seeds don't name the 710's controller", S000, _Q_10_CHANNEL)),
                controllers=(1, _a(_R_ONE_CONTROLLER)),
                internal_parity=("none", _a(_R_NO_PARITY)),
                gc_policy=("eager", _a(_R_EAGER_INTEL, S001, _Q_INTEL_EARLY)),
                random_read_iops=(38_500.0, _a(_N_FAMILY_MAX, S001, _Q_001_RAND)),
                steady_random_write_iops=(2_700.0, _a(_N_FAMILY_MAX + "; " + _N_STEADY_TABLE, S001, _Q_001_RAND)),
                seq_read_bytes_per_s=(270 * MB, _a(_N_FAMILY_MAX, S001, _Q_001_SEQ)),
                seq_write_bytes_per_s=(210 * MB, _a(_N_FAMILY_MAX, S001, _Q_001_SEQ)),
                endurance_bytes_written=endurance,
                pe_cycles=(30_000, _a("typical rating of Intel 25nm HET-MLC NAND; the seeds give no P/E figure")),
                active_power_w=(3.0, _a(_R_POWER_SATA_ACTIVE)),
                idle_power_w=(0.1, _a(_R_POWER_SATA_IDLE)),
                price_usd=price,
                price_year=(2012, _q(S002, _Q_002_YEAR)),
                annual_failure_rate=(0.0044, _a(_R_AFR_ENTERPRISE)),
                uber=(1e-16, _a(_R_UBER_ENTERPRISE)),
            )
        )
    return out


def _x25e() -> list[Drive]:
    out = []
    q_price = "If you really want to get nostalgic, the old X25-E launched at over $15/GB."
    for cap in (32, 64):
        out.append(
            _drive(
                name=f"intel-x25-e-{cap}gb",
                display_name=f"Intel X25-E {cap}GB",
                vendor="Intel",
                family="X25-E",
                kind="ssd",
                interface=("sata-3g", _q(S002, _Q_002_IFACE, "third column: Intel X25-E")),
                form_factor=("2.5in", _a(_R_FORM_25)),
                capacity_bytes=(cap * GB, _q(S001, _Q_001_CAPS)),
                raw_nand_bytes=(
                    cap * 5 // 4 * GiB,
                    _a("the X25-E carries 10 channels x 4 GiB SLC per 32 GB (40 / 80 GiB, 25% above the binary rating); not in the seeds"),
                ),
                nand_type=("slc", _q(S001, _Q_001_NAND, "50nm SLC")),
                page_bytes=(4 * KiB, _q(S000, _Q_PAGE_4K_TO_8K, "so the 50nm X25-E uses 4 KB pages")),
                pages_per_block=(64, _a(_R_PPB_SLC)),
                channels=(10, _a("Intel's first-generation controller is 10-channel like its successors (000 says so of the G2/320)", S000, _Q_10_CHANNEL)),
                controllers=(1, _a(_R_ONE_CONTROLLER)),
                internal_parity=("none", _a(_R_NO_PARITY)),
                gc_policy=("eager", _a(_R_EAGER_INTEL, S001, _Q_INTEL_EARLY)),
                random_read_iops=(35_000.0, _a(_N_FAMILY_MAX, S001, _Q_001_RAND)),
                steady_random_write_iops=(3_300.0, _a(_N_FAMILY_MAX + "; " + _N_STEADY_TABLE, S001, _Q_001_RAND)),
                seq_read_bytes_per_s=(250 * MB, _a(_N_FAMILY_MAX, S001, _Q_001_SEQ)),
                seq_write_bytes_per_s=(170 * MB, _a(_N_FAMILY_MAX, S001, _Q_001_SEQ)),
                endurance_bytes_written=(
                    (1 if cap == 32 else 2) * PB,
                    _q(S001, _Q_001_ENDURANCE, f"range {'minimum' if cap == 32 else 'maximum'}, read as the {cap}GB"),
                ),
                pe_cycles=(100_000, _a("typical rating of 50nm SLC NAND; the seeds give no P/E figure")),
                active_power_w=(3.0, _a(_R_POWER_SATA_ACTIVE)),
                idle_power_w=(0.1, _a(_R_POWER_SATA_IDLE)),
                price_usd=(
                    cap * 15.0,
                    _a(f"the seed says it launched 'at over $15/GB'; 15 x {cap} is a lower bound", S002, q_price),
                ),
                price_year=(2008, _a("the X25-E launched in 2008; the seed says only 'the old X25-E launched'", S002, q_price)),
                annual_failure_rate=(0.0044, _a(_R_AFR_ENTERPRISE)),
                uber=(1e-16, _a(_R_UBER_ENTERPRISE)),
            )
        )
    return out


def _s3500() -> list[Drive]:
    caps = (80, 120, 160, 240, 300, 400, 480, 600, 800)
    endurance_tb = (45, 70, 100, 140, 170, 225, 275, 330, 450)
    power_w = (2.0, 2.4, 2.7, 3.2, 3.9, None, 5.2, 5.5, 7.3)
    q_end = "S3500 | 45 TB | - | 70 TB | 100 TB | 140 TB | - | 170 TB | 225 TB | 275 TB | 330 TB | 450 TB |"
    q_pow = "S3500 | 2.0W | - | 2.4W | 2.7W | - | 3.2W | 3.9W | - | 5.2W | 5.5W | 7.3W |"
    q_op = "Intel SSD DC S3500 | 240GB | 264GB | 223GB | ~$320 |"
    q_msrp = "Intel provided two MSRPs for the S3500: $115 for an 80GB drive and $979 for an 800GB drive."
    q_seq_read = "It's not until you get down to the 160GB version that performance will drop below 500MB/s."
    anchors = ((80, 115.0), (240, 320.0), (800, 979.0))
    out = []
    for cap, tb, pw in zip(caps, endurance_tb, power_w, strict=True):
        if cap == 240:
            raw: _Val = (264 * GiB, _q(S001, q_op, "264 GiB of NAND for 240 GB"))
        else:
            raw = (
                cap * 11 // 10 * GiB,
                _a(f"the seed gives only the 240GB's NAND (264 GiB for 240 GB); same ratio: {cap} x 1.1 GiB", S001, q_op),
            )
        if cap == 240:
            end: _Val = (
                140 * TB,
                _q(S001, q_end, "the row's cells are shifted: 140 TB sits under the 200GB column, which the S3500 does not come in, and '-' under 240GB; read as 240GB = 140 TB"),
            )
        else:
            end = (tb * TB, _q(S001, q_end))
        if pw is None:
            power: _Val = (
                round(3.9 + (5.2 - 3.9) * (400 - 300) / (480 - 300), 2),
                _a("the power row has '-' for 400GB; interpolated between 300GB (3.9 W) and 480GB (5.2 W)", S001, q_pow),
            )
        else:
            power = (pw, _q(S001, q_pow))
        if cap in (80, 800):
            price: _Val = (dict(anchors)[cap], _q(S001, q_msrp))
        elif cap == 240:
            price = (320.0, _q(S001, q_op, "'~$320'"))
        else:
            (c0, p0), (c1, p1) = (anchors[0], anchors[1]) if cap < 240 else (anchors[1], anchors[2])
            usd = round(p0 + (p1 - p0) * (cap - c0) / (c1 - c0), 2)
            price = (
                usd,
                _a(f"not in the seed; interpolated linearly in capacity between its MSRPs ({c0}GB {p0:g} USD, {c1}GB {p1:g} USD)", S001, q_msrp),
            )
        reviewed = cap == 480
        out.append(
            _drive(
                name=f"intel-dc-s3500-{cap}gb",
                display_name=f"Intel SSD DC S3500 {cap}GB",
                vendor="Intel",
                family="DC S3500",
                kind="ssd",
                interface=("sata-6g", _q(S001, "Sequential read speed is limited by 6Gbps SATA")),
                form_factor=("2.5in", _q(S001, 'while the 2.5" version is available in all of the capacities')),
                capacity_bytes=(cap * GB, _q(S001, _Q_001_CAPS)),
                raw_nand_bytes=raw,
                nand_type=("mlc", _q(S001, _Q_001_NAND, "20nm MLC")),
                page_bytes=(8 * KiB, _a("the seeds give 8 KB pages for Intel's 25nm NAND and nothing for 20nm; the same 8 KiB is assumed", S000, _Q_PAGE_4K_TO_8K)),
                pages_per_block=(256, _a(_R_PPB_8K)),
                channels=(8, _a("Intel's 2012 enterprise SATA controller (S3700/S3500) is an 8-channel design; the seeds don't give its channels")),
                controllers=(1, _a(_R_ONE_CONTROLLER)),
                internal_parity=("none", _a(_R_NO_PARITY)),
                gc_policy=(
                    "eager",
                    _q(S001, "The periodic dips in performance are Intel's defrag/GC routines operating at regular (and frequent) intervals."),
                ),
                random_read_iops=(
                    75_000.0,
                    _q(S001, _Q_001_RAND, "family maximum; the reviewed 480GB 'gives up nothing compared to the S3700' in random reads")
                    if reviewed
                    else _a(_N_FAMILY_MAX, S001, _Q_001_RAND),
                ),
                steady_random_write_iops=(
                    11_500.0,
                    _q(S001, _Q_001_RAND, "family maximum; the reviewed 480GB measured 47 MB/s of steady 4 KB random writes = 47e6/4096 = 11,475 IOPS")
                    if reviewed
                    else _a(
                        _N_FAMILY_MAX + "; 001 says steady random write 'varies depending on capacity'",
                        S001,
                        _Q_001_RAND,
                    ),
                ),
                seq_read_bytes_per_s=(
                    (500 * MB, _q(S001, q_seq_read, "so 240GB and up reach 500 MB/s"))
                    if cap >= 240
                    else (None, _q(S001, q_seq_read))
                ),
                seq_write_bytes_per_s=(450 * MB, _a(_N_FAMILY_MAX, S001, _Q_001_SEQ)),
                endurance_bytes_written=end,
                pe_cycles=(3_000, _a("typical rating of 20nm MLC NAND; the seeds give no P/E figure")),
                active_power_w=power,
                idle_power_w=(0.6, _q(S001, "but idle power is still too high for notebook use at 600mW")),
                price_usd=price,
                price_year=(2013, _q(S001, _Q_001_YEAR)),
                annual_failure_rate=(0.0044, _a(_R_AFR_ENTERPRISE)),
                uber=(1e-16, _a(_R_UBER_ENTERPRISE)),
            )
        )
    return out


def _s3700() -> list[Drive]:
    caps = (100, 200, 400, 800)
    endurance = (int(1.825 * PB), int(3.65 * PB), int(7.3 * PB), int(14.6 * PB))
    power_w = (3.1, 4.6, 7.7, 8.2)
    q_end = "S3700 | - | 1.825 PB | - | - | 3.65 PB | - | - | 7.3 PB | - | - | 14.6 PB |"
    q_pow = "S3700 | - | 3.1W | - | - | 4.6W | - | - | 7.7W | - | - | 8.2W |"
    q_op = "Intel SSD DC S3700 | 200GB | 264GB | 186GB | $470 |"
    out = []
    for cap, end, pw in zip(caps, endurance, power_w, strict=True):
        ref = cap == 200
        out.append(
            _drive(
                name=f"intel-dc-s3700-{cap}gb",
                display_name=f"Intel SSD DC S3700 {cap}GB",
                vendor="Intel",
                family="DC S3700",
                kind="ssd",
                interface=(
                    "sata-6g",
                    _q(
                        S001,
                        "Architecturally, the S3500 looks a lot like the S3700. You get the same controller, similar firmware, AES-256 encryption and power loss protection.",
                        "the S3500's controller, which 001 says is limited by 6Gbps SATA",
                    ),
                ),
                form_factor=("2.5in", _q(S001, 'Like the S3700, the S3500 is available in both 1.8" and 2.5" form factors.')),
                capacity_bytes=(cap * GB, _q(S001, _Q_001_CAPS)),
                raw_nand_bytes=(
                    (264 * GiB, _q(S001, q_op, "264 GiB of NAND for 200 GB"))
                    if ref
                    else (cap * 132 // 100 * GiB, _a(f"the seed gives only the 200GB's NAND (264 GiB); same ratio: {cap} x 1.32 GiB", S001, q_op))
                ),
                nand_type=("emlc", _q(S001, _Q_001_NAND, "25nm HET MLC")),
                page_bytes=(8 * KiB, _q(S000, _Q_PAGE_4K_TO_8K, "the S3700 uses 25nm NAND")),
                pages_per_block=(256, _a(_R_PPB_8K)),
                channels=(8, _a("Intel's 2012 enterprise SATA controller (S3700/S3500) is an 8-channel design; the seeds don't give its channels")),
                controllers=(1, _a(_R_ONE_CONTROLLER)),
                internal_parity=("none", _a(_R_NO_PARITY)),
                gc_policy=(
                    "eager",
                    _q(S001, "With the S3700, Intel took it to the next level and built the most consistent performing SSD I'd ever tested."),
                ),
                random_read_iops=(76_000.0, _a(_N_FAMILY_MAX, S001, _Q_001_RAND)),
                steady_random_write_iops=(
                    36_000.0,
                    _a(
                        _N_FAMILY_MAX + "; 001: 'Intel's specs list the S3500 at roughly 1/3 of the sustained 4KB random write performance of the S3700'",
                        S001,
                        _Q_001_RAND,
                    ),
                ),
                seq_read_bytes_per_s=(500 * MB, _a(_N_FAMILY_MAX, S001, _Q_001_SEQ)),
                seq_write_bytes_per_s=(460 * MB, _a(_N_FAMILY_MAX, S001, _Q_001_SEQ)),
                endurance_bytes_written=(end, _q(S001, q_end)),
                pe_cycles=(30_000, _a("typical rating of Intel 25nm HET-MLC NAND; the seeds give no P/E figure")),
                active_power_w=(pw, _q(S001, q_pow)),
                idle_power_w=(
                    0.6,
                    _a(
                        "the seed gives the S3500's 600 mW idle and says the S3500 draws 'a bit lower' power than the S3700 with the same controller; 0.6 W is a floor",
                        S001,
                        "Power consumption is a bit lower than on the S3700, but idle power is still too high for notebook use at 600mW.",
                    ),
                ),
                price_usd=(
                    (470.0, _q(S001, q_op))
                    if ref
                    else (cap * 2.35, _a(f"proportional to the 200GB's 470 USD (2.35 USD/GB): {cap} x 2.35", S001, q_op))
                ),
                price_year=(2013, _q(S001, _Q_001_YEAR)),
                annual_failure_rate=(0.0044, _a(_R_AFR_ENTERPRISE)),
                uber=(1e-16, _a(_R_UBER_ENTERPRISE)),
            )
        )
    return out


def _ssd910() -> list[Drive]:
    q_ctrl = "In other words, the 400GB 910 features two controllers while the 800GB 910 has four."
    q_double = "As a result there's roughly a doubling of performance between the two drives."
    q_rand = "Max Random Performance (Reads/Writes) | 180K / 75K IOPS | 38.5K / 2.7K IOPS | 35K / 3.3K IOPS | 39.5K / 600 IOPS |"
    q_seq = "Max Sequential Performance (Reads/Writes) | 2000 / 1000 MBps | 270 / 210 MBps | 250 / 170 MBps | 270 / 220 MBps |"
    q_end = "4KB Random Write | Up to 5PB | Up to 7PB |"
    q_price = {400: "Intel SSD 910 | 400GB | $2000 | $5.000 |", 800: "Intel SSD 910 | 800GB | $4000 | $5.000 |"}
    n_half = "half the 800GB's figure: the seed says performance roughly doubles from the 400GB to the 800GB"
    out = []
    for cap in (400, 800):
        big = cap == 800
        out.append(
            _drive(
                name=f"intel-ssd-910-{cap}gb",
                display_name=f"Intel SSD 910 {cap}GB",
                vendor="Intel",
                family="SSD 910",
                kind="ssd",
                interface=("pcie-gen2-x8", _q(S002, _Q_002_IFACE, "first column: Intel SSD 910")),
                form_factor=("pcie-hh", _q(S002, "The 910 starts as a half height PCIe 2.0 x8 card")),
                capacity_bytes=(cap * GB, _q(S002, "Capacities | 400 / 800 GB |")),
                raw_nand_bytes=(
                    (1792 * GiB, _q(S002, "Do the math and that works out to be 1792GB of NAND on a 800GB drive", "56 packages x 32 GiB"))
                    if big
                    else (
                        896 * GiB,
                        _q(
                            S002,
                            "The 400GB model only has two boards. The top one/two PCBs (400GB/800GB) are home exclusively to NAND packages",
                            "one NAND board of 28 packages x 32 GiB = 896 GiB ('another 28 NAND packages totalling 896GB' per board)",
                        ),
                    )
                ),
                nand_type=("emlc", _q(S002, _Q_002_NAND, "25nm MLC-HET")),
                page_bytes=(8 * KiB, _q(S000, _Q_PAGE_4K_TO_8K, "the 910 uses 25nm NAND")),
                pages_per_block=(256, _a(_R_PPB_8K)),
                channels=(10, _q(S002, "The Intel/Hitachi controller is still a 10-channel design like its consumer counterpart.", "per controller")),
                controllers=(4 if big else 2, _q(S002, q_ctrl)),
                internal_parity=("none", _a(_R_NO_PARITY)),
                gc_policy=("eager", _a(_R_EAGER_INTEL, S001, _Q_INTEL_EARLY)),
                random_read_iops=(
                    (180_000.0, _q(S002, q_rand, "family maximum, the 800GB (see the doubling sentence)"))
                    if big
                    else (90_000.0, _a(n_half, S002, q_double))
                ),
                steady_random_write_iops=(
                    (75_000.0, _q(S002, q_rand, _N_STEADY_TABLE))
                    if big
                    else (37_500.0, _a(n_half, S002, q_double))
                ),
                seq_read_bytes_per_s=(
                    (2_000 * MB, _q(S002, q_seq, "measured 'nearly 2GB/s'"))
                    if big
                    else (1_000 * MB, _a(n_half + "; measured 'nearly 1GB/s'", S002, "The 400GB cuts performance in half but we're still talking about nearly 1GB/s."))
                ),
                seq_write_bytes_per_s=(
                    (1_000 * MB, _q(S002, q_seq, "default 25 W mode; 1.5 GB/s in the 800GB's performance mode"))
                    if big
                    else (
                        750 * MB,
                        _a(
                            "the 400GB always runs in performance mode, where the 800GB writes 1.5 GB/s; half of that",
                            S002,
                            "In its max performance state the 800GB 910 is good for 1.5GB/s.",
                        ),
                    )
                ),
                endurance_bytes_written=(
                    (7 if big else 5) * PB,
                    _q(S002, q_end, "the 4 KB random-write rating (8 KB: 10 / 14 PB)"),
                ),
                pe_cycles=(30_000, _a("typical rating of Intel 25nm HET-MLC NAND; the seeds give no P/E figure")),
                active_power_w=(25.0, _q(S002, "By default the 910 is rated for a 25W max TDP, regardless of capacity.")),
                idle_power_w=(8.0, _a("a PCIe card with a SAS bridge and 2-4 controllers idles at several watts; the seeds give only the 25 W maximum")),
                price_usd=(2000.0 if cap == 400 else 4000.0, _q(S002, q_price[cap])),
                price_year=(2012, _q(S002, _Q_002_YEAR)),
                annual_failure_rate=(0.0044, _a(_R_AFR_ENTERPRISE)),
                uber=(1e-16, _a(_R_UBER_ENTERPRISE)),
            )
        )
    return out


def _p320h() -> list[Drive]:
    q_nand = "In total the P320h 700GiB card has a full 1TB of memory on board, the excess of which is used for wear-leveling, parity data and maintenance."
    q_modules = "stripes data across all four 250GiB SSD memory modules on the card"
    q_ctrl = "The 89HF3208 is a 32 channel NAND controller with a X8 PCI Express interface"
    q_end = "Lifetime Endurance: (Total bytes written) 350GB SSD = 25PB; 700GB SSD = 50PB (Petabytes)"
    q_price = "One unit quantity price: $6,995"
    n_small = "the spec list gives one figure for both capacities and the review tested the 700GB; an upper bound for the 350GB"
    out = []
    for cap in (350, 700):
        big = cap == 700

        def spec(value: Any, quote: str, *, _big: bool = big) -> _Val:
            return (value, _q(S004, quote) if _big else _a(n_small, S004, quote))

        out.append(
            _drive(
                name=f"micron-p320h-{cap}gb",
                display_name=f"Micron RealSSD P320h {cap}GB",
                vendor="Micron",
                family="RealSSD P320h",
                kind="ssd",
                interface=("pcie-gen2-x8", _q(S004, "Interface: PCIe (Gen2-compliant) x8")),
                form_factor=("pcie-hhhl", _q(S004, "Form Factor: Half Height Half Length")),
                capacity_bytes=(cap * GB, _q(S004, "Capacities: 350GB, 700GB", "decimal, although the text once calls it the '700GiB card'")),
                raw_nand_bytes=(
                    (1000 * GiB, _q(S004, q_modules, "4 x 250 GiB = 1000 GiB ('a full 1TB of memory on board')"))
                    if big
                    else (500 * GiB, _a("the seed gives only the 700GB's NAND (4 x 250 GiB); same ratio: 2 x 250 GiB", S004, q_nand))
                ),
                nand_type=("slc", _q(S004, "NAND Type: SLC (Single Level Cell)")),
                page_bytes=(
                    4 * KiB,
                    _a("34nm SLC NAND programs 4 KiB pages; the seed says only that 4K IO aligns with the NAND's page size", S004, "4K IO boundaries generally tend to align with NAND program page sizes"),
                ),
                pages_per_block=(64, _a(_R_PPB_SLC)),
                channels=(32, _q(S004, q_ctrl)),
                controllers=(1, _q(S004, q_ctrl, "one IDT ASIC")),
                internal_parity=(
                    "rain-7+1",
                    _q(S004, 'RAIN employs a "7+1 RAID 5" architecture where 1 parity element is allocated for each 7 storage elements (blocks and pages).'),
                ),
                gc_policy=("lazy", _a(_R_LAZY_OTHER, S001, _Q_OTHERS_LATE)),
                random_read_iops=spec(785_000.0, "Random Read Throughput: Up to 785,000 IOPs"),
                random_write_iops=spec(205_000.0, "Random Write Throughput: Up to 205,000 IOPs"),
                seq_read_bytes_per_s=spec(3.2e9, "Sequential Read Bandwidth: Up to 3.2 GB/s"),
                seq_write_bytes_per_s=spec(1.9e9, "Sequential Writer Bandwidth: Up to 1.9 GB/s"),
                read_latency_s=(42e-6, _q(S004, "Read Latency: <42\u03bcs (512 bytes) posted", "an upper bound, for both capacities")),
                write_latency_s=(9e-6, _q(S004, "Write Latency: <9\u03bcs posted", "an upper bound (posted to the write buffer), for both capacities")),
                endurance_bytes_written=(
                    (50 if big else 25) * PB,
                    _q(S004, q_end, "the text later calls the 700GB's rating 25PB; the spec list is used") if big else _q(S004, q_end),
                ),
                pe_cycles=(100_000, _a("typical rating of 34nm SLC NAND; the seeds give no P/E figure")),
                active_power_w=(25.0, _q(S004, "Active Power Consumption: 25W max")),
                idle_power_w=(10.0, _a("a PCIe SSD with a 32-channel ASIC and 2 GB of DRAM idles near 10 W; the seed gives only the 25 W maximum")),
                price_usd=(
                    (6995.0, _q(S004, q_price, "the reviewed 700GB"))
                    if big
                    else (3497.5, _a("the seed prices only the 700GB (6995 USD); half of it", S004, q_price))
                ),
                price_year=(2012, _q(S004, _Q_004_YEAR)),
                annual_failure_rate=(0.0044, _a(_R_AFR_ENTERPRISE)),
                uber=(1e-16, _a(_R_UBER_ENTERPRISE)),
            )
        )
    return out


def _hdd_iops(seek_s: float, rpm: int) -> float:
    """Random 4 KB IOPS of a disk at queue depth 1: 1 / (average seek + half a rotation); the
    4 KB transfer (~0.03 ms) is neglected."""
    return 1.0 / (seek_s + 30.0 / rpm)


def _hdd(
    *,
    name: str,
    display_name: str,
    vendor: str,
    family: str,
    interface: _Val,
    form_factor: _Val,
    capacity: _Val,
    rpm: _Val,
    seek: tuple[float, str],
    full_stroke: tuple[float, str],
    seq: tuple[float, str],
    power: tuple[float, float, str],
    price: _Val,
    price_year: _Val | None,
    afr: _Val,
    uber: _Val,
) -> Drive:
    rpm_value = int(rpm[0])
    iops = _hdd_iops(seek[0], rpm_value)
    iops_reason = (
        f"derived from the assumed mechanics: 1 / (average seek {seek[0] * 1e3:g} ms + half a "
        f"rotation {30e3 / rpm_value:.2f} ms) = {iops:.0f} IOPS at QD1 (write seeks are a little "
        f"longer; a write cache hides that)"
    )
    return _drive(
        name=name,
        display_name=display_name,
        vendor=vendor,
        family=family,
        kind="hdd",
        interface=interface,
        form_factor=form_factor,
        capacity_bytes=capacity,
        nand_type=("hdd", _a("a hard disk: no NAND")),
        rpm=rpm,
        average_seek_s=(seek[0], _a(seek[1])),
        full_stroke_seek_s=(full_stroke[0], _a(full_stroke[1])),
        random_read_iops=(iops, _a(iops_reason)),
        random_write_iops=(iops, _a(iops_reason)),
        seq_read_bytes_per_s=(seq[0], _a(seq[1])),
        seq_write_bytes_per_s=(seq[0], _a(seq[1])),
        active_power_w=(power[0], _a(power[2])),
        idle_power_w=(power[1], _a(power[2])),
        price_usd=price,
        price_year=price_year,
        annual_failure_rate=afr,
        uber=uber,
    )


_Q_500_15K = "Intel's own data shows that 12 S3500s will deliver roughly the same random IO as 500 15K RPM hard drives."
_Q_BB_ST8000NM0055 = "st8000nm0055,8,15680,36632508,1893,2.09719370294319,0.914595758563716,0.918390970790037,0.922031907953353"


def _hdds() -> list[Drive]:
    afr_nearline = 1893 / (36632508 / 365)
    return [
        _hdd(
            name="hdd-15k-sas-300gb",
            display_name="15K RPM enterprise SAS HDD 300GB (Cheetah/Savvio 15K class)",
            vendor="generic",
            family="15K RPM enterprise",
            interface=("sas-6g", _a("enterprise 15K disks of 2011-2013 are 6Gb/s SAS; the seeds name no model")),
            form_factor=("2.5in", _a("2.5-inch 15K disks (Savvio 15K class) were the usual server choice by 2013; the seeds name no model")),
            capacity=(300 * GB, _a("a typical 2.5-inch 15K capacity of 2012-2013; the seeds give none")),
            rpm=(15_000, _q(S001, _Q_500_15K)),
            seek=(3.4e-3, "typical 15K datasheet average read seek (3.4 ms); the seeds give no mechanics"),
            full_stroke=(7.0e-3, "typical 15K datasheet full-stroke seek (~7 ms); the seeds give no mechanics"),
            seq=(200e6, "typical outer-zone media rate of a 2012-era 15K disk (~200 MB/s); not in the seeds"),
            power=(6.5, 4.0, "typical 2.5-inch 15K SAS datasheet power (operating ~6.5 W, idle ~4 W); not in the seeds"),
            price=(250.0, _a("typical 2013 street price of a 300GB 15K SAS disk; the seeds give none")),
            price_year=(2013, _a("the year of the price assumption, matching the 001 seed's S3500 vs 15K comparison")),
            afr=(
                0.0055,
                _a("datasheet MTBF of 1.6 million hours -> 8766 / 1.6e6 = 0.55% per year; Backblaze's table holds no 15K disks and field rates run higher than datasheets"),
            ),
            uber=(1e-16, _a("enterprise SAS datasheet figure (1 sector per 10^16 bits); not in the seeds")),
        ),
        _hdd(
            name="hdd-10k-sas-900gb",
            display_name="10K RPM enterprise SAS HDD 900GB (Savvio 10K class)",
            vendor="generic",
            family="10K RPM enterprise",
            interface=("sas-6g", _a("enterprise 10K disks of 2012-2013 are 6Gb/s SAS; the seeds name no model")),
            form_factor=("2.5in", _a("2.5-inch is the 10K enterprise form factor of the period; the seeds name no model")),
            capacity=(900 * GB, _a("a typical 2.5-inch 10K capacity of 2013; the seeds give none")),
            rpm=(10_000, _a("the class's defining speed (DESIGN: 10K RPM enterprise); the seeds mention no 10K enterprise disk")),
            seek=(4.2e-3, "typical 10K enterprise datasheet average read seek (~4.2 ms); the seeds give no mechanics"),
            full_stroke=(9.0e-3, "typical 10K datasheet full-stroke seek (~9 ms); the seeds give no mechanics"),
            seq=(190e6, "typical outer-zone media rate of a 2013 2.5-inch 10K disk (~190 MB/s); not in the seeds"),
            power=(5.5, 3.5, "typical 2.5-inch 10K SAS datasheet power (operating ~5.5 W, idle ~3.5 W); not in the seeds"),
            price=(400.0, _a("typical 2013 street price of a 900GB 10K SAS disk; the seeds give none")),
            price_year=(2013, _a("the year of the price assumption")),
            afr=(
                0.0044,
                _a("datasheet MTBF of 2 million hours -> 8766 / 2e6 = 0.44% per year; Backblaze's table holds no 10K disks and field rates run higher than datasheets"),
            ),
            uber=(1e-16, _a("enterprise SAS datasheet figure (1 sector per 10^16 bits); not in the seeds")),
        ),
        _hdd(
            name="hdd-7k2-nearline-8tb",
            display_name="7.2K RPM nearline SATA HDD 8TB (Seagate ST8000NM0055 class)",
            vendor="generic",
            family="7.2K RPM nearline",
            interface=("sata-6g", _a("the ST8000NM0055 that supplies the failure rate and price is a 6Gb/s SATA nearline disk")),
            form_factor=("3.5in", _a("nearline disks are 3.5-inch")),
            capacity=(
                8 * TB,
                _q(SURVIVAL, _Q_BB_ST8000NM0055, "capacity_tb = 8 (Backblaze Drive Stats via zachmayer/backblaze_analysis)"),
            ),
            rpm=(7_200, _a("the class's defining speed (DESIGN: 7.2K nearline); Backblaze's table gives no rpm")),
            seek=(8.5e-3, "typical 7.2K nearline datasheet average read seek (~8.5 ms); the seeds give no mechanics"),
            full_stroke=(17.0e-3, "typical 7.2K full-stroke seek (~17 ms); the seeds give no mechanics"),
            seq=(230e6, "typical outer-zone media rate of an 8 TB 7.2K disk (~230 MB/s); not in the seeds"),
            power=(10.0, 7.0, "typical 3.5-inch 7.2K nearline datasheet power (random operating ~10 W, idle ~7 W); not in the seeds"),
            price=(
                109.0,
                _q(PRICES, "st8000nm0055,109", "Backblaze Drive Stats via zachmayer/backblaze_analysis, data/reliability/prices.csv; the file gives no date"),
            ),
            price_year=None,
            afr=(
                afr_nearline,
                _q(
                    SURVIVAL,
                    _Q_BB_ST8000NM0055,
                    f"Backblaze Drive Stats via zachmayer/backblaze_analysis, data/reliability/survival.csv: "
                    f"failed / (drive_days / 365) = 1893 / (36632508 / 365) = {afr_nearline:.4f}; the 7.2K "
                    f"enterprise nearline model in the table with the most drive-days",
                ),
            ),
            uber=(1e-15, _a("nearline SATA datasheet figure (1 sector per 10^15 bits); not in the seeds")),
        ),
        _hdd(
            name="wd-velociraptor-300gb",
            display_name="WD VelociRaptor 300GB",
            vendor="Western Digital",
            family="VelociRaptor",
            interface=("sata-3g", _a("the 300GB VelociRaptor (WD3000HLFS) of the 003 seed's era is SATA 3Gb/s")),
            form_factor=("3.5in", _a("a 2.5-inch disk in WD's 3.5-inch IcePack sled, mounted as 3.5-inch")),
            capacity=(300 * GB, _a("the VelociRaptor of 2009 (003 seed) came in 300GB; the seed names no capacity")),
            rpm=(10_000, _a("the VelociRaptor is WD's 10K RPM SATA disk; the seed names it without its speed")),
            seek=(4.2e-3, "WD datasheet average read seek of the VelociRaptor (~4.2 ms); the seeds give no mechanics"),
            full_stroke=(9.0e-3, "typical 10K full-stroke seek (~9 ms); the seeds give no mechanics"),
            seq=(120e6, "typical media rate of the 300GB VelociRaptor (~120 MB/s); not in the seeds"),
            power=(6.0, 4.2, "WD datasheet power of the 300GB VelociRaptor (read/write ~6 W, idle ~4.2 W); not in the seeds"),
            price=(230.0, _a("typical 2009 street price of the 300GB VelociRaptor; the seeds give none")),
            price_year=(2009, _a("the year of the 003 seed, which compares it with SSDs")),
            afr=(
                0.0063,
                _a("datasheet MTBF of 1.4 million hours -> 8766 / 1.4e6 = 0.63% per year; Backblaze's table holds no VelociRaptor"),
            ),
            uber=(1e-15, _a("desktop/workstation SATA datasheet class (1 sector per 10^15 bits); not in the seeds")),
        ),
    ]


def _build_builtin() -> Catalog:
    return Catalog(
        (
            *_x25m_g1(),
            *_x25m_g2(),
            *_ssd320(),
            *_ssd510(),
            *_ssd710(),
            *_x25e(),
            *_s3500(),
            *_s3700(),
            *_ssd910(),
            *_p320h(),
            *_hdds(),
        )
    )


_BUILTIN: Final[Catalog] = _build_builtin()


def builtin_catalog() -> Catalog:
    """The catalog of every drive in the seeds (immutable; the same object on every call)."""
    return _BUILTIN


def all_drives() -> tuple[Drive, ...]:
    """Every built-in drive, in a stable order (by family as the seeds introduce them, then by
    capacity; hard disks last)."""
    return tuple(_BUILTIN)


def get_drive(name: str) -> Drive:
    """The built-in drive called ``name`` (catalog key or display name, any case); raises
    ``UnknownNameError`` on field ``drive_model`` listing the known names."""
    return _BUILTIN.get(name, "drive_model")


# --------------------------------------------------------------------------------------------
# docs/catalog.md tables


def _cell(text: str) -> str:
    return " ".join(text.split()).replace("|", "\\|")


def _value_text(value: Any) -> str:
    if isinstance(value, bool):
        return str(value)
    if isinstance(value, int):
        return f"{value:,}"
    if isinstance(value, float):
        return f"{value:.6g}"
    return str(value)


def _num(value: float | None, scale: float, fmt: str = "{:g}") -> str:
    return "-" if value is None else fmt.format(value / scale)


def catalog_markdown(catalog: Catalog | None = None) -> str:
    """The drive tables of docs/catalog.md: a summary, then every value of every drive with its
    source and quote (or, for an assumed value, the reason). Pure; the test compares it with the
    file."""
    cat = builtin_catalog() if catalog is None else catalog
    lines = [
        "## Summary",
        "",
        "Assumed values are counted in the last column; see each drive's table for the reasons.",
        "",
        (
            "| name | kind | interface | capacity GB | raw NAND GiB | spare factor | rand read IOPS "
            "| rand write IOPS (fresh) | steady write IOPS | seq read / write MB/s | endurance TB "
            "| P/E | active / idle W | price USD (year) | AFR % | assumed |"
        ),
        (
            "| --- | --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | --- | ---: | ---: | --- "
            "| --- | ---: | ---: |"
        ),
    ]
    for d in cat:
        spare = d.spare_factor
        year = "" if d.price_year is None else f" ({d.price_year})"
        afr = d.annual_failure_rate
        lines.append(
            "| "
            + " | ".join(
                [
                    f"`{d.name}`",
                    d.kind,
                    d.interface,
                    _num(d.capacity_bytes, GB),
                    _num(d.raw_nand_bytes, GiB),
                    "-" if spare is None else f"{spare:.3f}",
                    _num(d.random_read_iops, 1, "{:,.0f}"),
                    _num(d.random_write_iops, 1, "{:,.0f}"),
                    _num(d.steady_random_write_iops, 1, "{:,.0f}"),
                    f"{_num(d.seq_read_bytes_per_s, MB, '{:,.0f}')} / {_num(d.seq_write_bytes_per_s, MB, '{:,.0f}')}",
                    _num(d.endurance_bytes_written, TB, "{:,.1f}"),
                    _num(d.pe_cycles, 1, "{:,.0f}"),
                    f"{_num(d.active_power_w, 1)} / {_num(d.idle_power_w, 1)}",
                    ("-" if d.price_usd is None else f"{d.price_usd:,.2f}") + year,
                    "-" if afr is None else f"{afr * 100:.2f}",
                    str(len(d.assumed_fields)),
                ]
            )
            + " |"
        )
    for d in cat:
        lines += [
            "",
            f"## `{d.name}` — {d.display_name}",
            "",
            f"vendor {d.vendor}; family {d.family or '-'}; kind {d.kind}",
            "",
            "| field | value | source | quote / note |",
            "| --- | --- | --- | --- |",
        ]
        for f in PROVENANCED_FIELDS:
            value = getattr(d, f)
            if value is None:
                continue
            p = d.provenance[f]
            src = p.source or "-"
            if p.assumed:
                text = f"**assumed**: {p.reason}"
                if p.quote:
                    text += f" (seed: \"{p.quote}\")"
            else:
                text = f"\"{p.quote}\""
                if p.reason:
                    text += f" — {p.reason}"
            shown = str(value) if f == "price_year" else _value_text(value)
            lines.append(f"| {f} | {_cell(shown)} | {_cell(src)} | {_cell(text)} |")
    return "\n".join(lines) + "\n"
