"""Analytic write amplification of a page-mapped FTL: the planner's fast path.

Names. ``spare_fraction_of_raw`` is the FTL's spare: ``(T - U) / T``, spare NAND pages as a
fraction of the *raw* pages. It is not the catalog's ``Drive.spare_factor`` (spare NAND per byte
of *user* capacity, ``(T - U) / U``); convert with ``spare_fraction_of_raw = s / (1 + s)``. The
keyword ``spare_factor`` is still accepted by ``write_amplification`` as a deprecated alias of
``spare_fraction_of_raw`` (same quantity, spare / raw).

Notation (Desnoyers, "Analytic Modeling of SSD Write Performance", SYSTOR 2012; extended in ACM
TOS 10(2), 2014): ``T`` raw pages, ``U`` user pages, ``sf = spare_fraction_of_raw = (T - U) / T``,
``alpha = T / U = 1 / (1 - sf)``, ``Np`` pages per block.

* LRW / FIFO cleaning, uniform random writes::

      A = alpha / (alpha + W0(-alpha * exp(-alpha)))

  (``W0`` the principal branch of Lambert's W). Equivalently the valid fraction of a cleaned
  block ``u`` solves ``u = exp(-alpha (1 - u))`` and ``A = 1 / (1 - u)``.
* Greedy cleaning: greedy picks the emptiest block, and with finitely many pages per block the
  emptiest is emptier than the average block of the same age. Desnoyers' correction evaluates the
  LRW formula at ``alpha_greedy = k * alpha`` with ``k = 1 + 1/(2 Np)`` (as if every block held
  half a page more; greedy tends to LRW as ``Np -> inf``). Against this package's simulator the
  correction holds to 1.5% for spare fractions 0.02-0.5 and 64-256 pages per block (without it,
  greedy is up to 26% below LRW at Np = 64, sf = 0.02).
* Hot/cold (a fraction ``r`` of writes to a fraction ``f`` of the space) and any other
  independent per-page write probabilities ``p_j`` (Zipf) under LRW: every page slot is cleaned
  ``tau = T / A`` host writes after it was written and survives with probability
  ``exp(-p_j tau)``; each host write to a class therefore costs ``1 / (1 - exp(-p_j tau))``
  programs, and ``A`` solves ``A = sum_j h_j / (1 - exp(-h_j alpha / (s_j A)))`` with ``h_j``
  the class's share of writes and ``s_j`` its share of the space (uniform: ``h = s = 1`` gives
  the formula above). FIFO follows it exactly.
* Hot/cold under greedy (``wa_greedy_hotcold``): greedy does not clean in write order, it cleans
  whichever block is emptiest, so every region that is cleaned at all is cleaned at the same
  victim valid fraction ``u``. Two limits follow:

  - a region that is never written (``r = 1``: the cold data) never loses a valid page, greedy
    never picks its full blocks and it holds no spare: the written region cleans alone with all
    the spare, ``alpha_hot = (T - U_cold) / U_hot``, i.e. ``sf_hot = sf / (sf + f (1 - sf))``,
    and greedy's uniform formula applies there. Within 2.5% of the simulator.
  - with ``0 < r < 1`` the cold region *is* cleaned, at the same ``u``. If greedy kept hot and
    cold pages in separate blocks, each region would be an LRW pool with ``u = exp(-alpha_j
    (1 - u))``, equal ``u`` forces equal ``alpha_j``: greedy hands every region spare in
    proportion to its data and ``A`` is the uniform value (the *segregated* bound). With one
    write frontier (this FTL, most drives) host writes put hot and cold pages in the same block;
    if no block ever separated them every block would be a FIFO block and ``A`` the LRW class
    formula above (the *mixed* bound). Greedy separates them only partly: it parks blocks whose
    survivors are mostly cold. The *lineage* model (``wa_greedy_hotcold_lineage``) follows that:
    host blocks hold ``r`` hot pages, each cleaned block's survivors form the next generation's
    block with hot share ``x e^(-lh a) / u``, generation ``g`` lives ``a_g`` (valid fraction
    ``x e^(-lh a) + (1 - x) e^(-lc a) = u``) and is written at ``u^g`` pages per host write, so
    ``sum_g u^g a_g = alpha``. It ignores that a relocated block mixes the survivors of several
    victims, separates too well, and is 6-16% below the simulator. The model is the geometric
    mean ``sqrt(A_lineage * A_mixed)`` (both greedy-corrected, ``k alpha``; no fitted constant):
    within 6.6% of the simulator for hot shares 0.5-0.9, hot spaces 0.05-0.3, spare 0.05-0.3,
    64-256 pages per block, and within 9.4% at hot shares 0.95-0.99, where the simulator moves
    towards the mixed bound (docs/ssd-model.md, section "Greedy hot/cold").

Everything is numpy / pure Python (no scipy); ``tests/engine/test_wa.py`` checks ``W0`` against
its definition and the greedy hot/cold model against the FTL simulation (``ftl.py``) within 10%.
"""

from __future__ import annotations

import functools
import math

import numpy as np

from .errors import InvalidInputError, UnknownNameError, require_range

_INV_E = math.exp(-1.0)


def lambert_w0(x: float | np.ndarray) -> float | np.ndarray:
    """Principal branch W0 of Lambert's W (``w * exp(w) = x``, ``w >= -1``) for ``x >= -1/e``.

    Halley's iteration from a branch-point series (near ``-1/e``) or ``log1p`` (elsewhere);
    converges to machine precision in a few steps.
    """
    xa = np.asarray(x, dtype=np.float64)
    if np.any(np.isnan(xa)) or np.any(xa < -_INV_E - 1e-15):
        raise InvalidInputError.one("x", f"Lambert W0 needs x >= -1/e (~ -0.3679), got {x!r}")
    xa = np.maximum(xa, -_INV_E)
    p = np.sqrt(np.maximum(2.0 * (math.e * xa + 1.0), 0.0))
    near = p < 0.5
    w = np.where(near, -1.0 + p - p * p / 3.0 + 11.0 / 72.0 * p**3, np.log1p(np.maximum(xa, -0.3)))
    big = xa > 3.0
    lx = np.log(np.where(big, xa, 3.0))
    w = np.where(big, lx - np.log(lx), w)
    for _ in range(40):
        ew = np.exp(w)
        f = w * ew - xa
        wp1 = w + 1.0
        denom = ew * wp1 - (w + 2.0) * f / np.where(np.abs(wp1) < 1e-300, 1e-300, 2.0 * wp1)
        step = np.where(np.abs(denom) > 0, f / np.where(denom == 0, 1.0, denom), 0.0)
        w = w - step
        if np.all(np.abs(step) <= 1e-15 * (1.0 + np.abs(w))):
            break
    w = np.where(xa == -_INV_E, -1.0, w)
    return float(w) if np.ndim(w) == 0 else w


def _check_sf(spare_fraction_of_raw: float, field: str = "spare_fraction_of_raw") -> None:
    require_range(field, spare_fraction_of_raw, 0, 1, lo_open=True, hi_open=True, note="(spare pages / raw pages)")


def _check_np(pages_per_block: int) -> None:
    require_range("pages_per_block", pages_per_block, 1, integer=True)


def alpha_from_spare(spare_fraction_of_raw: float) -> float:
    """``alpha = T / U = 1 / (1 - sf)`` with ``sf`` the spare fraction of the raw pages."""
    _check_sf(spare_fraction_of_raw)
    return 1.0 / (1.0 - spare_fraction_of_raw)


def wa_lrw(spare_fraction_of_raw: float) -> float:
    """Desnoyers' LRW/FIFO write amplification for uniform random writes."""
    _check_sf(spare_fraction_of_raw)
    return _wa_lrw(float(spare_fraction_of_raw))


@functools.lru_cache(maxsize=4096)
def _wa_lrw(spare_fraction_of_raw: float) -> float:
    # a plan asks for the same few spare fractions thousands of times (every candidate, every year)
    a = alpha_from_spare(spare_fraction_of_raw)
    return float(a / (a + lambert_w0(-a * math.exp(-a))))


def greedy_k(pages_per_block: int) -> float:
    """Desnoyers' greedy correction factor ``k = 1 + 1 / (2 Np)``."""
    _check_np(pages_per_block)
    return 1.0 + 1.0 / (2.0 * pages_per_block)


def greedy_spare_fraction_of_raw(spare_fraction_of_raw: float, pages_per_block: int) -> float:
    """The spare fraction of raw at which the LRW formula gives greedy's write amplification: the
    one of ``alpha' = k * alpha``, i.e. ``1 - (1 - sf) / k``."""
    _check_sf(spare_fraction_of_raw)
    return 1.0 - (1.0 - spare_fraction_of_raw) / greedy_k(pages_per_block)


greedy_spare_factor = greedy_spare_fraction_of_raw  # deprecated name (spare / raw, as above)


def wa_greedy(spare_fraction_of_raw: float, pages_per_block: int) -> float:
    """Greedy cleaning, uniform random writes: LRW at ``alpha' = k * alpha``."""
    return wa_lrw(greedy_spare_fraction_of_raw(spare_fraction_of_raw, pages_per_block))


def wa_classes_lrw(spare_fraction_of_raw: float, write_shares: np.ndarray, space_shares: np.ndarray) -> float:
    """LRW write amplification for independent classes of pages: class ``j`` takes
    ``write_shares[j]`` of the writes on ``space_shares[j]`` of the user space (both sum to 1).

    Solves ``A = sum_j h_j / (1 - exp(-h_j alpha / (s_j A)))`` by bisection on ``A``.
    """
    a = alpha_from_spare(spare_fraction_of_raw)
    h = np.asarray(write_shares, dtype=np.float64)
    s = np.asarray(space_shares, dtype=np.float64)
    if h.shape != s.shape or h.ndim != 1 or h.size == 0:
        raise InvalidInputError.one("write_shares", "must be a 1-d array the same shape as space_shares")
    if np.any(h < 0) or np.any(s <= 0) or abs(h.sum() - 1.0) > 1e-6 or abs(s.sum() - 1.0) > 1e-6:
        raise InvalidInputError.one("write_shares", "shares must be >= 0 (space > 0) and each set must sum to 1")
    rate = h / s  # per-page write rate relative to uniform

    def g(A: float) -> float:
        x = rate * a / A
        with np.errstate(over="ignore", divide="ignore"):
            cost = np.where(h > 0, h / -np.expm1(-np.maximum(x, 1e-300)), s * A / a)
        # A page never written is still relocated once per log cycle: s_j * U pages per T / A.
        return float(cost.sum()) - A

    lo, hi = 1.0, 2.0
    while g(hi) > 0:
        hi *= 2.0
        if hi > 1e7:
            raise InvalidInputError.one("spare_fraction_of_raw", "write amplification diverges for this workload")
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        if g(mid) > 0:
            lo = mid
        else:
            hi = mid
        if hi - lo < 1e-12 * hi:
            break
    return 0.5 * (lo + hi)


def _check_hotcold(r: float, f: float) -> None:
    # each fraction under its own name (a bad r was once reported as hot_space_fraction)
    require_range("hot_space_fraction", f, 0, 1, lo_open=True, hi_open=True)
    require_range("hot_write_fraction", r, 0, 1)


def wa_hotcold_lrw(spare_fraction_of_raw: float, hot_write_fraction: float, hot_space_fraction: float) -> float:
    """LRW write amplification for hot/cold traffic: ``r`` of the writes to ``f`` of the space."""
    r, f = hot_write_fraction, hot_space_fraction
    _check_hotcold(r, f)
    _check_sf(spare_fraction_of_raw)
    sf, r, f = _resolved_hotcold(float(spare_fraction_of_raw), float(r), float(f))
    return wa_classes_lrw(sf, np.array([r, 1.0 - r]), np.array([f, 1.0 - f]))


def spare_fraction_of_raw_without_static(spare_fraction_of_raw: float, static_space_fraction: float) -> float:
    """The spare fraction of raw seen by the written part of the space when a share
    ``static_space_fraction`` of the user pages is never rewritten: greedy never cleans their
    full blocks, so they take ``static * U`` raw pages and no spare. ``(T - U) / (T - static U)``
    = ``sf / (sf + (1 - static)(1 - sf))``."""
    _check_sf(spare_fraction_of_raw)
    sf, z = float(spare_fraction_of_raw), float(static_space_fraction)
    require_range("static_space_fraction", z, 0, 1, hi_open=True)
    return sf / (sf + (1.0 - z) * (1.0 - sf))


def wa_greedy_hotcold(spare_fraction_of_raw: float, pages_per_block: int, hot_write_fraction: float,
                      hot_space_fraction: float) -> float:
    """Greedy cleaning, one write frontier, ``r`` of the writes to ``f`` of the space.

    * A region with no writes (``r = 1`` or ``r = 0``) is static: excluded, and the written region
      runs greedy's uniform formula at ``spare_fraction_of_raw_without_static``.
    * ``0 < r < 1``: the geometric mean of the lineage model (``wa_greedy_hotcold_lineage``:
      relocated blocks keep their victim's hot/cold mix, every block cleaned at one valid
      fraction) and the mixed bound (hot and cold pages share every block: the LRW class
      formula), both with the greedy correction (module docstring; docs/ssd-model.md
      "Greedy hot/cold").
    """
    _check_sf(spare_fraction_of_raw)
    _check_np(pages_per_block)
    r, f = float(hot_write_fraction), float(hot_space_fraction)
    _check_hotcold(r, f)
    return _wa_greedy_hotcold(float(spare_fraction_of_raw), int(pages_per_block), r, f)


def _block_age(x: float, lh: float, lc: float, u: float) -> float:
    """Age ``a`` (host writes / U) at which a block written with class-1 share ``x`` (rewrite rate
    ``lh`` per page per U host writes) and class-2 share ``1 - x`` (rate ``lc``) keeps ``u`` of its
    pages valid: ``x e^(-lh a) + (1 - x) e^(-lc a) = u``. Newton's method on the convex, decreasing
    ``log v(a) - log u`` from ``a = 0`` never overshoots."""
    lu = math.log(u)
    if x >= 1.0:
        return -lu / lh
    if x <= 0.0:
        return -lu / lc
    a = 0.0
    for _ in range(200):
        eh = x * math.exp(-lh * a)
        ec = (1.0 - x) * math.exp(-lc * a)
        v = eh + ec
        step = (math.log(v) - lu) * v / (lh * eh + lc * ec)
        a += step
        if step <= 1e-14 * (1.0 + a):
            break
    return a


def _lineage_raw_per_user(u: float, r: float, f: float) -> float:
    """Raw pages per user page that greedy needs to clean every block at valid fraction ``u``
    when each block keeps the hot/cold mix it was written with (the lineage model).

    Host blocks hold ``r`` hot pages; a block cleaned at ``u`` passes its survivors on as the next
    generation's block, whose hot share is ``x e^(-lh a) / u``. Generation ``g`` is written at
    ``u^g`` pages per host write and lives ``a_g`` (``_block_age``), so it holds ``u^g a_g`` raw
    pages per user page (Little's law); the sum over generations is the raw space, ``alpha``."""
    if u >= 1.0:
        return 1.0  # the limit as u -> 1: no spare at all
    lh, lc = r / f, (1.0 - r) / (1.0 - f)
    x, w, total = r, 1.0, 0.0
    for _ in range(100000):
        a = _block_age(x, lh, lc, u)
        x_next = x * math.exp(-lh * a) / u
        if abs(x_next - x) <= 1e-13:
            return total + w * a / (1.0 - u)  # the mix no longer changes: a geometric tail
        total += w * a
        w *= u
        x = min(1.0, max(0.0, x_next))
    return total


def wa_greedy_hotcold_lineage(spare_fraction_of_raw: float, pages_per_block: int, hot_write_fraction: float,
                              hot_space_fraction: float) -> float:
    """Greedy hot/cold write amplification if every relocated block kept the hot/cold mix of its
    victim's survivors (no mixing between victims): greedy cleans all blocks at one valid fraction
    ``u``, solved from ``sum_g u^g a_g = k alpha``. It separates hot from cold better than the
    simulator does (6-16% low), so it is the lower end of ``wa_greedy_hotcold``."""
    _check_sf(spare_fraction_of_raw)
    _check_np(pages_per_block)
    r, f = float(hot_write_fraction), float(hot_space_fraction)
    _check_hotcold(r, f)
    require_range("hot_write_fraction", r, 0, 1, lo_open=True, hi_open=True, note="for the lineage model")
    return _wa_lineage(float(spare_fraction_of_raw), int(pages_per_block), r, f)


@functools.lru_cache(maxsize=4096)
def _wa_lineage(sf: float, pages_per_block: int, r: float, f: float) -> float:
    target = greedy_k(pages_per_block) / (1.0 - sf)  # k alpha
    # Raw per user page falls as the cleaning threshold u rises; solve in t = log(1 / (1 - u))
    # (= log A) by the Illinois variant of regula falsi, bracketed: ~10 evaluations, not 60.
    def g(t: float) -> float:
        return _lineage_raw_per_user(-math.expm1(-t), r, f) - target

    lo, hi = 1e-9, 1.0
    g_lo, g_hi = g(lo), g(hi)
    if g_lo <= 0.0:  # so much spare that A < 1 + 1e-9: no root to bracket (the secant would leave t > 0)
        return math.exp(lo)
    while g_hi > 0.0:
        lo, g_lo = hi, g_hi
        hi *= 2.0
        g_hi = g(hi)
    side = 0
    t = hi
    for _ in range(100):
        t = (lo * g_hi - hi * g_lo) / (g_hi - g_lo)
        gt = g(t)
        if abs(gt) <= 1e-12 * target or hi - lo <= 1e-13 * hi:
            break
        if (gt > 0.0) == (g_lo > 0.0):
            lo, g_lo = t, gt
            if side == -1:
                g_hi *= 0.5
            side = -1
        else:
            hi, g_hi = t, gt
            if side == 1:
                g_lo *= 0.5
            side = 1
    return math.exp(t)


#: The smallest share of the space (or of the writes) the hot/cold formulas resolve: one page in
#: a billion (a 4 KiB page of a 4 TB drive). Any share validation accepts, down to a subnormal
#: 5e-324 and up to 1 - 1e-17, is computed at this resolution: a share below it (or within it of
#: 1) changes the write amplification by less than 1e-6, while ``1 - f``, ``r / f`` and ``exp``
#: of such ratios round to 1, infinity or overflow in floating point.
SHARE_RESOLUTION = 1e-9


def _resolved_hotcold(sf: float, r: float, f: float) -> tuple[float, float, float]:
    """``(sf, r, f)`` held inside the range the formulas compute exactly (``SHARE_RESOLUTION``)."""
    eps = SHARE_RESOLUTION
    f = min(max(f, eps), 1.0 - eps)
    if r >= 1.0 - eps:
        r = 1.0
    elif r <= eps:
        r = 0.0
    else:
        r = max(r, f) if r >= f else r
    sf = min(sf, 1.0 - 1e-6)  # a drive all spare: the lineage solve's log A would overflow; A is 1 within 1e-6 there
    return sf, r, f


@functools.lru_cache(maxsize=4096)
def _wa_greedy_hotcold(sf: float, pages_per_block: int, r: float, f: float) -> float:
    sf, r, f = _resolved_hotcold(sf, r, f)
    if r >= 1.0:
        return wa_greedy(spare_fraction_of_raw_without_static(sf, 1.0 - f), pages_per_block)
    if r <= 0.0:
        return wa_greedy(spare_fraction_of_raw_without_static(sf, f), pages_per_block)
    if abs(r - f) < 1e-12:
        return wa_greedy(sf, pages_per_block)
    lineage = _wa_lineage(sf, pages_per_block, r, f)
    mixed = wa_hotcold_lrw(greedy_spare_fraction_of_raw(sf, pages_per_block), r, f)
    return math.sqrt(lineage * mixed)


def zipf_classes(zipf_s: float, pages: int, *, bins: int = 4096) -> tuple[np.ndarray, np.ndarray]:
    """Write and space shares of a Zipf(s) popularity over ``pages`` pages, grouped into up to
    ``bins`` classes of pages with similar rates (exact for the top ranks, log-spaced after)."""
    n = int(pages)
    edges = np.unique(np.concatenate([np.arange(1, min(n, 256) + 1), np.geomspace(1, n + 1, bins).astype(np.int64)]))
    edges = edges[(edges >= 1) & (edges <= n + 1)]
    if edges[-1] != n + 1:
        edges = np.append(edges, n + 1)
    ranks = np.arange(1, n + 1, dtype=np.float64)
    w = ranks ** (-float(zipf_s))
    cw = np.concatenate([[0.0], np.cumsum(w)])
    h = (cw[edges[1:] - 1] - cw[edges[:-1] - 1]) / cw[-1]
    s = (edges[1:] - edges[:-1]).astype(np.float64) / n
    return h, s


def write_amplification(*, spare_fraction_of_raw: float | None = None, pages_per_block: int = 64,
                        policy: str = "greedy", hot_write_fraction: float = 1.0, hot_space_fraction: float = 1.0,
                        zipf_s: float | None = None, span_fraction: float = 1.0, sequential: bool = False,
                        window: int = 16, user_pages: int = 1 << 20, spare_factor: float | None = None) -> float:
    """The fast-path write amplification for a configuration.

    ``spare_fraction_of_raw``: ``(raw - user) / raw`` pages of the FTL (``spare_factor`` is the
    deprecated keyword for the same quantity; give one). ``policy``: ``fifo`` and ``windowed`` use
    the LRW formulas (windowed greedy over a window much smaller than the block count cleans the
    oldest blocks, like LRW: within 1% at a 16-block window); ``greedy`` applies the greedy
    correction, and for hot/cold traffic the greedy hot/cold model (``wa_greedy_hotcold``). For
    Zipf traffic the greedy result is an upper bound (greedy exploits the skew; the simulator
    measures ~28% less at s = 1). ``span_fraction`` < 1 (short-stroking, the rest trimmed) raises
    the spare fraction to ``1 - span (1 - sf)``. Sequential writes invalidate whole blocks: ``A = 1``.
    """
    if spare_fraction_of_raw is None and spare_factor is None:
        raise InvalidInputError.one("spare_fraction_of_raw", "is required (spare pages / raw pages, in (0, 1))")
    if spare_fraction_of_raw is not None and spare_factor is not None and spare_factor != spare_fraction_of_raw:
        raise InvalidInputError.one("spare_factor", "is the deprecated name of spare_fraction_of_raw; give one of them")
    field = "spare_fraction_of_raw" if spare_fraction_of_raw is not None else "spare_factor"
    sf0 = spare_fraction_of_raw if spare_fraction_of_raw is not None else spare_factor
    _check_sf(sf0, field)  # type: ignore[arg-type]
    _check_np(pages_per_block)
    if policy not in ("greedy", "windowed", "fifo"):
        raise UnknownNameError("policy", str(policy), ("greedy", "windowed", "fifo"))
    require_range("span_fraction", span_fraction, 0, 1, lo_open=True)
    if sequential:
        return 1.0
    sf = 1.0 - span_fraction * (1.0 - float(sf0))  # type: ignore[arg-type]
    if policy == "greedy" and zipf_s is None and hot_space_fraction < 1.0:
        return wa_greedy_hotcold(sf, pages_per_block, hot_write_fraction, hot_space_fraction)
    if policy == "greedy":
        sf = greedy_spare_fraction_of_raw(sf, pages_per_block)
    if zipf_s is not None:
        h, s = zipf_classes(zipf_s, max(1, int(user_pages * span_fraction)))
        return wa_classes_lrw(sf, h, s)
    if hot_space_fraction < 1.0:
        return wa_hotcold_lrw(sf, hot_write_fraction, hot_space_fraction)
    return wa_lrw(sf)
