"""Durability: mean time to data loss (MTTDL) and probability of data loss.

A *redundancy group* of G drives survives t concurrent drive failures (RAID 5: t = 1, RAID 6:
t = 2, k+m erasure coding: t = m, an n-way mirror: t = n - 1; a RAID 10 array is a set of 2-drive
mirror groups). Drives fail independently with constant rate 1/MTTF; a failed drive is rebuilt
in a time with mean MTTR. An array of n groups loses data when any one group does. The models
(docs/reliability.md has the derivations and sources):

* ``markov`` -- a continuous-time Markov chain per group: state i = failed drives (0..t), an
  absorbing state t+1 = data loss. Failure i -> i+1 at rate (G-i)/MTTF. Repair i -> i-1 at rate
  1/MTTR with one repair crew (``RepairPolicy.SINGLE``, the default: a group rebuilds one drive
  at a time, which is also the assumption behind the classic closed forms) or i/MTTR with
  independent parallel rebuilds (``RepairPolicy.PARALLEL``). Unrecoverable read errors: a rebuild
  at the last tolerated level (t failed, no redundancy left) reads the k = G - t survivors in
  full; it hits an unrecoverable read error (URE) with probability
  h = 1 - (1 - UBER)^(8 k capacity_bytes), and then ends in data loss instead of state t-1 (so
  the repair out of state t goes to t-1 at rate mu_t (1-h) and to loss at rate mu_t h). MTTDL is
  the mean absorption time from state 0, from the fundamental matrix N = (-Q_T)^-1 computed with
  subtraction-free (GTH) elimination; the loss probability in a period T is the absorbing entry of
  exp(Q T), by uniformization with scaling and squaring (sums of non-negative terms only, so
  probabilities of 1e-20 keep their relative precision).
* ``closed-form`` -- the classic approximation for MTTR << MTTF (Patterson, Gibson & Katz 1988;
  Chen et al. 1994), extended by the URE term:
  1/MTTDL_group = prod_{j=0}^{t-1} [(G-j) lambda / mu_{j+1}] * ((G-t) lambda + mu_t h).
  With h = 0 and one crew: MTTF^(t+1) / (G (G-1) ... (G-t) MTTR^t); parallel repair multiplies
  it by t!. Loss probability 1 - exp(-T / MTTDL).
* ``binomial`` -- Backblaze's erasure-coding durability model (Backblaze, "Backblaze Durability
  Calculates at 99.999999999%", 2018; the calculator github.com/Backblaze/erasure-coding-durability):
  a year is cut into 365 / R repair periods of R days; a drive fails within one period with
  probability P = 1 - exp(-AFR R / 365); a group of n drives loses data in a period when more
  than m fail, q = sum_{i=m+1}^{n} C(n,i) P^i (1-P)^(n-i); annual loss = 1 - (1 - q)^(365/R).
  Our extension: with an UBER, exactly m failures in a period also lose data with probability h,
  q += C(n,m) p^m (1-p)^(n-m) h (h = 0 gives Backblaze's figure exactly).
* ``monte-carlo`` -- a numba simulation of the same chain, failure by failure and repair by
  repair, from a seeded ``np.random.Generator``: reproducible bit for bit; used to check the others.

Annual failure rate (AFR) here is a *rate*, failures per drive-year, as Backblaze's Drive Stats
define it (failures / (drive_days / 365)); the exponential model's MTTF is 8760 h / AFR
(``mttf_hours_from_failure_rate``). v1's ``mttf_hours_from_afr`` reads the AFR as a one-year
failure probability instead (MTTF = 8760 h / -ln(1 - AFR)); the two differ by less than AFR / 2
(0.5% at an AFR of 1%). The planner (evaluation.py) still calls v1's three functions, kept as
they were.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any, Final

import numpy as np
from numba import njit

from .errors import COUNT, FRACTION, NON_NEGATIVE, POSITIVE, InvalidInputError, Range, Violation, check_range, is_finite
from .layout import Layout, LayoutKind
from .layout import group_count as _layout_group_count
from .units import HOUR_S, YEAR_DAYS, YEAR_HOURS

__all__ = [
    "ArrayReliability",
    "BinomialDurability",
    "GroupSpec",
    "MarkovSolution",
    "Method",
    "MonteCarloResult",
    "RedundancyGroups",
    "RepairPolicy",
    "annual_failure_rate_from_drive_days",
    "array_loss_probability",
    "array_reliability",
    "backblaze_binomial",
    "closed_form_mttdl_hours",
    "generator_matrix",
    "group_loss_probability",
    "loss_probability",
    "markov_loss_probability",
    "markov_mttdl",
    "monte_carlo_group",
    "mttdl_hours",
    "mttf_hours_from_afr",
    "mttf_hours_from_failure_rate",
    "rebuild_hours",
    "redundancy_groups",
    "ure_probability",
]

BITS_PER_BYTE: Final = 8
# Monte Carlo refuses runs expected to draw more events than this (~10 s of numba time).
MAX_MONTE_CARLO_EVENTS: Final = 500_000_000
MAX_TRIALS: Final = 100_000_000
MAX_ANNUAL_FAILURE_RATE: Final = 1_000.0  # failures per drive-year (MTTF >= 8.76 h); fast-failure checks use hundreds
MAX_UBER: Final = 1e-6  # as the catalog's limit for Drive.uber
MAX_SERVICE_LIFE_YEARS: Final = 100.0
MAX_DRIVE_COUNT: Final = 1_000_000


# -- v1: the planner calls these three; signatures and behaviour unchanged -----------------------

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


# -- small pure helpers ---------------------------------------------------------------------------

_UBER = Range(lo=0, hi=MAX_UBER, unit="errors per bit read")
_REPAIR_HOURS = Range(lo=0, lo_open=True, hi=YEAR_HOURS, unit="hours")


def annual_failure_rate_from_drive_days(*, failure_count: int, drive_days: float) -> float:
    """Backblaze's annualized failure rate: failures per drive-year, ``failures / (drive_days / 365)``."""
    v: list[Violation] = []
    COUNT.check(v, "failure_count", failure_count)
    POSITIVE.check(v, "drive_days", drive_days)
    if v:
        raise InvalidInputError(v)
    return failure_count / (drive_days / YEAR_DAYS)


def mttf_hours_from_failure_rate(annual_failure_rate: float, *, field_name: str = "annual_failure_rate") -> float:
    """MTTF of an exponential lifetime with ``annual_failure_rate`` failures per drive-year: 8760 h / AFR."""
    Range(lo=0, lo_open=True, hi=MAX_ANNUAL_FAILURE_RATE, unit="failures per drive-year").require(field_name, annual_failure_rate)
    return YEAR_HOURS / annual_failure_rate


def rebuild_hours(*, drive_capacity_bytes: float, rebuild_rate_bytes_per_second: float,
                  replacement_delay_hours: float = 0.0) -> float:
    """Hours to restore redundancy: wait for a replacement, then write a whole drive at the rebuild rate.

    ``drive_capacity_bytes / rebuild_rate_bytes_per_second / 3600 + replacement_delay_hours``
    (16 TB at 100 MB/s: 160 000 s = 44.4 h).
    """
    v: list[Violation] = []
    POSITIVE.check(v, "drive_capacity_bytes", drive_capacity_bytes)
    POSITIVE.check(v, "rebuild_rate_bytes_per_second", rebuild_rate_bytes_per_second)
    NON_NEGATIVE.check(v, "replacement_delay_hours", replacement_delay_hours)
    if v:
        raise InvalidInputError(v)
    return drive_capacity_bytes / rebuild_rate_bytes_per_second / HOUR_S + replacement_delay_hours


def ure_probability(*, uber: float, read_bytes: float) -> float:
    """Probability that reading ``read_bytes`` hits at least one unrecoverable read error.

    ``1 - (1 - UBER)^(8 read_bytes)``, computed as ``-expm1(8 read_bytes log1p(-UBER))`` so that
    tiny probabilities keep their digits.
    """
    v: list[Violation] = []
    _UBER.check(v, "uber", uber)
    NON_NEGATIVE.check(v, "read_bytes", read_bytes)
    if v:
        raise InvalidInputError(v)
    return -math.expm1(BITS_PER_BYTE * read_bytes * math.log1p(-uber))


# -- the redundancy group ---------------------------------------------------------------------------

class RepairPolicy(StrEnum):
    """How many failed drives of one group are rebuilt at once."""

    SINGLE = "single"  # one at a time: repair rate 1/MTTR in every degraded state
    PARALLEL = "parallel"  # all at once, independently: repair rate i/MTTR with i failed


class Method(StrEnum):
    MARKOV = "markov"
    BINOMIAL = "binomial"
    CLOSED_FORM = "closed-form"
    MONTE_CARLO = "monte-carlo"


@dataclass(frozen=True, slots=True, kw_only=True)
class GroupSpec:
    """One redundancy group: ``group_width`` drives, data survives ``failures_tolerated`` failed at once.

    ``uber`` (errors per bit read) and ``drive_capacity_bytes`` give the URE term; with
    ``uber = 0`` the capacity is not needed.
    """

    group_width: int
    failures_tolerated: int
    mttf_hours: float
    mttr_hours: float
    uber: float = 0.0
    drive_capacity_bytes: float = 0.0
    repair_policy: RepairPolicy = RepairPolicy.SINGLE

    def __post_init__(self) -> None:
        v: list[Violation] = []
        g, t = self.group_width, self.failures_tolerated
        if check_range(v, "group_width", g, 1, 1_024, integer=True):
            check_range(v, "failures_tolerated", t, 0, g - 1, integer=True, hi_name="group_width - 1")
        for name in ("mttf_hours", "mttr_hours"):
            POSITIVE.check(v, name, getattr(self, name))
        _UBER.check(v, "uber", self.uber)
        cap = self.drive_capacity_bytes
        if NON_NEGATIVE.check(v, "drive_capacity_bytes", cap) and is_finite(self.uber) and self.uber > 0 and cap <= 0:
            v.append(Violation(field="drive_capacity_bytes", reason="must be > 0 when uber is given (the rebuild reads it)"))
        try:
            RepairPolicy(self.repair_policy)
        except ValueError:
            v.append(Violation(field="repair_policy", reason=f"must be one of single, parallel, got {self.repair_policy!r}"))
        if v:
            raise InvalidInputError(v)

    @property
    def rebuild_read_bytes(self) -> float:
        """Bytes a rebuild at the last tolerated level reads: all k = G - t survivors."""
        return float((self.group_width - self.failures_tolerated) * self.drive_capacity_bytes)

    @property
    def rebuild_failure_probability(self) -> float:
        """h: probability that the rebuild at the last tolerated level hits a URE (0 without UBER)."""
        if self.uber == 0.0 or self.failures_tolerated == 0:
            return 0.0
        return ure_probability(uber=self.uber, read_bytes=self.rebuild_read_bytes)

    def failure_rates_per_hour(self) -> np.ndarray:
        """(G - i) / MTTF for i = 0..t."""
        i = np.arange(self.failures_tolerated + 1, dtype=np.float64)
        return (self.group_width - i) / self.mttf_hours

    def repair_rates_per_hour(self) -> np.ndarray:
        """mu_i for i = 0..t (0 in state 0): 1/MTTR (one crew) or i/MTTR (parallel)."""
        i = np.arange(self.failures_tolerated + 1, dtype=np.float64)
        if RepairPolicy(self.repair_policy) is RepairPolicy.PARALLEL:
            return i / self.mttr_hours
        return np.where(i > 0, 1.0 / self.mttr_hours, 0.0)


@dataclass(frozen=True, slots=True, kw_only=True)
class RedundancyGroups:
    """How an array of ``drive_count`` drives in ``layout`` falls into independent redundancy groups."""

    group_width: int
    failures_tolerated: int
    group_count: int
    spare_drive_count: int  # drives left over after whole layout groups (hot spares, not modelled)


def redundancy_groups(layout: Layout, drive_count: int, *, field_name: str = "drive_count") -> RedundancyGroups:
    """Redundancy groups of an array. RAID 10 is a set of 2-drive mirrors (each survives 1 failure),
    not one group that survives 1 of its whole stripe width; RAID 0 is one group that survives none."""
    Range(lo=layout.group_width, hi=MAX_DRIVE_COUNT, integer=True, note=f"(at least one {layout.name} group)").require(field_name, drive_count)
    layout_groups = _layout_group_count(layout, drive_count)
    members = layout_groups * layout.group_width
    if layout.kind is LayoutKind.RAID10:
        return RedundancyGroups(group_width=2, failures_tolerated=1, group_count=members // 2,
                                spare_drive_count=drive_count - members)
    return RedundancyGroups(group_width=layout.group_width, failures_tolerated=layout.failures_tolerated,
                            group_count=layout_groups, spare_drive_count=drive_count - members)


# -- Markov chain -------------------------------------------------------------------------------

def _chain(spec: GroupSpec) -> tuple[np.ndarray, np.ndarray]:
    """Transient rates among states 0..t (``rates[i, j]``, zero diagonal) and exit rates to loss."""
    t = spec.failures_tolerated
    lam = spec.failure_rates_per_hour()
    mu = spec.repair_rates_per_hour()
    h = spec.rebuild_failure_probability
    rates = np.zeros((t + 1, t + 1))
    exit_rates = np.zeros(t + 1)
    for i in range(t + 1):
        if i < t:
            rates[i, i + 1] = lam[i]
        if i > 0:
            rates[i, i - 1] = mu[i] * (1.0 - h) if i == t else mu[i]
    exit_rates[t] = lam[t] + mu[t] * h
    return rates, exit_rates


def generator_matrix(spec: GroupSpec) -> np.ndarray:
    """The full generator Q, states 0..t then the absorbing loss state t+1 (rows sum to 0)."""
    rates, exit_rates = _chain(spec)
    n = rates.shape[0]
    q = np.zeros((n + 1, n + 1))
    q[:n, :n] = rates
    q[:n, n] = exit_rates
    q[np.arange(n), np.arange(n)] = -(rates.sum(axis=1) + exit_rates)
    return q


def _fundamental_matrix(rates: np.ndarray, exit_rates: np.ndarray) -> np.ndarray:
    """N = (-Q_T)^-1 for transient rates and exit rates, by GTH elimination (Grassmann, Taksar &
    Heyman 1985): each pivot is the eliminated state's outflow to the states not yet eliminated
    plus its (updated) exit rate, so no subtraction happens and N keeps its relative precision
    even when MTTDL / MTTR is 1e30 (plain LU loses every digit there)."""
    n = exit_rates.shape[0]
    a = rates.astype(np.float64).copy()
    np.fill_diagonal(a, 0.0)
    r = exit_rates.astype(np.float64).copy()
    pivot = np.empty(n)
    lower = np.zeros((n, n))  # -L below the diagonal (>= 0)
    upper = np.zeros((n, n))  # -U above the diagonal (>= 0)
    for k in range(n):
        pivot[k] = r[k] + a[k, k + 1:].sum()
        if not pivot[k] > 0:
            raise InvalidInputError.one("failures_tolerated", "the chain has a state it never leaves before data loss")
        upper[k, k + 1:] = a[k, k + 1:]
        lower[k + 1:, k] = a[k + 1:, k] / pivot[k]
        # Fold the paths through k into the remaining states (all terms >= 0).
        a[k + 1:, k + 1:] += np.outer(lower[k + 1:, k], a[k, k + 1:])
        r[k + 1:] += lower[k + 1:, k] * r[k]
        np.fill_diagonal(a, 0.0)
    # A = L U with L = I - lower, U = diag(pivot) - upper; both inverses are non-negative.
    linv = np.eye(n)
    for i in range(1, n):
        linv[i, :i] = lower[i, :i] @ linv[:i, :i]
    uinv = np.zeros((n, n))
    for i in range(n - 1, -1, -1):
        uinv[i, i] = 1.0 / pivot[i]
        if i + 1 < n:
            uinv[i, i + 1:] = (upper[i, i + 1:] @ uinv[i + 1:, i + 1:]) / pivot[i]
    return np.asarray(uinv @ linv)


@dataclass(frozen=True, slots=True, kw_only=True)
class MarkovSolution:
    """Exact solution of one group's chain from the all-healthy state."""

    mttdl_hours: float
    time_in_state_hours: tuple[float, ...]  # expected hours with i failed drives before loss (row 0 of N)
    rebuild_failure_probability: float


def markov_mttdl(spec: GroupSpec) -> MarkovSolution:
    """Mean time to data loss of one group: the row sum of the fundamental matrix from state 0."""
    rates, exit_rates = _chain(spec)
    n_matrix = _fundamental_matrix(rates, exit_rates)
    row = n_matrix[0]
    return MarkovSolution(mttdl_hours=float(row.sum()), time_in_state_hours=tuple(float(x) for x in row),
                          rebuild_failure_probability=spec.rebuild_failure_probability)


_UNIFORMIZATION_STEP: Final = 0.5  # Lambda * tau after scaling; 30 Poisson terms then leave < 1e-40
_UNIFORMIZATION_TERMS: Final = 30


def markov_loss_probability(spec: GroupSpec, period_hours: float) -> float:
    """P(data loss within ``period_hours``), starting with every drive healthy: [exp(Q T)]_{0, loss}.

    Uniformization (P = I + Q / Lambda) over a step tau = T / 2^s with Lambda tau <= 0.5, then s
    squarings. Every term is a product of non-negative matrices, so the result keeps its relative
    precision however small it is.
    """
    NON_NEGATIVE.require("period_hours", period_hours)
    if period_hours == 0:
        return 0.0
    rates, exit_rates = _chain(spec)
    n = exit_rates.shape[0]
    out = rates.sum(axis=1) + exit_rates
    lam_max = float(out.max())
    squarings = max(0, math.ceil(math.log2(lam_max * period_hours / _UNIFORMIZATION_STEP)))
    x = lam_max * period_hours / 2.0**squarings
    p = np.zeros((n + 1, n + 1))
    p[:n, :n] = rates / lam_max
    p[:n, n] = exit_rates / lam_max
    p[np.arange(n), np.arange(n)] = np.maximum(0.0, 1.0 - out / lam_max)
    p[n, n] = 1.0
    weight = math.exp(-x)
    term = np.eye(n + 1)
    e = weight * term
    for k in range(1, _UNIFORMIZATION_TERMS + 1):
        term = term @ p
        weight *= x / k
        e = e + weight * term
    for _ in range(squarings):
        e = e @ e
    return float(min(1.0, e[0, n]))


def closed_form_mttdl_hours(spec: GroupSpec) -> float:
    """The MTTR << MTTF approximation of one group's MTTDL, with the URE term.

    1/MTTDL = prod_{j=0}^{t-1} [(G-j) lambda / mu_{j+1}] * ((G-t) lambda + mu_t h). With h = 0 and
    one crew this is MTTF^(t+1) / (G (G-1) ... (G-t) MTTR^t); parallel repair multiplies it by t!.
    """
    t = spec.failures_tolerated
    lam = spec.failure_rates_per_hour()
    mu = spec.repair_rates_per_hour()
    h = spec.rebuild_failure_probability
    rate = 1.0
    for j in range(t):
        rate *= lam[j] / mu[j + 1]
    rate *= lam[t] + mu[t] * h
    return float(1.0 / rate)


# -- Backblaze binomial ---------------------------------------------------------------------------

@dataclass(frozen=True, slots=True, kw_only=True)
class BinomialDurability:
    """Backblaze's per-period model for one group."""

    periods_per_year: float  # 365 / repair_days
    period_hours: float  # the repair time
    period_failure_probability: float  # P = 1 - exp(-AFR / periods_per_year)
    period_loss_probability: float  # q = P(more than m of n fail in one period) (+ URE term)
    annual_loss_probability: float  # 1 - (1 - q)^periods_per_year
    mttdl_hours: float  # period_hours / q: mean of the geometric number of periods to the first loss


def backblaze_binomial(*, group_width: int, failures_tolerated: int, annual_failure_rate: float, repair_hours: float,
                       rebuild_failure_probability: float = 0.0) -> BinomialDurability:
    """Backblaze's erasure-coding durability model (Backblaze, "Backblaze Durability Calculates at
    99.999999999%", 2018; its calculator github.com/Backblaze/erasure-coding-durability,
    calculation.ipynb and durability.py).

    With R the repair time in days and A the AFR (failures per drive-year): a year holds 365 / R
    repair periods; a drive's failure rate in one period is F = A R / 365 and its probability of
    failing in the period P = 1 - e^-F (Poisson); a group of n drives that survives m failures
    loses data in a period with q = sum_{i=m+1}^{n} C(n, i) P^i (1 - P)^(n - i); the annual loss
    probability is 1 - (1 - q)^(365 / R). Our extension: with an UBER, exactly m failures in a
    period also lose data with probability h: q += C(n, m) P^m (1 - P)^(n - m) h. The sum has only
    non-negative terms and the last step is ``-expm1(periods log1p(-q))``, so 1e-20 figures keep
    their digits (Backblaze's script expands the binomial series for the same reason).
    """
    v: list[Violation] = []
    n, m = group_width, failures_tolerated
    if check_range(v, "group_width", n, 1, integer=True):
        check_range(v, "failures_tolerated", m, 0, n - 1, integer=True)
    _REPAIR_HOURS.check(v, "repair_hours", repair_hours)
    FRACTION.check(v, "rebuild_failure_probability", rebuild_failure_probability)
    POSITIVE.check(v, "annual_failure_rate", annual_failure_rate)
    if v:
        raise InvalidInputError(v)
    periods = YEAR_HOURS / repair_hours
    p = -math.expm1(-annual_failure_rate / periods)
    q = math.fsum(math.comb(n, i) * p**i * (1.0 - p) ** (n - i) for i in range(m + 1, n + 1))
    q += math.comb(n, m) * p**m * (1.0 - p) ** (n - m) * rebuild_failure_probability
    q = min(1.0, q)
    return BinomialDurability(periods_per_year=periods, period_hours=float(repair_hours), period_failure_probability=p,
                              period_loss_probability=q, annual_loss_probability=_at_least_once(q, periods),
                              mttdl_hours=repair_hours / q if q > 0 else math.inf)


# -- Monte Carlo --------------------------------------------------------------------------------------

@njit(cache=True)
def _simulate_kernel(rng: np.random.Generator, group_width: int, tolerated: int, mttf_hours: float, mttr_hours: float,
                     parallel: bool, rebuild_failure_probability: float, horizon_hours: float,
                     out: np.ndarray) -> int:  # pragma: no cover - compiled
    """Simulate ``out.size`` independent groups until data loss or the horizon.

    Writes each group's loss time in hours into ``out`` (inf: no loss before the horizon) and
    returns the number of events (failures + repairs) drawn.
    """
    events = 0
    for trial in range(out.size):
        failed = 0
        now = 0.0
        out[trial] = np.inf
        while True:
            fail_rate = (group_width - failed) / mttf_hours
            if failed == 0:
                repair_rate = 0.0
            elif parallel:
                repair_rate = failed / mttr_hours
            else:
                repair_rate = 1.0 / mttr_hours
            total = fail_rate + repair_rate
            now += rng.standard_exponential() / total
            if now >= horizon_hours:
                break
            events += 1
            if rng.random() * total < fail_rate:
                failed += 1
                if failed > tolerated:
                    out[trial] = now
                    break
            else:
                if failed == tolerated and rng.random() < rebuild_failure_probability:
                    out[trial] = now  # the rebuild with no redundancy left hit a URE
                    break
                failed -= 1
    return events


@dataclass(frozen=True, slots=True, kw_only=True)
class MonteCarloResult:
    """Simulated loss times of ``trials`` independent groups over ``horizon_hours`` (inf: to the end)."""

    trials: int
    horizon_hours: float
    loss_count: int
    event_count: int
    mttdl_hours: float  # sample mean (horizon inf) or the censored-exponential MLE exposure / losses
    mttdl_stderr_hours: float
    loss_times_hours: np.ndarray = field(repr=False, compare=False)

    def loss_fraction(self, period_hours: float) -> float:
        """Share of groups that lost data within ``period_hours`` (<= the horizon)."""
        if period_hours > self.horizon_hours:
            raise InvalidInputError.one("period_hours", f"must be <= the simulated horizon {self.horizon_hours:g} h, "
                                                        f"got {period_hours!r}")
        return float(np.count_nonzero(self.loss_times_hours <= period_hours)) / self.trials

    def loss_fraction_stderr(self, period_hours: float) -> float:
        p = self.loss_fraction(period_hours)
        return math.sqrt(p * (1.0 - p) / self.trials)


def _expected_events_per_trial(spec: GroupSpec, horizon_hours: float) -> float:
    rates, exit_rates = _chain(spec)
    n_row = _fundamental_matrix(rates, exit_rates)[0]
    out = rates.sum(axis=1) + exit_rates
    to_loss = float(n_row @ out)  # expected events until absorption
    if math.isinf(horizon_hours):
        return to_loss
    per_hour = to_loss / float(n_row.sum())  # quasi-stationary event rate
    return min(to_loss, per_hour * horizon_hours + 1.0)


def monte_carlo_group(spec: GroupSpec, *, trials: int, horizon_hours: float = math.inf,
                      rng: np.random.Generator) -> MonteCarloResult:
    """Simulate failures and repairs of ``trials`` independent groups (the Markov chain's
    assumptions, event by event) until data loss or ``horizon_hours``.

    Refuses (``InvalidInputError`` on ``trials``) a run expected to draw more than
    ``MAX_MONTE_CARLO_EVENTS`` events: simulating to data loss is only practical when failures
    are fast; for real drives simulate a service-life horizon.
    """
    v: list[Violation] = []
    check_range(v, "trials", trials, 1, MAX_TRIALS, integer=True)
    if not isinstance(horizon_hours, (int, float)) or math.isnan(horizon_hours) or horizon_hours <= 0:
        v.append(Violation(field="horizon_hours", reason=f"must be > 0 (inf: until data loss), got {horizon_hours!r}"))
    if not isinstance(rng, np.random.Generator):
        v.append(Violation(field="rng", reason=f"must be a numpy.random.Generator, got {type(rng).__name__}"))
    if v:
        raise InvalidInputError(v)
    expected = _expected_events_per_trial(spec, float(horizon_hours)) * trials
    if expected > MAX_MONTE_CARLO_EVENTS:
        raise InvalidInputError.one("trials", f"{trials} trials would draw ~{expected:.3g} failure/repair events (limit "
                                              f"{MAX_MONTE_CARLO_EVENTS:.0e}); use fewer trials, a finite horizon or the "
                                              "markov method")
    out = np.empty(trials, dtype=np.float64)
    events = _simulate_kernel(rng, spec.group_width, spec.failures_tolerated, float(spec.mttf_hours),
                              float(spec.mttr_hours), RepairPolicy(spec.repair_policy) is RepairPolicy.PARALLEL,
                              spec.rebuild_failure_probability, float(horizon_hours), out)
    lost = np.isfinite(out)
    losses = int(np.count_nonzero(lost))
    if math.isinf(horizon_hours):
        mean = float(out.mean())
        stderr = float(out.std(ddof=1) / math.sqrt(trials)) if trials > 1 else math.inf
    elif losses:
        exposure = float(np.minimum(out, horizon_hours).sum())
        mean = exposure / losses
        stderr = mean / math.sqrt(losses)
    else:
        mean = stderr = math.inf
    return MonteCarloResult(trials=trials, horizon_hours=float(horizon_hours), loss_count=losses, event_count=int(events),
                            mttdl_hours=mean, mttdl_stderr_hours=stderr, loss_times_hours=out)


# -- one group, any method ---------------------------------------------------------------------------

def group_loss_probability(spec: GroupSpec, period_hours: float, *, method: Method | str = Method.MARKOV) -> float:
    """P(one group loses data within ``period_hours``) by ``markov`` (exact transient), ``closed-form``
    (1 - exp(-T / MTTDL)) or ``binomial`` (1 - (1 - q)^(periods in T)). Monte Carlo: ``monte_carlo_group``."""
    m = _method(method)
    NON_NEGATIVE.require("period_hours", period_hours)
    if m is Method.MARKOV:
        return markov_loss_probability(spec, period_hours)
    if m is Method.CLOSED_FORM:
        return loss_probability(closed_form_mttdl_hours(spec), period_hours)
    if m is Method.BINOMIAL:
        b = backblaze_binomial(group_width=spec.group_width, failures_tolerated=spec.failures_tolerated,
                               annual_failure_rate=YEAR_HOURS / spec.mttf_hours, repair_hours=spec.mttr_hours,
                               rebuild_failure_probability=spec.rebuild_failure_probability)
        return _at_least_once(b.period_loss_probability, period_hours / b.period_hours)
    raise InvalidInputError.one("method", "monte-carlo needs trials and a generator: call monte_carlo_group")


def _method(method: Method | str) -> Method:
    try:
        return Method(method)
    except ValueError:
        raise InvalidInputError.one("method", f"must be one of {', '.join(m.value for m in Method)}, got {method!r}") from None


def _at_least_once(p: float, times: float) -> float:
    """1 - (1 - p)^times without cancellation."""
    if p >= 1.0:
        return 1.0
    return -math.expm1(times * math.log1p(-p))


# -- the array -----------------------------------------------------------------------------------------

@dataclass(frozen=True, slots=True, kw_only=True)
class ArrayReliability:
    """Durability of an array of independent redundancy groups by one method."""

    method: str
    layout: str
    drive_count: int
    group_width: int  # of a redundancy group (2 for RAID 10)
    failures_tolerated: int
    group_count: int
    repair_policy: str
    annual_failure_rate: float  # failures per drive-year
    mttf_hours: float
    mttr_hours: float
    rebuild_failure_probability: float  # URE during a rebuild with no redundancy left
    group_mttdl_hours: float
    mttdl_hours: float  # group MTTDL / group count
    annual_loss_probability: float
    service_life_years: float
    service_life_loss_probability: float
    trials: int | None = None  # monte-carlo only
    seed: int | None = None
    mttdl_stderr_hours: float | None = None
    annual_loss_probability_stderr: float | None = None
    service_life_loss_probability_stderr: float | None = None

    def as_dict(self) -> dict[str, Any]:
        return {f: getattr(self, f) for f in self.__dataclass_fields__}


def _array_p(p_group: float, group_count: int) -> float:
    return _at_least_once(p_group, float(group_count))


def array_reliability(layout: Layout, drive_count: int, *, annual_failure_rate: float, repair_hours: float,
                      service_life_years: float = 5.0, uber: float = 0.0, drive_capacity_bytes: float = 0.0,
                      method: Method | str = Method.MARKOV, repair_policy: RepairPolicy | str = RepairPolicy.SINGLE,
                      trials: int = 100_000, seed: int = 0) -> ArrayReliability:
    """MTTDL and loss probabilities (one year, the service life) of ``drive_count`` drives in ``layout``.

    Groups fail independently: P_array(T) = 1 - (1 - P_group(T))^groups; the array MTTDL is the
    group's divided by the group count (exact for exponential group lifetimes, which the chain
    approaches when MTTR << MTTF). ``monte-carlo`` simulates ``trials`` groups over the service life
    (at least a year) from ``np.random.default_rng(np.random.SeedSequence(seed))``; its MTTDL is
    the censored-exponential estimate (inf when no trial lost data).
    """
    v: list[Violation] = []
    try:
        m = _method(method)
    except InvalidInputError as exc:
        v.extend(exc.violations)
        m = Method.MARKOV
    try:
        policy = RepairPolicy(repair_policy)
    except ValueError:
        v.append(Violation(field="repair_policy", reason=f"must be one of single, parallel, got {repair_policy!r}"))
        policy = RepairPolicy.SINGLE
    groups: RedundancyGroups | None = None
    try:
        groups = redundancy_groups(layout, drive_count)
    except InvalidInputError as exc:
        v.extend(exc.violations)
    mttf = 0.0
    try:
        mttf = mttf_hours_from_failure_rate(annual_failure_rate)
    except InvalidInputError as exc:
        v.extend(exc.violations)
    _REPAIR_HOURS.check(v, "repair_hours", repair_hours)
    check_range(v, "service_life_years", service_life_years, 0, MAX_SERVICE_LIFE_YEARS, lo_open=True, unit="years")
    _UBER.check(v, "uber", uber)
    if NON_NEGATIVE.check(v, "drive_capacity_bytes", drive_capacity_bytes) and is_finite(uber) and uber > 0 and drive_capacity_bytes <= 0:
        v.append(Violation(field="drive_capacity_bytes", reason="must be > 0 when uber is given (a rebuild reads it)"))
    if m is Method.MONTE_CARLO:
        check_range(v, "trials", trials, 100, MAX_TRIALS, integer=True)
        COUNT.check(v, "seed", seed)
    if v:
        raise InvalidInputError(v)
    assert groups is not None
    spec = GroupSpec(group_width=groups.group_width, failures_tolerated=groups.failures_tolerated, mttf_hours=mttf,
                     mttr_hours=float(repair_hours), uber=float(uber), drive_capacity_bytes=float(drive_capacity_bytes),
                     repair_policy=policy)
    n = groups.group_count
    life_hours = service_life_years * YEAR_HOURS
    extra: dict[str, Any] = {}
    if m is Method.MARKOV:
        group_mttdl = markov_mttdl(spec).mttdl_hours
        p_year = markov_loss_probability(spec, YEAR_HOURS)
        p_life = markov_loss_probability(spec, life_hours)
    elif m is Method.CLOSED_FORM:
        group_mttdl = closed_form_mttdl_hours(spec)
        p_year = loss_probability(group_mttdl, YEAR_HOURS)
        p_life = loss_probability(group_mttdl, life_hours)
    elif m is Method.BINOMIAL:
        b = backblaze_binomial(group_width=spec.group_width, failures_tolerated=spec.failures_tolerated,
                               annual_failure_rate=annual_failure_rate, repair_hours=float(repair_hours),
                               rebuild_failure_probability=spec.rebuild_failure_probability)
        group_mttdl = b.mttdl_hours
        p_year = b.annual_loss_probability
        p_life = _at_least_once(b.annual_loss_probability, service_life_years)
    else:
        horizon = max(YEAR_HOURS, life_hours)
        mc = monte_carlo_group(spec, trials=trials, horizon_hours=horizon,
                               rng=np.random.default_rng(np.random.SeedSequence(seed)))
        group_mttdl = mc.mttdl_hours
        p_year, p_life = mc.loss_fraction(YEAR_HOURS), mc.loss_fraction(life_hours)
        # Delta method: d/dp [1 - (1-p)^n] = n (1-p)^(n-1).
        extra = {
            "trials": trials, "seed": seed, "mttdl_stderr_hours": mc.mttdl_stderr_hours / n,
            "annual_loss_probability_stderr": n * (1 - p_year) ** (n - 1) * mc.loss_fraction_stderr(YEAR_HOURS),
            "service_life_loss_probability_stderr": n * (1 - p_life) ** (n - 1) * mc.loss_fraction_stderr(life_hours),
        }
    return ArrayReliability(method=m.value, layout=layout.name, drive_count=drive_count, group_width=groups.group_width,
                            failures_tolerated=groups.failures_tolerated, group_count=n, repair_policy=policy.value,
                            annual_failure_rate=float(annual_failure_rate), mttf_hours=mttf, mttr_hours=float(repair_hours),
                            rebuild_failure_probability=spec.rebuild_failure_probability,
                            group_mttdl_hours=group_mttdl, mttdl_hours=group_mttdl / n,
                            annual_loss_probability=_array_p(p_year, n), service_life_years=float(service_life_years),
                            service_life_loss_probability=_array_p(p_life, n), **extra)


def array_loss_probability(layout: Layout, drive_count: int, *, annual_failure_rate: float, repair_hours: float,
                           service_life_years: float = 5.0, uber: float = 0.0, drive_capacity_bytes: float = 0.0,
                           method: Method | str = Method.MARKOV,
                           repair_policy: RepairPolicy | str = RepairPolicy.SINGLE) -> float:
    """P(the array loses data within its service life): ``array_reliability(...).service_life_loss_probability``."""
    return array_reliability(layout, drive_count, annual_failure_rate=annual_failure_rate, repair_hours=repair_hours,
                             service_life_years=service_life_years, uber=uber, drive_capacity_bytes=drive_capacity_bytes,
                             method=method, repair_policy=repair_policy).service_life_loss_probability
