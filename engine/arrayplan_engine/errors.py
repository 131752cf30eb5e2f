"""Typed engine errors. They carry field paths and reasons; the engine knows nothing of gRPC codes.

The service's single interceptor maps them: ``InvalidInputError`` -> INVALID_ARGUMENT with one
``BadRequest.FieldViolation`` per violation, ``NotFoundError`` -> NOT_FOUND,
``SearchSpaceTooLargeError`` -> RESOURCE_EXHAUSTED. Anything else is a server fault (INTERNAL).
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

# Violation codes: what kind of rule a field broke, for a program to act on without reading the
# reason's text (the API carries the code as BadRequest.FieldViolation.reason, api/errors.py).
INVALID = "INVALID"  # any other rule (the reason says which)
OUT_OF_RANGE = "OUT_OF_RANGE"  # a number outside its Range (``allowed`` is the interval)
REQUIRED = "REQUIRED"  # a value that must be given is missing
UNKNOWN_NAME = "UNKNOWN_NAME"  # a name not in the catalog, presets or layouts (UnknownNameError)
DUPLICATE = "DUPLICATE"  # a list entry repeated
TOO_MANY = "TOO_MANY"  # a list longer than allowed
TOO_LONG = "TOO_LONG"  # a string longer than allowed
# The FTL spare factor a drive's capacity and raw NAND give is outside the SSD model's range
# (``ssd.SPARE_FACTOR_RANGE``; ``drive_checks`` turns it into the range of the field the user gave).
SPARE_FACTOR_OUT_OF_RANGE = "SPARE_FACTOR_OUT_OF_RANGE"
# A number a model derives from the field (a service time, a page count) is outside the
# simulation's range (``drive_checks``: the field behind it and what to change).
MODEL_OUT_OF_RANGE = "MODEL_OUT_OF_RANGE"
CODES = (INVALID, OUT_OF_RANGE, REQUIRED, UNKNOWN_NAME, DUPLICATE, TOO_MANY, TOO_LONG, SPARE_FACTOR_OUT_OF_RANGE,
         MODEL_OUT_OF_RANGE)


@dataclass(frozen=True, slots=True, kw_only=True)
class Violation:
    """One bad field: ``field`` is a dotted path (``workload.read_fraction``), ``reason`` says why
    and what is allowed (``must be in [0, 1], got 1.5``), ``code`` which kind of rule it broke
    (``OUT_OF_RANGE``; one of ``CODES``) and ``allowed`` what the field allows when that is an
    interval (``[0, 1]``; "" otherwise)."""

    field: str
    reason: str
    code: str = INVALID
    allowed: str = ""

    def __str__(self) -> str:
        return f"{self.field}: {self.reason}"

    def at(self, field: str) -> Violation:
        """The same violation under another field path (a rename: the engine's path to the API's)."""
        return Violation(field=field, reason=self.reason, code=self.code, allowed=self.allowed)


class ArrayplanError(Exception):
    """Base class of every error the engine raises on purpose."""

    reason_code: str = "ARRAYPLAN_ERROR"


class InvalidInputError(ArrayplanError, ValueError):
    """The input is wrong; each violation names its field. Never retried."""

    reason_code = "INVALID_ARGUMENT"

    def __init__(self, violations: Iterable[Violation] | Violation) -> None:
        if isinstance(violations, Violation):
            violations = [violations]
        self.violations: tuple[Violation, ...] = tuple(violations)
        if not self.violations:
            raise ValueError("InvalidInputError needs at least one violation")
        super().__init__("; ".join(str(v) for v in self.violations))

    @classmethod
    def one(cls, field: str, reason: str, code: str = INVALID, allowed: str = "") -> InvalidInputError:
        return cls(Violation(field=field, reason=reason, code=code, allowed=allowed))


def did_you_mean(name: str, known: Iterable[str]) -> str:
    """``"; did you mean 'x'?"`` (or ``'x' or 'y'``) for the known names closest to a misspelt
    one (difflib ratio >= 0.6, case-insensitive), ``""`` when none is close."""
    import difflib

    by_lower = {k.lower(): k for k in known}
    close = difflib.get_close_matches(str(name).lower(), list(by_lower), n=2, cutoff=0.6)
    if not close:
        return ""
    return "; did you mean " + " or ".join(repr(by_lower[c]) for c in close) + "?"


MAX_SUGGESTIONS = 10
MAX_ECHO_CHARS = 200


def echo(value: str) -> str:
    """``value`` as an error may echo it: repr'd, at most MAX_ECHO_CHARS characters."""
    text = repr(value)
    return text if len(text) <= MAX_ECHO_CHARS else text[:MAX_ECHO_CHARS - 4] + "...'"


class UnknownNameError(InvalidInputError):
    """A name (drive model, layout, preset, policy) that is not known; the reason suggests at most
    MAX_SUGGESTIONS known ones, the closest matches first ("did you mean")."""

    reason_code = "UNKNOWN_NAME"

    def __init__(self, field: str, name: str, known: Iterable[str]) -> None:
        import difflib

        known_list = sorted(known)
        close = difflib.get_close_matches(name[:MAX_ECHO_CHARS], known_list, n=MAX_SUGGESTIONS // 2, cutoff=0.6)
        rest = [k for k in known_list if k not in close][:MAX_SUGGESTIONS - len(close)]
        more = len(known_list) - len(close) - len(rest)
        hint = (f"did you mean {', '.join(close)}? " if close else "")
        listed = ", ".join(rest) + (f" (and {more} more)" if more > 0 else "")
        reason = f"unknown {echo(name)}; {hint}known: {listed if rest else ', '.join(close)}"
        super().__init__(Violation(field=field, reason=reason.rstrip(), code=UNKNOWN_NAME))
        self.name = name
        self.known = tuple(known_list)


class NotFoundError(ArrayplanError, LookupError):
    """A named resource (stored run, drive) does not exist."""

    reason_code = "NOT_FOUND"

    def __init__(self, kind: str, name: str) -> None:
        super().__init__(f"{kind} {name!r} not found")
        self.kind = kind
        self.name = name


class SearchSpaceTooLargeError(ArrayplanError):
    """The request would enumerate more candidates than the configured limit."""

    reason_code = "SEARCH_SPACE_TOO_LARGE"

    def __init__(self, candidate_count: int, limit: int) -> None:
        super().__init__(
            f"the candidate space holds {candidate_count} arrays, over the limit of {limit}; "
            "narrow candidate_space (drive_models, layouts, group widths, drive counts)"
        )
        self.candidate_count = candidate_count
        self.limit = limit


def check(violations: list[Violation]) -> None:
    """Raise ``InvalidInputError`` if any violations were collected."""
    if violations:
        raise InvalidInputError(violations)


# -- ranges: one declarative check for every number a validator bounds ----------------------------

def is_finite(x: object) -> bool:
    """``x`` is a real number (not a bool) and neither NaN nor infinite."""
    t = type(x)
    if t is float or t is int:  # the common case without the ABC machinery
        return math.isfinite(x)  # type: ignore[arg-type]
    return isinstance(x, numbers.Real) and not isinstance(x, bool) and math.isfinite(x)


def _inside(value: object, lo: float | None, hi: float | None, lo_open: bool, hi_open: bool, integer: bool) -> bool:
    """The test behind every Range, kept fast: validators run it on every spec the planner builds."""
    t = type(value)
    if t is float:
        if integer or not math.isfinite(value):  # type: ignore[arg-type]
            return False
    elif t is not int:
        if not isinstance(value, numbers.Real) or isinstance(value, bool) or not math.isfinite(value):
            return False
        if integer and not isinstance(value, numbers.Integral):
            return False
        value = float(value)
    x: float = value  # type: ignore[assignment]
    if lo is not None and (not lo == lo or (x <= lo if lo_open else x < lo)):  # a NaN bound (from a NaN field) fails
        return False
    return hi is None or (hi == hi and (x < hi if hi_open else x <= hi))


def fmt_number(x: float) -> str:
    """A bound as a reason writes it: ``1024``, ``0.9``, ``1e12``, ``1e-6`` (``:g`` unless that
    loses digits; no ``e+0``)."""
    if isinstance(x, numbers.Integral) and not isinstance(x, bool):
        if abs(int(x)) < 1_000_000 or float(f"{int(x):g}") != int(x):
            return str(int(x))
    text = f"{float(x):g}"
    if float(text) != float(x):  # a bound taken from another field keeps all its digits
        text = repr(float(x))
    mantissa, e, exponent = text.partition("e")
    if not e:
        return text
    sign = "-" if exponent.startswith("-") else ""
    return f"{mantissa}e{sign}{exponent.lstrip('+-').lstrip('0') or '0'}"


def fmt_got(x: object) -> str:
    """The offending value as a reason echoes it (numpy scalars as plain numbers)."""
    if isinstance(x, bool) or not isinstance(x, numbers.Real):
        return echo(x) if isinstance(x, str) else repr(x)[:MAX_ECHO_CHARS]
    if isinstance(x, numbers.Integral):
        return str(int(x))
    return repr(float(x))


@dataclass(frozen=True, slots=True, kw_only=True)
class Range:
    """The numbers a field allows, declared once and written in every reason the same way.

    ``Range(lo=0, hi=1, hi_open=True)`` is ``[0, 1)``; a missing bound is unbounded (``> 0``,
    ``>= 0``, ``<= 10``). Every value must be a finite real number (NaN and inf never pass, nor
    bools or strings); ``integer`` also demands an integer. ``unit`` follows the range (``s``,
    ``bytes/s``), ``note`` follows the unit verbatim (``(0 = no rebuild)``); ``lo_name``/``hi_name``
    name a bound that comes from another field (``[0, high_free_pages = 12])``.
    """

    lo: float | None = None
    hi: float | None = None
    lo_open: bool = False
    hi_open: bool = False
    integer: bool = False
    unit: str = ""
    note: str = ""
    lo_name: str = ""
    hi_name: str = ""

    def __str__(self) -> str:
        """``[0, 1)``, ``> 0``, ``<= 10``: the interval alone."""
        lo = None if self.lo is None else (f"{self.lo_name} = " if self.lo_name else "") + fmt_number(self.lo)
        hi = None if self.hi is None else (f"{self.hi_name} = " if self.hi_name else "") + fmt_number(self.hi)
        if lo is not None and hi is not None:
            return f"{'(' if self.lo_open else '['}{lo}, {hi}{')' if self.hi_open else ']'}"
        if lo is not None:
            return f"{'>' if self.lo_open else '>='} {lo}"
        if hi is not None:
            return f"{'<' if self.hi_open else '<='} {hi}"
        return "finite"

    def allowed(self) -> str:
        """``must be in [0, 1) s (0 = none)``: what a reason says is allowed."""
        kind = "an integer" if self.integer else ("a finite number" if self.lo is None or self.hi is None else "")
        interval = str(self)
        if self.lo is not None and self.hi is not None:
            text = f"must be {kind + ' ' if kind else ''}in {interval}"
        elif self.lo is None and self.hi is None:
            text = f"must be {kind}"
        else:
            text = f"must be {kind} {interval}"
        return text + (f" {self.unit}" if self.unit else "") + (f" {self.note}" if self.note else "")

    def contains(self, value: object) -> bool:
        return _inside(value, self.lo, self.hi, self.lo_open, self.hi_open, self.integer)

    def reason(self, value: object) -> str | None:
        """``None`` when ``value`` is allowed, else ``must be in [..] unit note, got value``."""
        return None if self.contains(value) else f"{self.allowed()}, got {fmt_got(value)}"

    def violation(self, field: str, value: object) -> Violation:
        """The violation of ``value`` outside the range: ``OUT_OF_RANGE`` with the interval as
        ``allowed`` (``REQUIRED`` when there is no value, None)."""
        return Violation(field=field, reason=f"{self.allowed()}, got {fmt_got(value)}",
                         code=REQUIRED if value is None else OUT_OF_RANGE, allowed=str(self))

    def check(self, violations: list[Violation], field: str, value: object) -> bool:
        """Append a violation naming ``field`` when ``value`` is outside; True when it is inside."""
        if _inside(value, self.lo, self.hi, self.lo_open, self.hi_open, self.integer):
            return True
        violations.append(self.violation(field, value))
        return False

    def require(self, field: str, value: object) -> None:
        """Raise ``InvalidInputError`` naming ``field`` when ``value`` is outside."""
        if not self.contains(value):
            raise InvalidInputError(self.violation(field, value))


def check_range(violations: list[Violation], field: str, value: object, lo: float | None = None, hi: float | None = None, *,
                lo_open: bool = False, hi_open: bool = False, integer: bool = False, unit: str = "", note: str = "",
                lo_name: str = "", hi_name: str = "") -> bool:
    """``Range(lo=lo, hi=hi, ...).check(violations, field, value)``: one bound check inline (the
    Range is only built to write the reason)."""
    if _inside(value, lo, hi, lo_open, hi_open, integer):
        return True
    return Range(lo=lo, hi=hi, lo_open=lo_open, hi_open=hi_open, integer=integer, unit=unit, note=note,
                 lo_name=lo_name, hi_name=hi_name).check(violations, field, value)


def require_range(field: str, value: object, lo: float | None = None, hi: float | None = None, *,
                  lo_open: bool = False, hi_open: bool = False, integer: bool = False, unit: str = "", note: str = "",
                  lo_name: str = "", hi_name: str = "") -> None:
    """``Range(lo=lo, hi=hi, ...).require(field, value)``: raise at once."""
    if not _inside(value, lo, hi, lo_open, hi_open, integer):
        Range(lo=lo, hi=hi, lo_open=lo_open, hi_open=hi_open, integer=integer, unit=unit, note=note,
              lo_name=lo_name, hi_name=hi_name).require(field, value)


def check_fields(source: object, ranges: Mapping[str, Range], prefix: str = "") -> list[Violation]:
    """Every violation of a table of ranges: ``ranges[name]`` bounds ``source.name`` (or
    ``source[name]`` for a mapping; a key it lacks is skipped), reported as ``prefix.name``."""
    v: list[Violation] = []
    mapping = isinstance(source, Mapping)
    for name, allowed in ranges.items():
        if mapping:
            if name not in source:  # type: ignore[operator]
                continue
            value = source[name]  # type: ignore[index]
        else:
            value = getattr(source, name)
        if not _inside(value, allowed.lo, allowed.hi, allowed.lo_open, allowed.hi_open, allowed.integer):
            allowed.check(v, f"{prefix}.{name}" if prefix else name, value)
    return v


# The ranges validators share.
POSITIVE = Range(lo=0, lo_open=True)  # a finite number > 0
NON_NEGATIVE = Range(lo=0)  # a finite number >= 0
COUNT = Range(lo=0, integer=True)  # an integer >= 0 (seeds, counts)
FRACTION = Range(lo=0, hi=1)  # [0, 1]
