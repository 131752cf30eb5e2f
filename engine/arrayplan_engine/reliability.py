"""Durability: mean time to data loss (MTTDL) and probability of data loss.

v1 closed forms for independent exponential failures and repairs (Patterson, Gibson & Katz 1988;
Chen et al. 1994): a group of G drives that survives t failures loses data when t+1 overlap;

    MTTDL_group = MTTF^(t+1) / (G (G-1) ... (G-t) MTTR^t)

so RAID 5 (t=1): MTTF^2 / (G (G-1) MTTR) and RAID 6 (t=2): MTTF^3 / (G (G-1) (G-2) MTTR^2).
An array of n groups loses data when any group does: MTTDL = MTTDL_group / n. The probability
of loss over a period T is 1 - exp(-T / MTTDL).
"""

from __future__ import annotations

import math

from .units import YEAR_HOURS


def mttf_hours_from_afr(annual_failure_rate: float) -> float:
    """MTTF of an exponential lifetime whose one-year failure probability is ``annual_failure_rate``."""
    if not 0.0 < annual_failure_rate < 1.0:
        raise ValueError(f"annual_failure_rate must be in (0, 1), got {annual_failure_rate}")
    return YEAR_HOURS / -math.log1p(-annual_failure_rate)


def mttdl_hours(*, group_width: int, failures_tolerated: int, group_count: int, mttf_hours: float,
                mttr_hours: float) -> float:
    """Closed-form MTTDL of ``group_count`` independent groups."""
    if group_count <= 0:
        return 0.0
    if failures_tolerated >= group_width:
        raise ValueError("a group cannot tolerate as many failures as it has drives")
    denominator = 1.0
    for i in range(failures_tolerated + 1):
        denominator *= group_width - i
    group = mttf_hours ** (failures_tolerated + 1) / (denominator * mttr_hours ** failures_tolerated)
    return group / group_count


def loss_probability(mttdl: float, period_hours: float) -> float:
    """Probability of at least one data loss in ``period_hours``."""
    if mttdl <= 0:
        return 1.0
    return -math.expm1(-period_hours / mttdl)
