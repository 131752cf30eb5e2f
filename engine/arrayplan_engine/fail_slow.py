"""Fail-slow drives: a member that keeps working, slower.

Drives fail slow as well as stop: firmware bugs, read retries on worn NAND, a degraded link or
thermal throttling make one drive run at a fraction of its peers' speed for minutes to hours (The
Tail at Store, Hao et al., FAST'16; Perseus, Lu et al., FAST'23). A RAID stripe waits for its
slowest member, so one slow drive sets the array's tail while it lasts.

Two ways in (docs/array-model.md, "Fail-slow drives"):

* **Injected episodes** (``SlowEpisode``): member ``drive_index`` runs ``factor`` times slower
  (every time its model charges: command, data path, NAND programs and erases, cleaning, seeks)
  from ``start_s`` for ``duration_s`` of the simulated window. ``slow_specs`` cuts the window at
  the episodes' whole-second boundaries into replicas (``array.split_simulation``'s scheme: each
  piece warms up on its own, seeds spawned per piece) whose members are slowed where an episode
  covers the piece; ``array.merge_results`` adds them exactly.
* **Field rates** (``FIELD_RATES``): The Tail at Store measured, over 101 reported slow-drive
  occurrences in ~1.5 million drives, that a drive is more than 2x slower than its peers 0.2 %
  (disk) / 0.6 % (SSD) of the time, and a RAID group holds such a drive 1.5 % / 2.2 % of the
  time. ``slow_time_fraction`` turns that into the share of time an array of ``groups`` groups
  has a slow member; ``mixture_percentile_s`` is a latency percentile over time: the mixture of
  the array's latency distribution without a slow member and with one (the first member of
  group 0 slowed by ``FIELD_SLOWDOWN``), weighted by time and by the IOs each state completes.

The slowdown of a field episode is taken at the study's threshold, 2x: the study reports how
often drives are more than 2x slower, not by how much, so the tail with fail-slow drives is a
lower bound of what the field sees.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

import numpy as np

from .array import ArrayResult, ArraySpec, _kind_index, latency_bucket_edges_s
from .errors import InvalidInputError, Range, Violation, check
from .service_time import ServiceModel

#: Model fields that are times (seconds or seconds per byte/page): a slow drive takes ``factor``
#: times each.
_TIME_FIELDS = ("read_fixed_s", "read_per_byte_s", "write_fixed_s", "write_per_byte_s", "full_rotation_s", "average_seek_s",
                "full_stroke_seek_s", "host_page_s", "relocation_page_s", "erase_page_s", "slc_page_s", "fold_page_s",
                "write_buffer_s", "posted_write_fixed_s", "posted_write_per_byte_s", "nand_program_s", "nand_erase_s",
                "nand_suspend_s", "read_array_s")
FACTOR = Range(lo=1, hi=1000, note="(times slower than its peers)")
#: The study's definition of a slow drive: more than 2x slower than its peers.
FIELD_SLOWDOWN = 2.0


@dataclass(frozen=True, slots=True, kw_only=True)
class FieldRate:
    """The Tail at Store (FAST'16), section 3: share of time a drive, and a RAID group, has a
    drive more than 2x slower than its peers."""

    drive_slow_fraction: float
    group_slow_fraction: float
    source: str = "Hao et al., The Tail at Store, FAST'16, section 3 (slowdown > 2x)"


FIELD_RATES = {"hdd": FieldRate(drive_slow_fraction=0.002, group_slow_fraction=0.015),
               "ssd": FieldRate(drive_slow_fraction=0.006, group_slow_fraction=0.022)}


@dataclass(frozen=True, slots=True, kw_only=True)
class SlowEpisode:
    """Member ``drive_index`` (0-based, simulated members) runs ``factor`` times slower from
    ``start_s`` (seconds after the window starts) for ``duration_s`` (inf: to the window's end)."""

    drive_index: int
    factor: float
    start_s: float = 0.0
    duration_s: float = math.inf


def slowed_model(model: ServiceModel, factor: float) -> ServiceModel:
    """``model`` ``factor`` times slower: every time it charges is multiplied (the drive's
    capacities, watermarks and write amplification are its own and stay)."""
    FACTOR.require("factor", factor)
    return replace(model, **{name: getattr(model, name) * factor for name in _TIME_FIELDS})


def validate_episodes(members: int, duration_s: float, episodes: tuple[SlowEpisode, ...], prefix: str = "slow_drives") -> list[Violation]:
    """Each episode's member among the ``members`` simulated, factor, and start inside the
    ``duration_s`` window."""
    v: list[Violation] = []
    n = members
    for i, e in enumerate(episodes):
        Range(lo=0, hi=n - 1, integer=True, note=f"(a simulated member of the {n})").check(v, f"{prefix}[{i}].drive_index", e.drive_index)
        FACTOR.check(v, f"{prefix}[{i}].factor", e.factor)
        Range(lo=0, hi=duration_s, hi_open=True, unit="s", hi_name="duration").check(v, f"{prefix}[{i}].start_s", e.start_s)
        if e.duration_s != math.inf:  # inf: to the window's end
            Range(lo=0, lo_open=True, unit="s", note="(unset: to the window's end)").check(v, f"{prefix}[{i}].duration_s", e.duration_s)
    return v


def with_slow_members(spec: ArraySpec, factors: dict[int, float]) -> ArraySpec:
    """``spec`` with members slowed for its whole window (``{member index: factor}``)."""
    if not factors:
        return spec
    n = spec.simulated_drive_count
    models = list(spec.service_models if len(spec.service_models) == n else spec.service_models * n)
    for d, f in factors.items():
        models[d] = slowed_model(models[d], f)
    return replace(spec, service_models=tuple(models))


def slow_specs(spec: ArraySpec, episodes: tuple[SlowEpisode, ...]) -> list[ArraySpec]:
    """The window cut into pieces at the episodes' starts and ends (rounded out to whole seconds,
    so an episode covers whole pieces), each piece a replica (seeds from the spec's seed and the
    piece's index, as ``array.split_simulation``) with the members slowed that an episode covers.
    No episode: ``[spec]``. Merge the pieces' results with ``array.merge_results``."""
    check(validate_episodes(spec.simulated_drive_count, spec.duration_s, episodes))
    if not episodes:
        return [spec]
    if spec.rebuild_rate_bytes_per_s > 0:
        raise InvalidInputError.one("slow_drives", "cannot be combined with a rebuild (a rebuild is one process and is not split)")
    w0, w1 = spec.window_start_s, spec.window_start_s + spec.duration_s
    cuts = {w0, w1}
    for e in episodes:
        a = w0 + math.floor(e.start_s)
        b = w1 if math.isinf(e.duration_s) else min(w1, w0 + math.ceil(e.start_s + e.duration_s))
        cuts.update((a, b))
    bounds = sorted(c for c in cuts if w0 <= c <= w1)
    out = []
    for i, (a, b) in enumerate(zip(bounds, bounds[1:])):
        if b <= a:
            continue
        factors: dict[int, float] = {}
        for e in episodes:
            ea = w0 + math.floor(e.start_s)
            eb = w1 if math.isinf(e.duration_s) else w0 + math.ceil(e.start_s + e.duration_s)
            if ea < b and a < eb:
                factors[e.drive_index] = max(factors.get(e.drive_index, 1.0), e.factor)
        piece = replace(spec, window_start_s=float(a), duration_s=float(b - a), spawn_key=spec.spawn_key + (i,))
        out.append(with_slow_members(piece, factors))
    return out


def slow_time_fraction(kind: str, groups: int, rates: dict[str, FieldRate] = FIELD_RATES) -> float:
    """Share of time an array of ``groups`` RAID groups has a member more than 2x slower than its
    peers, at the field rates: ``1 - (1 - q_group) ** groups`` (groups independent)."""
    if kind not in rates:
        raise InvalidInputError.one("kind", f"must be one of {sorted(rates)}, got {kind!r}")
    Range(lo=1, integer=True).require("groups", groups)
    return 1.0 - (1.0 - rates[kind].group_slow_fraction) ** groups


def mixture_percentile_s(normal: ArrayResult, slow: ArrayResult, slow_fraction: float, q: float, kind: str = "all") -> float:
    """The ``q`` latency quantile over time of an array that spends ``slow_fraction`` of its time
    with a slow member (``slow``'s run) and the rest without (``normal``'s): the two latency
    histograms weighted by the time share and the IOs per second each state completes (an open
    loop offers the same rate in both; a closed loop completes fewer while slow)."""
    Range(lo=0, hi=1).require("slow_fraction", slow_fraction)
    Range(lo=0, hi=1).require("q", q)
    hn = _histogram(normal, kind)
    hs = _histogram(slow, kind)
    rn = hn.sum() / normal.duration_s
    rs = hs.sum() / slow.duration_s
    if rn + rs == 0:
        return math.nan
    wn = (1.0 - slow_fraction) * rn / hn.sum() if hn.sum() else 0.0
    ws = slow_fraction * rs / hs.sum() if hs.sum() else 0.0
    vmax = max(_max(normal, kind) if wn > 0 else 0.0, _max(slow, kind) if ws > 0 else 0.0)
    if q >= 1.0:
        return vmax  # the longest IO of the states the mixture holds, exactly
    h = wn * hn + ws * hs
    total = h.sum()
    c = np.cumsum(h) / total
    i = int(np.searchsorted(c, q * (1.0 - 1e-12)))
    edges = latency_bucket_edges_s()
    return float(min(0.5 * (edges[i] + edges[i + 1]), vmax))


def _histogram(r: ArrayResult, kind: str) -> np.ndarray:
    return np.asarray(r.latency_histograms[_kind_index(kind)], dtype=float)


def _max(r: ArrayResult, kind: str) -> float:
    return float(r.latency_percentile_s(1.0, kind))
