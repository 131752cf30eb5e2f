"""A named figure with its interval: ``Interval(value, low, high)``.

Every simulated figure the planner reports (sustained IOPS, latencies, the worst second, the
drives' utilisation, and the power and cost that follow it) is a point estimate with a two-sided
``simulation.CONFIDENCE_LEVEL`` interval over independent replications. One record carries the
three numbers, so an ``Evaluation`` has one field per figure (``latency_at_percentile_s``) instead
of a value/_low/_high triple, and a reader asks the figure for its ends.

An interval that was not estimated (one replication: a screening run; a figure not asked for)
has ``low = high = NaN``; a figure that did not keep up is infinite with infinite ends. The API
keeps its flat fields (``latency_at_percentile``, ``_low``, ``_high``: the wire format);
``api/convert.py`` writes an interval into them.
"""

from __future__ import annotations

import math
from dataclasses import dataclass


@dataclass(frozen=True, slots=True, kw_only=True)
class Interval:
    """A point estimate and its two-sided ``CONFIDENCE_LEVEL`` interval (low, high). With one
    replication the interval is unknown: low = high = NaN."""

    value: float
    low: float = math.nan
    high: float = math.nan

    @property
    def known(self) -> bool:
        """Both ends are finite numbers."""
        return math.isfinite(self.low) and math.isfinite(self.high)

    @property
    def relative_half_width(self) -> float:
        """Half the interval's width over the estimate (inf when unknown or the estimate is 0)."""
        if not self.known or not (math.isfinite(self.value) and self.value > 0):
            return math.inf
        return 0.5 * (self.high - self.low) / self.value

    @property
    def high_or_value(self) -> float:
        """The high end, or the point estimate when the end is NaN (not estimated): the
        pessimistic end of an at-most figure (a latency)."""
        return self.value if math.isnan(self.high) else self.high

    @property
    def low_or_value(self) -> float:
        """The low end, or the point estimate when the end is NaN (not estimated)."""
        return self.value if math.isnan(self.low) else self.low


#: A figure that was not estimated (not asked for, or no simulation): NaN with NaN ends.
NOT_ESTIMATED = Interval(value=math.nan)

