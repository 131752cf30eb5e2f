"""Typed engine errors. They carry field paths and reasons; the engine knows nothing of gRPC codes.

The service's single interceptor maps them: ``InvalidInputError`` -> INVALID_ARGUMENT with one
``BadRequest.FieldViolation`` per violation, ``NotFoundError`` -> NOT_FOUND,
``SearchSpaceTooLargeError`` -> RESOURCE_EXHAUSTED. Anything else is a server fault (INTERNAL).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass


@dataclass(frozen=True, slots=True, kw_only=True)
class Violation:
    """One bad field: ``field`` is a dotted path (``workload.read_fraction``), ``reason`` says why
    and what is allowed (``must be in [0, 1], got 1.5``)."""

    field: str
    reason: str

    def __str__(self) -> str:
        return f"{self.field}: {self.reason}"


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
    def one(cls, field: str, reason: str) -> InvalidInputError:
        return cls(Violation(field=field, reason=reason))


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
        super().__init__(Violation(field=field, reason=reason.rstrip()))
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
