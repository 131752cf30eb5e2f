"""One path for every answer: an array (drive, layout, count, workload, fill, over-provisioning,
seed) -> its member service models and its ``array.ArraySpec`` -> the array simulation -> the
figures an answer quotes.

Every caller that puts a performance figure in front of a user goes through here: the planner
(``evaluation.evaluate``, per candidate and year through ``evaluation.candidate_year_case``), the
SimulateArray service and ``arrayplan simulate --local``, the report's latency CDFs and the HDD
equivalence (``equivalent_drive_count``, one search with one cap). The service models come from
the drive models' own builders (``ssd.service_model``, ``hdd.service_model``), so a change to a
drive model reaches every answer at once.

``simulate_figures`` runs two simulations of one array: at the offered load (open loop at the
required IOPS, or closed loop at the workload's queue depth when none is given), which gives the
latency percentiles, the worst second, the member IOs per host IO and the drives' utilisation;
and, when that run kept up, at saturation (closed loop at ``SATURATION_QUEUE_PER_UNIT``
outstanding host IOs per parallel unit of the simulated members), which gives the IOPS the array
sustains (an overloaded array sustains what it completed at the offered load). No analytic
queueing model contributes a figure; ``performance.iops_upper_bound`` is only the planner's
pruning screen.

Every figure carries a confidence interval (``CONFIDENCE_LEVEL``) from independent replications
(Law & Kelton, Simulation Modeling and Analysis, 5th ed., sections 9.4.1 and 9.5): replication
0 is ``spec`` itself (its warm-up raised to ``WARMUP_MEAN_LATENCIES`` mean latencies when
that is longer: ``warmed_spec``), replication ``r >= 1`` the same array and window with the seed of
``SeedSequence(spec.seed)``'s child ``r`` (``replication_spec``: its IO stream and its drives'
cleaning phases both drawn anew). The sustained IOPS's interval is the
Student-t interval of the replications' means; a latency percentile's point estimate is read from
the replications' pooled histogram and its half-width from the spread of the replications' own
percentiles (sectioning, Asmussen & Glynn, Stochastic Simulation, IV.5; Nakayama 2014).
``simulate_figures`` adds replications until the relative half-width is at most
``THROUGHPUT_REL_HALF_WIDTH`` for the sustained IOPS and ``PERCENTILE_REL_HALF_WIDTH`` for the
target percentile, or until the precision's cap (replications, host IOs) is reached; the figures
say which (``converged``, ``stop_reason``). The worst second is defined over a horizon
(``horizon_worst_second``): the per-second p99 that one second in ``horizon_s`` exceeds,
from a lognormal fitted to the replications' per-second p99s.
"""

from __future__ import annotations

import functools
import math
import statistics
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from . import array, catalog, fail_slow, hdd, ssd
from .catalog import Drive
from .errors import InvalidInputError, Violation, check, check_range, require_range
from .interval import NOT_ESTIMATED
from .interval import Interval as Interval  # re-exported: simulation.Interval is the name its callers know
from .layout import Layout, LayoutKind, group_count, usable_capacity_bytes
from .service_time import ServiceModel
from .workload import Workload

SIMULATION_MODEL = "array-des"
# Service models are built at fill levels rounded up to this step and cached, so the candidates
# of one drive share them (an SSD's costs a short FTL run). Every path rounds the same way.
FILL_STEP = 0.1
# Seconds of the SSD's steady-state FTL run behind its service model (``ssd.service_model``).
PROFILE_S = 120.0
DEFAULT_SIMULATED_S = 1.0
# A planner simulation is cut short of its simulated seconds when the array would complete more
# host IOs than this (a fast array's percentiles are as well resolved by 250k IOs as by millions).
MAX_SIMULATED_HOST_IOS = 250_000
# The saturation run: host IOs to simulate (at the screen's upper bound) and outstanding host IOs
# per parallel unit of the simulated members (a closed network of N stations at Q per station
# reaches about Q / (Q + 1) of its capacity).
SATURATION_HOST_IOS = 50_000
SATURATION_QUEUE_PER_UNIT = 4
SATURATION_MAX_S = 10.0
# Below this share of the host IOs that arrived in the window completing in it, the offered-load
# run did not keep up (IOs still in flight at the window's end are well under 2 % of a window).
KEEP_UP_TOLERANCE = 0.02
MAX_EQUIVALENT_DRIVES = 4_096
# Confidence: two-sided intervals at this level; a check is met when the pessimistic end meets it.
CONFIDENCE_LEVEL = 0.95
# The run length adapts until the intervals' relative half-widths are at most these.
THROUGHPUT_REL_HALF_WIDTH = 0.05
PERCENTILE_REL_HALF_WIDTH = 0.10
# The worst second is the worst of this many seconds of array time (a simulated hour).
DEFAULT_HORIZON_S = 3600.0
MAX_HORIZON_S = 31_536_000.0  # a year of seconds
SECOND_P99_RESOLUTION = 1.125  # per-second p99s: upper edges of 8-per-octave buckets
# Replications warm up for at least this many mean latencies (of replication 0), at most MAX_WARMUP_S.
WARMUP_MEAN_LATENCIES = 30.0
MAX_WARMUP_S = 10.0


@dataclass(frozen=True, slots=True, kw_only=True)
class Precision:
    """How long ``simulate_figures`` runs: replications of the offered-load window (each
    ``spec.duration_s``) to start with and at most, and a cap on the host IOs they simulate
    together. More replications are added (doubling) while an interval is too wide."""

    name: str
    initial_replications: int
    max_replications: int
    max_host_ios: int


# A screening run: one replication, today's single window; point estimates only (no interval),
# for a search that ranks many candidates before deciding with the full run.
SCREENING = Precision(name="screening", initial_replications=1, max_replications=1, max_host_ios=MAX_SIMULATED_HOST_IOS)
# The decision run: 3 replications, doubled up to 12 or 1.5M host IOs until the intervals are tight.
FULL = Precision(name="full", initial_replications=3, max_replications=12, max_host_ios=6 * MAX_SIMULATED_HOST_IOS)
PRECISIONS = {p.name: p for p in (SCREENING, FULL)}
# The hard-disk comparison's run per disk count (``equivalent_drive_count``): FULL's 3 replications
# without its doubling. Each count is still decided at the pessimistic end of a 95 % interval, a
# wider one (t 4.30 with 2 degrees of freedom), so the count errs high rather than low; the doubling
# to 12 replications for a p99.9 of a thousand nearly saturated disks took 4-6 s of CPU per plan
# (2.3-3.5 s with this), against 0.2 s for the one-run search before intervals.
EQUIVALENCE = Precision(name="equivalence", initial_replications=3, max_replications=3, max_host_ios=3 * MAX_SIMULATED_HOST_IOS)


def precision_of(precision: str | Precision) -> Precision:
    """A ``Precision`` by name ("screening", "full") or as given."""
    if isinstance(precision, Precision):
        return precision
    try:
        return PRECISIONS[precision]
    except (KeyError, TypeError):
        raise InvalidInputError.one("precision", f"must be one of {', '.join(PRECISIONS)}; got {precision!r}") from None


# Student's t at 0.975 (two-sided 95 %) for 1..30 degrees of freedom.
_T975 = (12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.160, 2.145, 2.131,
         2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048, 2.045, 2.042)


def t_quantile_975(dof: int) -> float:
    """Student's t 0.975 quantile (the two-sided 95 % interval's multiplier) for ``dof`` >= 1
    degrees of freedom: tabulated to 30, then the Cornish-Fisher expansion (error < 1e-3)."""
    if dof < 1:
        raise ValueError(f"dof must be >= 1, got {dof}")
    if dof <= len(_T975):
        return _T975[dof - 1]
    z = 1.959964
    return z + (z**3 + z) / (4 * dof) + (5 * z**5 + 16 * z**3 + 3 * z) / (96 * dof**2)


def mean_interval(samples: Sequence[float]) -> Interval:
    """The mean of independent replications and its Student-t interval (Law & Kelton 9.4.1)."""
    x = np.asarray(samples, dtype=np.float64)
    m = float(x.mean())
    if x.size < 2 or not math.isfinite(m):
        return Interval(value=m)
    hw = t_quantile_975(x.size - 1) * float(x.std(ddof=1)) / math.sqrt(x.size)
    return Interval(value=m, low=m - hw, high=m + hw)


def sectioning_interval(pooled: float, sections: Sequence[float]) -> Interval:
    """A quantile read from the pooled replications (``pooled``), its half-width from the spread
    of the replications' own quantiles (sectioning: t * s / sqrt(R))."""
    x = np.asarray(sections, dtype=np.float64)
    if x.size < 2 or not (math.isfinite(pooled) and np.all(np.isfinite(x))):
        return Interval(value=pooled)
    hw = t_quantile_975(x.size - 1) * float(x.std(ddof=1)) / math.sqrt(x.size)
    return Interval(value=pooled, low=max(0.0, pooled - hw), high=pooled + hw)


def horizon_worst_second(second_p99s_s: Sequence[float], horizon_s: float, independent_count: int = 0) -> Interval:
    """The worst second over ``horizon_s`` seconds of array time: the per-second p99 latency that
    one second in ``horizon_s`` exceeds (the 1 - 1/H quantile of the per-second p99), from a
    lognormal fitted to ``second_p99s_s`` (independent seconds: one or more per replication).

    log of the estimate = m + z s (m, s: mean and standard deviation of the logs, z the standard
    normal 1 - 1/H quantile); its standard error s * sqrt(1/n + z^2 / (2 (n - 1))) (the normal
    quantile estimator's, Stuart & Ord), the interval t-scaled on the log and mapped back (so it
    is not symmetric). ``independent_count``: how many of the samples are independent (the
    replications: seconds of one replication are correlated through its queues), n in the standard
    error and the t's degrees of freedom; 0 = every sample. With one sample the estimate is that
    sample and the interval unknown."""
    x = np.asarray([v for v in second_p99s_s if math.isfinite(v) and v > 0], dtype=np.float64)
    if x.size == 0:
        return Interval(value=math.nan)
    if x.size == 1:
        return Interval(value=float(x[0]))
    lg = np.log(x)
    m, sd = float(lg.mean()), float(lg.std(ddof=1))
    z = statistics.NormalDist().inv_cdf(1.0 - 1.0 / max(horizon_s, 2.0))
    centre = m + z * sd
    n = min(x.size, independent_count) if independent_count >= 2 else x.size
    se = sd * math.sqrt(1.0 / n + z * z / (2.0 * (n - 1)))
    hw = t_quantile_975(n - 1) * se
    # the per-second p99s are upper bucket edges (at most 12.5 % above the true value,
    # ``array.ArrayResult.second_p99_latency_s``): the low end allows for that resolution
    return Interval(value=math.exp(centre), low=math.exp(centre - hw) / SECOND_P99_RESOLUTION, high=math.exp(centre + hw))


def coordinated_reads_apply(layout: Layout) -> bool:
    """Whether ``ArraySpec.coordinated_reads`` can apply to ``layout``: a parity layout (RAID 5,
    RAID 6, ec:K+M) has the other units of a stripe to read around a busy member; RAID 0 and
    mirrors do not (``array.validate_spec`` refuses them)."""
    return not (layout.kind is LayoutKind.RAID0 or layout.is_mirror)


def pooled_result(runs: Sequence[array.ArrayResult]) -> array.ArrayResult:
    """Independent replications of one array pooled into one result: histograms, counters and
    latency sums add, the maximum is the largest; everything else (per-second series, drive
    busy time, seed) is the first replication's. One run is returned as it is."""
    if len(runs) == 1:
        return runs[0]
    return replace(runs[0], latency_histograms=np.sum([r.latency_histograms for r in runs], axis=0),
                   latency_max_s=np.max([r.latency_max_s for r in runs], axis=0),
                   latency_sum_s=np.sum([r.latency_sum_s for r in runs], axis=0),
                   counters=np.sum([r.counters for r in runs], axis=0))


@dataclass(frozen=True, slots=True, kw_only=True, eq=False)
class Replications:
    """Independent replications of one array's run (``replication_spec``: replication 0 is the
    spec itself) and their figures with ``CONFIDENCE_LEVEL`` intervals: the achieved IOPS is the
    replications' mean (Student t); a latency percentile is read from the pooled histogram, its
    interval from the spread of the replications' own percentiles (sectioning); the worst second
    is the mean of the replications' worst seconds (Student t). With one replication every figure
    is that run's, bit for bit, and the intervals are unknown (NaN)."""

    runs: tuple[array.ArrayResult, ...]

    @property
    def pooled(self) -> array.ArrayResult:
        return pooled_result(self.runs)

    def achieved_iops(self) -> Interval:
        return mean_interval([float(r.achieved_iops) for r in self.runs])

    def percentile(self, q: float, kind: str = "all") -> Interval:
        """Latency at quantile ``q`` in [0, 1) of ``kind`` IOs ("all", "read", "write"); NaN when none."""
        pooled = self.pooled
        if not pooled.latency_count(kind):
            return Interval(value=math.nan)
        sections = [float(r.latency_percentile_s(q, kind)) for r in self.runs if r.latency_count(kind)]
        return sectioning_interval(float(pooled.latency_percentile_s(q, kind)), sections)

    def maximum_s(self, kind: str = "all") -> float:
        return float(self.pooled.latency_percentile_s(1.0, kind))

    def worst_second_p99(self) -> Interval:
        vals = [float(r.worst_second_p99_latency_s) for r in self.runs]
        if not all(math.isfinite(v) for v in vals):
            return Interval(value=vals[0])
        return mean_interval(vals)

    def reconstructed_read_fraction(self) -> float:
        """Share of host reads read around a busy member (``ArraySpec.coordinated_reads``)."""
        reads = sum(r.host_reads for r in self.runs)
        recon = sum(int(r.counters[array._C_RECONSTRUCTED_READS]) for r in self.runs)
        return recon / reads if reads else math.nan


def fill_bucket_fraction(fill_fraction: float) -> float:
    """The fill level the service model is built at: ``fill_fraction`` rounded up to ``FILL_STEP``."""
    bucket = math.ceil(round(fill_fraction / FILL_STEP, 9))
    return min(1.0, max(FILL_STEP, bucket * FILL_STEP))


@functools.lru_cache(maxsize=512)
def _cached_models(drive: Drive, fill_fraction: float, extra_spare_fraction: float, write_fraction: float,
                   hot_write_fraction: float, hot_space_fraction: float) -> tuple[ServiceModel, ...]:
    if drive.kind != "ssd":
        return (hdd.service_model(drive),)
    return (ssd.service_model(drive, fill_fraction=fill_fraction, extra_spare_fraction=extra_spare_fraction,
                              write_fraction=write_fraction, hot_write_fraction=hot_write_fraction,
                              hot_space_fraction=hot_space_fraction, seed=0, profile_s=PROFILE_S),)


def member_service_models(drive: Drive, workload: Workload, *, fill_fraction: float = 1.0,
                          extra_spare_fraction: float = 0.0) -> tuple[ServiceModel, ...]:
    """The members' service models (one, shared; each member still gets its own cleaning phase in
    the simulation) for the drive at ``fill_fraction`` (rounded up to ``FILL_STEP``), short-stroked
    by ``extra_spare_fraction``, under the workload's write share and skew. Cached."""
    require_range("fill_fraction", fill_fraction, 0, 1, lo_open=True)
    return _cached_models(drive, fill_bucket_fraction(fill_fraction), float(extra_spare_fraction),
                          round(workload.write_fraction, 2), workload.hot_write_fraction, workload.hot_space_fraction)


def array_service_models(drive: Any, count: int = 1, *, workload: Workload | None = None,
                         fill_fraction: float = 1.0, extra_spare_fraction: float = 0.0, seed: int = 0,
                         distinct: bool = False) -> tuple[ServiceModel, ...]:
    """Service models for ``count`` members of a catalog drive (a ``catalog.Drive`` or its name),
    built fresh (uncached, any fill, seed and random share; ``member_service_models`` is the cached
    form the planner uses).

    SSDs come from ``ssd.service_model`` (cleaning as work, set for the workload's skew and
    random share, each member preconditioned to its used state); HDDs from ``hdd.service_model``.
    By default one model is shared (each member still starts from its own cleaning state in the
    simulation); ``distinct=True`` builds one per member with seeds from
    ``SeedSequence(seed).spawn(count)``.
    """
    if isinstance(drive, str):
        drive = catalog.get_drive(drive)
    if not isinstance(count, int) or count < 1:
        raise InvalidInputError.one("count", f"must be an integer >= 1, got {count!r}")
    if not getattr(drive, "is_ssd", True) or getattr(drive, "rpm", None):
        return (hdd.service_model(drive),)
    kwargs: dict[str, Any] = {"fill_fraction": fill_fraction, "extra_spare_fraction": extra_spare_fraction}
    if workload is not None:
        kwargs.update(write_fraction=workload.write_fraction, hot_write_fraction=workload.hot_write_fraction,
                      hot_space_fraction=workload.hot_space_fraction, random_fraction=workload.random_fraction)
    if not distinct:
        return (ssd.service_model(drive, seed=seed, **kwargs),)
    seeds = [int(s.generate_state(1)[0]) for s in np.random.SeedSequence(seed).spawn(count)]
    return tuple(ssd.service_model(drive, seed=s, **kwargs) for s in seeds)


def array_spec(drive: Drive, layout: Layout, drive_count: int, workload: Workload, *, fill_fraction: float = 1.0,
               extra_spare_fraction: float = 0.0, duration_s: float = DEFAULT_SIMULATED_S, seed: int = 0,
               warmup_s: float = 0.25, failed_drives: int = 0, rebuild_rate_bytes_per_s: float = 0.0,
               reorder_window: int = 1) -> array.ArraySpec:
    """The array simulation's input for one array: the one place an ``ArraySpec`` is built from a
    catalog drive (members' service models from ``member_service_models``)."""
    models = member_service_models(drive, workload, fill_fraction=fill_fraction, extra_spare_fraction=extra_spare_fraction)
    return array.ArraySpec(layout=layout, drive_count=drive_count, service_models=models, workload=workload,
                           duration_s=duration_s, warmup_s=warmup_s, seed=seed, failed_drives=failed_drives,
                           rebuild_rate_bytes_per_s=rebuild_rate_bytes_per_s,
                           drive_capacity_bytes=float(drive.capacity_bytes) * (1.0 - extra_spare_fraction),
                           reorder_window=reorder_window)


def capped_duration_s(simulated_s: float, rate_iops: float, host_ios: int = MAX_SIMULATED_HOST_IOS) -> float:
    """``simulated_s``, cut to about ``host_ios`` host IOs at ``rate_iops`` (at least 50 ms)."""
    return min(simulated_s, max(0.05, host_ios / max(rate_iops, 1.0)))


@dataclass(frozen=True, slots=True, kw_only=True)
class SimulatedFigures:
    """The figures of one array under one workload, every one from the array simulation."""

    # Each figure is an ``Interval``: its point estimate and CONFIDENCE_LEVEL interval (NaN ends
    # when not estimated: one replication, a screening run; infinite ends beside an infinite
    # figure: did not keep up).
    max_iops: Interval  # sustained: the saturation run (or the offered load's completions, when higher or overloaded)
    achieved_iops: float  # at the offered load
    member_ios_per_host_io: float
    latency_p50_s: Interval
    latency_at_percentile_s: Interval
    worst_second_latency_s: Interval
    # the drives' mean utilisation over the replications (power and so the cost of ownership
    # follow its interval)
    utilization: Interval
    kept_up: bool
    model: str = SIMULATION_MODEL
    # the latency at the percentile over time with fail-slow drives at the field rates
    # (``fail_slow``), its interval sectioning over the replications, each the mixture of its own
    # offered-load run and the same replication with the slow member; NaN when not asked for
    latency_at_percentile_fail_slow_s: Interval = NOT_ESTIMATED
    # With ``spec.coordinated_reads``: the latency at the percentile of the same array without the
    # policy (the offered-load replications again, the same seeds) and the share of host reads
    # read around a busy member. NaN otherwise.
    latency_at_percentile_without_coordinated_reads_s: Interval = NOT_ESTIMATED
    reconstructed_read_fraction: float = math.nan
    horizon_s: float = DEFAULT_HORIZON_S  # the worst second is the worst of this many seconds
    replications: int = 1
    host_ios: int = 0  # offered-load host IOs simulated over the replications
    # True when the intervals reached THROUGHPUT_REL_HALF_WIDTH (sustained IOPS) and
    # PERCENTILE_REL_HALF_WIDTH (target percentile); stop_reason says why the run stopped:
    # "converged", "replication cap", "host-IO cap", "screening" (one replication),
    # "overloaded" (did not keep up: latencies are infinite, the IOPS interval is kept) or
    # "no host IOs" (a near-idle rate left the windows empty: no latency)
    converged: bool = False
    stop_reason: str = "screening"
    precision: str = "screening"

    def intervals(self) -> dict[str, Interval]:
        """The figures with intervals, by name."""
        return {"max_iops": self.max_iops, "latency_p50_s": self.latency_p50_s,
                "latency_at_percentile_s": self.latency_at_percentile_s, "worst_second_latency_s": self.worst_second_latency_s}


def saturation_spec(spec: array.ArraySpec, *, simulated_s: float, upper_bound_iops: float,
                    host_ios: int = SATURATION_HOST_IOS) -> array.ArraySpec:
    """The closed-loop run at saturation of the array of ``spec`` (same drives, seed and layout),
    about ``host_ios`` host IOs at the bound."""
    units = sum(int(m.parallel_units) for m in spec.service_models)
    if len(spec.service_models) == 1:
        units *= spec.simulated_drive_count
    queue = int(min(65_536, max(spec.workload.queue_depth, SATURATION_QUEUE_PER_UNIT * units)))
    # about host_ios host IOs at the bound, and never fewer simulated seconds than the
    # offered-load run, up to SATURATION_MAX_S (a slow array of large IOs needs the seconds: a
    # few hundred IOs of a size mix are a noisy throughput)
    duration = min(max(simulated_s, SATURATION_MAX_S), max(0.05, host_ios / max(upper_bound_iops, 1.0)))
    wl = replace(spec.workload, target_iops=0.0, queue_depth=queue)
    return replace(spec, workload=wl, duration_s=duration, warmup_s=min(spec.warmup_s, 0.25 * duration))


def _spec_key(spec: array.ArraySpec) -> str:
    """Equal for specs that simulate alike (an ``ArraySpec`` compares by identity): its full repr,
    every array element written out, without the workload's daily write volume (it grows with
    the rate and is no input of the simulation)."""
    with np.printoptions(threshold=sys.maxsize):
        return repr(replace(spec, workload=replace(spec.workload, daily_write_bytes=0.0)))


def replication_spec(spec: array.ArraySpec, r: int) -> array.ArraySpec:
    """Replication ``r`` of ``spec``: ``spec`` itself for 0, else the seed of child ``r`` of
    ``SeedSequence(spec.seed)`` (a new IO stream and new cleaning phases, the same array and window)."""
    if r == 0:
        return spec
    return replace(spec, seed=seed_int(np.random.SeedSequence(spec.seed, spawn_key=(r,))))


def warmed_spec(spec: array.ArraySpec, first: array.ArrayResult) -> array.ArraySpec:
    """``spec`` with its warm-up raised to ``WARMUP_MEAN_LATENCIES`` mean latencies of ``first``
    (its run; at most ``MAX_WARMUP_S``) when that is longer, else ``spec`` itself."""
    mean_latency = first.latency_mean_s() if first.latency_count() else math.nan
    if math.isfinite(mean_latency) and WARMUP_MEAN_LATENCIES * mean_latency > spec.warmup_s and not first.saturated:
        return replace(spec, warmup_s=min(MAX_WARMUP_S, WARMUP_MEAN_LATENCIES * mean_latency))
    return spec


def _full_seconds(r: array.ArrayResult) -> int:
    return int(math.floor(r.duration_s + 1e-9)) if r.duration_s >= 1.0 else 0


def _second_p99s(r: array.ArrayResult) -> list[float]:
    """The p99 of each whole second of the window; a window shorter than a second gives its own
    p99 instead (fewer IOs than a second's: a wider spread, so a higher worst second)."""
    n = _full_seconds(r)
    if n:
        return [float(v) for v in r.second_p99_latency_s[:n]]
    return [float(r.latency_percentile_s(0.99))] if r.latency_count() else []


def _kept_up(rs: Sequence[array.ArrayResult], offered: float) -> bool:
    """Kept up: the host IOs that arrived in the window completed in it (arrivals, not the nominal
    rate, so Poisson noise in a short window does not count as falling behind). One window: its
    shortfall at most ``KEEP_UP_TOLERANCE``. Replications: the shortfall's interval reaches down
    to the tolerance (a falling-behind array is short in every window; the IOs in flight at a
    window's end are noise, which an array near its capacity meets in its saturation interval)."""
    if any(r.saturated for r in rs):
        return False
    if offered <= 0:
        return True
    short = [(r.host_ios - r.completions_in_window) / max(r.host_ios, 1) for r in rs]
    if len(short) == 1:
        return short[0] <= KEEP_UP_TOLERANCE
    iv = mean_interval(short)
    return iv.low <= KEEP_UP_TOLERANCE


# simulate_figures is ~145 lines with its docstring: one replication loop whose closures (add,
# add_saturation, sustained) share the runs, the keep-up verdict and the intervals the stopping
# rule reads, then the figures built from them; the fail-slow and coordinated-reads passes are
# helpers of their own (_fail_slow_interval, _without_coordinated_reads).
def simulate_figures(spec: array.ArraySpec, *, latency_percentile: float, simulated_s: float,
                     upper_bound_iops: float, fail_slow_field_rates: bool = False,
                     precision: str | Precision = FULL, horizon_s: float = DEFAULT_HORIZON_S,
                     saturation_seed: int | None = None,
                     saturation_runs: dict[Any, array.ArrayResult] | None = None,
                     first_runs: dict[array.ArraySpec, array.ArrayResult] | None = None) -> SimulatedFigures:
    """Simulate ``spec`` (the offered load) and its saturation run in independent replications
    (``replication_spec``) until the intervals are tight or ``precision``'s cap is reached; see
    the module docstring. ``horizon_s``: the worst second is the worst of that many seconds
    (``horizon_worst_second``). ``fail_slow_field_rates``: also the offered load (replication 0)
    with the first member of group 0 at ``fail_slow.FIELD_SLOWDOWN``, for the percentile over
    time at the field rates.

    ``saturation_seed`` (default ``spec.seed``) seeds the saturation replications; with
    ``saturation_runs`` (a dict the caller keeps) a saturation run whose spec is already in it is
    not simulated again: the years of one array whose workloads differ only in the offered rate
    (growth, at the same fill) have the same closed-loop run at saturation, which ignores the
    offered rate, so ``evaluation.evaluate`` seeds it without the rate and runs it once.
    ``first_runs`` (a dict the caller keeps, by spec object: an ``ArraySpec`` compares by
    identity) holds the run of replication 0 of each ``spec`` given: a caller that passes the same
    spec again (a screening run, then the full run of the same year) does not simulate it again."""
    prec = precision_of(precision)
    require_range("horizon_s", horizon_s, 2, MAX_HORIZON_S, unit="s")
    q = latency_percentile / 100.0
    offered = spec.workload.target_iops
    runs: list[array.ArrayResult] = []
    sats: list[array.ArrayResult] = []
    sat_ios = SATURATION_HOST_IOS if prec.max_replications == 1 else SATURATION_HOST_IOS // 2

    def add(count: int) -> None:
        for r in range(len(runs), count):
            if r == 0 and first_runs is not None:
                if spec not in first_runs:
                    first_runs[spec] = array.simulate(spec)
                runs.append(first_runs[spec])
                continue
            runs.append(array.simulate(replication_spec(spec, r)))

    def add_saturation(count: int) -> None:
        base = spec if saturation_seed is None else replace(spec, seed=int(saturation_seed))
        for r in range(len(sats), count):
            sat = saturation_spec(replication_spec(base, r), simulated_s=simulated_s, upper_bound_iops=upper_bound_iops,
                                  host_ios=sat_ios)
            if saturation_runs is None:
                sats.append(array.simulate(sat))
                continue
            key = _spec_key(sat)
            if key not in saturation_runs:
                saturation_runs[key] = array.simulate(sat)
            sats.append(saturation_runs[key])

    def sustained() -> list[float]:
        if kept_up:
            return [max(0.0 if s.saturated else float(s.achieved_iops), float(r.achieved_iops)) for r, s in zip(runs, sats)]
        # overloaded at the offered rate: it sustains the share of the arrivals it completed, never
        # the offered rate itself (in a short window Poisson arrivals above the rate can make its
        # completions exceed the target while its queue grows: it does not keep up, so it fails)
        return [min(float(r.achieved_iops), offered * r.completions_in_window / max(r.host_ios, 1)) for r in runs]

    # warm-up: each replication starts from empty queues; an array near its capacity needs longer
    # than the spec's warm-up to reach steady state (its tail read low otherwise: the worst second
    # of a nearline RAID 6 at 84 % busy came out 25 % low). The warm-up is made at least
    # WARMUP_MEAN_LATENCIES mean latencies of replication 0 (at most MAX_WARMUP_S) for every
    # replication, replication 0 run again with it.
    add(1)
    warmed = warmed_spec(spec, runs[0])
    if warmed is not spec:
        spec = warmed
        runs.clear()
    add(prec.initial_replications)
    while True:
        kept_up = _kept_up(runs, offered)
        if not kept_up and offered > 0 and len(runs) > 1 and not any(r.saturated for r in runs):
            # short in every window, or noise? (a window of a few hundred IOs at tens of ms each
            # ends with ~5 % of them in flight). The saturation runs say: an array whose
            # sustained IOPS' interval lies above the offered rate keeps up with it.
            add_saturation(min(len(runs), prec.initial_replications))
            capacity = mean_interval([0.0 if s.saturated else float(s.achieved_iops) for s in sats])
            kept_up = capacity.known and capacity.low >= offered
        if kept_up:
            # saturation replications: as many as the offered-load ones while the IOPS interval
            # is too wide, else the initial ones (a throughput converges long before a tail)
            add_saturation(min(len(runs), prec.initial_replications))
            if mean_interval(sustained()).relative_half_width > THROUGHPUT_REL_HALF_WIDTH:
                add_saturation(len(runs))
        iops = mean_interval(sustained())
        pooled = pooled_result(runs)
        # latencies: a window with no host IO (a near-idle rate) has none; the pooled run may
        latencies = kept_up and pooled.latency_count() > 0
        at_p = sectioning_interval(float(pooled.latency_percentile_s(q)), [float(r.latency_percentile_s(q)) for r in runs]) \
            if latencies else Interval(value=math.inf)
        host_ios = sum(r.host_ios for r in runs)
        if len(runs) == 1 and prec.max_replications == 1:
            stop = "screening"
        elif not kept_up:
            stop = "overloaded"
        elif not latencies:
            stop = "no host IOs"
        elif iops.relative_half_width <= THROUGHPUT_REL_HALF_WIDTH and at_p.relative_half_width <= PERCENTILE_REL_HALF_WIDTH:
            stop = "converged"
        elif len(runs) >= prec.max_replications:
            stop = "replication cap"
        else:
            per_run = max(1, host_ios // len(runs))
            room = prec.max_host_ios // per_run
            if room <= len(runs):
                stop = "host-IO cap"
            else:
                add(min(2 * len(runs), prec.max_replications, room))
                continue
        break

    per_run_util = [float(np.mean(r.drive_utilisation)) for r in runs if len(r.drive_utilisation)]
    util = float(np.mean(per_run_util)) if per_run_util else 1.0
    util_interval = mean_interval(per_run_util) if len(per_run_util) > 1 else Interval(value=util)
    common: dict[str, Any] = {
        "max_iops": iops,
        "achieved_iops": float(np.mean([r.achieved_iops for r in runs])),
        "member_ios_per_host_io": float(pooled.member_ios_per_host_io) if len(runs) == 1 else
        float(np.nansum([r.member_ios_per_host_io * r.host_ios for r in runs]) / max(host_ios, 1)),
        "horizon_s": float(horizon_s), "replications": len(runs), "host_ios": int(host_ios), "converged": stop == "converged",
        "stop_reason": stop, "precision": prec.name,
    }
    if not latencies:
        inf = math.inf
        overloaded = Interval(value=inf, low=inf, high=inf)
        return SimulatedFigures(**common, latency_p50_s=overloaded, latency_at_percentile_s=overloaded,
                                worst_second_latency_s=overloaded, utilization=Interval(value=1.0), kept_up=False)
    p50 = sectioning_interval(float(pooled.latency_percentile_s(0.5)), [float(r.latency_percentile_s(0.5)) for r in runs])
    worst = horizon_worst_second([v for r in runs for v in _second_p99s(r)], horizon_s, independent_count=len(runs))
    if not math.isfinite(worst.value):
        worst = Interval(value=float(pooled.latency_percentile_s(0.99)))
    slow_iv = _fail_slow_interval(spec, runs, pooled, q) if fail_slow_field_rates else Interval(value=math.nan)
    if spec.coordinated_reads:
        common.update(_without_coordinated_reads(spec, runs, q))
    return SimulatedFigures(
        **common, latency_at_percentile_fail_slow_s=slow_iv, latency_p50_s=p50, latency_at_percentile_s=at_p,
        worst_second_latency_s=worst, kept_up=True,
        utilization=Interval(value=util, low=max(0.0, util_interval.low), high=min(1.0, util_interval.high))
        if util_interval.known else Interval(value=util),
    )


def _fail_slow_interval(spec: array.ArraySpec, runs: Sequence[array.ArrayResult], pooled: array.ArrayResult,
                        q: float) -> Interval:
    """The percentile with fail-slow drives at the field rates: every replication again with the
    slow member, the mixture per replication, pooled for the point, sectioning for the interval
    (as the percentile without fail-slow drives)."""
    slows = [array.simulate(fail_slow.with_slow_members(replication_spec(spec, r), {0: fail_slow.FIELD_SLOWDOWN}))
             for r in range(len(runs))]
    kind = "hdd" if spec.service_models[0].mechanical else "ssd"
    share = fail_slow.slow_time_fraction(kind, max(1, group_count(spec.layout, spec.drive_count)))

    def mixture(normal: array.ArrayResult, slow: array.ArrayResult) -> float:
        return fail_slow.mixture_percentile_s(normal, slow, share, q) if not slow.saturated else math.inf

    per = [mixture(n, s) for n, s in zip(runs, slows, strict=True)]
    if len(runs) == 1:
        return Interval(value=per[0])
    pooled_slow = replace(pooled_result(slows), saturated=any(s.saturated for s in slows))
    value = mixture(pooled, pooled_slow)
    return sectioning_interval(value, per) if all(math.isfinite(v) for v in per) and math.isfinite(value) \
        else Interval(value=value)


def _without_coordinated_reads(spec: array.ArraySpec, runs: Sequence[array.ArrayResult], q: float) -> dict[str, Any]:
    """The same replications without the coordinated-reads policy: common random numbers, so the
    difference is the policy's and not the streams'."""
    plain = Replications(runs=tuple(array.simulate(replace(replication_spec(spec, r), coordinated_reads=False))
                                    for r in range(len(runs))))
    plain_p = plain.percentile(q) if not any(r.saturated for r in plain.runs) else Interval(value=math.inf)
    return {"latency_at_percentile_without_coordinated_reads_s": plain_p,
            "reconstructed_read_fraction": Replications(runs=tuple(runs)).reconstructed_read_fraction()}


def seed_int(seed: np.random.SeedSequence) -> int:
    """The array simulation's integer seed from a seed stream."""
    return int(seed.generate_state(1)[0])


# -- HDD equivalence: one search, one cap --------------------------------------------------------


@dataclass(frozen=True, slots=True, kw_only=True, eq=False)
class Equivalence:
    """How many disks match a target: the smallest array found and the runs that bracket it."""

    drive_name: str
    layout_name: str
    target_iops: float
    latency_quantile: float
    latency_target_s: float  # 0 = no latency target
    drive_count: int  # 0 when no array up to max_drive_count meets every target
    result: array.ArrayResult | None  # the run of the smallest passing array
    tried: tuple[tuple[int, float, float, bool], ...]  # (drives, achieved IOPS, latency at q, passed)
    max_drive_count: int = MAX_EQUIVALENT_DRIVES
    # The latency at the quantile of one group nearly idle (1 % of one disk's rate): no number of
    # disks gets below it. NaN when not measured (the search found an array).
    unloaded_latency_s: float = math.nan
    capacity_drive_count: int = 0  # fewest drives (whole groups) with the required capacity
    # With a precision (``equivalent_drive_count(..., precision=FULL)``): each count decided at the
    # pessimistic end of its CONFIDENCE_LEVEL intervals (``drive_count``) and the smallest count
    # whose optimistic end passes (``drive_count_low``; 0 when none does), the count's interval;
    # ``figures`` are the passing count's. Without one: drive_count_low == drive_count, no figures.
    drive_count_low: int = 0
    figures: SimulatedFigures | None = None

    @property
    def no_number_holds_latency(self) -> bool:
        """True only when it is: even nearly idle the array misses the latency target."""
        return bool(self.drive_count == 0 and self.latency_target_s > 0 and math.isfinite(self.unloaded_latency_s)
                    and self.unloaded_latency_s > self.latency_target_s)

    def summary(self) -> dict[str, object]:
        return {
            "drive_name": self.drive_name,
            "layout": self.layout_name,
            "target_iops": self.target_iops,
            "latency_quantile": self.latency_quantile,
            "latency_target_s": self.latency_target_s,
            "drive_count": self.drive_count,
            "drive_count_low": self.drive_count_low,
            "max_drive_count": self.max_drive_count,
            "no_number_holds_latency": self.no_number_holds_latency,
            "unloaded_latency_s": None if not math.isfinite(self.unloaded_latency_s) else float(self.unloaded_latency_s),
            "tried": [{"drive_count": int(n), "achieved_iops": float(a), "latency_s": float(lat), "passed": bool(ok)}
                      for n, a, lat, ok in self.tried],
        }


def equivalent_drive_count(drive: Drive | ServiceModel, layout_for: Callable[[int], Layout] | Layout, workload: Workload, *,
                           target_iops: float, latency_quantile: float, latency_target_s: float = 0.0,
                           required_capacity_bytes: float = 0.0, group_width: int | None = None,
                           min_drive_count: int = 1, drive_capacity_bytes: float = 0.0,
                           duration_s: float = 5.0, warmup_s: float = 1.0, seed: int = 0, reorder_window: int = 1,
                           max_drive_count: int = MAX_EQUIVALENT_DRIVES, iops_tolerance: float = KEEP_UP_TOLERANCE,
                           max_host_ios: int = MAX_SIMULATED_HOST_IOS,
                           precision: str | Precision | None = None, with_count_low: bool = True) -> Equivalence:
    """Smallest number of ``drive``s, in whole groups of the layout, with ``required_capacity_bytes``
    that carry ``workload`` offered open loop at ``target_iops`` (achieved IOPS within
    ``iops_tolerance``) with the ``latency_quantile`` latency at or under ``latency_target_s``
    (0 = no latency target), up to ``max_drive_count``: the one search every HDD equivalence uses.

    ``drive`` is a catalog drive (its members' models from ``member_service_models``) or one
    service model (a disk from a datasheet, ``drive_capacity_bytes`` its capacity).
    ``layout_for(n)`` gives the layout of an ``n``-drive array (a ``Layout`` = its groups repeated;
    a callable lets RAID 0/10 stripe across all ``n``, widths in steps of ``group_width``, from ``min_drive_count`` drives).

    The stages (``_EquivalenceSearch``): the smallest count with the capacity; when a latency
    target is set, one group nearly idle (``unloaded_latency``: if even it misses the target, no
    number of disks holds it, ``no_number_holds_latency``); the one-run search (``one_run``: one
    simulation per count through ``array_spec``, doubling from half the utilisation bound, then
    bisection; the duration cut to ``max_host_ios`` host IOs); with a ``precision``, the counts
    around its answer at that precision (``at_precision``).

    ``precision`` (a catalog ``Drive`` only): the counts are simulated by ``simulate_figures`` at
    that precision (independent replications, the saturation run sized by
    ``performance.iops_upper_bound``) and pass as an SSD candidate's checks do, at the pessimistic
    end of their intervals: kept up, the sustained IOPS' low end at least the target, the
    percentile's high end at most the latency target (no ``iops_tolerance``: the interval is the
    margin). ``drive_count`` is the smallest count passing so; ``drive_count_low`` the smallest
    passing at the optimistic end (the IOPS' high end, the latency's low end): the count's
    interval, searched only ``with_count_low`` (a caller that does not quote it saves its runs;
    ``drive_count_low`` is then ``drive_count``). Both searches gallop from their start and bisect
    (``_smallest_passing``).
    """
    v: list[Violation] = []
    check_range(v, "target_iops", target_iops, 0, 1e8, lo_open=True)
    check_range(v, "latency_quantile", latency_quantile, 0, 1, lo_open=True)
    check_range(v, "latency_target_s", latency_target_s, 0, 3600, unit="s", note="(0 = none)")
    check_range(v, "max_drive_count", max_drive_count, 1, MAX_EQUIVALENT_DRIVES, integer=True)
    check(v)
    prec = precision_of(precision) if precision is not None else None
    if prec is not None and not isinstance(drive, Drive):
        raise InvalidInputError.one("drive", "a precision needs a catalog drive (its IOPS bound sizes the saturation run)")
    s = _EquivalenceSearch(drive, layout_for, workload, target_iops=float(target_iops), q=float(latency_quantile),
                           latency_target_s=float(latency_target_s), group_width=group_width, drive_capacity_bytes=drive_capacity_bytes,
                           duration_s=duration_s, warmup_s=warmup_s, seed=seed, reorder_window=reorder_window,
                           max_drive_count=max_drive_count, iops_tolerance=iops_tolerance, max_host_ios=max_host_ios, prec=prec)
    s.size_for_capacity(min_drive_count, required_capacity_bytes)
    if s.min_groups > s.max_groups:
        return s.out(0)
    floor = math.nan
    if latency_target_s > 0:
        floor = s.unloaded_latency()
        if floor > latency_target_s:
            return s.out(0, floor)
    hi = s.one_run()
    if hi == 0:
        return s.out(0, floor)
    if prec is None:
        return s.out(hi * s.step)
    pess, opt = s.at_precision(hi, with_count_low)
    if pess == 0:
        return s.out(0, floor)
    return s.out(pess * s.step, count_low=(opt or pess) * s.step)


class _EquivalenceSearch:
    """The state and stages of one ``equivalent_drive_count`` search (counts in groups of
    ``step`` drives; every count tried is recorded in ``tried``)."""

    def __init__(self, drive: Drive | ServiceModel, layout_for: Callable[[int], Layout] | Layout, workload: Workload, *,
                 target_iops: float, q: float, latency_target_s: float, group_width: int | None, drive_capacity_bytes: float,
                 duration_s: float, warmup_s: float, seed: int, reorder_window: int, max_drive_count: int,
                 iops_tolerance: float, max_host_ios: int, prec: Precision | None) -> None:
        if isinstance(layout_for, Layout):
            fixed = layout_for
            self.step = fixed.group_width
            self.layout_of: Callable[[int], Layout] = lambda n: fixed
        else:
            self.layout_of = layout_for
            self.step = group_width or 1
        self.max_groups = max_drive_count // self.step
        if self.max_groups < 1:
            raise InvalidInputError.one("max_drive_count", f"must hold at least one group of {self.step} drives, got {max_drive_count}")
        self.drive = drive
        if isinstance(drive, ServiceModel):
            self.model: ServiceModel | None = drive
            self.name, self.capacity = drive.drive_name, float(drive_capacity_bytes)
        else:
            self.model = None
            self.name, self.capacity = drive.name, float(drive.capacity_bytes)
        self.wl = replace(workload, target_iops=target_iops)
        self.target_iops, self.q, self.latency_target_s = target_iops, q, latency_target_s
        self.duration_s, self.warmup_s, self.seed, self.reorder_window = duration_s, warmup_s, seed, reorder_window
        self.max_drive_count, self.iops_tolerance, self.max_host_ios, self.prec = max_drive_count, iops_tolerance, max_host_ios, prec
        self.tried: list[tuple[int, float, float, bool]] = []
        self.results: dict[int, array.ArrayResult] = {}
        self.figures: dict[int, SimulatedFigures] = {}
        self.optimistic: dict[int, bool] = {}
        self.min_groups = 1
        self.capacity_count = 0

    def spec_for(self, n: int, wl_n: Workload, duration: float, warmup: float) -> array.ArraySpec:
        if self.model is None:
            assert isinstance(self.drive, Drive)
            return array_spec(self.drive, self.layout_of(n), n, wl_n, duration_s=duration, warmup_s=warmup, seed=self.seed,
                              reorder_window=self.reorder_window)
        return array.ArraySpec(layout=self.layout_of(n), drive_count=n, service_models=(self.model,), workload=wl_n,
                               duration_s=duration, warmup_s=warmup, seed=self.seed, drive_capacity_bytes=self.capacity,
                               reorder_window=self.reorder_window)

    def members_model(self) -> ServiceModel:
        return self.model if self.model is not None else member_service_models(self.drive, self.wl)[0]  # type: ignore[arg-type]

    def size_for_capacity(self, min_drive_count: int, required_capacity_bytes: float) -> None:
        """The fewest whole groups (at least the layout's smallest array: RAID 10, 4 drives) with the capacity."""
        step = self.step
        self.min_groups = max(1, -(-int(min_drive_count) // step))
        while self.min_groups <= self.max_groups and \
                usable_capacity_bytes(self.layout_of(self.min_groups * step), self.min_groups * step, self.capacity) < required_capacity_bytes:
            self.min_groups += 1
        self.capacity_count = self.min_groups * step if self.min_groups <= self.max_groups else 0

    def out(self, count: int, unloaded: float = math.nan, count_low: int | None = None) -> Equivalence:
        g = count // self.step
        return Equivalence(drive_name=self.name, layout_name=self.layout_of(max(count, self.step)).name, target_iops=self.target_iops,
                           latency_quantile=self.q, latency_target_s=self.latency_target_s, drive_count=count,
                           result=self.results.get(g) if count else None, tried=tuple(self.tried),
                           max_drive_count=self.max_drive_count, unloaded_latency_s=unloaded, capacity_drive_count=self.capacity_count,
                           drive_count_low=count if count_low is None else count_low,
                           figures=self.figures.get(g) if count else None)

    def unloaded_latency(self) -> float:
        """The latency at the quantile of one group nearly idle (1 % of one disk's rate)."""
        n = self.min_groups * self.step
        mo = self.members_model()
        rate = 0.01 * (hdd.random_iops(mo) if mo.mechanical else self.target_iops)
        r = array.simulate(self.spec_for(n, replace(self.wl, target_iops=rate),
                                         min(max(self.duration_s, 5000.0 / max(rate, 1e-9)), 3600.0), 0.0))
        return float(r.latency_percentile_s(self.q)) if r.latency_count() else math.inf

    def _window(self) -> tuple[float, float]:
        duration = capped_duration_s(self.duration_s, self.target_iops, self.max_host_ios)
        return duration, min(self.warmup_s, duration)

    def run(self, groups: int) -> bool:
        """One simulation of ``groups`` groups: kept up within the tolerance and under the latency target."""
        n = groups * self.step
        r = array.simulate(self.spec_for(n, self.wl, *self._window()))
        lat = r.latency_percentile_s(self.q) if r.latency_count() else math.inf
        ok = (not r.saturated and r.achieved_iops >= (1.0 - self.iops_tolerance) * self.target_iops
              and (self.latency_target_s <= 0 or (math.isfinite(lat) and lat <= self.latency_target_s)))
        self.tried.append((n, float(r.achieved_iops), float(lat), bool(ok)))
        if ok:
            self.results[groups] = r
        return ok

    def one_run(self) -> int:
        """The one-run search: doubling from half the utilisation bound (every member busy 100 % at
        its unloaded random rate; never below the capacity), then bisection. 0 when no count up to
        the cap passes."""
        mo = self.members_model()
        if mo.mechanical:
            per_drive = hdd.random_iops(mo, int(self.wl.mean_io_bytes))
            member_ios = self.wl.read_fraction + self.wl.write_fraction * self.layout_of(self.step).small_write_penalty()
            g = int(0.5 * self.target_iops * member_ios / per_drive / self.step)
        else:
            g = 1
        g = max(self.min_groups, min(self.max_groups, g))
        lo, hi = self.min_groups - 1, 0
        while True:
            if self.run(g):
                hi = g
                break
            lo = g
            if g >= self.max_groups:
                break
            g = min(2 * g, self.max_groups)
        return _bisect(self.run, lo, hi) if hi else 0

    def run_figures(self, groups: int) -> bool:
        """``groups`` groups at the precision: passes at the pessimistic end of the intervals (and
        records whether it passes at the optimistic end)."""
        from . import performance  # noqa: PLC0415 (performance is below simulation; imported where used)

        assert isinstance(self.drive, Drive) and self.prec is not None
        n = groups * self.step
        duration, warmup = self._window()
        bound = performance.iops_upper_bound(self.drive, self.layout_of(n), n, self.wl)
        f = simulate_figures(self.spec_for(n, self.wl, duration, warmup), latency_percentile=100.0 * self.q,
                             simulated_s=duration, upper_bound_iops=bound, precision=self.prec)
        self.figures[groups] = f
        lat_hi, lat_lo = f.latency_at_percentile_s.high_or_value, f.latency_at_percentile_s.low_or_value
        iops_lo, iops_hi = f.max_iops.low_or_value, f.max_iops.high_or_value
        target, lat_target = self.target_iops, self.latency_target_s
        ok = f.kept_up and iops_lo >= target and (lat_target <= 0 or lat_hi <= lat_target)
        self.optimistic[groups] = iops_hi >= target and (lat_target <= 0 or lat_lo <= lat_target)
        self.tried.append((n, float(f.max_iops.value), float(f.latency_at_percentile_s.value), bool(ok)))
        return ok

    def at_precision(self, hi: int, with_count_low: bool) -> tuple[int, int]:
        """The one-run count ``hi`` is the start; the counts either side are simulated at the
        precision, galloping (1, 2, 4 ... groups) then bisecting, first for the smallest count
        passing at the pessimistic end, then (``with_count_low``) below it for the smallest
        passing at the optimistic end (both monotone in the count, as the one-run search
        assumes). A few runs at the precision instead of a whole bisection: the interval is a few
        groups wide. Returns (pessimistic, optimistic) group counts, 0 for none (and 0 for the
        optimistic one when not searched)."""
        self.tried.clear()
        passes: dict[int, bool] = {}

        def pessimistic(g: int) -> bool:
            if g not in passes:
                passes[g] = self.run_figures(g)
            return passes[g]

        def optimistic_ok(g: int) -> bool:
            if g not in self.optimistic:
                pessimistic(g)
            return self.optimistic[g]

        pessimistic(hi)
        start = self._scaled(hi, self._interval_end(hi, high=False), self.max_groups) if self.figures[hi].kept_up else hi
        pess = _smallest_passing(pessimistic, start, self.min_groups - 1, self.max_groups)
        if pess == 0 or not with_count_low:
            return pess, 0
        return pess, _smallest_passing(optimistic_ok, self._scaled(pess, self._interval_end(pess, high=True), pess),
                                       self.min_groups - 1, pess)

    def _scaled(self, g: int, iops_at: float, ceil: int) -> int:
        # a disk array's sustained IOPS grow in proportion to its groups (every group the same
        # disks under the same share of the load), so the count whose interval end reaches the
        # target is about g x target / (that end at g): where the gallop starts, one simulation
        # at the precision from its answer, not a dozen; the test decides, the start only saves runs
        if not (iops_at > 0 and math.isfinite(iops_at)):
            return g
        return max(self.min_groups, min(ceil, math.ceil(g * self.target_iops / iops_at)))

    def _interval_end(self, g: int, high: bool) -> float:
        f = self.figures[g]
        return float(f.max_iops.high_or_value if high else f.max_iops.low_or_value)


def _smallest_passing(test: Callable[[int], bool], start: int, floor: int, ceil: int) -> int:
    """The smallest ``g`` in ``(floor, ceil]`` with ``test(g)`` (monotone: false below it, true
    from it), found from ``start`` by galloping away from it (1, 2, 4 ... steps) and bisecting
    the bracket; 0 when ``test(ceil)`` is false."""
    if test(start):
        lo, hi, d = floor, start, 1
        while hi - d > floor:
            if not test(hi - d):
                lo = hi - d
                break
            hi -= d
            d *= 2
    else:
        lo, d = start, 1
        hi = 0
        while lo < ceil:
            g = min(ceil, lo + d)
            if test(g):
                hi = g
                break
            lo, d = g, 2 * d
        if hi == 0:
            return 0
    return _bisect(test, lo, hi)


def _bisect(test: Callable[[int], bool], lo: int, hi: int) -> int:
    """The smallest ``g`` in ``(lo, hi]`` with ``test(g)``, given ``test(hi)`` and not ``test(lo)``
    (monotone), by bisection."""
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if test(mid):
            hi = mid
        else:
            lo = mid
    return hi
