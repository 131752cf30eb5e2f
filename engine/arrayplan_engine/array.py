"""Discrete-event simulation of a drive array: host IOs -> member IOs -> per-drive FCFS queues.

The model (docs/array-model.md has the full statement and its sources):

* **Host arrivals.** Open loop: Poisson at ``workload.target_iops``. Closed loop
  (``target_iops == 0``): ``workload.queue_depth`` host IOs always outstanding, each re-issued the
  instant its predecessor completes (zero think time, as fio/Iometer at a queue depth).
* **Host IO -> member IOs** per ``layout.Layout``. Reads touch the stripe units they span. Writes
  of a whole stripe are full-stripe writes (k data + m parity, no reads); smaller writes are
  read-modify-write (read old data + surviving parity, then write) or reconstruct-write (read the
  data units not overwritten, then write), whichever needs fewer member reads, ties going to
  reconstruct-write as in Linux md (``raid5.c: handle_stripe_dirtying``: rmw only if
  ``rmw < rcw``). The writes of a small write are issued when its reads have completed (two
  phases). Mirrors write every surviving copy and read one: the copy whose drive can start the IO
  earliest (join-the-shortest-queue; ties rotate with the stripe row), like md's read balancing.
  Sequential writes coalesce into full stripes: each data unit is written as the stream fills it
  and the m parity units are written, without reads, by the IO that completes the stripe (a
  stripe cache holds the partial parity; the host IO is acknowledged when its own member writes
  complete). Parity rotates per row (md's left-symmetric layout: first parity at
  ``w - 1 - row % w``, data follows the parity units).
* **Drives** are FCFS queues with ``parallel_units`` servers. Because every member IO is submitted
  in global time order, its completion is known at submission (Lindley recursion):
  ``start = max(arrival, earliest unit free)``, ``completion = start + service(start)``. Service
  times come from ``service.ServiceModel``.
* **Cleaning as work (SSDs).** Each SSD member carries its own free-space state (a histogram of
  its erase blocks by valid pages, ``_age``): writes take free 4 KiB pages and pass through the
  drive's back end (one FCFS server per drive); cleaning takes the blocks with the fewest valid
  pages (greedy), relocates their valid pages and erases them, at the cost of wa.py's write
  amplification for the drive's fill, skew and policy.
  Eager drives clean in the back end's idle time in steps of one flash page and, when the pool
  falls below its low mark, make each write wait for its own pages' cleaning; lazy drives start
  cleaning in idle time only below their low mark and, when the pool runs out, stall while whole
  victim erase units are cleaned until the write fits. A write completes when both its command (unit) and its back-end work are done; a read
  whose die (a hash of its page) is being cleaned waits for the step. Sub-4 KiB writes read the
  page first. So a lightly loaded drive sees fresh latencies and a saturated one its steady
  state, from one mechanism; ``ssd.consistency_experiment`` is this kernel on a fresh drive.
  A QLC drive with an SLC write cache also counts its cache's free pages: a write's pages cost
  the cached page time while it has room and the direct-to-QLC time once it is full, and idle
  back-end time folds the cache into QLC in steps of one flash page (docs/ssd-model.md).
  Mechanical drives add seek (from the head's last position) + rotational delay; an optional
  SATF-like reordering approximation picks the shortest of several positioning draws when IOs
  are queued (``reorder_window``).
* **Fork-join.** A host IO completes when its last member IO completes.
* **Degraded mode and rebuild.** ``failed_drives`` members of the first group are missing. Reads
  of a missing unit read k surviving units of the stripe; writes skip missing members and
  reconstruct what they need. Rebuild reads k survivors (1 copy for mirrors) and writes the
  replacement(s) in ``rebuild_io_bytes`` chunks, at most ``rebuild_window`` chunks in flight and
  no faster than ``rebuild_rate_bytes_per_s``; its member IOs share the drives' FCFS queues with
  host IO. The drive returns to service when its last chunk is written.
* **Statistics** live in log-bucketed histograms (HDR-style: 128 sub-buckets per power of two of
  nanoseconds, < 0.4 % quantile error), so memory does not grow with the number of IOs, and
  replicas merge exactly by adding counts (``merge_results``).

Public API: ``ArraySpec`` -> ``simulate(spec) -> ArrayResult``; ``split_simulation(spec, parts)``
and ``merge_results(results)`` for fan-out. Drive models come from the catalog through
``simulation`` (``array_service_models``, ``member_service_models``): this module imports no drive model.
"""

from __future__ import annotations

import math
import threading
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any, NamedTuple

import numpy as np
from numba import config as numba_config
from numba import njit, types
from numba.extending import intrinsic

from .errors import InvalidInputError, Range, Violation, check, check_range, is_finite
from .event_heap import heap_push, heap_sift_down
from .layout import Layout, LayoutKind, group_count
from .service_time import ServiceModel
from .units import TB, MiB
from .workload import Workload

__all__ = [
    "LATENCY_BUCKET_COUNT",
    "ArrayResult",
    "ArraySpec",
    "latency_bucket_edges_s",
    "merge_results",
    "simulate",
    "split_simulation",
]

# -- histogram geometry (HDR-style, integer nanoseconds) ---------------------------------------
_SUB_BITS = 7  # 128 sub-buckets per power of two: bucket width <= 1/128 of its value
_SUB = 1 << _SUB_BITS
LATENCY_BUCKET_COUNT = _SUB * (64 - _SUB_BITS)  # covers 1 ns .. 2^63 ns
_COARSE_SHIFT = 4  # per-second histograms: 8 sub-buckets per power of two (<= 12.5 % wide)
_COARSE_COUNT = LATENCY_BUCKET_COUNT >> _COARSE_SHIFT

# -- the kernel's arrays: names and columns ------------------------------------------------------
# ``simulate`` builds every array the kernel reads or writes (``_KernelIn``, ``_KernelOut``; their
# docstrings are the table of fields, shapes and columns) and the kernel only runs events. Every
# column constant of those arrays is here, except the cleaning row's (``_K_*``, next section, with
# the free-space model it describes).
#
# histogram classes (rows of ``hist``, entries of ``lat_sum`` / ``lat_max``)
_H_ALL, _H_READ, _H_WRITE, _H_REBUILD = 0, 1, 2, 3
# counters (``counters``)
_C_HOST_READS, _C_HOST_WRITES, _C_HOST_READ_BYTES, _C_HOST_WRITE_BYTES = 0, 1, 2, 3
_C_MEMBER_READS, _C_MEMBER_WRITES, _C_MEMBER_READ_BYTES, _C_MEMBER_WRITE_BYTES = 4, 5, 6, 7
_C_COMPLETIONS, _C_REBUILD_READS, _C_REBUILD_WRITES, _C_REBUILD_CHUNKS = 8, 9, 10, 11
_C_SATURATED, _C_READS_IN_REBUILD, _C_WRITES_IN_REBUILD, _C_MEMBER_IOS_READS = 12, 13, 14, 15
_C_RECONSTRUCTED_READS = 16  # host reads reconstructed around a member busy on their die (coordinated_reads)
_C_COUNT = 17
# per-drive float parameters (``dpar``, one row per kernel row): read and write service (fixed,
# per byte), seek curve, full rotation, profile slot and phase, capacity
_D_RFIX, _D_RPB, _D_WFIX, _D_WPB, _D_SEEK_A, _D_SEEK_B, _D_ROT, _D_SLOT, _D_PHASE, _D_CAP = range(10)
# a read's latency beyond its unit's service: an SSD's fitted fixed read time raised to its die's
# array read tR (``ServiceModel.read_array_s``), which the unit does not wait for
_D_RTR = 10
_D_COUNT = 11
# per-drive integer parameters (``ipar``, the wrapper's only): units, profile offset and length
# for writes and reads, mechanical
_I_UNITS, _I_WOFF, _I_WLEN, _I_ROFF, _I_RLEN, _I_MECH = range(6)
_I_COUNT = 6
# the packed per-drive rows: ``dr`` (floats, ``DW = _R_UNITS + ucap + 1`` per row): profile
# multiplier caches [slot end, multiplier] for writes then reads, [fixed, per-byte, latency after
# the unit] service for writes and reads (the last: an SSD read's ``max(tR - fixed, 0)``, 0
# elsewhere), busy time, profile slot and phase, then the units' free times in ascending order and
# a +inf sentinel; ``di`` (integers, ``_J_COUNT`` per row): mechanical, profile
# [offset, length] for writes and for reads
_R_MC, _R_WFIX, _R_RFIX, _R_BUSY, _R_SLOT, _R_PHASE, _R_UNITS = 0, 4, 7, 10, 11, 12, 13
_J_MECH, _J_WOFF, _J_ROFF, _J_COUNT = 0, 1, 3, 8  # rows padded to 8
# layout integer parameters (``lay``)
_L_KIND, _L_W, _L_K, _L_M, _L_COPIES, _L_G, _L_U, _L_ROWS, _L_FAILED = range(9)
_L_COUNT = 9
_KIND_RAID0, _KIND_MIRROR, _KIND_PARITY = 0, 1, 2
# the workload (``wl``): read fraction, random fraction, offered IOPS (0: closed loop), queue
# depth, working-set fraction
_W_READ, _W_RANDOM, _W_IOPS, _W_QD, _W_WS, _W_COUNT = range(6)
# the run's float scalars (``simf``): start of the run (warm-up included), recorded window, rebuild
# rate, start and seconds between chunks, the first open-loop arrival
_SF_T_BEGIN, _SF_W_START, _SF_W_END, _SF_RB_RATE, _SF_RB_START, _SF_RB_DT, _SF_NEXT_ARR, _SF_COUNT = range(8)
# the run's integer scalars (``simi``): rebuild chunk bytes, chunks in flight, bytes and chunks to
# rebuild; reorder window; member-IO places per host-IO region; open-loop slot pool; host slots;
# unit places per drive row; log2 of the stripe unit (-1: not a power of two); bytes of the
# working set; the event queue's first event and length (a sorted window in ``ev_t`` or a heap
# from 0) and whether it is the sorted window; free host slots on ``free_stack``; whether any row
# is mechanical, cleans, or is one controller of a multi-controller card; whether reads are
# coordinated around busy members (``ArraySpec.coordinated_reads``)
(_SI_RB_IO, _SI_RB_WINDOW, _SI_RB_CAP, _SI_RB_CHUNKS, _SI_REORDER, _SI_MMH, _SI_POOL, _SI_HOST_SLOTS, _SI_UCAP,
 _SI_U_SHIFT, _SI_SPACE, _SI_EV_HEAD, _SI_N_EV, _SI_RING, _SI_N_FREE, _SI_ANY_MECH, _SI_ANY_CLEAN, _SI_ANY_CARDS,
 _SI_COORD, _SI_COUNT) = range(20)
# slot states (``state``)
_S_ARRIVE, _S_PHASE2, _S_RB_ISSUE, _S_RB_WRITE, _S_IDLE = 0, 1, 2, 3, 4
# arrival records, one row per host IO drawn ahead (``rec``): offset, bytes, read, sequential,
# whether the parity fast path's stripe geometry is valid, then that geometry (``_unit_geometry``)
_RC_O, _RC_B, _RC_READ, _RC_SEQ, _RC_GEO, _RC_BASE, _RC_RO, _RC_P0, _RC_D0, _RC_J0, _RC_COUNT = range(11)
# member IOs (``S_mem`` rows: drive, bytes, drive byte offset): reads at [0, mmh), scratch writes
# at [mmh, 2 mmh), host slot j's deferred (phase-2) writes at [(2 + j) mmh, (3 + j) mmh)
_M_DRIVE, _M_BYTES, _M_OFFSET = 0, 1, 2


class _KernelIn(NamedTuple):
    """The kernel's inputs, built by ``simulate`` (the kernel allocates nothing and sets nothing
    up; it runs events). Columns are the constants above. ``n_rows``: kernel drive rows (a member,
    or one controller of a multi-controller card); ``n_slots``: host slots then rebuild slots.

    | field | dtype, shape | content |
    | --- | --- | --- |
    | ``dr`` | f8, n_rows x DW (flat) | packed drive rows (``_R_*``); written: caches, busy time, unit free times |
    | ``di`` | i8, n_rows x 8 (flat) | packed drive rows (``_J_*``) |
    | ``dpar`` | f8, n_rows x ``_D_COUNT`` | disk positioning (``_D_SEEK_A``, ``_D_SEEK_B``, ``_D_ROT``, ``_D_CAP``) |
    | ``prof`` | f8, profile entries | write then read multiplier profiles of each model |
    | ``lay`` | i8, ``_L_COUNT`` | layout (``_L_*``); written: ``_L_FAILED`` when a rebuild ends |
    | ``failed`` | i1, simulated members | 1 for a missing member |
    | ``wl`` | f8, ``_W_COUNT`` | workload (``_W_*``) |
    | ``sizes``, ``size_cum`` | i8, f8; IO sizes | each size and its cumulative weight |
    | ``size_align``, ``n_pos_of`` | i8, IO sizes | each size's alignment and aligned random positions |
    | ``simf`` | f8, ``_SF_COUNT`` | run scalars (``_SF_*``) |
    | ``simi`` | i8, ``_SI_COUNT`` | run scalars (``_SI_*``) |
    | ``rng`` | u8, 4 | xoshiro256+ state (advanced) |
    | ``head``, ``recent``, ``recent_i`` | i8; f8 x window; i8; n_rows | disks: head, recent completions, next place |
    | ``cl`` | f8, n_rows x ``_K_COUNT`` | cleaning rows (``_K_*``) |
    | ``vic`` | f8, n_rows x (most pages per block + 1) | each cleaning drive's full blocks by valid pages (``_age``) |
    | ``row_base``, ``row_count`` | i8, simulated members | each member's first kernel row and row count |
    | ``rec``, ``rec_next`` | i8 batch x ``_RC_COUNT``; f8 batch | arrival records (``_RC_*``), the next open-loop arrival after each |
    | ``S_mem`` | i8, 3 x (2 + host slots) mmh | member IOs (``_M_*`` rows; regions above) |
    | ``surv``, ``fail_local`` | i8 | group 0's surviving and failed members (local indices) |
    | ``state``, ``s_arr``, ``s_cls`` | i1, f8, i8; n_slots | each slot's state (``_S_*``), arrival, histogram class |
    | ``s_inrb``, ``s_n2`` | bool, i8; n_slots | each slot's in-rebuild flag and phase-2 writes |
    | ``free_stack`` | i8, host slots | free open-loop slots (``simi[_SI_N_FREE]`` of them) |
    | ``ev_t``, ``ev_id`` | f8, i8; queue capacity | event times and slots: a sorted window between -inf/+inf sentinels, or a heap |
    | ``rb_chunk_of`` | i8, rebuild slots | the chunk each rebuild slot carries |
    """

    dr: np.ndarray
    di: np.ndarray
    dpar: np.ndarray
    prof: np.ndarray
    lay: np.ndarray
    failed: np.ndarray
    wl: np.ndarray
    sizes: np.ndarray
    size_cum: np.ndarray
    size_align: np.ndarray
    n_pos_of: np.ndarray
    simf: np.ndarray
    simi: np.ndarray
    rng: np.ndarray
    head: np.ndarray
    recent: np.ndarray
    recent_i: np.ndarray
    cl: np.ndarray
    vic: np.ndarray
    row_base: np.ndarray
    row_count: np.ndarray
    rec: np.ndarray
    rec_next: np.ndarray
    S_mem: np.ndarray
    surv: np.ndarray
    fail_local: np.ndarray
    state: np.ndarray
    s_arr: np.ndarray
    s_cls: np.ndarray
    s_inrb: np.ndarray
    s_n2: np.ndarray
    free_stack: np.ndarray
    ev_t: np.ndarray
    ev_id: np.ndarray
    rb_chunk_of: np.ndarray


class _KernelOut(NamedTuple):
    """The kernel's outputs, zeroed by ``simulate`` and added to by the kernel (the "all"
    histogram and maximum and the drives' busy time are the wrapper's, from these and ``dr``).

    | field | dtype, shape | content |
    | --- | --- | --- |
    | ``hist`` | i8, 4 x ``LATENCY_BUCKET_COUNT`` | latency histograms (rows ``_H_*``; ``_H_ALL`` filled by the wrapper) |
    | ``lat_sum``, ``lat_max`` | f8, 4 | latency sums and maxima (``_H_*``) |
    | ``counters`` | i8, ``_C_COUNT`` | counters (``_C_*``) |
    | ``sec_max`` | f8, seconds | the longest latency completing in each second |
    | ``sec_hist`` | i4, seconds x ``_COARSE_COUNT`` | per-second latency histograms (row sums: IOPS per second) |
    | ``rebuild_out`` | f8, 2 | when the rebuild ended (-1: not), its last chunk's completion |
    | ``sec_reloc`` | f8, seconds | flash pages relocated per second |
    """

    hist: np.ndarray
    lat_sum: np.ndarray
    lat_max: np.ndarray
    counters: np.ndarray
    sec_max: np.ndarray
    sec_hist: np.ndarray
    rebuild_out: np.ndarray
    sec_reloc: np.ndarray


_PHASE_TAG = 0x5EED_9A5E  # entropy tag: drive GC phases come from SeedSequence([seed, tag])
_NOMINAL_CAPACITY_BYTES = 1 * TB
MAX_DURATION_S = 86_400.0
MAX_DRIVES = 4_096
MAX_PARALLEL_UNITS = 256
MAX_REORDER_WINDOW = 256
_OPEN_LOOP_POOL = 1 << 16
_RING_EVENTS = 128  # event queues up to this size are sorted rings, larger ones binary heaps
_ARRIVAL_BATCH = 256  # host arrivals drawn ahead at a time


# -- cleaning as work (SSDs): per-drive free-space state ------------------------------------
# Each cleaning drive has a float row ``cl[d]`` (columns below, pages are 4 KiB mapping units)
# and a histogram of its full erase blocks by valid-page count, ``vic[d, b]`` (blocks, a mean
# field: fractional counts) for b = 0 .. ``_K_NP`` (the FTL's pages per block). Writes (host pages
# and relocations alike) fill the open block at the write frontier; a full block joins bin
# ``_K_NP``. Uniform random overwrites invalidate each valid page at rate 1 / span per host page,
# so a block with b valid pages moves to b - 1 at rate b / span: the master equation
# ``dn_b / dw = ((b + 1) n_{b+1} - b n_b) / span`` (the mean-field model of Van Houdt,
# SIGMETRICS 2013, which matches simulated greedy garbage collection), applied in steps of
# ``_K_DWSTEP`` host pages (``_age``). Cleaning is greedy: its victims are blocks of the lowest
# occupied bin (integer valid counts), their valid pages relocated to the frontier and the blocks
# erased. The valid counts' spread comes from the overwrites themselves, so the victims of a
# freshly filled drive are not all alike (docs/ssd-model.md, "Victim blocks").
# The columns (pages are 4 KiB mapping units), numbered by what an IO reads together, eight to a
# 64-byte line (rows begin on a line, ``_cleaning_arrays``; placement only, the arithmetic is the
# same in any order). Line 0 is what every member read looks at, and a write's first look:
#   _K_CLEND the running cleaning step's end, _K_STEPS the unit it cleans, _K_NUNITS units,
#   _K_NDIES simulated dies (0: no NAND operations), _K_NSUSP the longest a read waits behind an
#   operation (the suspend time on a drive that suspends for reads, else tBERS), _K_WBUF_S the
#   drain seconds a power-loss-protected write buffer holds (0: none; docs/ssd-model.md, "Posted
#   writes"), _K_ON cleans, _K_BE the back end's busy-until.
# Lines 1-4, a write's cleaning: _K_EAGER, _K_FREE free pages, _K_TRIG where the cleaner wakes,
#   _K_BURST cleaning until the high mark, _K_HIGH / _K_LOW the free-page marks, _K_INVNUNITS
#   1 / units when that is a power of two (x / n is then exactly x * (1 / n)), else 0, _K_QCAP the
#   SLC cache's pages (QLC drives; 0: none), _K_RMW a partial page's read; _K_WCNT host pages
#   written, _K_HOSTP / _K_RELOCS host pages and relocations programmed, _K_OPEN pages in the open
#   block, _K_HOSTPG seconds per host page, _K_NISSP / _K_NISSE the pages programmed / cleaned
#   already laid out as NAND operations, _K_NOPPG / _K_NERPG 4 KiB pages per program / erase,
#   _K_CLEANED pages cleaned; the victim histogram's (``vic[d]``) host pages per aging step
#   _K_DWSTEP, the host-page count it is aged to _K_DECW, its lowest occupied bin _K_BLO, the
#   victims' valid fraction _K_U cached for bin _K_UT (-1: none) with what derives from it,
#   _K_PER back-end seconds per cleaned page, _K_INVGAIN pages cleaned per page freed, _K_INVPER,
#   _K_STEP_S / _K_INVSTEP_S a step's seconds; _K_INVNP, _K_RSCALE the relocation scale.
# The rest: _K_WACK / _K_WACKB the posted path's fixed and per-byte times, _K_NNEXT the next die,
#   _K_NPROG / _K_NBERS tPROG / tBERS (docs/ssd-model.md, "NAND operations"), _K_INVSPAN 1 / span,
#   _K_RELOC / _K_ERASE seconds per relocated / erased page, _K_STEP the cleaning step (pages),
#   _K_CHUNK the preconditioning chunk, _K_QFREE / _K_QSLC / _K_QFOLD the SLC cache's free pages
#   and seconds per host page into it and per cached page folded into QLC, _K_VSTEP a lazy
#   drive's foreground cleaning step (the pages of one victim erase unit, a block on each plane of
#   a die; with no NAND operations one flash page), _K_NP pages per block.
# Then from _K_DIE0 each die's end of its last operation.
_K_CLEND, _K_STEPS, _K_NUNITS, _K_NDIES, _K_NSUSP, _K_WBUF_S, _K_ON, _K_BE = range(8)
_K_EAGER, _K_FREE, _K_TRIG, _K_BURST, _K_HIGH, _K_INVNUNITS, _K_QCAP, _K_RMW = range(8, 16)
_K_LOW, _K_WCNT, _K_HOSTP, _K_OPEN, _K_HOSTPG, _K_NISSP, _K_RELOCS, _K_NOPPG = range(16, 24)
_K_CLEANED, _K_NISSE, _K_NERPG, _K_DWSTEP, _K_DECW, _K_BLO, _K_UT, _K_U = range(24, 32)
_K_PER, _K_INVGAIN, _K_INVPER, _K_INVNP, _K_RSCALE, _K_STEP_S, _K_INVSTEP_S, _K_WACK = range(32, 40)
_K_WACKB, _K_NNEXT, _K_NPROG, _K_NBERS, _K_INVSPAN, _K_RELOC, _K_ERASE, _K_STEP = range(40, 48)
_K_CHUNK, _K_QFREE, _K_QSLC, _K_QFOLD, _K_VSTEP, _K_NP, _K_PTN, _K_PTI = range(48, 56)
# programs' relative times by page type (``ServiceModel.nand_program_spread``): _K_PTN types
# from _K_PT0, the next program's type _K_PTI
_K_PT0 = 56
_MAX_PAGE_TYPES = 8
_K_DIE0 = 64
_MAX_DIES = 64
# programs laid out per call of _nand_issue (see _clean_write)
_NAND_BATCH = 4.0
_K_COUNT = _K_DIE0 + _MAX_DIES
# An eager drive's cleaner wakes when this many pages are used below its high mark (assumed:
# 256 KiB, "early and often" on the scale of a pool of ~0.5 % of the flash; it saves waking the
# cleaner at every write)
_EAGER_SLACK_PAGES = 64.0
# Aging steps per span / pages-per-block host pages: a step moves a share b q <= 1 / _AGE_STEPS of
# a bin down one page (explicit Euler of the master equation; a step's variance of a block's
# losses is b q (1 - b q), the binomial's b q (1 - q): at 16 steps within 6 % at b = pages per block)
_AGE_STEPS = 16.0
# a bin holding fewer blocks than this is empty (cleaning has taken it; rounding is dropped)
_VIC_EMPTY = 1e-9
# The victims are whole blocks: the mean field's lowest bin is the lowest holding at least one
# block. Mass the overwrites move below it waits there (it stays counted) until a block's worth
# has gathered: the expected tail of a real drive's thousands of blocks, not a billionth of one.
_VIC_VICTIM = 1.0
# Preconditioning: aging steps this many times the run's, and each drive's own extra writes
# (after the shared used state) a random share of this much of a drive write. The histogram's
# phases (the open block, the aging step, the lowest bin's remaining blocks) repeat within a few
# hundred steps, and 1/16 of a drive write is Np steps, so the members are out of step.
_PRE_COARSE = 4.0
_PRE_EXTRA = 1.0 / 16.0
# preconditioning chunks per raw flash (a chunk is 1/1024 of it: 0.1 % of the flash written between
# cleanings, far below the pool)
_CHUNKS = 1024.0
# the most pages per block a victim histogram has bins for (the catalog's largest is 1,024)
_MAX_BLOCK_PAGES = 16384
_MAP_SHIFT = 12  # 4 KiB mapping unit
_MAP_MASK = (1 << _MAP_SHIFT) - 1


@njit(cache=True, _nrt=False)
def _age(cl, vic, d):
    """The host pages written since the histogram was last aged, in whole steps of ``_K_DWSTEP``:
    each step moves ``b q`` of bin b's blocks to b - 1 (q = step / span; explicit Euler of the
    master equation). The blocks the write frontier filled since the last call join bin
    ``_K_NP`` (every page valid) spread evenly over the steps, as if written at an even pace
    between the calls (their own overwrites while open are not counted: one block of thousands).
    The lowest bin moves down once a block has gathered below it (``_VIC_VICTIM``). (A call:
    once per step, a few hundred times per span written.)"""
    step = cl[d, _K_DWSTEP]
    n = math.floor((cl[d, _K_WCNT] - cl[d, _K_DECW]) / step)
    if n <= 0.0:
        return
    cl[d, _K_DECW] += n * step
    q = step * cl[d, _K_INVSPAN]
    npg_f = cl[d, _K_NP]
    npg = np.int64(npg_f)
    full = math.floor(cl[d, _K_OPEN] / npg_f)
    cl[d, _K_OPEN] -= full * npg_f
    add = full / n
    lo = np.int64(cl[d, _K_BLO])
    if add > 0.0 and lo > npg:
        lo = npg
    for _ in range(np.int64(n)):
        if lo > npg:
            break
        vic[d, npg] += add
        for b in range(max(lo, 1), npg + 1):
            out = b * q * vic[d, b]
            vic[d, b] -= out
            vic[d, b - 1] += out
        if lo > 0 and vic[d, lo - 1] >= _VIC_VICTIM:
            lo -= 1
    cl[d, _K_BLO] = float(lo)
    cl[d, _K_UT] = -1.0  # the victims' valid fraction is refreshed at the next look


@njit(cache=True, _nrt=False, inline="always")
def _log_append(cl, d, pages):
    """Program ``pages`` at the write frontier (host writes and relocations alike): the open
    block's pages, which join the histogram as full blocks when it is next aged (``_age``)."""
    cl[d, _K_OPEN] += pages


@njit(cache=True, _nrt=False, inline="always")
def _tail_valid(cl, vic, d):
    """Valid fraction of the next victims (the lowest occupied bin), cached until the bin or the
    histogram changes; ages the histogram first when a step's host pages have been written."""
    if cl[d, _K_WCNT] - cl[d, _K_DECW] >= cl[d, _K_DWSTEP]:
        _age(cl, vic, d)
    lo = cl[d, _K_BLO]
    if lo != cl[d, _K_UT]:
        u = min(lo * cl[d, _K_INVNP], 1.0)
        cl[d, _K_U] = u
        cl[d, _K_UT] = lo
        # back-end seconds per cleaned flash page, pages cleaned per page freed, step length
        per = u * cl[d, _K_RELOC] * cl[d, _K_RSCALE] + cl[d, _K_ERASE]
        cl[d, _K_PER] = per
        cl[d, _K_INVPER] = 1.0 / per if per > 0.0 else 0.0
        cl[d, _K_INVGAIN] = 1.0 / (1.0 - u) if u < 1.0 - 1e-9 else 1e9
        cl[d, _K_STEP_S] = cl[d, _K_STEP] * per
        cl[d, _K_INVSTEP_S] = 1.0 / cl[d, _K_STEP_S] if per > 0.0 else 0.0
    return cl[d, _K_U]


@njit(cache=True, _nrt=False)
def _reclaim(cl, vic, d, need, max_cost):
    """Clean victim blocks, lowest valid count first (greedy), until ``need`` pages are freed or
    the work reaches ``max_cost`` seconds; returns the back-end seconds spent."""
    cost = 0.0
    got = 0.0
    reloc = cl[d, _K_RELOC] * cl[d, _K_RSCALE]
    erase = cl[d, _K_ERASE]
    npg = cl[d, _K_NP]
    inv_np = cl[d, _K_INVNP]
    for _ in range(4 * (np.int64(npg) + 2)):
        if got >= need or cost >= max_cost:
            break
        u = _tail_valid(cl, vic, d)  # first: it may age the histogram and move the lowest bin
        lo = np.int64(cl[d, _K_BLO])
        if lo > np.int64(npg):
            break  # nothing left to clean
        avail = vic[d, lo] * npg
        if vic[d, lo] <= _VIC_EMPTY:
            vic[d, lo] = 0.0
            cl[d, _K_BLO] = float(lo + 1)
            continue
        gain = 1.0 - u
        per = u * reloc + erase
        x = avail
        if gain > 1e-9:
            x = min(x, (need - got) / gain)
        else:
            x = min(x, npg)  # blocks with every page valid: one at a time
        if per > 0.0:
            x = min(x, (max_cost - cost) / per)
        x = max(x, min(avail, 1e-6))
        vic[d, lo] -= x * inv_np
        moved = u * x
        cl[d, _K_FREE] += x - moved
        cl[d, _K_RELOCS] += moved * cl[d, _K_RSCALE]
        cl[d, _K_CLEANED] += x
        _log_append(cl, d, moved)
        cost += x * per
        got += x * gain
    return cost


@njit(cache=True, _nrt=False, inline="always")
def _clean(cl, vic, d, need, max_cost):
    """``_reclaim`` with a fast path: when the work fits in the lowest bin it is a few
    multiplications (the common case: a page or a step at a time)."""
    u = _tail_valid(cl, vic, d)
    return _clean_fresh(cl, vic, d, need, max_cost, u)


@njit(cache=True, _nrt=False, inline="always")
def _clean_fresh(cl, vic, d, need, max_cost, u):
    """``_clean`` right after ``_tail_valid`` gave ``u`` (no second look at the cache)."""
    per = cl[d, _K_PER]
    raw = need * cl[d, _K_INVGAIN]
    work = raw * per
    if work > max_cost:
        work = max_cost
        raw = work * cl[d, _K_INVPER]
    lo = _u(np.int64(cl[d, _K_BLO]))
    left = vic[d, lo] - raw * cl[d, _K_INVNP]
    if left > _VIC_EMPTY and per > 0.0 and u < 1.0 - 1e-9:
        vic[d, lo] = left
        moved = u * raw
        cl[d, _K_FREE] += raw - moved
        cl[d, _K_RELOCS] += moved * cl[d, _K_RSCALE]
        cl[d, _K_CLEANED] += raw
        _log_append(cl, d, moved)
        return work
    return _reclaim(cl, vic, d, need, max_cost)


@njit(cache=True, _nrt=False)
def _slc_fold(cl, d, qcap, be, t):
    """The SLC cache (QLC drives) folds into QLC in the back end's idle time left before t, in
    whole steps of one flash page: the one running at t delays what arrives now. Returns the
    back end's new free time. (A call, not inlined: rare paths kept out of the event loop.)"""
    fstep = cl[d, _K_STEP] * cl[d, _K_QFOLD]
    x = min(qcap - cl[d, _K_QFREE], math.ceil((t - be) / fstep) * cl[d, _K_STEP])
    cl[d, _K_QFREE] += x
    be += x * cl[d, _K_QFOLD]
    cl[d, _K_BE] = be
    return be


@njit(cache=True, _nrt=False)
def _lazy_stall(cl, vic, dr, fb, ucap, d, free, pages, bs, s):
    """A lazy drive's pool ran out: the write waits while the cleaner reclaims whole victim erase
    units (``_K_VSTEP`` pages each: their valid pages relocated, then the erase) until the write's
    pages fit, and every unit waits with it. The stall is as long as those victims' relocations
    and erases take; the idle-time cleaner (``_clean_write``) refills the pool to the high mark
    when the host leaves it time. Returns the write's (back-end start, start)."""
    uu = _tail_valid(cl, vic, d)
    step = cl[d, _K_VSTEP]
    gain = step * (1.0 - uu)  # pages one victim frees
    need = pages - free
    if gain > 1e-9:
        need = math.ceil(need / gain) * gain
    bs += _reclaim(cl, vic, d, need, np.inf)
    if cl[d, _K_FREE] < pages:
        bs += _reclaim(cl, vic, d, pages - cl[d, _K_FREE], np.inf)
    cl[d, _K_CLEND] = bs
    for j in range(ucap):
        dr[fb + _R_UNITS + j] = max(dr[fb + _R_UNITS + j], bs)
    return bs, max(s, bs)


@njit(cache=True, _nrt=False)
def _position(dpar, head, recent, rng, d, off, nbytes, t, reorder_window, ws_frac):
    """Stage: a disk's positioning time for an IO at ``off`` (seek over the distance from the
    head, a random rotational delay; with reordering the shortest of the draws of the IOs
    queued when it arrives). A sequential IO finds its sector under the head: 0. Moves the
    head past the IO. (A call, not inlined: disks simulate few IOs.)"""
    pos_t = 0.0
    h = head[d]
    if off != h:  # a sequential IO finds its sector under the head: no positioning
        dist = abs(off - h) / dpar[d, _D_CAP]
        dist = min(dist, 1.0)
        sa = dpar[d, _D_SEEK_A]
        sbb = dpar[d, _D_SEEK_B]
        rot = dpar[d, _D_ROT]
        pos_t = sa + sbb * math.sqrt(dist) + rot * _rnd(rng)
        if reorder_window > 1:
            # SATF approximation: the shortest of the positioning draws of the IOs
            # queued when this one arrives, treated as independent (optimistic)
            n_out = 0
            for j in range(recent.shape[1]):
                if recent[d, j] > t:
                    n_out += 1
            nq = min(n_out + 1, reorder_window)
            for _ in range(nq - 1):
                dd = abs(_rnd(rng) - _rnd(rng)) * ws_frac
                q = sa + sbb * math.sqrt(dd) + rot * _rnd(rng)
                pos_t = min(pos_t, q)
    head[d] = off + nbytes
    return pos_t


@njit(cache=True, _nrt=False, inline="always")
def _units_idle_s(dr, fb, ucap, nunits, inv_nunits, idle0, t):
    """Stage: the mean idle time of the drive's units between ``idle0`` and ``t`` (what
    background cleaning may use: it runs on the dies and channels host IOs are served on).
    ``inv_nunits`` is ``1 / nunits`` when that multiplication is exact (a power of two), else 0:
    a multiplication instead of a division on the cleaning write's chain of latencies. Every
    place is visited (no exit at the first busy unit, whose place varies from write to write and
    mispredicted): a busy unit (``a >= t``, +inf past the drive's units) adds
    ``t - max(t, idle0)`` = +0.0 (``idle0 < t`` here), which leaves the sum as it was."""
    idle = 0.0
    if ucap >= 4:
        # four sums (``ucap`` is a power of two): four short chains of additions, not one long
        i1 = 0.0
        i2 = 0.0
        i3 = 0.0
        for j in range(0, ucap, 4):
            a = fb + _R_UNITS + j
            idle += t - max(min(dr[_u(a)], t), idle0)
            i1 += t - max(min(dr[_u(a + 1)], t), idle0)
            i2 += t - max(min(dr[_u(a + 2)], t), idle0)
            i3 += t - max(min(dr[_u(a + 3)], t), idle0)
        idle = (idle + i1) + (i2 + i3)
    else:
        for j in range(ucap):
            idle += t - max(min(dr[_u(fb + _R_UNITS + j)], t), idle0)
    if inv_nunits != 0.0:
        return idle * inv_nunits
    return idle / nunits


@njit(cache=True, _nrt=False, inline="always")
def _clean_takes_units(dr, fb, ucap, idle0, t, share):
    """Stage: background cleaning occupies the flash units host IOs are served on (a relocation
    reads a page and programs it again on the drive's dies and channels; one back-end second of
    it is a second of every unit, as a host page's ``host_page_s`` is its 4 KiB of unit time
    over the units). It runs in the units' idle time before ``t`` and takes ``share`` of each
    unit's idle stretch (1: all of it; a step still running at ``t`` delays the arriving write
    through the back end and a read on its die through ``_clean_read``). The free times stay
    sorted (``a + share (t - a)`` grows with ``a``). Branch-free over every place, so LLVM
    vectorises it: a busy unit (``a >= t > idle0``) adds ``share * 0.0`` = +0.0 to its time,
    which keeps it (no time is -0.0: they only grow from the run's start). Written as a sum,
    not as a choice between the new time and the loaded one, which LLVM turns into slow masked
    stores (``vmaskmovpd``) that stall the next loads from the row."""
    for j in range(ucap):
        a = max(dr[_u(fb + _R_UNITS + j)], idle0)
        dr[_u(fb + _R_UNITS + j)] = a + share * max(t - a, 0.0)


@njit(cache=True, _nrt=False, inline="always")
def _clean_holds_units(dr, fb, ucap, start, cost):
    """Stage: foreground cleaning (a write waiting for the cleaning of its pages) from ``start``
    takes ``cost`` from every unit (the units' share of the work, as in ``_clean_takes_units``):
    the write's own unit (the first, earliest free) is held by the write until its pages are
    programmed after the cleaning; every other one is pushed (sorted order is kept)."""
    for j in range(1, ucap):
        dr[fb + _R_UNITS + j] = max(dr[fb + _R_UNITS + j], start) + cost


@njit(cache=True, _nrt=False, inline="always")
def _clean_write(cl, vic, dr, fb, ucap, d, t, s, svc, mul, off_, nbytes):
    """Stage: a member write on a cleaning drive (docs/array-model.md, "SSD service time"):
    background cleaning in the back end's idle time before ``t``, the write's pages through the
    back end, foreground cleaning when the pool is short (a lazy drive's victims stall every unit,
    whose free times in ``dr`` it raises). Returns (start, service time, completion floor)."""
    be = cl[d, _K_BE]
    eager = cl[d, _K_EAGER] != 0.0
    idle0 = be  # the back end is idle from here to t
    # only writes create a deficit and only they move the back end, so the cleaner
    # catches up at each write over the whole gap since the last (reads in that gap
    # do not see its steps: a small understatement of read interference)
    if idle0 < t:
        # the cleaner starts below its trigger (eager: _EAGER_SLACK_PAGES
        # under the high mark; lazy: the low mark) and runs to the high mark
        free = cl[d, _K_FREE]
        if free < cl[d, _K_TRIG]:
            cl[d, _K_BURST] = 1.0
        target = cl[d, _K_HIGH]
        # the cleaner runs in the units' idle time (it uses the same dies and channels)
        idle_s = 0.0
        if cl[d, _K_BURST] != 0.0 and target > free:
            idle_s = _units_idle_s(dr, fb, ucap, cl[d, _K_NUNITS], cl[d, _K_INVNUNITS], idle0, t)
        if idle_s > 0.0:
            # whole small steps from idle0 on: the one running at t delays what
            # arrives now (the interference of background cleaning)
            u = _tail_valid(cl, vic, d)
            n_steps = math.ceil(idle_s * cl[d, _K_INVSTEP_S])
            cost = _clean_fresh(cl, vic, d, target - free, max(n_steps, 1) * cl[d, _K_STEP_S], u)
            be = idle0 + cost
            cl[d, _K_BE] = be
            cl[d, _K_CLEND] = be
            share = min(1.0, cost / idle_s)
            _clean_takes_units(dr, fb, ucap, idle0, t, share)
            # the next step cleans the next die
            cl[d, _K_STEPS] += 1.0
            if cl[d, _K_STEPS] >= cl[d, _K_NUNITS]:
                cl[d, _K_STEPS] = 0.0
            if cl[d, _K_FREE] >= cl[d, _K_HIGH]:
                cl[d, _K_BURST] = 0.0
    qcap = cl[d, _K_QCAP]
    if qcap > 0.0 and be < t and cl[d, _K_QFREE] < qcap:
        be = _slc_fold(cl, d, qcap, be, t)
    off = off_
    pages = float(((off + nbytes + _MAP_MASK) >> _MAP_SHIFT) - (off >> _MAP_SHIFT))
    # whole pages are programmed; a partial page is read first (read-modify-write)
    svc += (pages * (_MAP_MASK + 1) - nbytes) * dr[fb + _R_WFIX + 1] * mul
    if ((off | nbytes) & _MAP_MASK) != 0:
        svc += cl[d, _K_RMW]
    free = cl[d, _K_FREE]
    bs = max(be, t)
    if eager:
        if free - pages < cl[d, _K_LOW]:
            # no idle time left: the write waits for the cleaning of its pages
            fg = _clean(cl, vic, d, pages + cl[d, _K_LOW] - free, np.inf)
            _clean_holds_units(dr, fb, ucap, bs, fg)
            bs += fg
            cl[d, _K_CLEND] = bs
    elif free - pages < 0.0:
        bs, s = _lazy_stall(cl, vic, dr, fb, ucap, d, free, pages, bs, s)
    cl[d, _K_FREE] -= pages
    cl[d, _K_WCNT] += pages
    cl[d, _K_HOSTP] += pages
    _log_append(cl, d, pages)
    if qcap > 0.0:
        # the pages the SLC cache has room for land there fast, the rest go direct to QLC
        qin = min(pages, cl[d, _K_QFREE])
        cl[d, _K_QFREE] -= qin
        c_floor = bs + qin * cl[d, _K_QSLC] + (pages - qin) * cl[d, _K_HOSTPG]
    else:
        c_floor = bs + pages * cl[d, _K_HOSTPG]
    cl[d, _K_BE] = c_floor
    # the NAND operations of what was programmed and cleaned, laid out a few at a time (a call
    # per _NAND_BATCH programs, or at the next erase: their starts move by a few writes' gaps,
    # which leaves each die's busy share as it is)
    if (cl[d, _K_HOSTP] + cl[d, _K_RELOCS] - cl[d, _K_NISSP] >= _NAND_BATCH * cl[d, _K_NOPPG]
            or cl[d, _K_CLEANED] - cl[d, _K_NISSE] >= cl[d, _K_NERPG]) and cl[d, _K_NDIES] > 0.0:
        _nand_issue(cl, d, bs)
    return s, svc, c_floor


@njit(cache=True, _nrt=False)
def _reloc_second(cl, sec_reloc, t, w_start, w_end, rl_sec, rl_base):
    """Stage: the flash pages relocated in each second of the window, by the arrival time of
    the writes whose cleaning moved them. Called when an event at ``t`` reaches the end of the
    second ``rl_sec`` (-1: none; before the window, the window's start): the drives' relocation
    counters have grown by that second's pages since they stood at ``rl_base``. Returns the next
    second's end (+inf past the window), the second that begins at ``t`` and the counters' sum
    now. (A call per second rather than a store into the series at every write: after a store to
    any array LLVM reloads the values it holds from the others.)"""
    tot = 0.0
    for d in range(cl.shape[0]):
        tot += cl[d, _K_RELOCS]
    if rl_sec >= 0:
        sec_reloc[rl_sec] += tot - rl_base
    n_sec = sec_reloc.shape[0]
    if t < w_start:
        return w_start, -1, tot
    if t >= w_end:
        return np.inf, -1, tot
    sec = int(t - w_start)
    if sec >= n_sec - 1:
        return w_end, n_sec - 1, tot
    return w_start + (sec + 1), sec, tot


@njit(cache=True, _nrt=False, inline="always")
def _clean_read(cl, d, s, off_):
    """Stage: a member read on a drive with a cleaning step running at its start waits for the
    step when its die is the one being cleaned. Returns the start time."""
    # a read whose die is being cleaned waits for the step (dies from a hash of
    # the page number; the cleaner moves to the next die each step)
    # (a 32-bit hash scaled to [0, units) by a multiply: no division)
    # (the float counters convert through int64: one instruction, where float -> uint64 branches)
    h32 = (np.uint64(off_ >> _MAP_SHIFT) * np.uint64(0x9E3779B97F4A7C15)) >> np.uint64(32)
    die = (h32 * np.uint64(np.int64(cl[d, _K_NUNITS]))) >> np.uint64(32)
    if np.int64(die) == np.int64(cl[d, _K_STEPS]):
        s = cl[d, _K_CLEND]
    return s


@njit(cache=True, _nrt=False, inline="always")
def _nand_lay(cl, d, t, done, k_issued, k_pages, k_time, nxt, n_dies, spread):
    """Stage of ``_nand_issue``: of the ``done`` pages (programmed, or cleaned) those not yet laid
    out (``cl[d, k_issued]``) in whole operations of ``cl[d, k_pages]`` pages, each of
    ``cl[d, k_time]`` seconds (programs with ``spread``: times the next page type's relative time)
    on the next die in turn after its last operation. Returns the next die."""
    left = done - cl[d, k_issued]
    per = cl[d, k_pages]
    if left >= per:
        n = math.floor(left / per)
        cl[d, k_issued] += n * per
        op_s = cl[d, k_time]
        pti = np.int64(cl[d, _K_PTI])
        ptn = np.int64(cl[d, _K_PTN])
        for _ in range(np.int64(n)):
            j = _K_DIE0 + nxt
            if spread:
                cl[d, j] = max(cl[d, j], t) + op_s * cl[d, _K_PT0 + pti]
                pti += 1
                if pti >= ptn:
                    pti = 0
            else:
                cl[d, j] = max(cl[d, j], t) + op_s
            nxt += 1
            if nxt == n_dies:
                nxt = 0
        if spread:
            cl[d, _K_PTI] = float(pti)
    return nxt


@njit(cache=True, _nrt=False, inline="always")
def _nand_issue(cl, d, t):
    """Stage: lay out on the dies, from ``t`` on, the NAND operations of what the drive has
    programmed and cleaned since the last call (docs/ssd-model.md, "NAND operations"): every
    ``_K_NOPPG`` pages programmed (host pages and relocations) are a program of tPROG, every
    ``_K_NERPG`` pages cleaned an erase of tBERS, each on the next die in turn, after that die's
    last operation. Reads meet them through ``_nand_read``."""
    n_dies = np.int64(cl[d, _K_NDIES])
    nxt = np.int64(cl[d, _K_NNEXT])
    nxt = _nand_lay(cl, d, t, cl[d, _K_HOSTP] + cl[d, _K_RELOCS], _K_NISSP, _K_NOPPG, _K_NPROG, nxt, n_dies, True)
    nxt = _nand_lay(cl, d, t, cl[d, _K_CLEANED], _K_NISSE, _K_NERPG, _K_NBERS, nxt, n_dies, False)
    cl[d, _K_NNEXT] = float(nxt)


@njit(cache=True, _nrt=False, inline="always")
def _nand_read(cl, d, s, off_):
    """Stage: a member read whose die (a hash of its page over the simulated dies) has a program
    or an erase in flight at its start waits for it to end, or for ``_K_NSUSP`` on a drive that
    suspends them for reads. The die serves the read next (reads go before queued programs), so
    the wait is at most one operation: tBERS (``_K_NSUSP`` holds the cap: the suspend time, or
    tBERS on a drive that does not suspend). Returns the start."""
    h32 = (np.uint64(off_ >> _MAP_SHIFT) * np.uint64(0x9E3779B97F4A7C15)) >> np.uint64(32)
    die = (h32 * np.uint64(np.int64(cl[d, _K_NDIES]))) >> np.uint64(32)
    # branch-free (whether the die is busy is a coin toss per read: a branch on it mispredicts);
    # s + min(max(end - s, 0), cap) written as min(max(end, s), s + cap): two operations after
    # the die's time arrives, not four (the same value: end - s is exact for end within [s, 2 s])
    return min(max(cl[d, _K_DIE0 + np.int64(die)], s), s + cl[d, _K_NSUSP])


@njit(cache=True, _nrt=False)
def _member_busy(cl, row_base, row_count, any_cards, d0, off_, t):
    """Stage (coordinated reads): whether member ``d0`` is busy for a read at drive offset
    ``off_`` submitted at ``t``: the read's die (``_nand_read``'s hash) has a program or an erase
    in flight past ``t``, or a cleaning step runs there past ``t`` (``_clean_read``). (A call:
    only arrays with ``coordinated_reads`` make it.)"""
    d = d0
    if any_cards:
        d = row_base[d0] + ((off_ >> 16) % row_count[d0])
    pg = np.uint64(off_ >> _MAP_SHIFT) * np.uint64(0x9E3779B97F4A7C15)
    h32 = pg >> np.uint64(32)
    if cl[d, _K_NDIES] > 0.0:
        die = (h32 * np.uint64(np.int64(cl[d, _K_NDIES]))) >> np.uint64(32)
        if cl[d, _K_DIE0 + np.int64(die)] > t:
            return True
    if cl[d, _K_CLEND] > t:
        unit = (h32 * np.uint64(np.int64(cl[d, _K_NUNITS]))) >> np.uint64(32)
        if np.int64(unit) == np.int64(cl[d, _K_STEPS]):
            return True
    return False


@njit(cache=True, _nrt=False, inline="always")
def _posted_ack(cl, d, is_w, t, c, nbytes):
    """Stage: when the host sees a member IO complete. A write to a drive with a write buffer is
    acknowledged once it is in the buffer (the posted path after ``t``), or, when the drain
    ahead of it (units and back end, which still take the write until ``c``) holds more than
    the buffer, once the drain is within the buffer of it: a full buffer makes writes wait, so
    a sustained rate is the drain's. Anything else completes at ``c``."""
    wb = cl[d, _K_WBUF_S]
    if is_w and wb > 0.0:
        return max(t + cl[d, _K_WACK] + nbytes * cl[d, _K_WACKB], c - wb)
    return c


@njit(cache=True, _nrt=False, inline="always")
def _u(x):
    """An index known to be >= 0, unsigned: numba emits no negative-index wraparound."""
    return np.uint64(x)


@intrinsic
def _float_bits_intrinsic(typingctx, x):
    """The bits of a float64 as an int64 (a register move, not a store and a load)."""
    def codegen(context, builder, signature, args):
        return builder.bitcast(args[0], context.get_value_type(types.int64))
    return types.int64(types.float64), codegen


def _float_bits_numpy(x: float) -> int:
    """The same bits through numpy's view: the reference path (``NUMBA_DISABLE_JIT=1``, the kernel's
    own Python, tests/engine/test_kernel_reference.py) has no intrinsics."""
    return int(np.array([x], np.float64).view(np.int64)[0])


_float_bits: Any = _float_bits_numpy if getattr(numba_config, "DISABLE_JIT", 0) else _float_bits_intrinsic


@njit(cache=True, _nrt=False, inline="always")
def _latency_bucket(lat):
    """Stage: the histogram bucket of a latency. Integer ns below 128 ns, then 128 per power of
    two, read off the float's exponent and top 7 mantissa bits (``latency_bucket_edges_s()``
    gives the edges)."""
    idx = 0
    vns = lat * 1e9
    if vns < 128.0:
        if vns > 0.0:
            idx = int(vns)
    else:
        b = _float_bits(vns)  # an intrinsic (or its numpy twin): called with x only
        idx = ((b >> 52) - 1029) * 128 + ((b >> 45) & 127)
        if idx >= LATENCY_BUCKET_COUNT:
            idx = LATENCY_BUCKET_COUNT - 1
    return idx


@njit(cache=True, _nrt=False, inline="always")
def _ring_insert(ev_t, ev_id, ev_head, n_ev, ev_cap, tp, ident):
    """Queue operation: insert event (tp, ident) into the sorted window
    ``[ev_head, ev_head + n_ev)`` of the ring buffer (sentinels -inf before, +inf after), from
    whichever end is nearer. Returns the new (ev_head, n_ev)."""
    # sorted array: insert from whichever end is nearer (equal times go after queued
    # ones from the tail, before them from the head; both deterministic)
    eh = ev_head
    n = n_ev
    if eh < 2 or eh + n + 3 > ev_cap:
        # the window reached an end of the buffer: move it to the middle
        nh = (ev_cap - n) >> 1
        if nh < eh:
            for i in range(n):
                ev_t[_u(nh + i)] = ev_t[_u(eh + i)]
                ev_id[_u(nh + i)] = ev_id[_u(eh + i)]
        else:
            for i in range(n - 1, -1, -1):
                ev_t[_u(nh + i)] = ev_t[_u(eh + i)]
                ev_id[_u(nh + i)] = ev_id[_u(eh + i)]
        eh = nh
        ev_t[_u(eh - 1)] = -np.inf
        ev_t[_u(eh + n)] = np.inf
    if n > 0 and tp < ev_t[_u(eh + (n >> 1))]:
        # the events before tp move one place towards the head (the +inf sentinel
        # after the window stops the scan)
        eh -= 1
        jj = eh
        while True:
            nt = ev_t[_u(jj + 1)]
            if nt >= tp:
                break
            ev_t[_u(jj)] = nt
            ev_id[_u(jj)] = ev_id[_u(jj + 1)]
            jj += 1
        ev_t[_u(jj)] = tp
        ev_id[_u(jj)] = ident
        ev_t[_u(eh - 1)] = -np.inf
    else:
        # the events after tp move one place towards the tail (the -inf sentinel
        # before the window stops the scan)
        j = eh + n
        while True:
            pt = ev_t[_u(j - 1)]
            if pt <= tp:
                break
            ev_t[_u(j)] = pt
            ev_id[_u(j)] = ev_id[_u(j - 1)]
            j -= 1
        ev_t[_u(j)] = tp
        ev_id[_u(j)] = ident
        ev_t[_u(eh + n + 1)] = np.inf
    return eh, n + 1


@njit(cache=True, _nrt=False)
def _precondition(cl, vic, d, host_pages, done, whole_only):
    """Write ``host_pages`` uniform random pages with no clock (the drive reaches its used
    state): cleaning keeps the pool at the high mark. Goes on from ``done`` pages already
    written; with ``whole_only`` it stops before a last partial chunk, where every drive asked
    for at least ``host_pages`` is in the same state (``_cleaning_arrays`` copies it). Returns
    the pages written. The histogram ages in steps ``_PRE_COARSE`` times the run's (still a
    stable Euler step: a share <= 1/4 of a bin moves): the used state is the steady state, which
    the step does not move (docs/ssd-model.md, "Victim blocks"), at a quarter of the work."""
    fine = cl[d, _K_DWSTEP]
    cl[d, _K_DWSTEP] = fine * _PRE_COARSE
    chunk = cl[d, _K_CHUNK]
    while done < host_pages:
        x = min(chunk, host_pages - done)
        if whole_only and x < chunk:
            break
        if cl[d, _K_FREE] - x < cl[d, _K_HIGH]:
            _reclaim(cl, vic, d, cl[d, _K_HIGH] - cl[d, _K_FREE] + x, np.inf)
        cl[d, _K_FREE] -= x
        cl[d, _K_WCNT] += x
        _log_append(cl, d, x)
        done += x
    _age(cl, vic, d)
    cl[d, _K_DWSTEP] = fine
    return done


@njit(cache=True, _nrt=False, inline="always")
def _xoshiro(s0, s1, s2, s3):
    """xoshiro256+ (Blackman & Vigna 2018) on the four-word state (s0, s1, s2, s3): a uniform
    double in [0, 1) and the next state."""
    result = s0 + s3
    tt = s1 << np.uint64(17)
    s2 ^= s0
    s3 ^= s1
    s1 ^= s2
    s0 ^= s3
    s2 ^= tt
    s3 = (s3 << np.uint64(45)) | (s3 >> np.uint64(19))
    return float(result >> np.uint64(11)) * (1.0 / 9007199254740992.0), s0, s1, s2, s3


@njit(cache=True, _nrt=False, inline="always")
def _rnd(rng):
    """``_xoshiro`` on the state in the array ``rng``."""
    x, rng[0], rng[1], rng[2], rng[3] = _xoshiro(rng[0], rng[1], rng[2], rng[3])
    return x


@njit(cache=True, _nrt=False, inline="always")
def _idiv(x, dv, inv):
    """x // dv for 0 <= x via a float reciprocal ``inv`` = 1 / dv, corrected to the exact quotient."""
    q = np.int64(x * inv)
    while q * dv > x:
        q -= 1
    while (q + 1) * dv <= x:
        q += 1
    return q


@njit(cache=True, _nrt=False, inline="always")
def _modw(x, w):
    """x % w for 0 <= x < 3 w without a division."""
    if x >= w:
        x -= w
        if x >= w:
            x -= w
    return x


# -- host-IO mapping (docs/array-model.md, "Layouts") --------------------------------------------
# A host IO at array byte offset o of b bytes becomes member IOs (drive, bytes, drive byte
# offset) in the scratch arrays S_d, S_b, S_o: reads at [0, nr), writes at [wb, wb + nw). The
# array's data space is laid out stripe by stripe (k stripe units of u bytes across a group of w
# drives), groups interleaved stripe by stripe. Failed members (``failed[d] != 0``) get no IO:
# writes skip them, reads reconstruct from the stripe's survivors.


@njit(cache=True, _nrt=False, inline="always")
def _member_io(S_d, S_b, S_o, n, d, nbytes, off):
    """Stage: append one member IO (drive, bytes, offset) at slot ``n`` of the mapping's scratch;
    returns the next slot."""
    S_d[_u(n)] = d
    S_b[_u(n)] = nbytes
    S_o[_u(n)] = off
    return n + 1


@njit(cache=True, _nrt=False, inline="always")
def _map_parity_unit(is_write, b, k, m, w, base, ro, p0, d0, j0, S_d, S_b, S_o, wb):
    """Mapping stage, parity fast path: a random IO of ``b`` bytes inside one stripe unit of a
    parity array with every member present (its geometry worked out when the arrival was
    drawn: ``_unit_geometry``). The same member IOs as ``_map_parity``. Returns (nr, nw,
    member read bytes, member write bytes)."""
    if not is_write:
        _member_io(S_d, S_b, S_o, 0, d0, b, ro)
        return 1, 0, b, 0
    nr = 0
    if m + 1 < k - 1:
        # read-modify-write: old data + parity
        nr = _member_io(S_d, S_b, S_o, 0, d0, b, ro)
        for i in range(m):
            nr = _member_io(S_d, S_b, S_o, nr, base + _modw(p0 + i, w), b, ro)
    else:
        # reconstruct-write: the other data units
        for j in range(k):
            if j != j0:
                nr = _member_io(S_d, S_b, S_o, nr, base + _modw(p0 + m + j, w), b, ro)
    n = _member_io(S_d, S_b, S_o, wb, d0, b, ro)
    for i in range(m):
        n = _member_io(S_d, S_b, S_o, n, base + _modw(p0 + i, w), b, ro)
    return nr, 1 + m, nr * b, (1 + m) * b


@njit(cache=True, _nrt=False, inline="always")
def _map_raid0(is_write, j0, j1, within, chunk, u, base, row_off, S_d, S_b, S_o, nr, nw):
    """Mapping stage, RAID 0: the piece of a host IO in one stripe (units j0..j1 of the group at
    ``base``) -> one member IO per unit. Returns the new (nr, nw) ends."""
    for j in range(j0, j1 + 1):
        lo, hi = _col_span(within, chunk, j, u)
        if is_write:
            nw = _member_io(S_d, S_b, S_o, nw, base + j, hi - lo, row_off + lo)
        else:
            nr = _member_io(S_d, S_b, S_o, nr, base + j, hi - lo, row_off + lo)
    return nr, nw


@njit(cache=True, _nrt=False, inline="always")
def _map_mirror(is_write, j0, j1, within, chunk, u, base, row_off, s, copies, any_failed, failed, dr, DW,
                S_d, S_b, S_o, nr, nw):
    """Mapping stage, mirrors (RAID 1/10): a write goes to every present copy, a read to the
    present copy whose first unit frees earliest (ties rotate with the stripe row ``s``).
    Returns the new (nr, nw) ends."""
    for j in range(j0, j1 + 1):
        lo, hi = _col_span(within, chunk, j, u)
        if is_write:
            for c in range(copies):
                d = base + j * copies + c
                if any_failed and failed[d] != 0:
                    continue
                nw = _member_io(S_d, S_b, S_o, nw, d, hi - lo, row_off + lo)
        else:
            # the copy whose earliest unit freed first (an idle one: idle longest); exact ties rotate with the row
            best = -1
            best_t = np.inf
            start = s % copies
            for cc in range(copies):
                c = start + cc
                if c >= copies:
                    c -= copies
                d = base + j * copies + c
                if any_failed and failed[d] != 0:
                    continue
                fd = dr[d * DW + _R_UNITS]
                if fd < best_t:
                    best_t = fd
                    best = d
            nr = _member_io(S_d, S_b, S_o, nr, best, hi - lo, row_off + lo)
    return nr, nw


@njit(cache=True, _nrt=False, inline="always")
def _stripe_at(pos, sb, inv_sb, G, inv_g):
    """Where array byte ``pos`` lies: its stripe row, its group (stripes go round the ``G``
    groups) and its byte within the stripe's ``sb`` data bytes."""
    t_idx = _idiv(pos, sb, inv_sb)
    if G == 1:
        g = 0
        s = t_idx
    else:
        s = _idiv(t_idx, G, inv_g)
        g = t_idx - s * G
    return s, g, pos - t_idx * sb


@njit(cache=True, _nrt=False, inline="always")
def _col_span(within, chunk, j, u):
    """The bytes [lo, hi) of data unit ``j`` (of ``u`` bytes) that a piece of ``chunk`` bytes at
    byte ``within`` of its stripe covers."""
    return max(within - j * u, 0), min(within + chunk - j * u, u)


@njit(cache=True, _nrt=False, inline="always")
def _map_parity(is_write, is_seq, j0, j1, within, chunk, u, sb, base, row_off, s, w, k, m, inv_w, col_lo, col_b,
                any_failed, failed, S_d, S_b, S_o, nr, nw):
    """Mapping stage, parity (RAID 5, RAID 6, k+m erasure coding; left-symmetric rotation): the
    piece of a host IO in one stripe. Reads of a failed unit read k survivors; small writes take
    the cheaper of read-modify-write and reconstruct-write that has its inputs; full-stripe and
    sequential writes write parity with no reads. Returns the new (nr, nw) ends. (Unit ``x`` of
    the stripe is member ``base + (p0 + x) mod w``: parity 0..m-1, then data m..w-1.)"""
    p0 = w - 1 - (s - _idiv(s, w, inv_w) * w)
    if not is_write:
        n_failed_touched = 0
        if any_failed:
            for j in range(j0, j1 + 1):
                if failed[base + _modw(p0 + m + j, w)] != 0:
                    n_failed_touched += 1
        if n_failed_touched == 0:
            nr = _data_ios(j0, j1, within, chunk, u, base, row_off, p0, w, m, False, failed, S_d, S_b, S_o, nr)
        else:
            # reconstruct from k surviving units of the stripe (the column spanned):
            # touched data first, then other data, then parity
            off = row_off + col_lo
            nr, got = _survivor_reads(m + j0, m + j1 + 1, 0, -1, 0, base, p0, w, k, failed, col_b, off, S_d, S_b, S_o, nr)
            nr, got = _survivor_reads(m, m + k, m + j0, m + j1, got, base, p0, w, k, failed, col_b, off, S_d, S_b, S_o, nr)
            nr, got = _survivor_reads(0, m, 0, -1, got, base, p0, w, k, failed, col_b, off, S_d, S_b, S_o, nr)
        return nr, nw
    if chunk == sb or is_seq:
        # full-stripe write, or a sequential stream filling the stripe unit by
        # unit: parity goes out (no reads) with the IO that completes the stripe
        nw = _data_ios(j0, j1, within, chunk, u, base, row_off, p0, w, m, any_failed, failed, S_d, S_b, S_o, nw)
        if within + chunk == sb:
            nw = _parity_ios(u, row_off, base, p0, w, m, any_failed, failed, S_d, S_b, S_o, nw)
        return nr, nw
    nr = _small_write_reads(j0, j1, within, chunk, u, base, row_off, w, k, m, p0, col_lo, col_b, any_failed, failed,
                            S_d, S_b, S_o, nr)
    nw = _data_ios(j0, j1, within, chunk, u, base, row_off, p0, w, m, any_failed, failed, S_d, S_b, S_o, nw)
    nw = _parity_ios(col_b, row_off + col_lo, base, p0, w, m, any_failed, failed, S_d, S_b, S_o, nw)
    return nr, nw


@njit(cache=True, _nrt=False, inline="always")
def _data_ios(j0, j1, within, chunk, u, base, row_off, p0, w, m, any_failed, failed, S_d, S_b, S_o, n):
    """The member IOs of a piece's data units j0..j1 (each the bytes the piece covers), a failed
    one left out, from ``n``; returns the new end."""
    for j in range(j0, j1 + 1):
        d = base + _modw(p0 + m + j, w)
        if any_failed and failed[d] != 0:
            continue
        lo, hi = _col_span(within, chunk, j, u)
        n = _member_io(S_d, S_b, S_o, n, d, hi - lo, row_off + lo)
    return n


@njit(cache=True, _nrt=False, inline="always")
def _parity_ios(nbytes, off, base, p0, w, m, any_failed, failed, S_d, S_b, S_o, n):
    """The member IOs of ``nbytes`` at ``off`` on the stripe's m parity units, a failed one left
    out, from ``n``; returns the new end."""
    for i in range(m):
        d = base + _modw(p0 + i, w)
        if any_failed and failed[d] != 0:
            continue
        n = _member_io(S_d, S_b, S_o, n, d, nbytes, off)
    return n


@njit(cache=True, _nrt=False, inline="always")
def _survivor_reads(x0, x1, skip0, skip1, got, base, p0, w, k, failed, col_b, off, S_d, S_b, S_o, nr):
    """Reads of the column (``col_b`` bytes at ``off``) on the surviving units x0..x1-1 of the
    stripe, skipping skip0..skip1, until ``got`` units are read of the k a reconstruction needs.
    Returns (nr, got)."""
    for x in range(x0, x1):
        if got >= k:
            break
        if x >= skip0 and x <= skip1:
            continue
        d = base + _modw(p0 + x, w)
        if failed[d] == 0:
            nr = _member_io(S_d, S_b, S_o, nr, d, col_b, off)
            got += 1
    return nr, got


@njit(cache=True, _nrt=False, inline="always")
def _small_write_reads(j0, j1, within, chunk, u, base, row_off, w, k, m, p0, col_lo, col_b, any_failed, failed,
                       S_d, S_b, S_o, nr):
    """``_map_parity``'s reads before a small write: read-modify-write (old data of the touched
    units and the surviving parity) when it has its inputs and reads less, else reconstruct-write
    (the data units not fully overwritten), else, when neither has its inputs, k survivors of the
    stripe. Returns the new ``nr``."""
    touched = j1 - j0 + 1
    parity_surv = m
    touched_failed = False
    need_failed = False
    # data units whose column is not fully overwritten (md works column
    # by column: a write inside one unit overwrites its own column)
    n_need = k - touched
    if j0 != j1:
        for j in range(j0, j1 + 1):
            lo, hi = _col_span(within, chunk, j, u)
            if hi - lo != u:
                n_need += 1
    if any_failed:
        for j in range(k):
            d = base + _modw(p0 + m + j, w)
            if failed[d] == 0:
                continue
            is_touched = j >= j0 and j <= j1
            full = False
            if is_touched:
                touched_failed = True
                lo, hi = _col_span(within, chunk, j, u)
                full = j0 == j1 or (hi - lo) == u
            if not full:
                need_failed = True
        for i in range(m):
            if failed[base + _modw(p0 + i, w)] != 0:
                parity_surv -= 1
    rmw_reads = touched + parity_surv
    rmw_ok = not touched_failed
    rcw_ok = not need_failed
    if rmw_ok and ((not rcw_ok) or rmw_reads < n_need):
        # read-modify-write: old data of the touched units + surviving parity
        nr = _data_ios(j0, j1, within, chunk, u, base, row_off, p0, w, m, False, failed, S_d, S_b, S_o, nr)
        nr = _parity_ios(col_b, row_off + col_lo, base, p0, w, m, any_failed, failed, S_d, S_b, S_o, nr)
    elif rcw_ok:
        # reconstruct-write: read the data units not fully overwritten
        for j in range(k):
            if j >= j0 and j <= j1:
                lo, hi = _col_span(within, chunk, j, u)
                if j0 == j1 or hi - lo == u:
                    continue
            nr = _member_io(S_d, S_b, S_o, nr, base + _modw(p0 + m + j, w), col_b, row_off + col_lo)
    else:
        # neither path has its inputs: rebuild the stripe from k survivors (data first)
        nr, _ = _survivor_reads(m, m + w, 0, -1, 0, base, p0, w, k, failed, col_b, row_off + col_lo, S_d, S_b, S_o, nr)
    return nr


@njit(cache=True, _nrt=False, inline="always")
def _map_io(is_write, is_seq, o, b, wb, kind, w, k, m, copies, G, u, inv_u, inv_g, inv_w, sb, inv_sb, any_failed,
            failed, dr, DW, S_d, S_b, S_o):
    """Mapping stage: the member IOs of a host IO at array byte offset ``o`` of ``b`` bytes,
    stripe by stripe through the layout family's stage. Reads go to S[0:nr], writes to
    S[wb:wb+nw] as (drive, bytes, drive byte offset). Returns (nr, nw, member read bytes,
    member write bytes)."""
    nr = 0
    nw = wb
    pos = o
    rem = b
    while rem > 0:
        s, g, within = _stripe_at(pos, sb, inv_sb, G, inv_g)
        chunk = sb - within
        chunk = min(chunk, rem)
        j0 = _idiv(within, u, inv_u)
        j1 = _idiv(within + chunk - 1, u, inv_u)
        base = g * w
        row_off = s * u
        if j0 == j1:
            col_lo = within - j0 * u
            col_b = chunk
        else:
            col_lo = 0
            col_b = u
        if kind == _KIND_RAID0:
            nr, nw = _map_raid0(is_write, j0, j1, within, chunk, u, base, row_off, S_d, S_b, S_o, nr, nw)
        elif kind == _KIND_MIRROR:
            nr, nw = _map_mirror(is_write, j0, j1, within, chunk, u, base, row_off, s, copies, any_failed, failed, dr, DW,
                                 S_d, S_b, S_o, nr, nw)
        else:
            nr, nw = _map_parity(is_write, is_seq, j0, j1, within, chunk, u, sb, base, row_off, s, w, k, m, inv_w, col_lo,
                                 col_b, any_failed, failed, S_d, S_b, S_o, nr, nw)
        pos += chunk
        rem -= chunk
    rbytes = 0
    for i in range(nr):
        rbytes += S_b[i]
    wbytes = 0
    for i in range(wb, nw):
        wbytes += S_b[i]
    return nr, nw - wb, rbytes, wbytes


@njit(cache=True, _nrt=False)
def _map_io_call(is_write, is_seq, o, b, wb, kind, w, k, m, copies, G, u, inv_u, inv_g, inv_w, sb, inv_sb, any_failed,
                 failed, dr, DW, S_d, S_b, S_o):
    """``_map_io`` as a call, not inlined: the event loop's general mapping (IOs across stripe
    units, sequential writes, degraded groups, mirrors, RAID 0). A random IO inside one stripe
    unit of a parity array takes the inlined fast path (``_map_parity_unit``); keeping this
    large, less frequent body out of the loop leaves the hot path smaller."""
    return _map_io(is_write, is_seq, o, b, wb, kind, w, k, m, copies, G, u, inv_u, inv_g, inv_w, sb, inv_sb, any_failed,
                   failed, dr, DW, S_d, S_b, S_o)


@njit(cache=True, _nrt=False)
def _coord_read(cl, row_base, row_count, any_cards, failed, lay, dr, DW, S_d, S_b, S_o, d0, ro, o, b, wb, is_seq, t,
                nr, mem_rb):
    """Coordinated reads (IODA-style; ``ArraySpec.coordinated_reads``): the read at ``ro`` on
    member ``d0``, busy on its die, reads the k other units of its stripe instead, as if ``d0``
    were missing, when none of them is busy too (else the read stays on its member, S[0]).
    Returns (member reads, member read bytes, whether it was reconstructed). (A call, not
    inlined: only arrays with coordinated reads make it, and only for reads that meet a busy die.)"""
    kind, w, k, m, copies, G, u = lay[_L_KIND], lay[_L_W], lay[_L_K], lay[_L_M], lay[_L_COPIES], lay[_L_G], lay[_L_U]
    sb = k * u
    inv_sb, inv_u, inv_g, inv_w = 1.0 / sb, 1.0 / u, 1.0 / G, 1.0 / w
    failed[d0] = 1
    n2, _, rb2, _ = _map_io(False, is_seq, o, b, wb, kind, w, k, m, copies, G, u, inv_u, inv_g, inv_w, sb, inv_sb, True,
                            failed, dr, DW, S_d, S_b, S_o)
    failed[d0] = 0
    clear = True
    for i in range(n2):
        if _member_busy(cl, row_base, row_count, any_cards, S_d[i], S_o[i], t):
            clear = False
    if clear:
        return n2, rb2, True
    _member_io(S_d, S_b, S_o, 0, d0, b, ro)
    return nr, mem_rb, False


# -- host arrivals (records: ``_RC_*``) ---------------------------------------------------------


@njit(cache=True, _nrt=False, inline="always")
def _unit_geometry(o, b, sb, inv_sb, G, inv_g, u, u_shift, inv_u, w, inv_w, m, rec, q):
    """The stripe geometry of a random IO at ``o`` of ``b`` bytes in a parity array, into record
    ``q`` of ``rec`` (base drive, drive offset, parity rotation, data drive, data column) when the
    IO lies inside one stripe unit; returns whether it does (``_map_parity_unit`` applies)."""
    s_row, g, within = _stripe_at(o, sb, inv_sb, G, inv_g)
    j0 = (within >> u_shift) if u_shift >= 0 else _idiv(within, u, inv_u)
    col_lo = within - j0 * u
    if col_lo + b <= u and b < sb:
        p0 = w - 1 - (s_row - _idiv(s_row, w, inv_w) * w)
        rec[q, _RC_BASE] = g * w
        rec[q, _RC_RO] = s_row * u + col_lo
        rec[q, _RC_P0] = p0
        rec[q, _RC_J0] = j0
        rec[q, _RC_D0] = g * w + _modw(p0 + m + j0, w)
        return True
    return False


@njit(cache=True, _nrt=False)
def _draw_arrivals(rng, rec, rec_next, n_rec, open_loop, prev_arr, target_iops, read_fraction, random_fraction,
                   sizes, size_cum, size_align, n_pos_of, space, seq_r, seq_w, parity, sb, inv_sb, G, inv_g, u,
                   u_shift, inv_u, w, inv_w, m):
    """Arrivals stage: draw the next ``n_rec`` host IOs into ``rec`` (what the IO is, where it
    goes) and, in open loop, when each next one arrives (Poisson at ``target_iops``, into
    ``rec_next``). The same draws in the same order as drawing each arrival when it happens, but
    off the event chain. Sequential IOs follow per-direction stream pointers ``seq_r``/``seq_w``
    that wrap at the data space. Returns (last arrival time, seq_r, seq_w). (The generator's
    state stays in registers for the batch: stores to ``rec`` would make LLVM reload it from
    ``rng`` at every draw.)"""
    n_sizes = sizes.shape[0]
    r0, r1, r2, r3 = rng[0], rng[1], rng[2], rng[3]
    for q in range(n_rec):
        if open_loop:
            # when the arrival after this one comes (drawn first, as it always was)
            x, r0, r1, r2, r3 = _xoshiro(r0, r1, r2, r3)
            prev_arr = prev_arr - math.log(1.0 - x) / target_iops
            rec_next[q] = prev_arr
        x, r0, r1, r2, r3 = _xoshiro(r0, r1, r2, r3)
        is_read = x < read_fraction
        is_seq = False
        if random_fraction < 1.0:
            x, r0, r1, r2, r3 = _xoshiro(r0, r1, r2, r3)
            is_seq = x >= random_fraction
        si = 0
        if n_sizes > 1:
            x, r0, r1, r2, r3 = _xoshiro(r0, r1, r2, r3)
            while si < n_sizes - 1 and x >= size_cum[si]:
                si += 1
        b = sizes[si]
        if is_seq:
            if is_read:
                if seq_r + b > space:
                    seq_r = 0
                o = seq_r
                seq_r += b
            else:
                if seq_w + b > space:
                    seq_w = 0
                o = seq_w
                seq_w += b
        else:
            x, r0, r1, r2, r3 = _xoshiro(r0, r1, r2, r3)
            o = np.int64(x * n_pos_of[si]) * size_align[si]
        rec[q, _RC_O] = o
        rec[q, _RC_B] = b
        rec[q, _RC_READ] = 1 if is_read else 0
        rec[q, _RC_SEQ] = 1 if is_seq else 0
        geo_ok = False
        if parity and not is_seq:
            geo_ok = _unit_geometry(o, b, sb, inv_sb, G, inv_g, u, u_shift, inv_u, w, inv_w, m, rec, q)
        rec[q, _RC_GEO] = 1 if geo_ok else 0
    rng[0], rng[1], rng[2], rng[3] = r0, r1, r2, r3
    return prev_arr, seq_r, seq_w


# -- rebuild ---------------------------------------------------------------------------------


@njit(cache=True, _nrt=False)
def _rebuild_reads(kind, copies, k, failed, fail_local, surv, n_surv, ch, off, nb, S_d, S_b, S_o, hi_i):
    """Rebuild stage: the reads of chunk ``ch`` (``nb`` bytes at drive offset ``off``) into
    S[hi_i:]: one surviving copy of the failed member's mirror set, rotating chunk by chunk, or
    k survivors of a parity group, rotating which. Returns the new end."""
    if kind == _KIND_MIRROR:
        pair = fail_local[0] // copies
        cnt = 0
        for c in range(copies):
            if failed[pair * copies + c] == 0:
                cnt += 1
        pick = ch % cnt
        for c in range(copies):
            dl = pair * copies + c
            if failed[dl] == 0:
                if pick == 0:
                    hi_i = _member_io(S_d, S_b, S_o, hi_i, dl, nb, off)
                    break
                pick -= 1
    else:
        st0 = ch % n_surv
        for i in range(k):
            hi_i = _member_io(S_d, S_b, S_o, hi_i, surv[(st0 + i) % n_surv], nb, off)
    return hi_i


@njit(cache=True, _nrt=False)
def _rebuild_writes(fail_local, n_fail_local, off, nb, S_d, S_b, S_o, hi_i):
    """Rebuild stage: the chunk's writes to every failed member of group 0, into S[hi_i:].
    Returns the new end."""
    for i in range(n_fail_local):
        hi_i = _member_io(S_d, S_b, S_o, hi_i, fail_local[i], nb, off)
    return hi_i


@njit(cache=True, _nrt=False)
def _rebuild_complete(failed, fail_local, n_fail_local, lay):
    """Rebuild stage: the last chunk is written, the replacements return to service."""
    for i in range(n_fail_local):
        failed[fail_local[i]] = 0
    lay[_L_FAILED] = 0


# ==============================================================================================
# numba kernel
# ==============================================================================================
# One event loop over module-level stages, each ``@njit(inline="always", _nrt=False)``:
# arrivals (``_draw_arrivals``), host-IO mapping per layout family (``_map_io`` through
# ``_map_raid0``/``_map_mirror``/``_map_parity``, and the parity fast path ``_map_parity_unit``),
# member service with cleaning (``_clean_write``, ``_clean_read``), the latency bucket, rebuild
# (``_rebuild_reads``, ``_rebuild_writes``, ``_rebuild_complete``) and the queue operations
# (``_ring_insert``, and ``event_heap``'s ``heap_push``, ``heap_sift_down``). Their scratch
# arrays are allocated in ``_kernel_setup``. Without the NRT they pay no reference counting on their array arguments (numba
# would otherwise increment and decrement each array's count, atomically, around every use).
# The loop is compiled twice (``_simulate_kernel``, ``_simulate_kernel_closed``): the second with
# ``closed`` a compile-time True, for a closed loop of at most ``_RING_EVENTS`` slots on drives
# without disks and no rebuild (the benchmark's case), so LLVM drops the open-loop, heap, rebuild
# and disk paths from its event loop and keeps more of the hot values in registers (the same
# arithmetic, so the same results).


@njit(cache=True, _nrt=False)
def _simulate_kernel(ins, outs):
    """The event loop for any spec (``_event_loop``)."""
    _event_loop(False, ins, outs)


@njit(cache=True, _nrt=False)
def _simulate_kernel_closed(ins, outs):
    """The event loop for a closed loop of at most ``_RING_EVENTS`` slots, no rebuild, no disks
    (``_event_loop`` with ``closed`` True; ``simulate`` picks it)."""
    _event_loop(True, ins, outs)


@njit(cache=True, _nrt=False, inline="always")
def _event_loop(closed, ins, outs):
    """Event loop. ``ins`` (``_KernelIn``) and ``outs`` (``_KernelOut``): every array, built and
    set up by ``_kernel_setup`` (drive rows, the event queue with its first events, the free slots);
    the loop only runs events. ``closed`` (a constant in each kernel): the spec is a closed loop
    of at most ``_RING_EVENTS`` slots with no rebuild and no mechanical drives. (Two named tuples
    rather than arguments: a call of more than 30 arguments is a ``*args`` call in Python's
    bytecode, which numba cannot inline.)

    Why it is one function of over 400 lines: it is the kernel's event loop, one ``while`` over
    the events with every piece of state in preallocated arrays and the hot scalars in locals.
    Its stages are named functions already (the block comment above), inlined or called; what
    stays here is the dispatch between them and the state they share: split further, that state
    would go to a call per event in the hot loop (or, inlined, the code would only move).
    ``tests/engine/test_kernel_reference.py`` holds the loop to its plain Python run."""
    dr, di, dpar, prof, lay, failed = ins.dr, ins.di, ins.dpar, ins.prof, ins.lay, ins.failed
    sizes, size_cum, size_align, n_pos_of = ins.sizes, ins.size_cum, ins.size_align, ins.n_pos_of
    simf, simi, rng = ins.simf, ins.simi, ins.rng
    head, recent, recent_i = ins.head, ins.recent, ins.recent_i
    cl, vic = ins.cl, ins.vic
    row_base, row_count, rec, rec_next = ins.row_base, ins.row_count, ins.rec, ins.rec_next
    surv, fail_local, free_stack, rb_chunk_of = ins.surv, ins.fail_local, ins.free_stack, ins.rb_chunk_of
    state, s_arr, s_cls, s_inrb, s_n2 = ins.state, ins.s_arr, ins.s_cls, ins.s_inrb, ins.s_n2
    ev_t, ev_id = ins.ev_t, ins.ev_id
    S_d, S_b, S_o = ins.S_mem[_M_DRIVE], ins.S_mem[_M_BYTES], ins.S_mem[_M_OFFSET]
    hist, lat_sum, lat_max, counters = outs.hist, outs.lat_sum, outs.lat_max, outs.counters
    sec_max, sec_hist, rebuild_out, sec_reloc = outs.sec_max, outs.sec_hist, outs.rebuild_out, outs.sec_reloc
    # the run's scalars (columns: the table at the top of the module)
    wl = ins.wl
    read_fraction, random_fraction, target_iops = wl[_W_READ], wl[_W_RANDOM], wl[_W_IOPS]
    ws_frac = wl[_W_WS]
    w_start, w_end = simf[_SF_W_START], simf[_SF_W_END]
    rb_start, rb_dt = simf[_SF_RB_START], simf[_SF_RB_DT]
    rb_io, rb_cap, rb_chunks = simi[_SI_RB_IO], simi[_SI_RB_CAP], simi[_SI_RB_CHUNKS]
    reorder_window, mmh, ucap = simi[_SI_REORDER], simi[_SI_MMH], simi[_SI_UCAP]
    u_shift, space = simi[_SI_U_SHIFT], simi[_SI_SPACE]
    n_host_slots = simi[_SI_HOST_SLOTS]
    kind, w, k, m, copies, G, u = lay[_L_KIND], lay[_L_W], lay[_L_K], lay[_L_M], lay[_L_COPIES], lay[_L_G], lay[_L_U]
    sb = k * u
    inv_sb, inv_u, inv_g, inv_w = 1.0 / sb, 1.0 / u, 1.0 / G, 1.0 / w
    parity = kind == _KIND_PARITY
    n_surv = surv.shape[0]
    n_fail_local = fail_local.shape[0]
    rw_len = recent.shape[1]
    n_sec = sec_max.shape[0]
    DW = _R_UNITS + ucap + 1  # a drive row: its units' sorted free times and a +inf sentinel
    # in the closed kernel these are compile-time constants, and LLVM drops the paths they guard
    open_loop = not closed and target_iops > 0.0
    rebuilding = not closed and rb_chunks > 0
    use_ring = closed or simi[_SI_RING] != 0
    any_mech = not closed and simi[_SI_ANY_MECH] != 0
    any_clean = simi[_SI_ANY_CLEAN] != 0
    any_cards = simi[_SI_ANY_CARDS] != 0
    coord = simi[_SI_COORD] != 0
    n_recon = 0  # host reads reconstructed around a busy member (in the window)
    # the event loop's state
    ev_cap = ev_t.shape[0]
    ev_head = simi[_SI_EV_HEAD]  # first queued event (sorted window; 0 for a heap)
    n_ev = simi[_SI_N_EV]  # queued events
    n_free = simi[_SI_N_FREE]  # free open-loop host slots
    n_rec = rec.shape[0]
    rec_k = n_rec  # next arrival record to consume; n_rec: the batch is used up
    rb_issued = 0
    rb_done = 0
    rb_last = -np.inf
    rb_active = rebuilding
    seq_r = 0
    seq_w = 0
    # hot counters and latency sums live in locals until the end
    n_host_r = 0
    n_host_w = 0
    n_host_rb = 0
    n_host_wb = 0
    n_mem_r = 0
    n_mem_w = 0
    n_mem_rb = 0
    n_mem_wb = 0
    n_mem_ior = 0
    ls_all = 0.0
    ls_r = 0.0
    ls_w = 0.0
    ls_rb = 0.0
    lm_r = 0.0
    lm_w = 0.0
    lm_rb = 0.0
    # relocated pages per second (``_reloc_second``): the current second's end, the second, and
    # the drives' relocation counters at its start
    rl_next = -np.inf
    rl_sec = -1
    rl_base = 0.0
    next_arr = simf[_SF_NEXT_ARR]
    prev_arr = next_arr
    while True:
        # ---- the next event: an open-loop arrival or the heap top -----------------------------
        from_arrival = False
        top_t = ev_t[_u(ev_head)] if use_ring else ev_t[0]
        if open_loop and next_arr < w_end and (n_ev == 0 or next_arr <= top_t):
            from_arrival = True
            t = next_arr
            ident = -1
            st = _S_ARRIVE
        else:
            if n_ev == 0:
                break
            # the event stays queued until the queue action at the end of this iteration
            # re-queues it (replace) or drops it
            t = top_t
            ident = ev_id[_u(ev_head)] if use_ring else ev_id[0]
            st = state[_u(ident)]
        if t >= rl_next:
            # a second of the window ends (events come in time order)
            rl_next, rl_sec, rl_base = _reloc_second(cl, sec_reloc, t, w_start, w_end, rl_sec, rl_base)
        if st == _S_ARRIVE and t < w_end and rec_k == n_rec:
            # draw the next batch of arrival records
            prev_arr, seq_r, seq_w = _draw_arrivals(rng, rec, rec_next, n_rec, open_loop, prev_arr, target_iops,
                                                    read_fraction, random_fraction, sizes, size_cum, size_align,
                                                    n_pos_of, space, seq_r, seq_w, parity, sb, inv_sb, G, inv_g, u,
                                                    u_shift, inv_u, w, inv_w, m)
            rec_k = 0
        if from_arrival:
            next_arr = rec_next[rec_k]

        # ---- stage A: the batch of member IOs this event submits ------------------------------
        lo_i = 0
        hi_i = 0
        is_w = False
        post = 0  # 1 defer writes to phase 2, 2 host IO done, 3 rebuild reads done, 4 rebuild writes done
        cur_arr = t
        cur_cls = _H_READ
        cur_inrb = False
        cur_nw = 0
        qact = 0  # queue action at the end: 1 drop the top, 2 replace it by (rq_t, ident), 3 push
        rq_t = t
        skip = False
        if st == _S_ARRIVE:
            if t >= w_end:
                if not from_arrival:
                    state[ident] = _S_IDLE
                    qact = 1
                skip = True
        if st == _S_ARRIVE and not skip:
            q = _u(rec_k)
            rec_k += 1
            is_read = rec[q, _RC_READ] != 0
            is_seq = rec[q, _RC_SEQ] != 0
            b = rec[q, _RC_B]
            # the writes go straight to the region of the slot that will hold them in phase 2
            if open_loop:
                wb = (2 + free_stack[n_free - 1]) * mmh if n_free > 0 else mmh
            else:
                wb = (2 + ident) * mmh
            any_failed = lay[_L_FAILED] > 0
            if rec[q, _RC_GEO] != 0 and not any_failed:
                nr, nw, mem_rb, mem_wb = _map_parity_unit(not is_read, b, k, m, w, rec[q, _RC_BASE], rec[q, _RC_RO],
                                                          rec[q, _RC_P0], rec[q, _RC_D0], rec[q, _RC_J0], S_d, S_b, S_o, wb)
                if coord and is_read:
                    d0 = rec[q, _RC_D0]
                    if _member_busy(cl, row_base, row_count, any_cards, d0, rec[q, _RC_RO], t):
                        nr, mem_rb, recon = _coord_read(cl, row_base, row_count, any_cards, failed, lay, dr, DW, S_d, S_b,
                                                        S_o, d0, rec[q, _RC_RO], rec[q, _RC_O], b, wb, is_seq, t, nr,
                                                        mem_rb)
                        if recon and t >= w_start:
                            n_recon += 1
            else:
                nr, nw, mem_rb, mem_wb = _map_io_call(not is_read, is_seq, rec[q, _RC_O], b, wb, kind, w, k, m, copies, G,
                                                      u, inv_u, inv_g, inv_w, sb, inv_sb, any_failed, failed, dr, DW, S_d,
                                                      S_b, S_o)
            if t >= w_start:
                if is_read:
                    n_host_r += 1
                    n_host_rb += b
                    n_mem_ior += nr
                else:
                    n_host_w += 1
                    n_host_wb += b
                n_mem_r += nr
                n_mem_w += nw
                n_mem_rb += mem_rb
                n_mem_wb += mem_wb
                if rb_active:
                    if is_read:
                        counters[_C_READS_IN_REBUILD] += 1
                    else:
                        counters[_C_WRITES_IN_REBUILD] += 1
            cur_cls = _H_READ if is_read else _H_WRITE
            cur_inrb = rb_active
            cur_nw = nw
            if nr > 0:
                hi_i = nr
                post = 1 if nw > 0 else 2
            else:
                lo_i = wb
                hi_i = wb + nw
                is_w = True
                post = 2
        if st == _S_PHASE2:
            lo_i = (2 + ident) * mmh
            hi_i = lo_i + s_n2[_u(ident)]
            is_w = True
            post = 2
            cur_arr = s_arr[_u(ident)]
            cur_cls = s_cls[_u(ident)]
            cur_inrb = s_inrb[_u(ident)]
        elif st == _S_RB_ISSUE:
            due = rb_start + rb_issued * rb_dt
            if t >= w_end or rb_issued >= rb_chunks:
                state[ident] = _S_IDLE
                qact = 1
                skip = True
            elif t < due:
                qact = 2
                rq_t = due
                skip = True
        if st == _S_RB_ISSUE and not skip:
            ch = rb_issued
            rb_issued += 1
            rb_chunk_of[ident - n_host_slots] = ch
            off = ch * rb_io
            nb = min(rb_cap - off, rb_io)
            hi_i = _rebuild_reads(kind, copies, k, failed, fail_local, surv, n_surv, ch, off, nb, S_d, S_b, S_o, hi_i)
            counters[_C_REBUILD_READS] += hi_i
            post = 3
        elif st == _S_RB_WRITE:
            ch = rb_chunk_of[ident - n_host_slots]
            off = ch * rb_io
            nb = min(rb_cap - off, rb_io)
            lo_i = mmh
            hi_i = mmh
            hi_i = _rebuild_writes(fail_local, n_fail_local, off, nb, S_d, S_b, S_o, hi_i)
            counters[_C_REBUILD_WRITES] += n_fail_local
            is_w = True
            post = 4
        elif st == _S_IDLE:
            qact = 1
            skip = True

        # ---- stage B: queue the batch on the drives (Lindley recursion per FCFS drive) --------
        c_max = t
        if skip:
            hi_i = lo_i
        # columns for the batch's direction (reads or writes)
        if is_w:
            cb = _R_MC
            c_fix = _R_WFIX
            c_poff = _J_WOFF
        else:
            cb = _R_MC + 2
            c_fix = _R_RFIX
            c_poff = _J_ROFF
        for i in range(lo_i, hi_i):
            d = S_d[_u(i)]
            if any_cards:
                # a multi-controller card: the controller of the IO's 64 KiB chunk (RAID 0)
                d = row_base[d] + ((S_o[_u(i)] >> 16) % row_count[d])
            nbytes = S_b[_u(i)]
            fb = d * DW
            ib = d * _J_COUNT
            # the units' free times are kept sorted: the earliest-free unit comes first
            free0 = dr[_u(fb + _R_UNITS)]
            s = max(free0, t)
            # garbage-collection multiplier at the start time, cached with the end of its profile
            # slot: a drive's start times never decrease (t does not, and neither does its
            # earliest unit's free time), so the cache holds until a start reaches that end
            if s < dr[_u(fb + cb)]:
                mul = dr[_u(fb + cb + 1)]
            else:
                poff = di[_u(ib + c_poff)]
                plen = di[_u(ib + c_poff + 1)]
                if plen == 1:
                    mul = prof[poff]
                    dr[_u(fb + cb)] = np.inf
                else:
                    slot = dr[_u(fb + _R_SLOT)]
                    ph = dr[_u(fb + _R_PHASE)]
                    kf = math.floor((s + ph) / slot)
                    pidx = np.int64(kf) % plen
                    if pidx < 0:
                        pidx += plen
                    mul = prof[poff + pidx]
                    dr[_u(fb + cb)] = (kf * slot - ph) + slot
                dr[_u(fb + cb + 1)] = mul
            svc = (dr[_u(fb + c_fix)] + nbytes * dr[_u(fb + c_fix + 1)]) * mul
            c_floor = t  # never binds unless a cleaning drive sets it (times can be < 0 in the warm-up)
            # the drive index unsigned in the cleaning rows (numba emits no negative-index
            # wraparound on each of their ~40 uses)
            du = _u(d)
            if any_clean:
                if is_w:
                    if cl[du, _K_ON] != 0.0:
                        s, svc, c_floor = _clean_write(cl, vic, dr, fb, ucap, du, t, s, svc, mul,
                                                       S_o[_u(i)], nbytes)
                else:
                    if s < cl[du, _K_CLEND]:
                        s = _clean_read(cl, du, s, S_o[_u(i)])
                    if cl[du, _K_NDIES] > 0.0:
                        s = _nand_read(cl, du, s, S_o[_u(i)])
            mech = any_mech and di[_u(ib + _J_MECH)] != 0
            if mech:
                pos_t = _position(dpar, head, recent, rng, d, S_o[i], nbytes, t, reorder_window, ws_frac)
                if pos_t != 0.0:
                    svc += pos_t
            c = s + svc
            if any_clean and is_w:
                # only a cleaning drive's write has a floor above its start (the back end's
                # programs); elsewhere s + svc >= s >= t, and a read's chain of times is one
                # operation shorter without the max
                c = max(c, c_floor)
            if mech and reorder_window > 1:
                ri = recent_i[d]
                recent[d, ri] = c
                ri += 1
                if ri >= rw_len:
                    ri = 0
                recent_i[d] = ri
            # the first unit took it: drop its free time and merge c into the rest without a
            # branch. With A sorted, A[0] <= c and A[ucap] = +inf, the merged order is
            # N[j] = max(A[j], min(A[j + 1], c)) (A[j+1] if it is <= c, else c at the first
            # place where A[j] <= c < A[j+1], else A[j]); read before written, so in place
            rb0 = fb + _R_UNITS
            # Written as min(max(A[j], c), A[j + 1]) (the same value for sorted A): the stored value
            # is never the loaded A[j] as such, so the vectorised loop stores unconditionally with
            # plain vmaxpd/vminpd (max(A[j], ...) stored back to A[j] became masked stores, which
            # are slow and stall the next IO's loads from the row)
            for j in range(ucap):
                dr[_u(rb0 + j)] = min(max(dr[_u(rb0 + j)], c), dr[_u(rb0 + j + 1)])
            if s >= w_start and s < w_end:
                dr[_u(fb + _R_BUSY)] += svc
            # an SSD read's fixed time is at least its die's array read (tR): the host sees it
            # max(tR - fixed, 0) after its unit is done (0 for writes and disks); the unit's
            # occupancy, and so the FOB rates, stay the fitted ones
            c_max = max(c_max, _posted_ack(cl, du, is_w, t, c + dr[_u(fb + c_fix + 2)], nbytes))

        # ---- stage C: what follows ------------------------------------------------------------
        if skip:
            pass
        elif post == 1:
            # two-phase small write: the writes go out when the reads are done
            if from_arrival:
                if n_free == 0:
                    counters[_C_SATURATED] = 1
                    break
                n_free -= 1
                ident = free_stack[n_free]  # the slot whose region holds the writes
            s_n2[_u(ident)] = cur_nw
            s_arr[_u(ident)] = t
            s_cls[_u(ident)] = cur_cls
            s_inrb[_u(ident)] = cur_inrb
            state[_u(ident)] = _S_PHASE2
            qact = 3 if from_arrival else 2
            rq_t = c_max
        elif post == 2:
            # record the host IO's latency. Bucket: integer ns below 128 ns, then 128 per power
            # of two, read off the float's exponent and top 7 mantissa bits
            # (latency_bucket_edges_s() gives the edges)
            lat = c_max - cur_arr
            idx = _latency_bucket(lat)
            if cur_arr >= w_start:
                hist[_u(cur_cls),_u(idx)] += 1
                ls_all += lat
                # without a branch: reads and writes come in random order (adding 0.0 to a
                # sum or taking the max with it changes nothing, latencies being >= 0)
                lat_r = lat if cur_cls == _H_READ else 0.0
                lat_w = lat - lat_r
                ls_r += lat_r
                lm_r = max(lm_r, lat_r)
                ls_w += lat_w
                lm_w = max(lm_w, lat_w)
                if cur_inrb:
                    hist[_H_REBUILD, idx] += 1
                    ls_rb += lat
                    lm_rb = max(lm_rb, lat)
            if c_max >= w_start and c_max < w_end:
                sec = int(c_max - w_start)
                if sec >= n_sec:
                    sec = n_sec - 1
                sec_max[_u(sec)] = max(sec_max[_u(sec)], lat)
                sec_hist[_u(sec),_u(idx >> _COARSE_SHIFT)] += 1
            if not open_loop:
                # the slot's next IO arrives as this one completes (after a read the state is
                # already "arrive": no branch on which phase finished)
                state[_u(ident)] = _S_ARRIVE
                qact = 2
                rq_t = c_max
            elif st == _S_PHASE2:
                state[ident] = _S_IDLE
                free_stack[n_free] = ident
                n_free += 1
                qact = 1
        elif post == 3:
            state[ident] = _S_RB_WRITE
            qact = 2
            rq_t = c_max
        elif post == 4:
            rb_done += 1
            counters[_C_REBUILD_CHUNKS] = rb_done
            rb_last = max(rb_last, c_max)
            if rb_done == rb_chunks:
                rebuild_out[0] = rb_last
                rb_active = False
                _rebuild_complete(failed, fail_local, n_fail_local, lay)
            if rb_issued < rb_chunks and t < w_end:
                due = rb_start + rb_issued * rb_dt
                state[ident] = _S_RB_ISSUE
                qact = 2
                rq_t = max(c_max, due)
            else:
                state[ident] = _S_IDLE
                qact = 1

        # ---- the queue action (one site, so the queue code is inlined once) -------------------
        if (qact == 1 or qact == 2) and use_ring:
            # remove the top
            ev_t[_u(ev_head)] = -np.inf  # the new sentinel before the window
            ev_head += 1
            n_ev -= 1
        if (qact == 1 or qact == 2) and not use_ring:
            # heap: a dropped top is replaced by the last event, a re-queued one by its new time;
            # either enters at the root and sifts down (a pop and a push at once)
            if qact == 1:
                n_ev -= 1
                tp = ev_t[n_ev]
                ident = ev_id[n_ev]
            else:
                tp = rq_t
            if n_ev > 0:
                heap_sift_down(ev_t, ev_id, n_ev, tp, ident)
        if (qact == 2 and use_ring) or qact == 3:
            tp = rq_t
            if use_ring:
                ev_head, n_ev = _ring_insert(ev_t, ev_id, ev_head, n_ev, ev_cap, tp, ident)
            else:
                n_ev = heap_push(ev_t, ev_id, n_ev, tp, ident)
    rebuild_out[1] = rb_last
    counters[_C_HOST_READS] += n_host_r
    counters[_C_HOST_WRITES] += n_host_w
    counters[_C_HOST_READ_BYTES] += n_host_rb
    counters[_C_HOST_WRITE_BYTES] += n_host_wb
    counters[_C_MEMBER_READS] += n_mem_r
    counters[_C_MEMBER_WRITES] += n_mem_w
    counters[_C_MEMBER_READ_BYTES] += n_mem_rb
    counters[_C_MEMBER_WRITE_BYTES] += n_mem_wb
    counters[_C_MEMBER_IOS_READS] += n_mem_ior
    counters[_C_RECONSTRUCTED_READS] += n_recon
    lat_sum[_H_ALL] += ls_all
    lat_sum[_H_READ] += ls_r
    lat_sum[_H_WRITE] += ls_w
    lat_sum[_H_REBUILD] += ls_rb
    lat_max[_H_READ] = max(lat_max[_H_READ], lm_r)
    lat_max[_H_WRITE] = max(lat_max[_H_WRITE], lm_w)
    lat_max[_H_REBUILD] = max(lat_max[_H_REBUILD], lm_rb)
    _reloc_second(cl, sec_reloc, np.inf, w_start, w_end, rl_sec, rl_base)

# ==============================================================================================
# spec, result, public functions
# ==============================================================================================


@dataclass(frozen=True, slots=True, kw_only=True, eq=False)
class ArraySpec:
    """One array simulation: drives, layout, workload, time window, failures, rebuild, seed.

    ``service_models`` holds one model shared by every member, or one per simulated member
    (``group_count * group_width`` of them). Drives beyond whole groups are hot spares and are not
    simulated. The simulated window is ``[window_start_s, window_start_s + duration_s)``, preceded
    by ``warmup_s`` of unrecorded simulation from empty queues. Latency statistics cover host IOs
    arriving in the window (the run drains them); IOPS per second counts completions per second.
    """

    layout: Layout
    drive_count: int
    service_models: tuple[ServiceModel, ...]
    workload: Workload
    duration_s: float = 10.0
    warmup_s: float = 0.25
    window_start_s: float = 0.0
    seed: int = 0
    # Children of np.random.SeedSequence(seed): split_simulation sets (i,) for replica i.
    spawn_key: tuple[int, ...] = ()
    failed_drives: int = 0
    # 0 = no rebuild (degraded for the whole run); > 0 = rebuild the failed members from t = 0.
    rebuild_rate_bytes_per_s: float = 0.0
    rebuild_io_bytes: int = 1 * MiB
    rebuild_window: int = 4
    # Capacity of one member: the rebuild's size and the span mechanical seeks are scaled to.
    # 0 = not given (1 TB nominal for seek geometry; a rebuild then needs it).
    drive_capacity_bytes: float = 0.0
    # Mechanical drives: SATF approximation over up to this many queued IOs (1 = plain FCFS).
    reorder_window: int = 1
    # Coordinated reads (IODA-style, parity layouts): a random read inside one stripe unit whose
    # member is busy on its die (a NAND program or erase, or a cleaning step, in flight when the
    # read is submitted) reads the k other units of its stripe instead (docs/array-model.md).
    coordinated_reads: bool = False

    def __post_init__(self) -> None:
        check(validate_spec(self))

    @property
    def simulated_drive_count(self) -> int:
        return group_count(self.layout, self.drive_count) * self.layout.group_width


def validate_spec(spec: ArraySpec, prefix: str = "spec") -> list[Violation]:
    """Every violation in ``spec``, each naming its field and the allowed range."""
    v: list[Violation] = []
    lay = spec.layout
    if not isinstance(lay, Layout):
        return [Violation(field=f"{prefix}.layout", reason=f"must be a layout.Layout (make_layout), got {type(lay).__name__}")]
    if not check_range(v, f"{prefix}.drive_count", spec.drive_count, lay.group_width, MAX_DRIVES, integer=True,
                       note=f"({lay.group_width} = the group width of {lay.name})"):
        n_sim = 0
    else:
        n_sim = group_count(lay, spec.drive_count) * lay.group_width
    models = spec.service_models
    if not isinstance(models, tuple) or not models or not all(isinstance(mo, ServiceModel) for mo in models):
        v.append(Violation(field=f"{prefix}.service_models", reason="must be a non-empty tuple of service.ServiceModel"))
    elif n_sim and len(models) not in (1, n_sim):
        v.append(Violation(field=f"{prefix}.service_models",
                           reason=f"must hold 1 model (shared) or one per simulated drive ({n_sim}), got {len(models)}"))
    else:
        for i, mo in enumerate(models):
            v.extend(_validate_model(mo, f"{prefix}.service_models[{i}]"))
    if not isinstance(spec.workload, Workload):
        v.append(Violation(field=f"{prefix}.workload", reason="must be a workload.Workload"))
    check_range(v, f"{prefix}.duration_s", spec.duration_s, 0.001, MAX_DURATION_S, unit="s")
    check_range(v, f"{prefix}.warmup_s", spec.warmup_s, 0, 3_600, unit="s")
    check_range(v, f"{prefix}.window_start_s", spec.window_start_s, 0, 1e9, unit="s")
    check_range(v, f"{prefix}.seed", spec.seed, 0, integer=True)
    if not isinstance(spec.spawn_key, tuple) or not all(isinstance(x, int) and x >= 0 for x in spec.spawn_key):
        v.append(Violation(field=f"{prefix}.spawn_key", reason=f"must be a tuple of integers >= 0, got {spec.spawn_key!r}"))
    tol = lay.failures_tolerated
    check_range(v, f"{prefix}.failed_drives", spec.failed_drives, 0, tol, integer=True,
                note=f"({lay.name} tolerates {tol} failures per group)")
    r = spec.rebuild_rate_bytes_per_s
    if check_range(v, f"{prefix}.rebuild_rate_bytes_per_s", r, 0, 1e12, unit="bytes/s", note="(0 = no rebuild)") and r > 0:
        if spec.failed_drives == 0:
            v.append(Violation(field=f"{prefix}.rebuild_rate_bytes_per_s",
                               reason="a rebuild needs failed_drives >= 1 (set the rate to 0 for a healthy array)"))
        if not is_finite(spec.drive_capacity_bytes) or spec.drive_capacity_bytes <= 0:
            v.append(Violation(field=f"{prefix}.drive_capacity_bytes", reason="must be > 0 bytes when a rebuild is simulated"))
    if not isinstance(spec.rebuild_io_bytes, int) or not (4096 <= spec.rebuild_io_bytes <= 64 * MiB) or spec.rebuild_io_bytes % 512:
        v.append(Violation(field=f"{prefix}.rebuild_io_bytes",
                           reason=f"must be a multiple of 512 in [4096, {64 * MiB}], got {spec.rebuild_io_bytes!r}"))
    check_range(v, f"{prefix}.rebuild_window", spec.rebuild_window, 1, 1024, integer=True)
    cap = spec.drive_capacity_bytes
    if check_range(v, f"{prefix}.drive_capacity_bytes", cap, 0, 1e15, unit="bytes", note="(0 = not given)") and 0 < cap < lay.stripe_unit_bytes:
        v.append(Violation(field=f"{prefix}.drive_capacity_bytes",
                           reason=f"must be at least one stripe unit ({lay.stripe_unit_bytes} bytes), got {cap!r}"))
    check_range(v, f"{prefix}.reorder_window", spec.reorder_window, 1, MAX_REORDER_WINDOW, integer=True)
    if not isinstance(spec.coordinated_reads, bool):
        v.append(Violation(field=f"{prefix}.coordinated_reads", reason=f"must be true or false, got {spec.coordinated_reads!r}"))
    elif spec.coordinated_reads and isinstance(lay, Layout) and (lay.kind is LayoutKind.RAID0 or lay.is_mirror):
        v.append(Violation(field=f"{prefix}.coordinated_reads",
                           reason=f"needs a parity layout (raid5, raid6, ec:K+M) to reconstruct from, got {lay.name}"))
    if isinstance(spec.workload, Workload):
        wl = spec.workload
        for i, (size, _) in enumerate(wl.io_size_mix):
            if size > 256 * lay.stripe_data_bytes:
                v.append(Violation(field=f"{prefix}.workload.io_size_mix[{i}].io_bytes",
                                   reason=f"must be <= 256 stripes ({256 * lay.stripe_data_bytes} bytes for {lay.name}), got {size}"))
        if wl.target_iops > 1e9:
            v.append(Violation(field=f"{prefix}.workload.target_iops", reason=f"must be <= 1e9 for simulation, got {wl.target_iops}"))
        if wl.target_iops == 0 and wl.queue_depth > _OPEN_LOOP_POOL:
            v.append(Violation(field=f"{prefix}.workload.queue_depth", reason=f"must be <= {_OPEN_LOOP_POOL}, got {wl.queue_depth}"))
    return v


# step_pages may be a fraction of a page: a similar drive k times smaller (ssd.similar_model) cleans
# 1/k of the real drive's flash page per step
_CLEANING_RANGES = {"step_pages": Range(lo=0.01, hi=1e6), "block_pages": Range(lo=2, hi=_MAX_BLOCK_PAGES),
                    "relocation_scale": Range(lo=0, hi=1e3),
                    "precondition_drive_writes": Range(lo=0, hi=100), "write_buffer_pages": Range(lo=0, hi=1e9),
                    "write_buffer_s": Range(lo=0, hi=60, unit="s"), "posted_write_fixed_s": Range(lo=0, hi=1, unit="s"),
                    "posted_write_per_byte_s": Range(lo=0, hi=1e-3, unit="s"), "nand_dies": Range(lo=0, hi=_MAX_DIES, integer=True),
                    "nand_program_pages": Range(lo=0, hi=1e9), "nand_erase_pages": Range(lo=0, hi=1e12),
                    "nand_program_s": Range(lo=0, hi=0.1, unit="s"), "nand_erase_s": Range(lo=0, hi=0.1, unit="s"),
                    "nand_suspend_s": Range(lo=0, hi=0.1, unit="s")}


def _validate_model(mo: ServiceModel, path: str) -> list[Violation]:
    v: list[Violation] = []
    check_range(v, f"{path}.parallel_units", mo.parallel_units, 1, MAX_PARALLEL_UNITS, integer=True)
    for name in ("read_fixed_s", "read_per_byte_s", "write_fixed_s", "write_per_byte_s", "full_rotation_s",
                 "average_seek_s", "full_stroke_seek_s"):
        check_range(v, f"{path}.{name}", getattr(mo, name), 0, 10, unit="s")
    # a sequential IO on a mechanical drive has no positioning time: fixed + transfer must be > 0
    if not v and mo.read_fixed_s + 4096 * mo.read_per_byte_s <= 0:
        v.append(Violation(field=f"{path}.read_fixed_s", reason="a 4 KiB read must take > 0 s (read_fixed_s + 4096 read_per_byte_s)"))
    if not v and mo.write_fixed_s + 4096 * mo.write_per_byte_s <= 0:
        v.append(Violation(field=f"{path}.write_fixed_s", reason="a 4 KiB write must take > 0 s (write_fixed_s + 4096 write_per_byte_s)"))
    check_range(v, f"{path}.profile_slot_s", mo.profile_slot_s, 1e-6, 1e6, unit="s")
    check_range(v, f"{path}.read_array_s", mo.read_array_s, 0, 0.01, unit="s")
    for name in ("write_multiplier_profile", "read_multiplier_profile"):
        p = np.asarray(getattr(mo, name), dtype=float)
        if p.ndim != 1 or p.size < 1 or p.size > 10_000_000 or not np.all(np.isfinite(p)) or np.any(p <= 0) or np.any(p > 1e4):
            v.append(Violation(field=f"{path}.{name}", reason="must be a 1-d array of 1 to 1e7 multipliers in (0, 1e4]"))
    if not isinstance(mo.controllers, int) or not (1 <= mo.controllers <= 16) or (mo.mechanical and mo.controllers != 1):
        v.append(Violation(field=f"{path}.controllers", reason=f"must be an integer in [1, 16] (1 for a disk), got {mo.controllers!r}"))
    if mo.cleaning:
        if (check_range(v, f"{path}.span_pages", mo.span_pages, 1, 1e13, unit="pages")
                and check_range(v, f"{path}.raw_pages", mo.raw_pages, mo.span_pages, 1e14, lo_open=True, lo_name="span_pages", unit="pages")):
            spare = mo.raw_pages - mo.span_pages
            check_range(v, f"{path}.low_free_pages", mo.low_free_pages, 0, mo.high_free_pages, hi_name="high_free_pages")
            check_range(v, f"{path}.high_free_pages", mo.high_free_pages, 0, spare, hi_open=True, hi_name="raw_pages - span_pages")
        if (check_range(v, f"{path}.slc_cache_pages", mo.slc_cache_pages, 0, max(mo.raw_pages, 1.0), hi_open=True, hi_name="raw_pages")
                and mo.slc_cache_pages > 0.0):
            for name in ("slc_page_s", "fold_page_s"):
                check_range(v, f"{path}.{name}", getattr(mo, name), 0, 1, lo_open=True, unit="s", note="with an SLC cache")
        for name in ("host_page_s", "relocation_page_s", "erase_page_s"):
            check_range(v, f"{path}.{name}", getattr(mo, name), 0, 1, unit="s")
        for name, allowed in _CLEANING_RANGES.items():
            allowed.check(v, f"{path}.{name}", getattr(mo, name))
        if isinstance(mo.nand_dies, int) and mo.nand_dies > 0:
            for name in ("nand_program_pages", "nand_erase_pages", "nand_program_s", "nand_erase_s"):
                check_range(v, f"{path}.{name}", getattr(mo, name), 0, None, lo_open=True, note="with nand_dies > 0")
            sp = tuple(mo.nand_program_spread)
            if len(sp) > _MAX_PAGE_TYPES or any(not (0.0 < float(x) <= 100.0) for x in sp):
                v.append(Violation(field=f"{path}.nand_program_spread",
                                   reason=f"must be at most {_MAX_PAGE_TYPES} relative times in (0, 100], got {sp!r}"))
    return v


def _ratio(num: float, den: float) -> float:
    """``num / den`` as a float, NaN when ``den`` is 0 (a ratio per host IO of a run with none)."""
    return float(num) / den if den else math.nan


@dataclass(frozen=True, slots=True, kw_only=True, eq=False)
class ArrayResult:
    """What one simulation (or a merge of replicas) measured. Times in seconds.

    Histograms: ``latency_histograms[c]`` for c = 0 all, 1 reads, 2 writes, 3 host IOs arriving
    while a rebuild ran; bucket i covers ``latency_bucket_edges_s()[i:i+2]``.
    ``second_histograms`` are the per-second coarse histograms (8 buckets per octave) behind the
    per-second p99.
    """

    layout_name: str
    drive_name: str
    drive_count: int
    simulated_drive_count: int
    failed_drives: int
    seed: int
    spawn_keys: tuple[tuple[int, ...], ...]
    window_start_s: float
    duration_s: float
    closed_loop: bool
    queue_depth: int
    offered_iops: float
    counters: np.ndarray
    latency_histograms: np.ndarray
    latency_sum_s: np.ndarray
    latency_max_s: np.ndarray
    iops_per_second: np.ndarray
    second_max_latency_s: np.ndarray
    second_histograms: np.ndarray
    drive_busy_s: np.ndarray
    drive_parallel_units: np.ndarray
    rebuild_simulated: bool
    rebuild_bytes: float
    rebuild_chunks: int
    rebuild_chunks_done: int
    rebuild_end_s: float
    saturated: bool
    replicas: int = 1
    # Cleaning drives (zeros otherwise): host pages written and pages relocated by cleaning per
    # simulated drive over the whole run (warm-up included), relocations per second of the window.
    drive_host_pages: np.ndarray = field(default_factory=lambda: np.zeros(0))
    drive_relocated_pages: np.ndarray = field(default_factory=lambda: np.zeros(0))
    second_relocated_pages: np.ndarray = field(default_factory=lambda: np.zeros(0))

    @property
    def write_amplification(self) -> float:
        """Flash pages programmed per host page over the cleaning drives (1.0 without any)."""
        host = float(self.drive_host_pages.sum())
        return (host + float(self.drive_relocated_pages.sum())) / host if host > 0 else 1.0

    # ---- counts -------------------------------------------------------------------------------
    @property
    def host_reads(self) -> int:
        return int(self.counters[_C_HOST_READS])

    @property
    def host_writes(self) -> int:
        return int(self.counters[_C_HOST_WRITES])

    @property
    def host_ios(self) -> int:
        return self.host_reads + self.host_writes

    @property
    def completions_in_window(self) -> int:
        return int(self.iops_per_second.sum())

    @property
    def achieved_iops(self) -> float:
        """Host IOs completed per second of window."""
        return self.completions_in_window / self.duration_s

    @property
    def member_ios_per_host_io(self) -> float:
        return _ratio(self.counters[_C_MEMBER_READS] + self.counters[_C_MEMBER_WRITES], self.host_ios)

    @property
    def member_ios_per_host_read(self) -> float:
        return _ratio(self.counters[_C_MEMBER_IOS_READS], self.host_reads)

    @property
    def member_ios_per_host_write(self) -> float:
        c = self.counters
        return _ratio(c[_C_MEMBER_READS] + c[_C_MEMBER_WRITES] - c[_C_MEMBER_IOS_READS], self.host_writes)

    @property
    def member_write_bytes_per_host_write_byte(self) -> float:
        return _ratio(self.counters[_C_MEMBER_WRITE_BYTES], self.counters[_C_HOST_WRITE_BYTES])

    @property
    def member_reads(self) -> int:
        return int(self.counters[_C_MEMBER_READS])

    @property
    def member_writes(self) -> int:
        return int(self.counters[_C_MEMBER_WRITES])

    # ---- latency ------------------------------------------------------------------------------
    def latency_count(self, kind: str = "all") -> int:
        return int(self.latency_histograms[_kind_index(kind)].sum())

    def latency_percentile_s(self, q: float, kind: str = "all") -> float:
        """Latency at quantile ``q`` in [0, 1] (bucket midpoint; the maximum for q = 1)."""
        i = _kind_index(kind)
        if q >= 1.0:
            return float(self.latency_max_s[i]) if self.latency_count(kind) else math.nan
        return _hist_quantile(self.latency_histograms[i], q, float(self.latency_max_s[i]))

    def latency_fraction_above(self, t_s: float, kind: str = "all") -> float:
        """Fraction of host IOs slower than ``t_s`` (exact at bucket edges, interpolated inside)."""
        h = self.latency_histograms[_kind_index(kind)]
        n = h.sum()
        if not n:
            return math.nan
        edges = latency_bucket_edges_s()
        i = int(np.searchsorted(edges, t_s, side="right")) - 1
        i = min(max(i, 0), h.size - 1)
        frac_in = (edges[i + 1] - t_s) / (edges[i + 1] - edges[i])
        return float(h[i + 1:].sum() + h[i] * min(max(frac_in, 0.0), 1.0)) / float(n)

    def latency_mean_s(self, kind: str = "all") -> float:
        return _ratio(self.latency_sum_s[_kind_index(kind)], self.latency_count(kind))

    def latency_cdf(self, kind: str = "all") -> tuple[np.ndarray, np.ndarray]:
        """(latency_s upper bucket edges, cumulative fraction) over occupied buckets, for plots."""
        h = self.latency_histograms[_kind_index(kind)]
        n = h.sum()
        nz = np.nonzero(h)[0]
        if not n:
            return np.empty(0), np.empty(0)
        lo, hi = nz[0], nz[-1] + 1
        edges = latency_bucket_edges_s()
        return edges[lo + 1:hi + 1], np.cumsum(h[lo:hi]) / n

    # ---- per second ---------------------------------------------------------------------------
    @property
    def _full_seconds(self) -> int:
        return max(1, int(math.floor(self.duration_s + 1e-9))) if self.duration_s >= 1.0 else 0

    @property
    def second_p99_latency_s(self) -> np.ndarray:
        """p99 latency of the IOs completing in each second, from 8-per-octave buckets: the upper
        edge of the bucket holding it (never below the true value, at most 12.5 % above), capped
        by the second's largest latency. Upper edges keep the worst second's p99 at or above the
        overall median (every second's true p99 below the median is impossible) where midpoints
        put a run of near-equal latencies below it."""
        edges = latency_bucket_edges_s()[::1 << _COARSE_SHIFT]
        out = np.full(self.second_histograms.shape[0], np.nan)
        for s in range(self.second_histograms.shape[0]):
            h = self.second_histograms[s]
            n = int(h.sum())
            if n:
                c = np.cumsum(h)
                i = int(np.searchsorted(c, math.ceil(0.99 * n)))
                out[s] = min(edges[i + 1], float(self.second_max_latency_s[s]))
        return out

    @property
    def worst_second_p99_latency_s(self) -> float:
        n = self._full_seconds
        if n == 0:
            return math.nan
        vals = self.second_p99_latency_s[:n]
        return float(np.nanmax(vals)) if np.any(np.isfinite(vals)) else math.nan

    @property
    def worst_second_max_latency_s(self) -> float:
        n = self._full_seconds
        return float(self.second_max_latency_s[:n].max()) if n else math.nan

    @property
    def min_second_iops(self) -> float:
        n = self._full_seconds
        return float(self.iops_per_second[:n].min()) if n else math.nan

    # ---- drives, rebuild ----------------------------------------------------------------------
    @property
    def drive_utilisation(self) -> np.ndarray:
        """Busy unit-seconds per drive / (window seconds x parallel units), in [0, 1]."""
        return self.drive_busy_s / (self.duration_s * self.drive_parallel_units)

    @property
    def rebuild_done(self) -> bool:
        return self.rebuild_simulated and self.rebuild_chunks_done >= self.rebuild_chunks

    @property
    def rebuild_duration_s(self) -> float:
        """Rebuild time from its start (the window start): measured if it finished in the run,
        otherwise extrapolated from the progress made (``rebuild_done`` says which)."""
        if not self.rebuild_simulated:
            return math.nan
        if self.rebuild_done:
            return self.rebuild_end_s - self.window_start_s
        if self.rebuild_chunks_done == 0:
            return math.inf
        return self.duration_s * self.rebuild_chunks / self.rebuild_chunks_done

    def summary(self) -> dict[str, Any]:
        """Flat record of the headline figures (JSON-ready; latencies in seconds)."""
        out: dict[str, Any] = {
            "layout": self.layout_name,
            "drive_name": self.drive_name,
            "drive_count": self.drive_count,
            "simulated_drive_count": self.simulated_drive_count,
            "failed_drives": self.failed_drives,
            "seed": self.seed,
            "replicas": self.replicas,
            "window_start_s": self.window_start_s,
            "duration_s": self.duration_s,
            "closed_loop": self.closed_loop,
            "queue_depth": self.queue_depth,
            "offered_iops": self.offered_iops,
            "achieved_iops": self.achieved_iops,
            "saturated": self.saturated,
            "host_reads": self.host_reads,
            "host_writes": self.host_writes,
            "member_ios_per_host_io": self.member_ios_per_host_io,
            "member_ios_per_host_read": self.member_ios_per_host_read,
            "member_ios_per_host_write": self.member_ios_per_host_write,
            "member_write_bytes_per_host_write_byte": self.member_write_bytes_per_host_write_byte,
        }
        for kind in ("all", "read", "write"):
            pre = "latency" if kind == "all" else f"{kind}_latency"
            for name, q in _PERCENTILES:
                out[f"{pre}_{name}_s"] = _nan_none(self.latency_percentile_s(q, kind))
            out[f"{pre}_max_s"] = _nan_none(self.latency_percentile_s(1.0, kind))
            out[f"{pre}_mean_s"] = _nan_none(self.latency_mean_s(kind))
        out["worst_second_p99_latency_s"] = _nan_none(self.worst_second_p99_latency_s)
        out["worst_second_max_latency_s"] = _nan_none(self.worst_second_max_latency_s)
        out["min_second_iops"] = _nan_none(self.min_second_iops)
        util = self.drive_utilisation
        out["drive_utilisation_mean"] = float(util.mean()) if util.size else None
        out["drive_utilisation_max"] = float(util.max()) if util.size else None
        if self.rebuild_simulated:
            out["rebuild_done"] = self.rebuild_done
            out["rebuild_duration_s"] = _nan_none(self.rebuild_duration_s)
            out["rebuild_bytes"] = self.rebuild_bytes
            for name, q in _PERCENTILES:
                out[f"rebuild_latency_{name}_s"] = _nan_none(self.latency_percentile_s(q, "rebuild"))
            out["rebuild_latency_max_s"] = _nan_none(self.latency_percentile_s(1.0, "rebuild"))
        return out


_PERCENTILES = (("p50", 0.50), ("p90", 0.90), ("p99", 0.99), ("p999", 0.999), ("p9999", 0.9999))


def _nan_none(x: float) -> float | None:
    return None if (x is None or not math.isfinite(x)) else float(x)


def _kind_index(kind: str) -> int:
    try:
        return {"all": _H_ALL, "read": _H_READ, "write": _H_WRITE, "rebuild": _H_REBUILD}[kind]
    except KeyError:
        raise InvalidInputError.one("kind", f"must be one of all, read, write, rebuild; got {kind!r}") from None


_EDGES_CACHE: list[np.ndarray] = []


def latency_bucket_edges_s() -> np.ndarray:
    """Lower edges of the latency buckets (plus the final upper edge), in seconds."""
    if not _EDGES_CACHE:
        idx = np.arange(LATENCY_BUCKET_COUNT + 1, dtype=np.float64)
        q = np.floor(idx / _SUB)
        r = idx - q * _SUB
        low_ns = np.where(idx < _SUB, idx, (_SUB + r) * np.exp2(q - 1))
        _EDGES_CACHE.append(low_ns * 1e-9)
    return _EDGES_CACHE[0]


def _hist_quantile(h: np.ndarray, q: float, vmax: float) -> float:
    n = int(h.sum())
    if n == 0:
        return math.nan
    # the ceil(q n)-th smallest; q n is rounded first, as q = 99.9 / 100 is 0.9990000000000001
    # in binary (ceil would take the next IO: the 19,981st of 20,000 for p99.9)
    target = max(1, math.ceil(round(q * n, 6)))
    c = np.cumsum(h)
    i = int(np.searchsorted(c, target))
    edges = latency_bucket_edges_s()
    return min(0.5 * (edges[i] + edges[i + 1]), vmax)


# ---- building the kernel's inputs ------------------------------------------------------------


def _layout_arrays(spec: ArraySpec) -> tuple[np.ndarray, np.ndarray, int]:
    lay = spec.layout
    n_sim = spec.simulated_drive_count
    w = lay.group_width
    if lay.kind is LayoutKind.RAID0:
        kind, k, m, copies = _KIND_RAID0, w, 0, 1
    elif lay.is_mirror:
        kind, k, m, copies = _KIND_MIRROR, lay.data_drives, 0, lay.mirror_copies
    else:
        kind, k, m, copies = _KIND_PARITY, lay.data_drives, lay.parity_units, 1
    u = lay.stripe_unit_bytes
    cap = spec.drive_capacity_bytes or _NOMINAL_CAPACITY_BYTES
    rows_total = max(1, int(cap // u))
    rows = max(1, int(rows_total * spec.workload.working_set_fraction))
    failed = np.zeros(n_sim, np.int8)
    failed[: spec.failed_drives] = 1  # the first members of group 0
    arr = np.zeros(_L_COUNT, np.int64)
    arr[_L_KIND], arr[_L_W], arr[_L_K], arr[_L_M], arr[_L_COPIES] = kind, w, k, m, copies
    arr[_L_G], arr[_L_U], arr[_L_ROWS], arr[_L_FAILED] = n_sim // w, u, rows, spec.failed_drives
    return arr, failed, k


def _seek_curve(average_s: float, full_stroke_s: float) -> tuple[float, float]:
    """seek(d) = a + b sqrt(d) for a seek over fraction d of the stroke (Ruemmler & Wilkes 1994,
    'An introduction to disk drive modeling', short seeks ~ sqrt(distance)). Random positions on
    the whole surface give a seek distance with density 2(1-d), E[sqrt(d)] = 8/15; a and b are
    chosen so the mean is ``average_s`` and seek(1) is ``full_stroke_s`` (a >= 0)."""
    if average_s <= 0:
        return 0.0, 0.0
    if full_stroke_s > average_s:
        b = (full_stroke_s - average_s) * 15.0 / 7.0
        a = full_stroke_s - b
        if a >= 0:
            return a, b
    return 0.0, average_s * 15.0 / 8.0


def _row_models(spec: ArraySpec) -> tuple[list[ServiceModel], np.ndarray, np.ndarray]:
    """The kernel's drive rows: one per simulated member, or one per controller of a
    multi-controller card (``ServiceModel.controllers``), with each member's first row and row
    count."""
    n_sim = spec.simulated_drive_count
    models = spec.service_models if len(spec.service_models) == n_sim else spec.service_models * n_sim
    if all(mo.controllers == 1 for mo in spec.service_models):
        # one row per member (every drive but an SSD 910): no per-member loop (a disk array has hundreds)
        return list(models), np.arange(n_sim, dtype=np.int64), np.ones(n_sim, np.int64)
    rows: list[ServiceModel] = []
    base = np.zeros(n_sim, np.int64)
    count = np.zeros(n_sim, np.int64)
    for d, mo in enumerate(models):
        base[d] = len(rows)
        count[d] = mo.controllers
        rows.extend([mo] * mo.controllers)
    return rows, base, count


def _drive_arrays(spec: ArraySpec, rng_phase: np.random.Generator) -> tuple[np.ndarray, ...]:
    models, _, _ = _row_models(spec)
    n_rows = len(models)
    cap = spec.drive_capacity_bytes or _NOMINAL_CAPACITY_BYTES
    dpar = np.zeros((n_rows, _D_COUNT))
    ipar = np.zeros((n_rows, _I_COUNT), np.int64)
    profiles: list[np.ndarray] = []
    offsets: dict[int, tuple[int, int, int, int]] = {}
    total = 0
    for mo in spec.service_models:
        if id(mo) in offsets:
            continue
        wp = np.ascontiguousarray(mo.write_multiplier_profile, dtype=np.float64)
        rp = np.ascontiguousarray(mo.read_multiplier_profile, dtype=np.float64)
        offsets[id(mo)] = (total, wp.size, total + wp.size, rp.size)
        profiles += [wp, rp]
        total += wp.size + rp.size
    prof = np.concatenate(profiles)
    # each distinct model's row once, then every row from its model's (a disk array has hundreds
    # of rows of one model); the profile phases drawn in row order, as one draw per row would
    index: dict[int, int] = {}
    frows: list[tuple[float, ...]] = []
    irows: list[tuple[int, ...]] = []
    cycles: list[float] = []
    for mo in models:
        if id(mo) in index:
            continue
        index[id(mo)] = len(frows)
        a, b = _seek_curve(mo.average_seek_s, mo.full_stroke_seek_s) if mo.mechanical else (0.0, 0.0)
        woff, wlen, roff, rlen = offsets[id(mo)]
        cycles.append(mo.profile_slot_s * max(wlen, rlen))
        frows.append((mo.read_fixed_s, mo.read_per_byte_s, mo.write_fixed_s, mo.write_per_byte_s, a, b,
                      mo.full_rotation_s if mo.mechanical else 0.0, mo.profile_slot_s, 0.0, cap,
                      max(mo.read_array_s - mo.read_fixed_s, 0.0)))
        irows.append((mo.parallel_units, woff, wlen, roff, rlen, 1 if mo.mechanical else 0))
    which = np.fromiter((index[id(mo)] for mo in models), np.int64, count=n_rows)
    dpar[:] = np.asarray(frows, dtype=np.float64)[which]
    dpar[:, _D_PHASE] = rng_phase.random(n_rows) * np.asarray(cycles)[which]
    ipar[:] = np.asarray(irows, dtype=np.int64)[which]
    return dpar, ipar, prof


def _cleaning_arrays(spec: ArraySpec, t_begin: float, rng_phase: np.random.Generator) -> tuple[np.ndarray, ...]:
    """Each cleaning drive's free-space state when the run begins (see ``_age``): freshly
    filled (the span written once in order into blocks with every page valid, the rest of the
    flash free) or, with
    ``precondition_drive_writes``, after that many span writes of uniform random pages plus a
    random share of 1/16 drive write (``_PRE_EXTRA``: so the members' cleaning is out of step). A lazy drive then
    has a random part of its idle-time refill used, anywhere between its high and low marks."""
    models, _, _ = _row_models(spec)
    n_rows = len(models)
    # rows aligned to 64-byte lines (``_K_COUNT`` is a multiple of 8 columns)
    buf = np.zeros(n_rows * _K_COUNT + 8)
    skip = (-(buf.ctypes.data // 8)) % 8
    cl = buf[skip:skip + n_rows * _K_COUNT].reshape(n_rows, _K_COUNT)
    width = 2 + max((int(math.ceil(mo.block_pages)) for mo in models if mo.cleaning), default=0)
    vic = np.zeros((n_rows, width))
    cl[:, _K_CLEND] = -np.inf  # no cleaning step ever delays a read on a drive without cleaning
    for d, mo in enumerate(models):
        if not mo.cleaning:
            continue
        row = cl[d]
        npg = float(math.ceil(mo.block_pages))
        row[_K_ON] = 1.0
        row[_K_EAGER] = 1.0 if mo.gc_eager else 0.0
        row[_K_FREE] = mo.raw_pages - mo.span_pages
        row[_K_INVSPAN] = 1.0 / mo.span_pages
        row[_K_RSCALE] = mo.relocation_scale
        row[_K_RELOC] = mo.relocation_page_s
        row[_K_ERASE] = mo.erase_page_s
        row[_K_STEP] = mo.step_pages
        row[_K_VSTEP] = mo.nand_erase_pages if mo.nand_erase_pages > 0.0 else mo.step_pages
        row[_K_BE] = t_begin
        row[_K_CLEND] = t_begin
        row[_K_LOW] = mo.low_free_pages
        row[_K_HIGH] = mo.high_free_pages
        row[_K_TRIG] = max(mo.low_free_pages, mo.high_free_pages - _EAGER_SLACK_PAGES) if mo.gc_eager else mo.low_free_pages
        row[_K_HOSTPG] = mo.host_page_s
        # a preconditioning chunk is at most one of its aging steps: the open pages wait for the
        # next step to join the histogram, and meanwhile none of them is overwritten
        row[_K_CHUNK] = max(1.0, min(mo.raw_pages / _CHUNKS, _PRE_COARSE * mo.span_pages / (npg * _AGE_STEPS)))
        row[_K_NP] = npg
        row[_K_INVNP] = 1.0 / npg
        row[_K_DWSTEP] = mo.span_pages / (npg * _AGE_STEPS)
        # a partial page's read: a 4 KiB read, its fixed time at least the die's array read
        row[_K_RMW] = max(mo.read_fixed_s, mo.read_array_s) + 4096 * mo.read_per_byte_s
        row[_K_NUNITS] = float(mo.parallel_units)
        if mo.parallel_units & (mo.parallel_units - 1) == 0:
            row[_K_INVNUNITS] = 1.0 / mo.parallel_units
        row[_K_UT] = -1.0  # no cached valid fraction yet
        if mo.slc_cache_pages > 0.0:
            # the run begins with the SLC cache folded (empty)
            row[_K_QCAP] = mo.slc_cache_pages
            row[_K_QFREE] = mo.slc_cache_pages
            row[_K_QSLC] = mo.slc_page_s
            row[_K_QFOLD] = mo.fold_page_s
        if mo.nand_dies > 0:
            row[_K_DIE0:_K_DIE0 + _MAX_DIES] = -np.inf  # no operation in flight when the run begins
            row[_K_NDIES] = float(min(mo.nand_dies, _MAX_DIES))
            row[_K_NOPPG] = mo.nand_program_pages
            row[_K_NERPG] = mo.nand_erase_pages
            row[_K_NPROG] = mo.nand_program_s
            row[_K_NBERS] = mo.nand_erase_s
            spread = mo.nand_program_spread or (1.0,)
            row[_K_PTN] = float(len(spread))
            row[_K_PT0:_K_PT0 + len(spread)] = spread
            # the longest a read waits: the suspend time, or a whole erase without suspend
            row[_K_NSUSP] = mo.nand_suspend_s if mo.nand_suspend_s > 0.0 else mo.nand_erase_s
        if mo.write_buffer_pages > 0.0:
            row[_K_WBUF_S] = mo.write_buffer_s
            row[_K_WACK] = mo.posted_write_fixed_s
            row[_K_WACKB] = mo.posted_write_per_byte_s
        # the fill: the span in full blocks, every page valid (the histogram is aged from here)
        vic[d, int(npg)] = mo.span_pages / npg
        row[_K_BLO] = npg
        extra = rng_phase.random() * _PRE_EXTRA
        if mo.precondition_drive_writes > 0:
            # every drive of the model writes at least this many pages (extra >= 0): the state
            # they all share, computed once (``_shared_precondition``)
            done, (cl_row, vic_row) = _shared_precondition(cl, vic, d, mo.precondition_drive_writes * mo.span_pages)
            cl[d], vic[d] = cl_row, vic_row
            _precondition(cl, vic, d, (mo.precondition_drive_writes + extra) * mo.span_pages,
                          done, False)
            if not mo.gc_eager:
                used = rng_phase.random() * max(0.0, mo.high_free_pages - mo.low_free_pages)
                row[_K_FREE] -= used
                row[_K_WCNT] += used
                _log_append(cl, d, used)
        row[_K_HOSTP] = 0.0
        row[_K_RELOCS] = 0.0
        row[_K_CLEANED] = 0.0
    return cl, vic


# The shared part of ``_precondition`` (whole chunks, no randomness) by its inputs, for the drives
# of one model in a run and across runs: a plan simulates the same drive in the same used state
# hundreds of times (replications, years, candidates of one model), and aging its histogram cost
# ~0.7 ms per drive per run, more than a 1 s run's kernel. Keyed by the bytes of the drive's row and histogram before the writes and
# the pages to write, so a hit is bit for bit what the call would return. Bounded (LRU).
_PRECONDITIONED: OrderedDict[bytes, tuple[float, tuple[np.ndarray, np.ndarray]]] = OrderedDict()
_PRECONDITIONED_MAX = 128
_PRECONDITIONED_LOCK = threading.Lock()


def _shared_precondition(cl: np.ndarray, vic: np.ndarray, d: int, host_pages: float) -> tuple[float, tuple[np.ndarray, np.ndarray]]:
    """``_precondition(cl, vic, d, host_pages, 0, True)``'s pages and the row and histogram it
    leaves (the caller copies them into its own arrays), from the cache when the same state was
    preconditioned before. Runs on copies of ``cl[d]`` and ``vic[d]``, which stay as they were."""
    key = b"".join((np.float64(host_pages).tobytes(), cl[d].tobytes(), vic[d].tobytes()))
    with _PRECONDITIONED_LOCK:
        hit = _PRECONDITIONED.get(key)
        if hit is not None:
            _PRECONDITIONED.move_to_end(key)
            return hit
    row, hist = cl[d:d + 1].copy(), vic[d:d + 1].copy()
    done = _precondition(row, hist, 0, host_pages, 0.0, True)
    result = (done, (row[0], hist[0]))
    with _PRECONDITIONED_LOCK:
        _PRECONDITIONED[key] = result
        if len(_PRECONDITIONED) > _PRECONDITIONED_MAX:
            _PRECONDITIONED.popitem(last=False)
    return result


def _seed_state(seed: int, spawn_key: tuple[int, ...]) -> np.ndarray:
    st = np.random.SeedSequence(seed, spawn_key=spawn_key).generate_state(4, dtype=np.uint64)
    if not st.any():
        st[0] = 1
    return st


def _drive_rows(dpar: np.ndarray, ipar: np.ndarray, t_begin: float, unit_cap: int) -> tuple[np.ndarray, np.ndarray]:
    """The kernel's packed drive rows (``_R_*`` floats, ``_J_*`` integers): empty profile
    caches (every start is past their end), service parameters, no busy time, and the units' free
    times in ascending order, all free when the run begins; places beyond a drive's unit count
    hold +inf (never the earliest), so all rows have the same length, and a +inf sentinel ends
    each."""
    n_rows = dpar.shape[0]
    dr = np.zeros((n_rows, _R_UNITS + unit_cap + 1))
    dr[:, _R_MC] = -np.inf
    dr[:, _R_MC + 1] = 1.0
    dr[:, _R_MC + 2] = -np.inf
    dr[:, _R_MC + 3] = 1.0
    dr[:, _R_WFIX], dr[:, _R_WFIX + 1] = dpar[:, _D_WFIX], dpar[:, _D_WPB]
    dr[:, _R_RFIX], dr[:, _R_RFIX + 1] = dpar[:, _D_RFIX], dpar[:, _D_RPB]
    dr[:, _R_RFIX + 2] = dpar[:, _D_RTR]
    dr[:, _R_SLOT], dr[:, _R_PHASE] = dpar[:, _D_SLOT], dpar[:, _D_PHASE]
    units = np.arange(unit_cap + 1)[None, :]
    dr[:, _R_UNITS:] = np.where(units < ipar[:, _I_UNITS:_I_UNITS + 1], t_begin, np.inf)
    di = np.zeros((n_rows, _J_COUNT), np.int64)
    di[:, _J_MECH] = ipar[:, _I_MECH]
    di[:, _J_WOFF], di[:, _J_WOFF + 1] = ipar[:, _I_WOFF], ipar[:, _I_WLEN]
    di[:, _J_ROFF], di[:, _J_ROFF + 1] = ipar[:, _I_ROFF], ipar[:, _I_RLEN]
    return dr.ravel(), di.ravel()


def _event_queue(n_host_slots: int, closed_slots: int, rb_starts: np.ndarray, t_begin: float
                 ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, int, int, bool]:
    """The event queue with the run's first events, and the slots' states: in a closed loop
    every host slot arrives at ``t_begin`` (``closed_slots`` of them), each rebuild slot at its
    first chunk's time (``rb_starts``, >= ``t_begin``: appended in slot order the queue is
    sorted, a valid heap). Up to ``_RING_EVENTS`` slots the queue is a sorted window in a buffer
    8x its size, moved to the buffer's middle between a -inf and a +inf sentinel (the insertion
    scans need no bounds checks); above, a binary heap from 0. Returns the states, event times
    and slots, the free open-loop slots, the first event, the count and whether it is the
    window."""
    n_rb = rb_starts.size
    n_slots = n_host_slots + n_rb
    ev_cap = 1
    while ev_cap < n_slots + 2:
        ev_cap *= 2
    use_ring = n_slots <= _RING_EVENTS
    if use_ring:
        ev_cap *= 8
    state = np.full(n_slots, _S_IDLE, np.int8)
    state[:closed_slots] = _S_ARRIVE
    state[n_host_slots:] = _S_RB_ISSUE
    t0 = np.concatenate([np.full(closed_slots, t_begin), rb_starts])
    ids = np.concatenate([np.arange(closed_slots), n_host_slots + np.arange(n_rb)]).astype(np.int64)
    n_ev = t0.size
    ev_t = np.zeros(ev_cap)
    ev_id = np.zeros(ev_cap, np.int64)
    ev_head = (ev_cap - n_ev) >> 1 if use_ring else 0
    ev_t[ev_head:ev_head + n_ev] = t0
    ev_id[ev_head:ev_head + n_ev] = ids
    if use_ring:
        ev_t[ev_head - 1] = -np.inf
        ev_t[ev_head + n_ev] = np.inf
    # open loop: every host slot free, popped from the end of the stack (slot 0 first)
    free_stack = np.arange(n_host_slots - 1, -1, -1, dtype=np.int64)
    return state, ev_t, ev_id, free_stack, ev_head, n_ev, use_ring


@njit(cache=True, _nrt=False)
def _first_arrival(rng, t_begin, target_iops):
    """The first open-loop arrival: Poisson at ``target_iops`` from ``t_begin`` (the first draw
    of the run's stream, as the kernel's draws are)."""
    return t_begin - math.log(1.0 - _rnd(rng)) / target_iops


def simulate(spec: ArraySpec) -> ArrayResult:
    """Run one array simulation. Same spec (and seed) -> identical result. Steps: the kernel's
    arrays (``_kernel_setup``), the event loop (``_event_loop``), the result (``_array_result``)."""
    check(validate_spec(spec))
    setup = _kernel_setup(spec)
    kernel = _simulate_kernel_closed if setup.closed else _simulate_kernel
    kernel(setup.ins, setup.outs)
    return _array_result(spec, setup)


class _KernelSetup(NamedTuple):
    """What ``simulate`` hands the kernel, and what it needs afterwards to read the result."""

    ins: _KernelIn
    outs: _KernelOut
    closed: bool        # the specialised kernel applies (``_event_loop``)
    rebuild: bool
    rb_cap: int
    rb_chunks: int
    row_base: np.ndarray
    n_rows: int
    units: np.ndarray   # parallel units per drive row


def _size_arrays(wl: Workload, lay: Layout) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The workload's IO sizes, their cumulative weights and the alignment of random IOs of each."""
    sizes = np.array([s for s, _ in wl.io_size_mix], np.int64)
    weights = np.array([w for _, w in wl.io_size_mix], np.float64)
    size_cum = np.cumsum(weights) / weights.sum()
    # random IOs are aligned as file systems place them: to the stripe for IOs of a stripe or
    # more, else to the largest common divisor of the IO size and the stripe unit
    size_align = np.array([math.gcd(int(s), lay.stripe_data_bytes) if s >= lay.stripe_data_bytes
                           else math.gcd(int(s), lay.stripe_unit_bytes) for s in sizes], np.int64)
    return sizes, size_cum, size_align


def _kernel_outputs(duration_s: float) -> _KernelOut:
    """The kernel's output arrays, zeroed: histograms, counters, per-second series."""
    n_sec = max(1, math.ceil(duration_s - 1e-9))
    return _KernelOut(hist=np.zeros((4, LATENCY_BUCKET_COUNT), np.int64), lat_sum=np.zeros(4), lat_max=np.zeros(4),
                      counters=np.zeros(_C_COUNT, np.int64), sec_max=np.zeros(n_sec),
                      sec_hist=np.zeros((n_sec, _COARSE_COUNT), np.int32), rebuild_out=np.full(2, -1.0),
                      sec_reloc=np.zeros(n_sec))


def _kernel_setup(spec: ArraySpec) -> _KernelSetup:
    """Every array the event loop reads and writes, built from the spec: drive rows, layout,
    workload, the event queue with its first events, cleaning state, scratch space. (The draws
    from the seed happen here in a fixed order: drive phases, cleaning, the first arrival.)"""
    wl = spec.workload
    lay = spec.layout
    n_sim = spec.simulated_drive_count
    lay_arr, failed, k = _layout_arrays(spec)
    # Drive GC phases depend on the seed only (not the replica), so every time window of a split
    # run sees the same drives; IO randomness comes from the replica's own SeedSequence child.
    rng_phase = np.random.default_rng(np.random.SeedSequence([spec.seed, _PHASE_TAG]))
    dpar, ipar, prof = _drive_arrays(spec, rng_phase)
    rng = _seed_state(spec.seed, spec.spawn_key)

    sizes, size_cum, size_align = _size_arrays(wl, lay)
    max_size = int(sizes.max())
    stripes = max_size // lay.stripe_data_bytes + 2
    mmh = stripes * 2 * lay.group_width + 2 * lay.group_width
    wl_arr = np.array([wl.read_fraction, wl.random_fraction, wl.target_iops, float(wl.queue_depth),
                       wl.working_set_fraction])
    t_begin = spec.window_start_s - spec.warmup_s
    w_end = spec.window_start_s + spec.duration_s
    # a rebuild starts when the recorded window starts (the array runs degraded in the warm-up)
    simf = np.zeros(_SF_COUNT)
    simf[_SF_T_BEGIN], simf[_SF_W_START], simf[_SF_W_END] = t_begin, spec.window_start_s, w_end
    simf[_SF_RB_RATE], simf[_SF_RB_START] = spec.rebuild_rate_bytes_per_s, spec.window_start_s
    rebuild = spec.rebuild_rate_bytes_per_s > 0 and spec.failed_drives > 0
    rb_cap = int(spec.drive_capacity_bytes) if rebuild else 0
    pool = min(_OPEN_LOOP_POOL, max(1024, (1 << 22) // mmh))
    unit_cap = 1 << (int(ipar[:, _I_UNITS].max()) - 1).bit_length()
    simi = np.zeros(_SI_COUNT, np.int64)
    simi[_SI_RB_IO], simi[_SI_RB_WINDOW], simi[_SI_RB_CAP] = spec.rebuild_io_bytes, spec.rebuild_window, rb_cap
    simi[_SI_REORDER], simi[_SI_MMH], simi[_SI_POOL], simi[_SI_UCAP] = spec.reorder_window, mmh, pool, unit_cap

    _, row_base, row_count = _row_models(spec)
    n_rows = dpar.shape[0]
    head = np.zeros(n_rows, np.int64)
    rw = max(1, spec.reorder_window)
    recent = np.full((n_rows, rw), -np.inf)
    recent_i = np.zeros(n_rows, np.int64)

    outs = _kernel_outputs(spec.duration_s)
    cl, vic = _cleaning_arrays(spec, t_begin, rng_phase)
    # arrival records (one at a time when a disk draws positioning times while IOs are queued,
    # so the draws stay interleaved), member IOs, group 0's survivors and failed members
    any_mech = bool(ipar[:, _I_MECH].any())
    n_rec = 1 if any_mech else _ARRIVAL_BATCH
    rec = np.empty((n_rec, _RC_COUNT), np.int64)
    rec_next = np.empty(n_rec)
    open_loop = wl.target_iops > 0
    n_host_slots = pool if open_loop else wl.queue_depth
    s_mem = np.empty((3, (2 + n_host_slots) * mmh), np.int64)
    surv = np.flatnonzero(failed[: lay.group_width] == 0).astype(np.int64)
    fail_local = np.flatnonzero(failed[: lay.group_width] != 0).astype(np.int64)
    # random offsets: aligned positions per IO size over the working set's host-visible bytes
    space = int(lay_arr[_L_G]) * int(lay_arr[_L_ROWS]) * int(lay_arr[_L_K]) * int(lay_arr[_L_U])
    n_pos_of = np.array([(space - int(b)) // int(a) + 1 for b, a in zip(sizes, size_align, strict=True)], np.int64)
    unit = int(lay_arr[_L_U])
    u_shift = unit.bit_length() - 1 if unit & (unit - 1) == 0 else -1  # log2 of the stripe unit, or -1

    rb_dt = spec.rebuild_io_bytes / spec.rebuild_rate_bytes_per_s if rebuild else 0.0
    rb_starts = np.array([spec.window_start_s + r * rb_dt for r in range(spec.rebuild_window if rebuild else 0)])
    state, ev_t, ev_id, free_stack, ev_head, n_ev, use_ring = _event_queue(
        n_host_slots, 0 if open_loop else wl.queue_depth, rb_starts, t_begin)
    simf[_SF_RB_DT] = rb_dt
    simf[_SF_NEXT_ARR] = _first_arrival(rng, t_begin, wl.target_iops) if open_loop else t_begin
    simi[_SI_RB_CHUNKS] = rb_chunks = (rb_cap + spec.rebuild_io_bytes - 1) // spec.rebuild_io_bytes if rebuild else 0
    simi[_SI_HOST_SLOTS], simi[_SI_U_SHIFT], simi[_SI_SPACE] = n_host_slots, u_shift, space
    simi[_SI_EV_HEAD], simi[_SI_N_EV], simi[_SI_RING] = ev_head, n_ev, use_ring
    simi[_SI_N_FREE] = n_host_slots if open_loop else 0
    simi[_SI_ANY_MECH], simi[_SI_ANY_CLEAN] = any_mech, bool((cl[:, _K_ON] != 0.0).any())
    simi[_SI_ANY_CARDS] = n_rows != n_sim
    simi[_SI_COORD] = spec.coordinated_reads
    dr, di = _drive_rows(dpar, ipar, t_begin, unit_cap)

    n_slots = n_host_slots + rb_starts.size
    ins = _KernelIn(dr=dr, di=di, dpar=dpar, prof=prof, lay=lay_arr, failed=failed, wl=wl_arr, sizes=sizes,
                    size_cum=size_cum, size_align=size_align, n_pos_of=n_pos_of, simf=simf, simi=simi, rng=rng,
                    head=head, recent=recent, recent_i=recent_i, cl=cl, vic=vic,
                    row_base=row_base, row_count=row_count, rec=rec, rec_next=rec_next, S_mem=s_mem,
                    surv=surv, fail_local=fail_local, state=state, s_arr=np.zeros(n_slots),
                    s_cls=np.zeros(n_slots, np.int64), s_inrb=np.zeros(n_slots, np.bool_),
                    s_n2=np.zeros(n_slots, np.int64), free_stack=free_stack, ev_t=ev_t, ev_id=ev_id,
                    rb_chunk_of=np.zeros(max(rb_starts.size, 1), np.int64))
    # the specialised kernel when the spec is its case (``_event_loop``), else the general one
    closed = not open_loop and wl.queue_depth <= _RING_EVENTS and not rebuild and not any_mech
    return _KernelSetup(ins=ins, outs=outs, closed=closed, rebuild=rebuild, rb_cap=rb_cap, rb_chunks=rb_chunks,
                        row_base=row_base, n_rows=n_rows, units=ipar[:, _I_UNITS].astype(np.float64))


def _array_result(spec: ArraySpec, setup: _KernelSetup) -> ArrayResult:
    """The result of a finished kernel run: histograms combined, per-row figures summed per member."""
    wl, lay, outs, dr, cl = spec.workload, spec.layout, setup.outs, setup.ins.dr, setup.ins.cl
    n_sim = spec.simulated_drive_count
    n_rows, row_base, rebuild, rb_cap, rb_chunks = setup.n_rows, setup.row_base, setup.rebuild, setup.rb_cap, setup.rb_chunks
    hist, lat_max, counters = outs.hist, outs.lat_max, outs.counters
    # the "all" histogram and maximum are the reads' and writes' combined
    hist[_H_ALL] = hist[_H_READ] + hist[_H_WRITE]
    lat_max[_H_ALL] = max(lat_max[_H_READ], lat_max[_H_WRITE])
    busy = dr.reshape(n_rows, -1)[:, _R_BUSY].copy()
    rebuild_out = outs.rebuild_out

    def per_member(x: np.ndarray) -> np.ndarray:
        return np.add.reduceat(x, row_base) if n_rows != n_sim else x

    return ArrayResult(
        layout_name=lay.name,
        drive_name=spec.service_models[0].drive_name,
        drive_count=spec.drive_count,
        simulated_drive_count=n_sim,
        failed_drives=spec.failed_drives,
        seed=spec.seed,
        spawn_keys=(spec.spawn_key,),
        window_start_s=spec.window_start_s,
        duration_s=spec.duration_s,
        closed_loop=wl.target_iops == 0,
        queue_depth=wl.queue_depth,
        offered_iops=wl.target_iops,
        counters=counters,
        latency_histograms=hist,
        latency_sum_s=outs.lat_sum,
        latency_max_s=lat_max,
        iops_per_second=outs.sec_hist.sum(axis=1, dtype=np.int64),  # completions per second
        second_max_latency_s=outs.sec_max,
        second_histograms=outs.sec_hist,
        drive_busy_s=per_member(busy),
        drive_parallel_units=per_member(setup.units),
        rebuild_simulated=rebuild,
        rebuild_bytes=float(rb_cap),
        rebuild_chunks=int(rb_chunks),
        rebuild_chunks_done=int(counters[_C_REBUILD_CHUNKS]),
        rebuild_end_s=float(rebuild_out[0]) if rebuild_out[0] >= 0 else math.nan,
        saturated=bool(counters[_C_SATURATED]),
        drive_host_pages=per_member(cl[:, _K_HOSTP].copy()),
        drive_relocated_pages=per_member(cl[:, _K_RELOCS].copy()),
        second_relocated_pages=outs.sec_reloc,
    )


def split_simulation(spec: ArraySpec, parts: int) -> list[ArraySpec]:
    """Split a long run into independent replicas over consecutive time windows.

    Replica i simulates its own window (whole seconds, each with the spec's warm-up before it)
    with IO randomness from ``np.random.SeedSequence(seed).spawn(parts)[i]`` (spawn key
    ``spec.spawn_key + (i,)``); drive GC phases depend on the seed only, so the windows line up
    on one time axis. ``merge_results`` of the replicas' results is exact for histograms and
    per-second series. A rebuild is one sequential process and is not split: a spec with a
    rebuild comes back as ``[spec]``. ``parts`` is capped at the number of whole seconds.
    """
    Range(lo=1, hi=100_000, integer=True).require("parts", parts)
    check(validate_spec(spec))
    if parts == 1 or spec.rebuild_rate_bytes_per_s > 0:
        return [spec]
    whole = int(math.floor(spec.duration_s))
    parts = min(parts, whole)
    if parts <= 1:
        return [spec]
    bounds = [spec.window_start_s + (i * whole) // parts for i in range(parts)]
    end = spec.window_start_s + spec.duration_s
    out = []
    for i, start in enumerate(bounds):
        stop = bounds[i + 1] if i + 1 < parts else end
        out.append(replace(spec, window_start_s=float(start), duration_s=float(stop - start),
                           spawn_key=spec.spawn_key + (i,)))
    return out


def merge_results(results: Sequence[ArrayResult]) -> ArrayResult:
    """Merge replicas of one array over disjoint time windows (``split_simulation``): histograms
    and counters add, per-second series are placed on one time axis, busy time adds."""
    if not results:
        raise InvalidInputError.one("results", "must hold at least one ArrayResult")
    rs = sorted(results, key=lambda r: r.window_start_s)
    if len(rs) == 1:
        return rs[0]
    first = rs[0]
    for i, r in enumerate(rs):
        if (r.layout_name, r.simulated_drive_count, r.seed, r.closed_loop, r.queue_depth, r.offered_iops,
                r.failed_drives) != (first.layout_name, first.simulated_drive_count, first.seed, first.closed_loop,
                                     first.queue_depth, first.offered_iops, first.failed_drives):
            raise InvalidInputError.one(f"results[{i}]", "must be a replica of the same array, workload and seed")
        if r.rebuild_simulated:
            raise InvalidInputError.one(f"results[{i}]", "rebuild runs are not split and cannot be merged")
    for a, b in zip(rs, rs[1:]):
        if b.window_start_s < a.window_start_s + a.duration_s - 1e-9:
            raise InvalidInputError.one("results", f"windows overlap at {b.window_start_s} s; replicas must cover disjoint windows")
        if abs(b.window_start_s - round(b.window_start_s)) > 1e-9:
            raise InvalidInputError.one("results", "replica windows must start on whole seconds")
    start = first.window_start_s
    end = max(r.window_start_s + r.duration_s for r in rs)
    n_sec = max(1, math.ceil(end - start - 1e-9))
    iops = np.zeros(n_sec, np.int64)
    smax = np.zeros(n_sec)
    shist = np.zeros((n_sec, _COARSE_COUNT), np.int32)
    srel = np.zeros(n_sec)
    for r in rs:
        o = int(round(r.window_start_s - start))
        n = r.iops_per_second.size
        iops[o:o + n] += r.iops_per_second
        smax[o:o + n] = np.maximum(smax[o:o + n], r.second_max_latency_s)
        shist[o:o + n] += r.second_histograms
        if r.second_relocated_pages.size == n:
            srel[o:o + n] += r.second_relocated_pages
    return replace(
        first,
        spawn_keys=tuple(k for r in rs for k in r.spawn_keys),
        window_start_s=start,
        duration_s=float(sum(r.duration_s for r in rs)),
        counters=np.sum([r.counters for r in rs], axis=0),
        latency_histograms=np.sum([r.latency_histograms for r in rs], axis=0),
        latency_sum_s=np.sum([r.latency_sum_s for r in rs], axis=0),
        latency_max_s=np.max([r.latency_max_s for r in rs], axis=0),
        iops_per_second=iops,
        second_max_latency_s=smax,
        second_histograms=shist,
        drive_busy_s=np.sum([r.drive_busy_s for r in rs], axis=0),
        drive_host_pages=np.sum([r.drive_host_pages for r in rs], axis=0),
        drive_relocated_pages=np.sum([r.drive_relocated_pages for r in rs], axis=0),
        second_relocated_pages=srel,
        saturated=any(r.saturated for r in rs),
        replicas=sum(r.replicas for r in rs),
    )
