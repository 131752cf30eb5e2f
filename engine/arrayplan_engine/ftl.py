"""A page-mapped flash translation layer over a scaled model of a drive's NAND.

The model
---------
``user_pages`` logical pages (one page = one mapping unit, 4 KiB for the drives in the catalog)
live on ``blocks`` erase blocks of ``pages_per_block`` pages. The raw pages are
``blocks * pages_per_block``; the spare is ``sf = spare_fraction_of_raw = 1 - user_pages /
raw_pages``, spare pages as a fraction of the *raw* pages (Desnoyers' ``alpha = raw / user = 1 /
(1 - sf)``). It is not the catalog's ``Drive.spare_factor``, spare NAND per byte of *user*
capacity ``s``: ``sf = s / (1 + s)``. ``spare_factor`` is accepted as the deprecated name of
``spare_fraction_of_raw`` (the same spare / raw quantity). Writes go to a single write frontier (host writes and
garbage-collection relocations share it, as in Desnoyers' simulator, so the LRW/FIFO analysis
applies exactly); a full block joins the victim structures; garbage collection starts when the
free-block count falls below ``gc_low_blocks`` and collects until it reaches ``gc_high_blocks``:

* ``greedy``: the full block with the fewest valid pages, found in O(1) amortised time from
  doubly linked lists bucketed by valid count (a block moves one bucket down per invalidation);
* ``windowed``: the fewest-valid block among the ``window`` oldest full blocks (windowed greedy,
  Hu et al. 2009);
* ``fifo``: the oldest full block (LRW).

TRIM unmaps a logical range: its pages become invalid at once, as if overwritten.

Workloads (each one page per host write): ``uniform`` over the written span, ``hotcold`` (a
fraction ``r`` of writes to a fraction ``f`` of the span), ``zipf`` (exponent ``s``, ranks
scattered over the span, sampled in O(1) with Walker's alias table) and ``sequential``.

Scale
-----
A real drive holds 10^7-10^8 mapping units; the model holds ``user_pages`` of them (2^14 - 2^22).
Write amplification of a page-mapped FTL depends on the spare fraction, the pages per block and the
workload's *shape* (fractions of writes and space), not on the number of blocks once there are
more than a few hundred (``tests/engine/test_ftl.py::test_scale_independence`` checks 2% between
16K and 256K pages). So a drive is modelled by keeping its spare fraction, pages per block and
workload fractions and scaling the page count down; each simulated page write stands for
``real_pages / user_pages`` real ones (``ssd.py`` turns that into time).

Implementation
--------------
Public functions validate and allocate; private ``@njit(cache=True, _nrt=False)`` kernels write into
preallocated arrays. All state is in numpy arrays (``FtlState``) so runs can be continued,
trimmed and resumed. Random numbers come from a splitmix64 stream seeded from an
``np.random.Generator``: the same seed gives the same run bit for bit. Memory is
``~8 bytes x raw pages`` (+12 bytes x user pages for Zipf): a 1M-page model needs ~9 MB.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Literal

import numpy as np
from numba import njit

from .errors import COUNT, InvalidInputError, UnknownNameError, Violation, check, check_range, require_range

Policy = Literal["greedy", "windowed", "fifo"]
GcPolicy = Literal["eager", "lazy"]
WorkloadKind = Literal["uniform", "hotcold", "zipf", "sequential"]

POLICIES: tuple[str, ...] = ("greedy", "windowed", "fifo")
GC_POLICIES: tuple[str, ...] = ("eager", "lazy")
WORKLOADS: tuple[str, ...] = ("uniform", "hotcold", "zipf", "sequential")

_POLICY_CODE = {"greedy": 0, "windowed": 1, "fifo": 2}
_WL_CODE = {"uniform": 0, "hotcold": 1, "zipf": 2, "sequential": 3}

MIN_SPARE_FRACTION_OF_RAW = 0.01
MAX_SPARE_FRACTION_OF_RAW = 0.9
MIN_SPARE_FACTOR, MAX_SPARE_FACTOR = MIN_SPARE_FRACTION_OF_RAW, MAX_SPARE_FRACTION_OF_RAW  # deprecated names
MIN_PAGES_PER_BLOCK = 4
MAX_PAGES_PER_BLOCK = 4096
MIN_USER_PAGES = 1024
MAX_USER_PAGES = 1 << 26
DEFAULT_WINDOW = 16

# Indices into the int64 scalar-state array shared by the kernels.
_OPEN, _WP, _FREE_HEAD, _FREE_COUNT, _RING_HEAD, _RING_COUNT, _MINB = 0, 1, 2, 3, 4, 5, 6
_HOST, _PROG, _READ, _ERASE, _SEQ, _FAIL, _TRIMS = 7, 8, 9, 10, 11, 12, 13
_NSC = 16

_FREE, _OPENB, _FULL = 0, 1, 2


# --------------------------------------------------------------------------------------------
# Configuration and workload descriptions
# --------------------------------------------------------------------------------------------
@dataclass(frozen=True, slots=True, kw_only=True)
class FtlConfig:
    """Geometry and garbage-collection policy of a scaled FTL model.

    ``spare_fraction_of_raw`` is ``1 - user_pages / raw_pages`` (spare / raw; default 0.1);
    ``blocks`` follows from it. ``spare_factor`` is its deprecated name: give either (both are
    set to the same value after construction). The free-block watermarks default to the minimum
    that guarantees progress (GC starts below 2 free blocks and stops at 2), which is what the
    analytic models assume; ``ssd.py`` sets them from the drive's eager/lazy trait.
    """

    user_pages: int = 1 << 16
    pages_per_block: int = 64
    spare_fraction_of_raw: float = None  # type: ignore[assignment]  # 0.1 unless given (or spare_factor)
    policy: str = "greedy"
    window: int = DEFAULT_WINDOW
    gc_low_blocks: int = 2
    gc_high_blocks: int = 2
    spare_factor: float = None  # type: ignore[assignment]  # deprecated name of spare_fraction_of_raw

    def __post_init__(self) -> None:
        new, old = self.spare_fraction_of_raw, self.spare_factor
        if new is not None and old is not None and new != old:
            raise InvalidInputError.one("ftl.spare_factor", f"is the deprecated name of spare_fraction_of_raw; give one, got {old!r} and {new!r}")
        value = new if new is not None else old if old is not None else 0.1
        object.__setattr__(self, "spare_fraction_of_raw", value)
        object.__setattr__(self, "spare_factor", value)

    @property
    def blocks(self) -> int:
        raw = self.user_pages / (1.0 - self.spare_fraction_of_raw)
        return math.ceil(raw / self.pages_per_block - 1e-9)

    @property
    def raw_pages(self) -> int:
        return self.blocks * self.pages_per_block

    @property
    def effective_spare_fraction_of_raw(self) -> float:
        """Spare fraction of the raw pages after rounding them up to whole blocks."""
        return 1.0 - self.user_pages / self.raw_pages

    @property
    def effective_spare_factor(self) -> float:
        """Deprecated name of ``effective_spare_fraction_of_raw``."""
        return self.effective_spare_fraction_of_raw


def validate_config(c: FtlConfig, prefix: str = "ftl") -> list[Violation]:
    v: list[Violation] = []
    check_range(v, f"{prefix}.user_pages", c.user_pages, MIN_USER_PAGES, MAX_USER_PAGES, integer=True)
    check_range(v, f"{prefix}.pages_per_block", c.pages_per_block, MIN_PAGES_PER_BLOCK, MAX_PAGES_PER_BLOCK, integer=True)
    check_range(v, f"{prefix}.spare_fraction_of_raw", c.spare_fraction_of_raw, MIN_SPARE_FRACTION_OF_RAW, MAX_SPARE_FRACTION_OF_RAW,
                note="(spare pages / raw pages; spare_factor / --spare-factor is its old name)")
    if c.policy not in POLICIES:
        raise UnknownNameError(f"{prefix}.policy", str(c.policy), POLICIES)
    check_range(v, f"{prefix}.window", c.window, 1, 4096, integer=True)
    if check_range(v, f"{prefix}.gc_low_blocks", c.gc_low_blocks, 2, integer=True):
        check_range(v, f"{prefix}.gc_high_blocks", c.gc_high_blocks, c.gc_low_blocks, integer=True, lo_name="gc_low_blocks")
    if not v:
        spare_blocks = c.blocks - math.ceil(c.user_pages / c.pages_per_block)
        if spare_blocks < c.gc_high_blocks + 2:
            v.append(Violation(
                field=f"{prefix}.spare_fraction_of_raw",
                reason=(f"leaves {spare_blocks} spare blocks, fewer than gc_high_blocks + 2 = {c.gc_high_blocks + 2}; "
                        "raise spare_fraction_of_raw or user_pages, or lower the watermarks"),
            ))
    return v


@dataclass(frozen=True, slots=True, kw_only=True)
class FtlWorkload:
    """Where host page writes land. ``span_fraction`` < 1 confines them to the first part of the
    logical space (short-stroking: the rest is never written, so it is extra spare area)."""

    kind: str = "uniform"
    hot_write_fraction: float = 0.9   # r: share of writes to the hot set (hotcold)
    hot_space_fraction: float = 0.1   # f: share of the span that is hot (hotcold)
    zipf_s: float = 1.0               # exponent (zipf)
    span_fraction: float = 1.0

    @property
    def label(self) -> str:
        if self.kind == "hotcold":
            return f"hotcold:{self.hot_write_fraction:g},{self.hot_space_fraction:g}"
        if self.kind == "zipf":
            return f"zipf:{self.zipf_s:g}"
        return self.kind


def validate_workload(w: FtlWorkload, prefix: str = "workload") -> list[Violation]:
    if w.kind not in WORKLOADS:
        raise UnknownNameError(f"{prefix}.kind", str(w.kind), WORKLOADS)
    v: list[Violation] = []

    def frac(name: str, value: float) -> None:
        check_range(v, f"{prefix}.{name}", value, 0, 1, lo_open=True)

    frac("span_fraction", w.span_fraction)
    if w.kind == "hotcold":
        frac("hot_write_fraction", w.hot_write_fraction)
        frac("hot_space_fraction", w.hot_space_fraction)
        if not v and not (w.hot_space_fraction < 1.0):
            v.append(Violation(field=f"{prefix}.hot_space_fraction", reason=f"must be < 1 for a hot/cold split, got {w.hot_space_fraction}"))
        if not v and w.hot_write_fraction < w.hot_space_fraction:
            v.append(Violation(field=f"{prefix}.hot_write_fraction",
                               reason=f"must be >= hot_space_fraction ({w.hot_space_fraction}), got {w.hot_write_fraction}"))
    if w.kind == "zipf":
        s = w.zipf_s
        check_range(v, f"{prefix}.zipf_s", s, 0, 4, lo_open=True)
    return v


def parse_workload(text: str, field: str = "workload") -> FtlWorkload:
    """``uniform``, ``sequential``, ``hotcold:R,F`` or ``zipf:S`` (the CLI's syntax)."""
    t = text.strip().lower()
    try:
        if t in ("uniform", "sequential"):
            w = FtlWorkload(kind=t)
        elif t.startswith("hotcold:"):
            r_text, f_text = t[len("hotcold:"):].split(",")
            w = FtlWorkload(kind="hotcold", hot_write_fraction=float(r_text), hot_space_fraction=float(f_text))
        elif t.startswith("zipf:"):
            w = FtlWorkload(kind="zipf", zipf_s=float(t[len("zipf:"):]))
        else:
            raise UnknownNameError(field, text, ("uniform", "sequential", "hotcold:R,F", "zipf:S"))
    except ValueError as exc:
        if isinstance(exc, InvalidInputError):
            raise
        raise InvalidInputError.one(field, f"must be uniform, sequential, hotcold:R,F (fractions) or zipf:S (exponent), got {text!r}") from None
    check(validate_workload(w, field))
    return w


# --------------------------------------------------------------------------------------------
# State
# --------------------------------------------------------------------------------------------
@dataclass(slots=True, eq=False)
class FtlState:
    """All mutable state of one FTL model, as numpy arrays the kernels update in place."""

    config: FtlConfig
    l2p: np.ndarray          # int32[user_pages]: physical page or -1
    p2l: np.ndarray          # int32[raw_pages]: logical page or -1 (invalid / erased)
    valid: np.ndarray        # int32[blocks]
    bstate: np.ndarray       # int8[blocks]: 0 free, 1 open, 2 full
    free_q: np.ndarray       # int32[blocks]: ring of erased blocks
    bhead: np.ndarray        # int32[pages_per_block + 1]: greedy bucket heads
    bnext: np.ndarray        # int32[blocks]
    bprev: np.ndarray        # int32[blocks]
    ring: np.ndarray         # int32[blocks]: full blocks in the order they filled (windowed, fifo)
    sc: np.ndarray           # int64[_NSC]: scalars
    rng: np.ndarray          # uint64[1]: splitmix64 state
    alias_key: tuple[float, float, int] | None = None
    alias_prob: np.ndarray = field(default_factory=lambda: np.zeros(1, np.float64))
    alias_idx: np.ndarray = field(default_factory=lambda: np.zeros(1, np.int32))

    @property
    def nbytes(self) -> int:
        arrays = (self.l2p, self.p2l, self.valid, self.bstate, self.free_q, self.bhead, self.bnext,
                  self.bprev, self.ring, self.sc, self.rng, self.alias_prob, self.alias_idx)
        return int(sum(a.nbytes for a in arrays))

    @property
    def counters(self) -> dict[str, int]:
        return {"host_writes": int(self.sc[_HOST]), "programs": int(self.sc[_PROG]),
                "reads": int(self.sc[_READ]), "erases": int(self.sc[_ERASE]), "trims": int(self.sc[_TRIMS])}

    @property
    def free_blocks(self) -> int:
        return int(self.sc[_FREE_COUNT])

    @property
    def valid_pages(self) -> int:
        return int(self.valid.sum())


def new_state(config: FtlConfig, *, seed: int | np.random.Generator = 0) -> FtlState:
    """A secure-erased drive: every block free, nothing mapped."""
    check(validate_config(config))
    rng = seed if isinstance(seed, np.random.Generator) else np.random.default_rng(seed)
    b, np_ = config.blocks, config.pages_per_block
    sc = np.zeros(_NSC, np.int64)
    st = FtlState(
        config=config,
        l2p=np.full(config.user_pages, -1, np.int32),
        p2l=np.full(b * np_, -1, np.int32),
        valid=np.zeros(b, np.int32),
        bstate=np.zeros(b, np.int8),
        free_q=np.arange(b, dtype=np.int32),
        bhead=np.full(np_ + 1, -1, np.int32),
        bnext=np.full(b, -1, np.int32),
        bprev=np.full(b, -1, np.int32),
        ring=np.zeros(b, np.int32),
        sc=sc,
        rng=np.array([rng.integers(0, 2**63, dtype=np.int64)], dtype=np.uint64),
    )
    sc[_FREE_COUNT] = b
    sc[_OPEN] = -1
    sc[_WP] = np_
    sc[_MINB] = np_
    return st


def _alias_table(weights: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Walker/Vose alias table (vectorised set-up, O(n))."""
    n = weights.size
    p = weights * (n / weights.sum())
    prob = np.ones(n, np.float64)
    alias = np.arange(n, dtype=np.int32)
    small = list(np.flatnonzero(p < 1.0))
    large = list(np.flatnonzero(p >= 1.0))
    p = p.copy()
    while small and large:
        s = small.pop()
        g = large[-1]
        prob[s] = p[s]
        alias[s] = g
        p[g] -= 1.0 - p[s]
        if p[g] < 1.0:
            large.pop()
            small.append(g)
    return prob, alias


def _prepare_workload(st: FtlState, w: FtlWorkload) -> tuple[int, int, int, float]:
    """(kind code, span pages, hot pages, hot write fraction); builds the Zipf alias table once."""
    span = max(1, round(w.span_fraction * st.config.user_pages))
    hot = 0
    if w.kind == "hotcold":
        hot = min(span - 1, max(1, round(w.hot_space_fraction * span)))
    if w.kind == "zipf":
        key = (float(w.zipf_s), float(w.span_fraction), span)
        if st.alias_key != key:
            ranks = np.random.default_rng(int(st.rng[0] % np.uint64(2**62))).permutation(span).astype(np.float64) + 1.0
            prob, alias = _alias_table(ranks ** (-float(w.zipf_s)))
            st.alias_prob, st.alias_idx, st.alias_key = prob, alias, key
    return _WL_CODE[w.kind], span, hot, float(w.hot_write_fraction)


# --------------------------------------------------------------------------------------------
# Kernels
# --------------------------------------------------------------------------------------------
@njit(cache=True, _nrt=False, inline="always")
def _next_u64(rng):
    z = rng[0] + np.uint64(0x9E3779B97F4A7C15)
    rng[0] = z
    z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return z ^ (z >> np.uint64(31))


@njit(cache=True, _nrt=False, inline="always")
def _uniform(rng):
    return np.float64(_next_u64(rng) >> np.uint64(11)) * 1.1102230246251565e-16


@njit(cache=True, _nrt=False, inline="always")
def _bucket_insert(b, v, bhead, bnext, bprev):
    h = bhead[v]
    bnext[b] = h
    bprev[b] = -1
    if h >= 0:
        bprev[h] = b
    bhead[v] = b


@njit(cache=True, _nrt=False, inline="always")
def _bucket_remove(b, v, bhead, bnext, bprev):
    p = bprev[b]
    n = bnext[b]
    if p >= 0:
        bnext[p] = n
    else:
        bhead[v] = n
    if n >= 0:
        bprev[n] = p


@njit(cache=True, _nrt=False, inline="always")
def _invalidate(ppn, np_, policy, p2l, valid, bstate, bhead, bnext, bprev, sc):
    blk = ppn // np_
    p2l[ppn] = -1
    v = valid[blk]
    valid[blk] = v - 1
    if policy == 0 and bstate[blk] == 2:
        _bucket_remove(blk, v, bhead, bnext, bprev)
        _bucket_insert(blk, v - 1, bhead, bnext, bprev)
        sc[6] = min(sc[6], v - 1)


@njit(cache=True, _nrt=False, inline="always")
def _append(lpn, np_, nblocks, policy, l2p, p2l, valid, bstate, free_q, bhead, bnext, bprev, ring, sc):
    """Program logical page ``lpn`` at the write frontier; open a fresh block when needed."""
    wp = sc[1]
    if wp >= np_:
        blk = free_q[sc[2]]
        sc[2] = (sc[2] + 1) % nblocks
        sc[3] -= 1
        bstate[blk] = 1
        sc[0] = blk
        wp = 0
    blk = sc[0]
    ppn = blk * np_ + wp
    p2l[ppn] = lpn
    l2p[lpn] = ppn
    valid[blk] += 1
    wp += 1
    sc[1] = wp
    sc[8] += 1
    if wp == np_:  # the block is full: it becomes a GC candidate
        bstate[blk] = 2
        v = valid[blk]
        if policy == 0:
            _bucket_insert(blk, v, bhead, bnext, bprev)
            sc[6] = min(sc[6], v)
        else:
            ring[(sc[4] + sc[5]) % nblocks] = blk
            sc[5] += 1


@njit(cache=True, _nrt=False, inline="always")
def _select_victim(np_, nblocks, policy, window, valid, bhead, bnext, bprev, ring, sc):
    if policy == 0:
        m = sc[6]
        while m <= np_ and bhead[m] < 0:
            m += 1
        if m > np_:
            return -1
        sc[6] = m
        b = bhead[m]
        _bucket_remove(b, m, bhead, bnext, bprev)
        return b
    count = sc[5]
    if count == 0:
        return -1
    head = sc[4]
    w = window if policy == 1 else 1
    w = min(w, count)
    best = 0
    bestv = valid[ring[head]]
    for i in range(1, w):
        v = valid[ring[(head + i) % nblocks]]
        if v < bestv:
            bestv = v
            best = i
    b = ring[(head + best) % nblocks]
    for i in range(best, 0, -1):  # close the gap: shift the older entries one place on
        ring[(head + i) % nblocks] = ring[(head + i - 1) % nblocks]
    sc[4] = (head + 1) % nblocks
    sc[5] = count - 1
    return b


@njit(cache=True, _nrt=False, inline="always")
def _collect_one(np_, nblocks, policy, window, l2p, p2l, valid, bstate, free_q, bhead, bnext, bprev, ring, sc):
    """Clean one victim: relocate its valid pages to the frontier, erase it. Returns the number
    of pages relocated, or -1 if no victim exists or the victim is entirely valid."""
    b = _select_victim(np_, nblocks, policy, window, valid, bhead, bnext, bprev, ring, sc)
    if b < 0:
        return -1
    moved = valid[b]
    base = b * np_
    if moved > 0:
        for p in range(np_):
            lpn = p2l[base + p]
            if lpn >= 0:
                p2l[base + p] = -1
                _append(lpn, np_, nblocks, policy, l2p, p2l, valid, bstate, free_q, bhead, bnext, bprev, ring, sc)
        sc[9] += moved
    valid[b] = 0
    bstate[b] = 0
    free_q[(sc[2] + sc[3]) % nblocks] = b
    sc[3] += 1
    sc[10] += 1
    if moved >= np_:
        # No progress. Greedy's emptiest block is full only if every block is: a dead end.
        # FIFO / windowed may meet a full block (old cold data) and go on to the next one.
        if policy == 0:
            sc[12] = 1
        else:
            sc[14] += 1
            if sc[14] > nblocks:
                sc[12] = 1
    else:
        sc[14] = 0
    return moved


@njit(cache=True, _nrt=False, inline="always")
def _next_lpn(wl, span, hot, r, rng, alias_prob, alias_idx, sc):
    if wl == 0:
        return np.int64(_uniform(rng) * span)
    if wl == 1:
        if _uniform(rng) < r:
            return np.int64(_uniform(rng) * hot)
        return hot + np.int64(_uniform(rng) * (span - hot))
    if wl == 2:
        i = np.int64(_uniform(rng) * span)
        if _uniform(rng) < alias_prob[i]:
            return i
        return np.int64(alias_idx[i])
    lpn = sc[11]
    if lpn >= span:
        lpn = 0
    sc[11] = lpn + 1
    return lpn


@njit(cache=True, _nrt=False, inline="always")
def _gc_params(ipar):
    """The kernels' FTL parameters from ``ipar`` (as ``_write_kernel``'s): policy, window,
    gc_low, gc_high, wl, span, hot, np, blocks. (Read once before a kernel's loop: the loop
    writes arrays, so LLVM would reload them from ``ipar`` at every write.)"""
    return ipar[2], ipar[3], ipar[4], ipar[5], ipar[6], ipar[7], ipar[8], ipar[9], ipar[10]


@njit(cache=True, _nrt=False, inline="always")
def _host_write(l2p, p2l, valid, bstate, free_q, bhead, bnext, bprev, ring, sc, rng, alias_prob, alias_idx, hot_r,
                policy, window, gc_low, gc_high, wl, span, hot, np_, nblocks):
    """One host page write: the workload's next page, its old copy invalidated, cleaning up to
    the high mark first when free blocks are below the low one, the page appended. Returns
    False, with ``sc[12]`` set, when cleaning can free no block."""
    lpn = _next_lpn(wl, span, hot, hot_r, rng, alias_prob, alias_idx, sc)
    old = l2p[lpn]
    if old >= 0:
        _invalidate(old, np_, policy, p2l, valid, bstate, bhead, bnext, bprev, sc)
    if sc[3] < gc_low and sc[1] >= np_:
        while sc[3] < gc_high:
            if _collect_one(np_, nblocks, policy, window, l2p, p2l, valid, bstate, free_q,
                            bhead, bnext, bprev, ring, sc) < 0 or sc[12] != 0:
                sc[12] = 1
                return False
    _append(lpn, np_, nblocks, policy, l2p, p2l, valid, bstate, free_q, bhead, bnext, bprev, ring, sc)
    sc[7] += 1
    return True


@njit(cache=True, _nrt=False)
def _write_kernel(l2p, p2l, valid, bstate, free_q, bhead, bnext, bprev, ring, sc, rng,
                  alias_prob, alias_idx, ipar, hot_r, out):
    """``ipar``: n_host, interval, policy, window, gc_low, gc_high, wl, span, hot, np, blocks.
    ``out[k] = (host writes, programs, relocation reads, erases)`` of interval ``k``."""
    n_host = ipar[0]
    interval = ipar[1]
    policy, window, gc_low, gc_high, wl, span, hot, np_, nblocks = _gc_params(ipar)
    k = 0
    h0 = sc[7]
    p0 = sc[8]
    r0 = sc[9]
    e0 = sc[10]
    for i in range(n_host):
        if not _host_write(l2p, p2l, valid, bstate, free_q, bhead, bnext, bprev, ring, sc, rng, alias_prob, alias_idx,
                           hot_r, policy, window, gc_low, gc_high, wl, span, hot, np_, nblocks):
            return i
        if (i + 1) % interval == 0 and k < out.shape[0]:
            out[k, 0] = sc[7] - h0
            out[k, 1] = sc[8] - p0
            out[k, 2] = sc[9] - r0
            out[k, 3] = sc[10] - e0
            h0 = sc[7]
            p0 = sc[8]
            r0 = sc[9]
            e0 = sc[10]
            k += 1
    return n_host


@njit(cache=True, _nrt=False)
def _trim_kernel(l2p, p2l, valid, bstate, bhead, bnext, bprev, sc, lo, hi, np_, policy):
    n = 0
    for lpn in range(lo, hi):
        old = l2p[lpn]
        if old >= 0:
            _invalidate(old, np_, policy, p2l, valid, bstate, bhead, bnext, bprev, sc)
            l2p[lpn] = -1
            n += 1
    sc[13] += n
    return n


@njit(cache=True, _nrt=False)
def _timed_kernel(l2p, p2l, valid, bstate, free_q, bhead, bnext, bprev, ring, sc, rng,
                  alias_prob, alias_idx, ipar, fpar, out_sec, lat):
    """Closed-loop timed run: host page writes as fast as the drive allows for ``duration_s``.

    ``fpar``: hot_r, front_s (front-end time per simulated host write), back_s (back-end time per
    host write), reloc_s (back-end time per relocated page), erase_s (per erase), duration_s,
    ios_per_write (real IOs per simulated write), queue_depth, smoothing (simulated writes over
    which an eager drive spreads its GC work), foreground (1 = lazy: GC stalls the host),
    reloc_front_s.

    A relocation costs ``reloc_s`` in the back end and ``reloc_front_s`` (firmware bookkeeping) in
    the front end. Eager: each write pays ``1 / smoothing`` of the outstanding GC work of each
    resource (a first-order low-pass: background cleaning at the pace the writes need, no
    stalls) and takes as long as the busier resource. Lazy: the whole burst stalls the host.

    ``out_sec[t] = (IOs completed, programs, relocation reads, erases, GC back-end seconds)`` of
    second ``t``; ``lat[j]`` the latency of the slowest real IO of simulated write ``j``.
    Returns the number of simulated host writes."""
    policy, window, gc_low, gc_high, wl, span, hot, np_, nblocks = _gc_params(ipar)
    hot_r = fpar[0]
    front_s = fpar[1]
    back_s = fpar[2]
    reloc_s = fpar[3]
    erase_s = fpar[4]
    duration = fpar[5]
    scale = fpar[6]
    qd = fpar[7]
    smooth_w = 1.0 / fpar[8] if fpar[8] > 1.0 else 1.0
    foreground = fpar[9] > 0.5
    nsec = out_sec.shape[0]
    reloc_front_s = fpar[10]
    t = 0.0
    debt = 0.0
    debt_f = 0.0
    base_dt = max(back_s, front_s)
    j = 0
    maxj = lat.shape[0]
    while t < duration and j < maxj:
        p0 = sc[8]
        r0 = sc[9]
        e0 = sc[10]
        if not _host_write(l2p, p2l, valid, bstate, free_q, bhead, bnext, bprev, ring, sc, rng, alias_prob, alias_idx,
                           hot_r, policy, window, gc_low, gc_high, wl, span, hot, np_, nblocks):
            return j
        nreloc = sc[9] - r0
        nerase = sc[10] - e0
        gc = nreloc * reloc_s + nerase * erase_s
        gc_front = nreloc * reloc_front_s
        stall = 0.0
        if foreground:
            stall = max(gc_front, gc)
            dt = stall + base_dt
        else:
            debt += gc
            debt_f += gc_front
            pay = debt * smooth_w
            debt -= pay
            pay_f = debt_f * smooth_w
            debt_f -= pay_f
            busy = back_s + pay
            busy_f = front_s + pay_f
            dt = max(busy_f, busy)
        t0 = t + stall
        t1 = t + dt
        active = t1 - t0
        sec = int(t0)
        while sec < nsec and sec < t1:
            a = t0 if t0 > sec else float(sec)
            b = t1 if t1 < sec + 1.0 else float(sec + 1)
            if b > a:
                out_sec[sec, 0] += scale * (b - a) / active
            sec += 1
        s_end = int(t1)
        if s_end >= nsec:
            s_end = nsec - 1
        out_sec[s_end, 1] += sc[8] - p0
        out_sec[s_end, 2] += nreloc
        out_sec[s_end, 3] += nerase
        s_gc = int(t)
        if s_gc < nsec:
            out_sec[s_gc, 4] += gc
        lat[j] = stall + qd * active / scale
        t = t1
        j += 1
    return j


# --------------------------------------------------------------------------------------------
# Public operations
# --------------------------------------------------------------------------------------------
def _ipar(st: FtlState, n_host: int, interval: int, code: tuple[int, int, int, float]) -> np.ndarray:
    c = st.config
    wl, span, hot, _ = code
    return np.array([n_host, interval, _POLICY_CODE[c.policy], c.window, c.gc_low_blocks, c.gc_high_blocks,
                     wl, span, hot, c.pages_per_block, c.blocks], dtype=np.int64)


def write(st: FtlState, workload: FtlWorkload, n_host_writes: int, *, interval: int | None = None) -> np.ndarray:
    """Apply ``n_host_writes`` page writes; returns ``int64[n_intervals, 4]``: host writes,
    programs (host + relocation), relocation reads and erases per ``interval`` host writes."""
    check(validate_workload(workload))
    COUNT.require("n_host_writes", n_host_writes)
    if interval is None:
        interval = max(1, n_host_writes)
    require_range("interval", interval, 1, integer=True)
    code = _prepare_workload(st, workload)
    out = np.zeros((n_host_writes // interval, 4), np.int64)
    done = _write_kernel(st.l2p, st.p2l, st.valid, st.bstate, st.free_q, st.bhead, st.bnext, st.bprev, st.ring,
                         st.sc, st.rng, st.alias_prob, st.alias_idx, _ipar(st, n_host_writes, interval, code), code[3], out)
    if st.sc[_FAIL]:
        raise InvalidInputError.one("ftl.spare_fraction_of_raw", f"garbage collection found no block to reclaim after {done} writes; raise the spare fraction")
    return out


def fill_sequential(st: FtlState, *, span_fraction: float = 1.0) -> None:
    """Write every logical page of the span once, in order (the reviewers' sequential fill)."""
    span = max(1, round(span_fraction * st.config.user_pages))
    st.sc[_SEQ] = 0
    write(st, FtlWorkload(kind="sequential", span_fraction=span_fraction), span)


def trim(st: FtlState, start_page: int, page_count: int) -> int:
    """Unmap ``page_count`` logical pages from ``start_page`` (TRIM / format). Returns the number
    of pages that were mapped."""
    u = st.config.user_pages
    require_range("trim.start_page", start_page, 0, u, integer=True, hi_name="user_pages")
    require_range("trim.page_count", page_count, 0, u - start_page, integer=True, hi_name="user_pages - start_page")
    c = st.config
    return int(_trim_kernel(st.l2p, st.p2l, st.valid, st.bstate, st.bhead, st.bnext, st.bprev, st.sc,
                            start_page, start_page + page_count, c.pages_per_block, _POLICY_CODE[c.policy]))


@dataclass(frozen=True, slots=True, kw_only=True)
class TimedCosts:
    """Per-simulated-write costs for ``timed_run`` (seconds of the real drive)."""

    controller_s: float        # front-end (command) time per simulated host write
    nand_s: float              # back-end (data path / NAND) time per simulated host write
    relocation_s: float        # back-end time per relocated simulated page
    erase_s: float             # back-end time per simulated erase
    ios_per_write: float       # real IOs per simulated host write
    queue_depth: float = 32.0
    foreground_gc: bool = False   # lazy: GC bursts stall the host
    smoothing_writes: float = 256.0  # eager: writes over which GC work is spread
    relocation_front_s: float = 0.0  # front-end (firmware) time per relocated simulated page


def timed_run(st: FtlState, workload: FtlWorkload, costs: TimedCosts, *, duration_s: float) -> tuple[np.ndarray, np.ndarray]:
    """Run host writes closed-loop for ``duration_s`` seconds of drive time.

    Returns ``(per_second, latency_s)``: ``per_second`` is float64[duration, 5] (IOs, programs,
    relocation reads, erases, GC NAND seconds) and ``latency_s`` one value per simulated write.
    """
    check(validate_workload(workload))
    require_range("duration_s", duration_s, 1, 1e6, unit="seconds")
    code = _prepare_workload(st, workload)
    nsec = math.ceil(duration_s)
    per_write = max(costs.controller_s, costs.nand_s)
    if not (per_write > 0 and costs.ios_per_write > 0):
        raise InvalidInputError.one("costs", "controller_s or nand_s and ios_per_write must be > 0")
    max_writes = int(min(5e7, duration_s / per_write + 16))
    out = np.zeros((nsec, 5), np.float64)
    lat = np.zeros(max_writes, np.float64)
    fpar = np.array([code[3], costs.controller_s, costs.nand_s, costs.relocation_s, costs.erase_s, float(duration_s),
                     costs.ios_per_write, costs.queue_depth, costs.smoothing_writes, 1.0 if costs.foreground_gc else 0.0,
                     costs.relocation_front_s])
    n = _timed_kernel(st.l2p, st.p2l, st.valid, st.bstate, st.free_q, st.bhead, st.bnext, st.bprev, st.ring,
                      st.sc, st.rng, st.alias_prob, st.alias_idx, _ipar(st, 0, 1, code), fpar, out, lat)
    if st.sc[_FAIL]:
        raise InvalidInputError.one("ftl.spare_fraction_of_raw", "garbage collection found no block to reclaim; raise the spare fraction")
    return out, lat[:n]


# --------------------------------------------------------------------------------------------
# Run to steady state
# --------------------------------------------------------------------------------------------
@dataclass(frozen=True, slots=True, kw_only=True)
class FtlResult:
    """Outcome of ``simulate``: measured and modelled write amplification and the history."""

    config: FtlConfig
    workload: FtlWorkload
    wa_measured: float
    wa_model: float
    spare_fraction_of_raw: float    # (raw - user) / raw pages of the model (not the catalog's spare / user)
    steady: bool
    host_writes: int
    interval_host_writes: int
    wa_over_time: np.ndarray        # WA of each interval (after the sequential fill)
    programs: np.ndarray            # per interval
    reads: np.ndarray               # per interval (relocation reads)
    erases: np.ndarray              # per interval
    memory_bytes: int

    def summary(self) -> dict[str, object]:
        return {
            "wa_measured": round(self.wa_measured, 4),
            "wa_model": round(self.wa_model, 4),
            "wa_error": round(self.wa_measured / self.wa_model - 1.0, 4),
            "spare_fraction_of_raw": self.spare_fraction_of_raw,
            "pages_per_block": self.config.pages_per_block,
            "policy": self.config.policy,
            "workload": self.workload.label,
            "user_pages": self.config.user_pages,
            "blocks": self.config.blocks,
            "steady": self.steady,
            "host_writes": self.host_writes,
            "memory_bytes": self.memory_bytes,
        }


def simulate(config: FtlConfig, workload: FtlWorkload = FtlWorkload(), *, seed: int = 0,
             tolerance: float = 0.005, max_drive_writes: float = 40.0, precondition: bool = True) -> FtlResult:
    """Fill the drive sequentially, then write until write amplification is steady.

    Intervals are a quarter of the user pages; the run is steady when the mean WA of the last four
    intervals (one drive write) differs from the four before by less than ``tolerance``, after
    at least three drive writes; ``wa_measured`` is that last mean. ``wa_model`` is the analytic
    fast path (``wa.py``) for the same configuration and workload.
    """
    from . import wa as wa_mod

    check(validate_config(config) + validate_workload(workload))
    require_range("tolerance", tolerance, 0, 0.5, lo_open=True, hi_open=True)
    require_range("max_drive_writes", max_drive_writes, 3, 1000)
    st = new_state(config, seed=seed)
    if precondition:
        fill_sequential(st, span_fraction=workload.span_fraction)
    u = config.user_pages
    interval = max(1, u // 4)
    chunk = 4
    rows: list[np.ndarray] = []
    steady = False
    max_chunks = int(max_drive_writes)
    for c in range(max_chunks):
        rows.append(write(st, workload, interval * chunk, interval=interval))
        if c >= 5:
            hist = np.concatenate(rows)
            wa_i = hist[:, 1] / hist[:, 0]
            last = wa_i[-chunk:].mean()
            prev = wa_i[-2 * chunk:-chunk].mean()
            if abs(last / prev - 1.0) < tolerance:
                steady = True
                break
    hist = np.concatenate(rows)
    wa_i = hist[:, 1] / np.maximum(hist[:, 0], 1)
    wa_measured = float(hist[-chunk:, 1].sum() / hist[-chunk:, 0].sum())
    model = wa_mod.write_amplification(
        spare_fraction_of_raw=config.spare_fraction_of_raw, pages_per_block=config.pages_per_block, policy=config.policy,
        hot_write_fraction=workload.hot_write_fraction if workload.kind == "hotcold" else 1.0,
        hot_space_fraction=workload.hot_space_fraction if workload.kind == "hotcold" else 1.0,
        zipf_s=workload.zipf_s if workload.kind == "zipf" else None,
        span_fraction=workload.span_fraction, sequential=workload.kind == "sequential",
        window=config.window, user_pages=u,
    )
    return FtlResult(
        config=config, workload=workload, wa_measured=wa_measured, wa_model=float(model),
        spare_fraction_of_raw=config.spare_fraction_of_raw, steady=steady, host_writes=int(hist[:, 0].sum()),
        interval_host_writes=interval, wa_over_time=wa_i, programs=hist[:, 1].copy(), reads=hist[:, 2].copy(),
        erases=hist[:, 3].copy(), memory_bytes=st.nbytes,
    )
