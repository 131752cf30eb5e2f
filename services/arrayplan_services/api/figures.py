"""Output figures as the API carries them, shared by the box and cluster conversions: finite
numbers, Durations, an interval's three Duration fields and a recommendation's checks."""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import Any

from google.protobuf import duration_pb2

from arrayplan_engine.errors import is_finite
from arrayplan_engine.evaluation import ConstraintCheck
from arrayplan_engine.interval import Interval


def finite(x: float) -> float:
    """An output figure as the API carries it: NaN and inf as 0 (not a check; see errors.is_finite)."""
    return x if is_finite(x) else 0.0


def to_duration(seconds: float) -> duration_pb2.Duration | None:
    if seconds is None or not math.isfinite(seconds):
        return None
    d = duration_pb2.Duration()
    d.FromNanoseconds(round(seconds * 1e9))
    return d


def set_interval_durations(msg: Any, name: str, figure: Interval) -> None:
    """An interval of seconds into a message's three Duration fields ``name``, ``name_low`` and
    ``name_high`` (each left unset when not finite: not estimated, or did not keep up)."""
    for field_name, seconds in ((name, figure.value), (f"{name}_low", figure.low), (f"{name}_high", figure.high)):
        d = to_duration(seconds)
        if d is not None:
            getattr(msg, field_name).CopyFrom(d)


def add_checks(msg: Any, checks: Iterable[ConstraintCheck]) -> None:
    """A recommendation's constraint checks into ``msg.checks`` (an infinite headroom as +-1e9)."""
    for k in checks:
        msg.checks.add(constraint=k.constraint, required=k.required, predicted=finite(k.predicted.value), unit=k.unit,
                       headroom_fraction=finite(k.headroom_fraction) if math.isfinite(k.headroom_fraction) else (1e9 if k.met else -1e9),
                       met=k.met, predicted_low=finite(k.predicted.low), predicted_high=finite(k.predicted.high),
                       confidence_level=k.confidence_level,
                       pessimistic_headroom_fraction=finite(k.pessimistic_headroom_fraction))
