"""Unit constants, and the one grammar for sizes and durations a person writes.

SI base units inside the engine (bytes, seconds, watts, US dollars). Names carry their unit
(``capacity_bytes``, ``latency_s``); convert only at the edges with these constants. The list of
quantities and their units is docs/nomenclature.md.

``parse_size_bytes`` and ``parse_duration_s`` read what plan files, array files, capacity CSVs and
CLI flags carry (``8k``, ``20 TB``, ``5ms``); docs/units.md is their reference. Pure: no I/O.
"""

import decimal
import math
import re
from typing import Final

# Decimal byte multiples, as drive vendors rate capacity (1 GB = 10^9 bytes).
KB: Final = 1_000
MB: Final = 1_000_000
GB: Final = 1_000_000_000
TB: Final = 1_000_000_000_000
PB: Final = 1_000_000_000_000_000

# Binary multiples, as NAND is built (a "256 GiB" die set) and as IO sizes are written (4 KiB).
KiB: Final = 1_024
MiB: Final = 1_024**2
GiB: Final = 1_024**3
TiB: Final = 1_024**4

SECTOR_BYTES: Final = 512

# Time.
US: Final = 1e-6
MS: Final = 1e-3
MINUTE_S: Final = 60.0
HOUR_S: Final = 3_600.0
DAY_S: Final = 86_400.0
YEAR_DAYS: Final = 365.0
YEAR_S: Final = YEAR_DAYS * DAY_S
YEAR_HOURS: Final = YEAR_DAYS * 24.0

# Interface line rates after 8b/10b or 128b/130b encoding, in bytes per second of payload.
SATA_1_5G_BYTES_PER_S: Final = 150 * MB
SATA_3G_BYTES_PER_S: Final = 300 * MB
SATA_6G_BYTES_PER_S: Final = 600 * MB
SAS_6G_BYTES_PER_S: Final = 600 * MB
SAS_12G_BYTES_PER_S: Final = 1_200 * MB
PCIE_GEN1_LANE_BYTES_PER_S: Final = 250 * MB
PCIE_GEN2_LANE_BYTES_PER_S: Final = 500 * MB
PCIE_GEN3_LANE_BYTES_PER_S: Final = 985 * MB


# -- The one grammar for sizes and durations a person writes ---------------------------------------
# Plan files, array files, capacity CSVs and CLI flags all read sizes and durations with these two
# functions; docs/units.md is their reference (keep the two in step). fio job files keep fio's own
# rules (``fio.parse_fio_size``: ``8KB`` is 8,192 B there, after ``kb_base``).

#: The largest size: int64, the API's widest byte field (8 EiB - 1 B).
MAX_SIZE_BYTES: Final = 2**63 - 1
#: The longest duration: google.protobuf.Duration's range (10,000 years).
MAX_DURATION_S: Final = 315_576_000_000

#: What a size may look like, for error messages.
SIZE_FORMS: Final = ("a size: a whole number of bytes (4096) or a number with a unit: k M G T P or KiB MiB GiB TiB PiB "
                     "(powers of 1024, as fio: 8k = 8 KiB = 8,192 B), KB MB GB TB PB (powers of 1000: 8 KB = 8,000 B), B")
#: The allowed sizes and durations, for error messages.
SIZE_RANGE: Final = f"0 to {MAX_SIZE_BYTES:,} B (8 EiB - 1 B, the API's int64)"
DURATION_RANGE: Final = f"0 to {MAX_DURATION_S:,} s (10,000 years, the range of google.protobuf.Duration)"
#: What a duration may look like, for error messages.
DURATION_FORMS: Final = "a duration: a number with a unit: ns, us (or µs), ms, s, min (or m), h, e.g. 5ms, '500 us', 1.5s, '2 min'"

_NUMBER = r"(?P<sign>[-+])?(?P<number>(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][-+]?[0-9]+)?)"
_QUANTITY_RE = re.compile(r"^\s*" + _NUMBER + r"(?:\s*(?P<unit>[^\s0-9.+-]\S*))?\s*$")

_BINARY_PREFIXES: Final = {"k": 1, "m": 2, "g": 3, "t": 4, "p": 5}
#: Lower-cased unit -> bytes. Case never changes a unit's meaning, and none is read as bits.
_SIZE_UNIT_BYTES: Final[dict[str, int]] = {
    "": 1, "b": 1,
    **{p: 1024**n for p, n in _BINARY_PREFIXES.items()},                 # fio's bare k = 1024
    **{p + "i": 1024**n for p, n in _BINARY_PREFIXES.items()},           # Ki, Mi, ... (IEC without B)
    **{p + "ib": 1024**n for p, n in _BINARY_PREFIXES.items()},          # KiB, MiB, ...
    **{p + "b": 1000**n for p, n in _BINARY_PREFIXES.items()},           # KB, MB, ... (SI, as drives are sold)
}
_SIZE_UNIT_NAMES: Final = ("B", "k", "M", "G", "T", "P", "KiB", "MiB", "GiB", "TiB", "PiB", "KB", "MB", "GB", "TB", "PB")
#: Duration unit -> seconds (exact decimals); matched as written, then lower-cased.
_DURATION_UNIT_S: Final[dict[str, decimal.Decimal]] = {
    "ns": decimal.Decimal("1e-9"), "us": decimal.Decimal("1e-6"), "µs": decimal.Decimal("1e-6"), "μs": decimal.Decimal("1e-6"),
    "ms": decimal.Decimal("1e-3"), "s": decimal.Decimal(1), "m": decimal.Decimal(60), "min": decimal.Decimal(60),
    "h": decimal.Decimal(3600),
}
# Decimal arithmetic wide enough that every in-range value is exact (2**63 has 19 digits; 60 digits
# leave room for a long fraction times 1024**5).
_EXACT = decimal.Context(prec=60, rounding=decimal.ROUND_HALF_EVEN, Emax=10**6, Emin=-10**6)


def _quantity(value: object, what: str, forms: str, allowed: str) -> tuple[decimal.Decimal, str]:
    """(non-negative number, unit as written) of a size or duration; ValueError naming the forms."""
    if value is None or (isinstance(value, str) and not value.strip()):
        raise ValueError(f"is empty; expected {forms}")
    if isinstance(value, bool) or not isinstance(value, (str, int, float)):
        raise ValueError(f"expected {forms}, got {value!r}")
    if isinstance(value, float) and not math.isfinite(value):
        raise ValueError(f"must be a finite number, got {value!r}; expected {forms}")
    text = repr(value) if isinstance(value, float) else str(value)
    m = _QUANTITY_RE.match(text)
    if m is None:
        raise ValueError(f"expected {forms}, got {value!r}")
    number = decimal.Decimal(m.group("number"))
    if m.group("sign") == "-" and number != 0:
        raise ValueError(f"a {what} cannot be negative (allowed: {allowed}), got {value!r}")
    return number, m.group("unit") or ""


def _hint(did_you_mean: str) -> str:
    """``errors.did_you_mean``'s "; did you mean 'x'?" as " (did you mean 'x'?)"."""
    return f" ({did_you_mean.removeprefix('; ')})" if did_you_mean else ""


def parse_size_bytes(value: object) -> int:
    """Bytes from a number (bytes) or a string with a unit: ``4096``, ``8k`` / ``8 KiB`` (8,192),
    ``8 KB`` (8,000), ``20 TB``, ``1.5 TiB``. The grammar is docs/units.md:

    * a bare number, or ``B``, is bytes;
    * ``k M G T P`` alone, ``Ki Mi ...`` and ``KiB MiB GiB TiB PiB`` are powers of 1024 (fio's
      ``bs=8k`` is 8,192 B), ``KB MB GB TB PB`` powers of 1000 (as drives are sold); any case, never bits;
    * the value is rounded to the nearest whole byte (half to even): ``1.2 TiB`` is
      1,319,413,953,331 B; a size above 0 that comes to under half a byte is refused;
    * from 0 to ``MAX_SIZE_BYTES`` (2^63 - 1, the API's int64).

    Raises ``ValueError`` whose message says what is wrong and which forms are allowed (the caller
    adds the field, file and line)."""
    number, unit = _quantity(value, "size", SIZE_FORMS, SIZE_RANGE)
    scale = _SIZE_UNIT_BYTES.get(unit.lower())
    if scale is None:
        from .errors import did_you_mean

        raise ValueError(f"unknown size unit {unit!r}{_hint(did_you_mean(unit, _SIZE_UNIT_NAMES))}; expected {SIZE_FORMS}")
    if number.adjusted() > 30:  # far beyond the range: no need to multiply out 1e999999
        raise ValueError(f"out of range (allowed: {SIZE_RANGE}), got {value!r}")
    exact = _EXACT.multiply(number, decimal.Decimal(scale))
    whole = int(exact.to_integral_value(rounding=decimal.ROUND_HALF_EVEN, context=_EXACT))
    if whole > MAX_SIZE_BYTES:
        raise ValueError(f"out of range (allowed: {SIZE_RANGE}), got {value!r}")
    if whole == 0 and number != 0:
        raise ValueError(f"is {exact.normalize()} B, under half a byte: a size is a whole number of bytes (rounded to the nearest), "
                         f"got {value!r}")
    return whole


def parse_duration_ns(value: object, *, bare_number_unit: str | None = None) -> int:
    """Whole nanoseconds from a string with a unit: ``5ms``, ``500 us`` / ``500µs``, ``1.5s``,
    ``2 min``, ``1h`` (docs/units.md). A duration needs its unit: a bare number
    (``latency_target: 5``) is refused with a hint, since it could mean 5 s or 5 ms, unless
    ``bare_number_unit`` names the unit a flag is documented in (``--timeout``: ``"s"``). From 0 to
    ``MAX_DURATION_S`` (the range of google.protobuf.Duration), rounded to the nanosecond (that
    type's resolution; half to even); a duration above 0 that comes to under half a nanosecond is
    refused. Raises ``ValueError`` naming the allowed forms."""
    number, unit = _quantity(value, "duration", DURATION_FORMS, DURATION_RANGE)
    if not unit and bare_number_unit is not None:
        unit = bare_number_unit
    if not unit:
        shown = value.strip() if isinstance(value, str) else f"{value:g}"
        raise ValueError(f"a duration needs a unit (ns, us, ms, s, min, h): did you mean '{shown}ms' or '{shown}s'? got {value!r}")
    scale = _DURATION_UNIT_S.get(unit, _DURATION_UNIT_S.get(unit.lower()))
    if scale is None:
        from .errors import did_you_mean

        raise ValueError(f"unknown duration unit {unit!r}{_hint(did_you_mean(unit, ('ns', 'us', 'µs', 'ms', 's', 'min', 'h')))}; "
                         f"expected {DURATION_FORMS}, got {value!r}")
    if number.adjusted() > 30 or _EXACT.multiply(number, scale) > MAX_DURATION_S:
        raise ValueError(f"out of range (allowed: {DURATION_RANGE}), got {value!r}")
    exact_ns = _EXACT.multiply(_EXACT.multiply(number, scale), decimal.Decimal(10**9))
    whole_ns = int(exact_ns.to_integral_value(rounding=decimal.ROUND_HALF_EVEN, context=_EXACT))
    if whole_ns == 0 and number != 0:
        raise ValueError(f"is {exact_ns.normalize()} ns, under half a nanosecond: a duration is whole nanoseconds (rounded to the "
                         f"nearest), got {value!r}")
    return whole_ns


def parse_duration_s(value: object, *, bare_number_unit: str | None = None) -> float:
    """Seconds from a duration with its unit: ``parse_duration_ns`` / 1e9 (the same grammar)."""
    return parse_duration_ns(value, bare_number_unit=bare_number_unit) / 1e9
