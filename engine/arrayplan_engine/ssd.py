"""One SSD: timing calibrated to the spec sheet, steady state from write amplification, the
reviewers' performance-consistency experiment and the per-IO service model the array simulation
consumes.

Timing model (per controller; an SSD 910 is 2 or 4 of them behind a bridge in RAID 0)
--------------------------------------------------------------------------------------
Four pipelined resources, each with a time per unit of work; a stream of work runs at the pace of
the busiest one:

* front end (``frontend_write_s`` / ``frontend_read_s``): command processing per host IO;
* data path (``datapath_s``): moving one 4 KiB unit between DRAM and NAND (ECC, DMA) -- a host
  write moves one unit in, a garbage-collection relocation moves one out and one back in;
* NAND program (``program_s`` per 4 KiB, internal parity included) and read (``page_read_s`` per
  page sense, one sense serves ``page_bytes / 4096`` relocations);
* NAND erase (``erase_block_s`` per block, spread over the dies);
* the interface (bytes per second, shared by the controllers).

Calibration (``calibrate``): sequential write MB/s fixes the data path and program time (a balanced
design: both at the sequential write rate; assumed); the NAND read rate is the larger of the
sequential read rate and random-read IOPS x page size; the front-end times are what is left to
reach the fresh-out-of-box 4 KB random read and write IOPS. Where the catalog has no FOB random
write figure (Intel's enterprise tables give only the sustained one), FOB writes run at the data
path's pace (assumed). The model's FOB figures are then *measured* -- random writes on a
secure-erased drive through the FTL kernel, reads and sequential transfers through the
``ServiceModel`` -- and checked against the catalog (``calibration_report``; 2% in the tests).

Steady state is not calibrated: it comes out of the FTL's write amplification ``A``. Per host
write the back end does ``A`` programs, ``A - 1`` relocations (read + data path out and in) and
``A / Np`` erases. An *eager* drive (Intel: "clean early and often") runs garbage collection in the
background, overlapping the front end, at a steady pace; a *lazy* drive (clean "as late as
possible") lets the free-block pool run down and then makes host writes wait while it cleans
whole victim blocks (the array kernel: one erase unit at a time, until the write fits).

The scaled model
----------------
The FTL holds ``user_pages`` 4 KiB mapping units (default 2^20) instead of the drive's 10^7-10^8,
with the drive's spare factor (raw NAND less internal parity and the bad-block reserve, against user capacity) and pages
per block (in 4 KiB units). Each simulated page write stands for ``real_pages / user_pages`` real
4 KB writes, and every time in the kernel is multiplied by that ratio, so the simulated clock is
the real drive's. The garbage-collection watermarks are fractions of the blocks, so burst lengths
in seconds do not depend on the scale either.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, NamedTuple

import numpy as np

from . import ftl as ftl_mod
from . import wa as wa_mod
from .catalog import INTERFACE_BYTES_PER_S, Drive, all_drives, get_drive
from .errors import REQUIRED, SPARE_FACTOR_OUT_OF_RANGE, InvalidInputError, Violation, check, check_range, require_range
from .service_time import MAP_BYTES as _SERVICE_MAP_BYTES
from .service_time import ServiceModel

if TYPE_CHECKING:
    from .array import ArrayResult
from .units import KiB

MAP_BYTES = _SERVICE_MAP_BYTES
SEQ_IO_BYTES = 128 * KiB
QUEUE_DEPTH = 32
DEFAULT_MODEL_PAGES = 1 << 20


@dataclass(frozen=True, slots=True, kw_only=True)
class NandOps:
    """One NAND die's array operations by NAND type, from the makers' datasheets (typical times;
    docs/ssd-model.md, "NAND operations")."""

    program_s: float     # tPROG, one (multi-plane) page program
    erase_s: float       # tBERS, one block erase
    planes: int          # pages programmed together (multi-plane operations)
    source: str
    read_s: float = 0.0  # tR, one page read from the array into the die's register
    read_source: str = ""
    # pages of a plane one program writes: 1, or a TLC wordline's three pages programmed at once
    # (one-shot programming; ``program_s`` is then the time of all of them)
    pages_per_program: int = 1
    # relative program times by page type in programming order, mean 1 (empty: one time)
    program_spread: tuple[float, ...] = ()
    block_bytes: float = 0.0     # a die's erase block over its planes (0: the catalog's pages per block x planes)


# SLC: Micron 2-8Gb x8 SLC NAND (MT29F2G08AACWP family), https://www.yumpu.com/en/document/view/40037130/nand-flash-datasheet-micron:
# "PROGRAM PAGE: 300us (TYP)", "BLOCK ERASE: 2ms (TYP)" (single plane, 2 KiB pages).
# MLC: Micron 64-256Gb MLC NAND (MT29F64G08CBAB family, 8 KiB pages, 256 pages a block: the
# geometry of the catalog's Intel/Micron MLC drives), https://pdfslide.net/documents/nand-flash-memory-texas-instruments.html:
# "Program page: 1300us (TYP) Erase block: 3ms (TYP)", "Plane size: 2 planes". eMLC / HET-MLC is
# MLC cells programmed for endurance; no timing of its own is public: MLC's (assumed). TLC and QLC
# program longer than MLC (more levels to place): their own times below.
# tR, the array read every flash read pays (docs/ssd-model.md, "NAND operations"):
# SLC: the same Micron SLC datasheet, "READ performance - Random READ: 25us".
# MLC: Micron 16-128Gb MLC NAND (MT29F16G08MAAWP family), https://ru.scribd.com/document/349416667/Micron-NAND-Flash-MLC-16-32-64-128Gb:
# "READ performance Random READ: 50us" (the MT29F64G08CBAB page above gives no tR in reach).
# TLC: Kioxia/WD BiCS4 96-layer 512Gb TLC (ISSCC 2018), the AnandTech ISSCC 2021 table,
# https://www.anandtech.com/show/16491/flash-memory-at-isscc-2021: "Read Latency (tR) ... 58 us" (the
# catalog's TLC drives are 96-layer parts: CM6, CD6, PM6 BiCS4; 7400 "96-layer"; P5500/P5600 96L).
# QLC: FEMU's QLC (ucare-uchicago/FEMU hw/femu/nand/nand.h: "Read Latency is extrapolated from TLC
# drives based on Micron FMS'19 Presentation: Component-Level Characterization of 3D TLC, QLC, and
# Low-Latency NAND"): 1.05 / 1.1 / 1.2 / 1.6 x SimpleSSD's TLC page reads 56.5 / 77.5 / 106 / 106 us,
# i.e. 59.3 / 85.3 / 127.2 / 169.6 us by page type, 110.3 us over the four.
_MLC_OPS = NandOps(program_s=1.3e-3, erase_s=3.0e-3, planes=2,
                   source="Micron MLC NAND datasheet (MT29F64G08CBAB): program page 1300us typ, erase block 3ms typ, 2 planes",
                   read_s=50e-6, read_source="Micron MLC NAND datasheet (MT29F16G08MAAWP family): random read 50us")
_QLC_READ_S = (56.5e-6 * 1.05 + 77.5e-6 * 1.1 + 106e-6 * 1.2 + 106e-6 * 1.6) / 4.0
# TLC's clock: the same BiCS4 96L column of the AnandTech table: "Program Throughput ... 57 MB/s",
# "Erase Block Size ... 18 MB", "Planes ... 2"; BiCS programs a
# wordline's three pages at once (one-shot), so a program of 2 planes x 3 x 16 KiB = 96 KiB takes
# 96 KiB / 57 MB/s = 1.72 ms and has no spread by page type. tBERS: SimpleSSD's TLC 3 ms (FEMU
# nand.h, TLC_BLOCK_ERASE_LATENCY_NS 3000000); the table gives none.
_TLC_PROGRAM_S = 2 * 3 * 16384 / 57e6
# QLC's clock: FEMU's QLC (above; its program times are SimpleSSD's TLC 820.5 / 2,225 / 5,734 us
# by page type x 1.05 / 1.1 / 1.2 / 1.6: 861.5 / 2,447.5 / 6,880.8 / 9,174.4 us, mean 4,841 us),
# erase 3 ms; 4 planes: Intel/Micron's 64-layer QLC (the P4320's), "four in IMFT flash versus two
# in competitors' NAND",
# https://techreport.com/news/33672/intel-and-micron-say-their-quad-level-cell-nand-is-ready-to-rip/
_QLC_PROGRAMS = (820.5e-6 * 1.05, 2225e-6 * 1.1, 5734e-6 * 1.2, 5734e-6 * 1.6)
_QLC_PROGRAM_S = sum(_QLC_PROGRAMS) / 4.0
NAND_OPS = {
    "slc": NandOps(program_s=300e-6, erase_s=2.0e-3, planes=1,
                   source="Micron SLC NAND datasheet (MT29F2G08AACWP family): program page 300us typ, block erase 2ms typ",
                   read_s=25e-6, read_source="Micron SLC NAND datasheet (MT29F2G08AACWP family): random read 25us"),
    "mlc": _MLC_OPS,
    "emlc": replace(_MLC_OPS, source="assumed: eMLC/HET-MLC at MLC's datasheet times (none public)"),
    "tlc": NandOps(program_s=_TLC_PROGRAM_S, erase_s=3.0e-3, planes=2, pages_per_program=3, block_bytes=18e6,
                   source="BiCS4 96L 512Gb TLC (ISSCC 2018, AnandTech 16491 table): 57 MB/s one-shot program, 2 planes, 18 MB block; "
                          "tBERS 3 ms SimpleSSD/FEMU TLC",
                   read_s=58e-6, read_source="BiCS4 96L 512Gb TLC, ISSCC 2018, AnandTech 16491 table: tR 58 us"),
    "qlc": NandOps(program_s=_QLC_PROGRAM_S, erase_s=3.0e-3, planes=4,
                   program_spread=tuple(p / _QLC_PROGRAM_S for p in _QLC_PROGRAMS),
                   source="FEMU QLC (Micron FMS'19 extrapolation): program 0.86-9.17 ms by page type, mean 4.84 ms, erase 3 ms; "
                          "IMFT 64L QLC: 4 planes",
                   read_s=_QLC_READ_S, read_source="FEMU QLC (Micron FMS'19 extrapolation): 59-170 us by page type, mean 110 us"),
}
# Erase time per block by NAND type (the datasheets' tBERS above) and die size (assumed).
ERASE_S = {"slc": NAND_OPS["slc"].erase_s, "mlc": NAND_OPS["mlc"].erase_s, "emlc": NAND_OPS["emlc"].erase_s}
# Dies of 8 GiB (MLC; assumed) and 4 GiB (SLC): the calibration spreads a block's erase over them
# (TLC and QLC too: their steady-state fast path keeps the figures it was checked at).
DIE_BYTES = {"slc": 4 * 1024**3, "mlc": 8 * 1024**3, "emlc": 8 * 1024**3}
# Dies the NAND operations are laid out on (``nand_dies``): a die is as busy as its share of the
# programs, so its size sets how often a read finds it programming. TLC: BiCS4's 512 Gb die (the
# AnandTech table's "Die Capacity ... 512 Gb"); QLC: IMFT's 1 Tb die ("one terabit (125
# gigabytes) of density per die", the techreport page above).
NAND_DIE_BYTES = {**DIE_BYTES, "tlc": 64 * 1024**3, "qlc": 128 * 1024**3}
# Blocks the firmware keeps out of the cleaner's spare: the NAND maker guarantees only NVB (the
# minimum number of valid blocks) of each die's blocks "during the endurance life of the product",
# so a drive that holds its rated capacity for its rated endurance reserves 1 - NVB / blocks of its
# NAND for bad blocks (Intel reports what is left of it as SMART 232 "Available Reserved Space").
# Planar NAND datasheets (docs/ssd-model.md "Bad-block reserve"): SLC "a minimum of 4,016 valid
# blocks ... of every 4,096" (Micron 4Gb M40A), MLC "a minimum of 3,936 MLC blocks (NVB) out of
# 4,096". No NVB is public for 3D TLC/QLC, so none is taken from their spare (docs/ssd-model.md).
BAD_BLOCK_RESERVE = {"slc": 1.0 - 4016 / 4096, "mlc": 1.0 - 3936 / 4096, "emlc": 1.0 - 3936 / 4096}
# Garbage-collection watermarks as fractions of the blocks (assumed; see docs/ssd-model.md).
EAGER_LOW_FRACTION = 0.005     # eager: keep ~0.5% of the blocks free, clean continuously
LAZY_BURST_FRACTION = 0.002    # lazy: idle-time cleaning refills 0.2% of the blocks (the FTL kernel: one burst)
PTS_ROUND_S = 60.0             # one PTS "round" of the consistency run
DIP_WINDOW_S = 61              # seconds of the running median a second's dip is measured against
# A relocation's firmware work (map update, scheduling) as a share of a host write command's
# front-end time (assumed).
RELOCATION_FRONTEND_SHARE = 0.5
# Drives without a FOB random-write spec whose controller a seed ties to one with a spec.
FRONTEND_SIBLINGS = {
    "SSD 910": ("SSD 320", "The resulting controller looks a lot like Intel's X25-M G2/310/320 controller"),
}


# --------------------------------------------------------------------------------------------
# Timing and calibration
# --------------------------------------------------------------------------------------------
@dataclass(frozen=True, slots=True, kw_only=True)
class DriveTiming:
    """Calibrated timing of one drive (per controller unless the name says ``drive``)."""

    drive_name: str
    controllers: int
    user_bytes: float                 # per controller
    raw_nand_bytes: float             # per controller
    parity_fraction: float            # share of the raw NAND holding internal parity
    reserve_fraction: float           # share of the raw NAND held for bad blocks (BAD_BLOCK_RESERVE)
    parity_stripe: float              # data pages per parity page (0 = none)
    spare_factor: float               # FTL spare factor: 1 - user / (raw - parity - reserve)
    page_bytes: int
    pages_per_block: int              # NAND pages
    map_pages_per_block: int          # 4 KiB mapping units per block (the FTL's Np)
    gc_policy: str
    frontend_write_s: float
    frontend_read_s: float
    datapath_s: float
    program_s: float
    page_read_s: float
    erase_block_s: float
    interface_bytes_per_s: float      # drive
    parallel_units: int               # per controller, for the service model
    fob_random_write_iops: float      # drive, the calibration target (spec or assumed bound)
    fob_random_write_assumed: bool
    assumptions: tuple[str, ...] = field(default=())

    @property
    def relocation_s(self) -> float:
        """Back-end time of relocating one 4 KiB unit (data path out and in, or NAND read +
        program, whichever is slower)."""
        return max(2.0 * self.datapath_s, self.program_s + self.page_read_s * MAP_BYTES / self.page_bytes)

    @property
    def host_backend_s(self) -> float:
        return max(self.datapath_s, self.program_s, MAP_BYTES * self.controllers / self.interface_bytes_per_s)

    @property
    def erase_per_page_s(self) -> float:
        return self.erase_block_s / self.map_pages_per_block

    def gc_s_per_host_write(self, wa: float) -> float:
        return (wa - 1.0) * self.relocation_s + wa * self.erase_per_page_s

    @property
    def relocation_front_s(self) -> float:
        """Front-end (firmware) time of one relocation: mapping update and scheduling."""
        return RELOCATION_FRONTEND_SHARE * self.frontend_write_s

    def write_iops_at_wa(self, wa: float) -> float:
        """Drive 4 KB random write IOPS at write amplification ``wa`` (the fluid limit of the
        timed kernel: eager overlaps GC with host writes, lazy stalls for it)."""
        f, b, g = self.frontend_write_s, self.host_backend_s, self.gc_s_per_host_write(wa)
        gf = (wa - 1.0) * self.relocation_front_s
        per_write = max(f + gf, b + g) if self.gc_policy == "eager" else max(f, b) + max(g, gf)
        return self.controllers / per_write


#: The open interval ``calibrate`` allows for the FTL spare factor, 1 - user / (raw - parity -
#: reserve): below, the FTL has no room to clean; above, the drive is nearly all spare.
SPARE_FACTOR_RANGE = (0.005, 0.95)


def _interface_bps(drive: Drive) -> float:
    return float(INTERFACE_BYTES_PER_S[drive.interface])


def _need(drive: Drive, name: str) -> float:
    value = getattr(drive, name)
    if value is None:
        raise InvalidInputError.one(f"drive.{name}", f"{drive.name} has no {name}; the SSD model needs it (> 0)", code=REQUIRED)
    return float(value)


def calibrate(drive: Drive) -> DriveTiming:
    """Derive the timing parameters of ``drive`` from its catalog entry (see the module doc)."""
    if drive.kind != "ssd":
        raise InvalidInputError.one("drive.kind", f"must be 'ssd' for the SSD model, got {drive.kind!r} ({drive.name})")
    assumptions: list[str] = []
    n = int(drive.controllers or 1)
    iface = _interface_bps(drive)
    raw = _need(drive, "raw_nand_bytes") / n
    user = float(drive.capacity_bytes) / n
    page = int(drive.page_bytes or 8192)
    if drive.page_bytes is None:
        assumptions.append("page_bytes unknown: 8 KiB assumed")
    ppb = int(drive.pages_per_block or 256)
    if drive.pages_per_block is None:
        assumptions.append("pages_per_block unknown: 256 assumed")
    map_ppb = max(1, ppb * page // MAP_BYTES)
    parity = drive.internal_parity or "none"
    if parity == "raid4-dies":
        # 000 seed: "Around half of that spare area ... The other half is for surplus NAND arrays".
        pf = 0.5 * (raw - user) / raw
    elif parity == "rain-7+1":
        pf = 1.0 / 8.0  # 004 seed: "1 parity element is allocated for each 7 storage elements"
    else:
        pf = 0.0
    stripe = (1.0 - pf) / pf if pf > 0 else 0.0
    reserve = BAD_BLOCK_RESERVE.get(drive.nand_type or "", 0.0)
    data_raw = raw * (1.0 - pf - reserve)
    sf = 1.0 - user / data_raw
    lo_sf, hi_sf = SPARE_FACTOR_RANGE
    if not (lo_sf < sf < hi_sf):
        raise InvalidInputError.one("drive.raw_nand_bytes", f"gives an FTL spare factor of {sf:.4f} for {drive.name}; must be in "
                                    f"({lo_sf}, {hi_sf})", code=SPARE_FACTOR_OUT_OF_RANGE, allowed=f"({lo_sf}, {hi_sf})")
    seq_w = _need(drive, "seq_write_bytes_per_s") / n
    seq_r_spec = drive.seq_read_bytes_per_s
    rr = _need(drive, "random_read_iops") / n
    if seq_r_spec is None:
        seq_r = min(iface / n, rr * page)
        assumptions.append("seq_read_bytes_per_s unknown: min(interface, random read x page) assumed")
    else:
        seq_r = float(seq_r_spec) / n
    # Balanced back end: data path and NAND program both run at the sequential write rate.
    datapath = MAP_BYTES / seq_w
    program = MAP_BYTES / seq_w
    nand_read_bps = max(seq_r, rr * page)
    page_read = page / nand_read_bps
    nand = drive.nand_type if drive.nand_type in ERASE_S else "mlc"
    dies = max(1.0, raw / DIE_BYTES[nand])
    erase_block = ERASE_S[nand] / dies
    backend = max(datapath, program, MAP_BYTES * n / iface)
    if drive.random_write_iops is not None:
        fob = float(drive.random_write_iops)
        fob_assumed = False
        frontend_w = max(n / fob, 0.0)
        if frontend_w < backend:
            frontend_w = 0.0
            assumptions.append("FOB random write above the sequential-write bound: back end binds")
    elif drive.family in FRONTEND_SIBLINGS:
        sibling, quote = FRONTEND_SIBLINGS[drive.family]
        per_ctrl = max(float(s.random_write_iops) for s in all_drives() if s.family == sibling and s.random_write_iops)
        frontend_w = max(1.0 / per_ctrl, backend)
        fob = n / frontend_w
        fob_assumed = True
        assumptions.append(f"no FOB random-write spec: each controller takes the {sibling} front end ({per_ctrl:.0f} IOPS); 002 seed: {quote!r}")
    else:
        fob = n / backend
        fob_assumed = True
        frontend_w = 0.0
        assumptions.append("no FOB random-write spec: FOB writes run at the data path's pace (sequential write rate / 4 KiB)")
    frontend_r = 1.0 / rr
    units = int(drive.channels or 8)
    return DriveTiming(
        drive_name=drive.name, controllers=n, user_bytes=user, raw_nand_bytes=raw, parity_fraction=pf,
        reserve_fraction=reserve,
        parity_stripe=stripe, spare_factor=sf, page_bytes=page, pages_per_block=ppb, map_pages_per_block=map_ppb,
        gc_policy=drive.gc_policy or "eager", frontend_write_s=frontend_w, frontend_read_s=frontend_r,
        datapath_s=datapath, program_s=program, page_read_s=page_read, erase_block_s=erase_block,
        interface_bytes_per_s=iface, parallel_units=units, fob_random_write_iops=fob,
        fob_random_write_assumed=fob_assumed,
        assumptions=tuple(assumptions) + (("gc_policy unknown: eager assumed",) if drive.gc_policy is None else ()),
    )


def _resolve(drive: Drive | str) -> Drive:
    return get_drive(drive) if isinstance(drive, str) else drive


def effective_spare_factor(timing: DriveTiming, *, fill_fraction: float = 1.0, extra_spare_fraction: float = 0.0) -> float:
    """FTL spare factor when only ``fill_fraction`` of the LBAs hold data and ``extra_spare_fraction``
    of the capacity is left unused (short-stroking): ``1 - span (1 - sf)``."""
    span = fill_fraction * (1.0 - extra_spare_fraction)
    return 1.0 - span * (1.0 - timing.spare_factor)


def steady_state_write_amplification(drive: Drive | str, *, fill_fraction: float = 1.0, extra_spare_fraction: float = 0.0,
                                     hot_write_fraction: float = 1.0, hot_space_fraction: float = 1.0) -> float:
    """Fast path: the analytic (``wa.py``) greedy write amplification of the drive's FTL."""
    d = _resolve(drive)
    t = calibrate(d)
    v: list[Violation] = []
    check_range(v, "fill_fraction", fill_fraction, 0, 1, lo_open=True)
    check_range(v, "extra_spare_fraction", extra_spare_fraction, 0, 0.9)
    check_range(v, "hot_write_fraction", hot_write_fraction, 0, 1, lo_open=True)
    check_range(v, "hot_space_fraction", hot_space_fraction, 0, 1, lo_open=True)
    check(v)
    sf = effective_spare_factor(t, fill_fraction=fill_fraction, extra_spare_fraction=extra_spare_fraction)
    return wa_mod.write_amplification(spare_factor=sf, pages_per_block=t.map_pages_per_block, policy="greedy",
                                      hot_write_fraction=hot_write_fraction, hot_space_fraction=hot_space_fraction)


def steady_state_random_write_iops(drive: Drive | str, *, fill_fraction: float = 1.0, extra_spare_fraction: float = 0.0,
                                   hot_write_fraction: float = 1.0, hot_space_fraction: float = 1.0) -> float:
    """Steady-state 4 KB random write IOPS from the analytic write amplification (fast path)."""
    d = _resolve(drive)
    a = steady_state_write_amplification(d, fill_fraction=fill_fraction, extra_spare_fraction=extra_spare_fraction,
                                         hot_write_fraction=hot_write_fraction, hot_space_fraction=hot_space_fraction)
    return calibrate(d).write_iops_at_wa(a)


def nand_write_factor(drive: Drive | str, **kwargs: float) -> float:
    """NAND bytes programmed per host byte: write amplification x internal parity (1 + 1/k)."""
    d = _resolve(drive)
    t = calibrate(d)
    parity = 1.0 + (1.0 / t.parity_stripe if t.parity_stripe > 0 else 0.0)
    return steady_state_write_amplification(d, **kwargs) * parity


# --------------------------------------------------------------------------------------------
# The scaled FTL of a drive
# --------------------------------------------------------------------------------------------
def _ftl_config(t: DriveTiming, model_pages: int) -> ftl_mod.FtlConfig:
    blocks = math.ceil(model_pages / (1.0 - t.spare_factor) / t.map_pages_per_block)
    if t.gc_policy == "eager":
        low = max(2, round(EAGER_LOW_FRACTION * blocks))
        high = low + 1
    else:
        low = 2
        high = low + max(1, round(LAZY_BURST_FRACTION * blocks))
    return ftl_mod.FtlConfig(user_pages=model_pages, pages_per_block=t.map_pages_per_block, spare_factor=t.spare_factor,
                             policy="greedy", gc_low_blocks=low, gc_high_blocks=high)


def _timed_costs(t: DriveTiming, scale: float) -> ftl_mod.TimedCosts:
    """Per-simulated-write costs of one controller; ``scale`` = real pages per simulated page."""
    return ftl_mod.TimedCosts(
        controller_s=t.frontend_write_s * scale, nand_s=t.host_backend_s * scale,
        relocation_s=t.relocation_s * scale, erase_s=t.erase_block_s * scale, ios_per_write=scale,
        queue_depth=QUEUE_DEPTH / t.controllers, foreground_gc=t.gc_policy != "eager",
        smoothing_writes=4.0 * t.map_pages_per_block, relocation_front_s=t.relocation_front_s * scale,
    )


def _check_model_pages(model_pages: int) -> None:
    require_range("model_pages", model_pages, 1 << 14, 1 << 23, integer=True)


def _unit_run(t: DriveTiming, *, span: float, duration_s: float, seed: np.random.Generator, model_pages: int,
              precondition_drive_writes: float = 0.0, workload: ftl_mod.FtlWorkload | None = None,
              trim_at_s: float | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Secure erase, sequential fill of the span, optional untimed random preconditioning, then
    ``duration_s`` of QD32 4 KB random writes on one controller."""
    cfg = _ftl_config(t, model_pages)
    st = ftl_mod.new_state(cfg, seed=seed)
    ftl_mod.fill_sequential(st, span_fraction=span)
    wl = workload or ftl_mod.FtlWorkload(kind="uniform", span_fraction=span)
    if precondition_drive_writes > 0:
        ftl_mod.write(st, wl, int(precondition_drive_writes * model_pages * span))
    scale = t.user_bytes / MAP_BYTES / model_pages
    return ftl_mod.timed_run(st, wl, _timed_costs(t, scale), duration_s=duration_s)


# --------------------------------------------------------------------------------------------
# SNIA PTS steady state
# --------------------------------------------------------------------------------------------
@dataclass(frozen=True, slots=True, kw_only=True)
class SteadyState:
    """The first measurement window that passes the SNIA SSS PTS test."""

    start_round: int            # first round of the window
    end_round: int              # last round (inclusive)
    mean: float
    excursion: float            # (max - min) / mean over the window
    slope_excursion: float      # |least-squares slope| x (rounds - 1) / mean


def pts_steady_state(rounds: np.ndarray, *, window: int = 5, max_excursion: float = 0.20,
                     max_slope_excursion: float = 0.10, first_round: int = 0) -> SteadyState | None:
    """SNIA SSS PTS steady-state test on per-round averages: the first window of ``window``
    rounds, starting at ``first_round`` or later, whose data excursion (max - min) is within
    ``max_excursion`` of the window average and whose least-squares line changes by at most
    ``max_slope_excursion`` of the average across the window. None if no window passes.

    PTS applies the test after preconditioning; a fresh drive's plateau is "steady" by this test
    too, so the consistency experiment starts looking once garbage collection has begun."""
    x = np.asarray(rounds, dtype=np.float64)
    if x.ndim != 1:
        raise InvalidInputError.one("rounds", f"must be a 1-d series, got shape {x.shape}")
    require_range("window", window, 2, integer=True)
    for name, value in (("max_excursion", max_excursion), ("max_slope_excursion", max_slope_excursion)):
        require_range(name, value, 0, 10, lo_open=True, hi_open=True)
    if np.any(~np.isfinite(x)):
        raise InvalidInputError.one("rounds", "must be finite")
    idx = np.arange(window, dtype=np.float64)
    xc = idx - idx.mean()
    denom = float((xc * xc).sum())
    require_range("first_round", first_round, 0, integer=True)
    for s in range(first_round, x.size - window + 1):
        w = x[s:s + window]
        mean = float(w.mean())
        if mean <= 0:
            continue
        exc = float(w.max() - w.min()) / mean
        slope = float((xc * (w - mean)).sum()) / denom
        sexc = abs(slope) * (window - 1) / mean
        if exc <= max_excursion and sexc <= max_slope_excursion:
            return SteadyState(start_round=s, end_round=s + window - 1, mean=mean, excursion=exc, slope_excursion=sexc)
    return None


# --------------------------------------------------------------------------------------------
# The consistency experiment
# --------------------------------------------------------------------------------------------
@dataclass(frozen=True, slots=True, kw_only=True)
class ConsistencyResult:
    """IOPS every second of a 4 KB QD32 random-write run after a sequential fill, and its figures."""

    drive_name: str
    gc_policy: str
    duration_s: int
    op_fraction: float                      # extra spare from short-stroking
    spare_factor: float                     # FTL spare factor during the run
    fob_iops: float                         # the model's fresh-out-of-box figure
    iops: np.ndarray                        # one value per second
    array_result: ArrayResult               # the run (latency histograms, per-second series)
    steady: SteadyState | None
    steady_start_s: float                   # NaN if the run never reached steady state
    steady_iops_mean: float
    p1_over_mean: float                     # 1st-percentile second / mean (steady part; each second over its running median)
    dip_depth: float                        # 1 - (1st-percentile second / median), on the same ratios
    dip_period_s: float                     # mean spacing of dips below 80% of the running median (NaN: none)
    worst_second_latency_s: float           # mean latency (Little: QD / IOPS) of the slowest second
    max_latency_s: float
    write_amplification: float              # NAND programs / host writes over the steady part
    scale: int = 1                          # the similar drive's scale k (``similar_model``); 1: the drive itself

    def figures(self) -> dict[str, object]:
        def r(x: float, nd: int = 4) -> float | None:
            return None if not math.isfinite(x) else round(float(x), nd)

        return {
            "drive": self.drive_name, "gc_policy": self.gc_policy, "op_fraction": self.op_fraction,
            "spare_factor": r(self.spare_factor), "fob_iops": r(self.fob_iops, 1),
            "steady": self.steady is not None, "steady_start_s": r(self.steady_start_s, 1),
            "steady_iops_mean": r(self.steady_iops_mean, 1), "p1_over_mean": r(self.p1_over_mean),
            "dip_depth": r(self.dip_depth), "dip_period_s": r(self.dip_period_s, 1),
            "worst_second_latency_s": r(self.worst_second_latency_s, 6), "max_latency_s": r(self.max_latency_s, 6),
            "write_amplification": r(self.write_amplification), "scale": self.scale,
        }


def _figures(iops: np.ndarray, programs: np.ndarray, r: ArrayResult) -> dict[str, object]:
    n_rounds = int(iops.size // PTS_ROUND_S)
    rounds = iops[: int(n_rounds * PTS_ROUND_S)].reshape(n_rounds, int(PTS_ROUND_S)).mean(axis=1) if n_rounds else np.zeros(0)
    gc_started = np.flatnonzero(programs > 1.01 * np.maximum(iops, 1e-9))
    first = math.ceil(gc_started[0] / PTS_ROUND_S) if gc_started.size else n_rounds
    ss = pts_steady_state(rounds, first_round=first) if n_rounds >= 5 else None
    start = int(ss.start_round * PTS_ROUND_S) if ss is not None else max(0, iops.size - int(5 * PTS_ROUND_S))
    part = iops[start:]
    mean = float(part.mean())
    # dips are seconds below the level around them: each second over the median of the
    # DIP_WINDOW_S seconds centred on it (a steady part that still climbs slowly, as after a
    # sequential fill, is a trend, not a dip)
    half = DIP_WINDOW_S // 2
    padded = np.pad(part, half, mode="edge")
    local = np.median(np.lib.stride_tricks.sliding_window_view(padded, 2 * half + 1), axis=1)
    rel = part / np.maximum(local, 1e-9)
    median = float(np.median(rel))
    p1 = float(np.percentile(rel, 1))
    below = rel < 0.8 * median
    starts = np.flatnonzero(below[1:] & ~below[:-1]) + 1
    period = float(np.diff(starts).mean()) if starts.size >= 2 else float("nan")
    rel_mean = float(rel.mean())
    # Mean latency of the IOs completing in the slowest second (Little: QD / IOPS), but a second
    # with no completions at all is bounded by the longest single wait seen.
    max_lat = float(r.latency_max_s[0])
    worst = min(QUEUE_DEPTH / max(float(part.min()), 1e-9), max_lat)
    wa = float(programs[start:].sum() / max(part.sum(), 1e-9))
    return {
        "steady": ss, "steady_start_s": float(start) if ss is not None else float("nan"), "steady_iops_mean": mean,
        "p1_over_mean": p1 / rel_mean if rel_mean > 0 else 0.0, "dip_depth": 1.0 - p1 / median if median > 0 else 1.0,
        "dip_period_s": period, "worst_second_latency_s": worst,
        "max_latency_s": max_lat, "write_amplification": wa,
    }


#: The host IOs a consistency run simulates at most, counted at the drive's fresh-out-of-box
#: rate over the run (an upper bound: the steady state after the cliff is slower). A run past it
#: simulates a similar drive (``similar_model``) ``k`` times smaller: about 3.5 s of CPU at the
#: kernel's ~20 M IOs a second (when the floor allows: a 1 M IOPS drive 2000 s without its cliff is
#: 2 G IOs, 64 M at k = 32).
CONSISTENCY_IO_BUDGET = 70_000_000
#: The fewest host IOs in flight a similar drive keeps (QD 32/k): the scale stops at k = 32 whatever
#: the budget says. (A similar drive keeps at least one parallel unit.)
SIMILAR_MIN_QUEUE_DEPTH = 1


def similar_model(m: ServiceModel, k: int) -> ServiceModel:
    """The drive ``k`` times smaller with the same dynamics in drive-write time (docs/ssd-model.md,
    "Similar drives"): ``1/k`` of the parallel units, flash, free-page marks, cleaning step,
    victim erase unit, SLC cache and write buffer, and back-end seconds per page (host program,
    relocation, erase, cache, fold) ``k`` times longer, so the back end moves ``1/k`` of the
    pages per second; a unit's service time per IO, the NAND dies and their operation times, the
    posted path's times and the buffer's drain time stay as they are (each NAND operation covers
    ``1/k`` of the pages). At ``1/k`` of the host IOs in flight it runs at ``1/k`` of the IOPS and
    writes its span in the same seconds: every fraction (spare, marks over the flash, relocation
    share) and every time (a cleaning step, a victim, a stall) is the real drive's, and so is the
    mean latency (Little: ``QD/k`` over ``IOPS/k``). When ``k`` does not divide the units the
    similar drive has ``ceil(units / k)`` of them, each that much slower per IO (the service
    times times ``ceil(units / k) k / units``), so the units still serve ``1/k`` of the IOPS."""
    require_range("k", k, 1, integer=True)
    if k == 1:
        return m
    units = -(-m.parallel_units // k)
    slow = units * k / m.parallel_units
    return replace(
        m, parallel_units=units, read_fixed_s=m.read_fixed_s * slow, read_per_byte_s=m.read_per_byte_s * slow,
        write_fixed_s=m.write_fixed_s * slow, write_per_byte_s=m.write_per_byte_s * slow,
        span_pages=m.span_pages / k, raw_pages=m.raw_pages / k, low_free_pages=m.low_free_pages / k,
        high_free_pages=m.high_free_pages / k, step_pages=m.step_pages / k,
        host_page_s=m.host_page_s * k, relocation_page_s=m.relocation_page_s * k, erase_page_s=m.erase_page_s * k,
        slc_cache_pages=m.slc_cache_pages / k, slc_page_s=m.slc_page_s * k, fold_page_s=m.fold_page_s * k,
        write_buffer_pages=m.write_buffer_pages / k,
        nand_program_pages=m.nand_program_pages / k, nand_erase_pages=m.nand_erase_pages / k,
    )


#: The scales a consistency run may take: divisors of its queue depth
CONSISTENCY_SCALES = tuple(k for k in range(1, QUEUE_DEPTH + 1) if QUEUE_DEPTH % k == 0)


def consistency_scale(host_ios: float, *, budget: float = CONSISTENCY_IO_BUDGET) -> int:
    """The similarity scale of a consistency run (``similar_model``): the smallest divisor ``k``
    of the queue depth (32) that brings ``host_ios`` (the run at its fastest) within ``budget``,
    but never past ``SIMILAR_MIN_QUEUE_DEPTH`` IOs in flight (1 when the run fits as it is)."""
    best = 1
    for k in CONSISTENCY_SCALES:
        if QUEUE_DEPTH // k < SIMILAR_MIN_QUEUE_DEPTH:
            break
        best = k
        if host_ios / k <= budget:
            break
    return best


def _validate_run(duration_s: float, op: float) -> None:
    v: list[Violation] = []
    check_range(v, "duration_s", duration_s, 60, 86_400, unit="seconds", note="a day: the array simulation's limit")
    check_range(v, "op", op, 0, 0.9)
    check(v)


def consistency_experiment(drive: Drive | str, *, duration_s: float = 2000, op: float = 0.0, seed: int = 0,
                           model_pages: int = DEFAULT_MODEL_PAGES, scale: int | None = None) -> ConsistencyResult:
    """The reviewers' performance-consistency test (001 seed): secure erase, sequential fill of
    the LBAs in use, then 4 KB random writes at QD32 for ``duration_s`` seconds, IOPS recorded
    every second. ``op`` leaves that fraction of the capacity unused (short-stroking, as the S3500
    review does) -- extra spare area.

    The run is the array simulation itself (``array.simulate``): a one-drive array -- or, for a
    multi-controller card (SSD 910), a RAID 0 of its controllers behind the bridge (002 seed:
    "software RAID-0 across them") -- closed loop at QD32, each member freshly filled with its
    cleaning state (``service_model(..., precondition_drive_writes=0)``). Nothing of the run is
    fed in: the plateau, the cliff, the transient and the steady state come out of the same
    free-space mechanism a lightly loaded array runs. ``model_pages`` is accepted for earlier
    callers and not used (the kernel's victim histogram is the drive's own blocks).

    ``scale`` k runs the similar drive k times smaller (``similar_model``) at QD ``32/k`` and
    counts each of its IOs and relocations as k: the same curve in time at 1/k of the IOs
    (docs/ssd-model.md, "Similar drives"). None (the default) picks it with ``consistency_scale``
    so the run stays within ``CONSISTENCY_IO_BUDGET`` IOs; 1 simulates every IO of the drive. The
    result's ``array_result`` is the similar drive's run (its IOPS are 1/k of the drive's; its
    latencies are the drive's in the mean, by Little's law)."""
    from . import array as array_mod
    from .layout import make_layout
    from .workload import Workload

    d = _resolve(drive)
    _validate_run(duration_s, op)
    _check_model_pages(model_pages)
    t = calibrate(d)
    n = t.controllers
    model = service_model(d, extra_spare_fraction=op, precondition_drive_writes=0.0, per_controller=n > 1)
    if scale is None:
        k = consistency_scale(float(duration_s) * t.fob_random_write_iops)
    else:
        k = int(scale)
        if k != scale or k not in CONSISTENCY_SCALES:
            raise InvalidInputError.one("scale", f"must be a divisor of the queue depth {QUEUE_DEPTH} "
                                        f"({', '.join(map(str, CONSISTENCY_SCALES))}), got {scale}")
    model = similar_model(model, k)
    wl = Workload(name="consistency-4k-random-write-qd32", read_fraction=0.0, random_fraction=1.0,
                  io_size_mix=((MAP_BYTES, 1.0),), queue_depth=QUEUE_DEPTH // k, working_set_fraction=1.0 - op)
    spec = array_mod.ArraySpec(layout=make_layout("raid0", n), drive_count=n, service_models=(model,), workload=wl,
                               duration_s=float(duration_s), warmup_s=0.0, seed=int(seed),
                               drive_capacity_bytes=float(t.user_bytes) / k)
    r = array_mod.simulate(spec)
    # the similar drive's IOs and relocations stand for k of the real drive's each
    iops = k * r.iops_per_second.astype(np.float64)[: int(duration_s)]
    programs = iops + k * r.second_relocated_pages[: iops.size]
    f = _figures(iops, programs, r)
    return ConsistencyResult(
        drive_name=d.name, gc_policy=t.gc_policy, duration_s=int(duration_s), op_fraction=op,
        spare_factor=effective_spare_factor(t, extra_spare_fraction=op), fob_iops=t.fob_random_write_iops, iops=iops,
        array_result=r, scale=k, **f,  # type: ignore[arg-type]
    )


@dataclass(frozen=True, slots=True, kw_only=True)
class TrimResult:
    """The SSD 320 review's TRIM experiment: fresh, tortured, then formatted (TRIM of every LBA)."""

    drive_name: str
    fresh_iops: float
    tortured_iops: float
    after_trim_iops: float


def trim_experiment(drive: Drive | str, *, torture_s: float = 1200, measure_s: float = 60, seed: int = 0,
                    model_pages: int = 1 << 18) -> TrimResult:
    """Secure erase and measure; fill and torture with random writes for ``torture_s`` (the review:
    20 minutes) and measure; TRIM every LBA (Windows 7 format) and measure again. Each measurement
    is the mean IOPS of ``measure_s`` seconds of 4 KB random writes (QD32) on the first
    controller, times the controller count."""
    d = _resolve(drive)
    _validate_run(max(torture_s, 60.0), 0.0)
    _check_model_pages(model_pages)
    t = calibrate(d)
    rng = np.random.default_rng(seed)
    cfg = _ftl_config(t, model_pages)
    scale = t.user_bytes / MAP_BYTES / model_pages
    costs = _timed_costs(t, scale)
    wl = ftl_mod.FtlWorkload(kind="uniform")
    st = ftl_mod.new_state(cfg, seed=rng)
    fresh, _ = ftl_mod.timed_run(st, wl, costs, duration_s=measure_s)
    st = ftl_mod.new_state(cfg, seed=rng)
    ftl_mod.fill_sequential(st)
    ftl_mod.timed_run(st, wl, costs, duration_s=torture_s)
    tortured, _ = ftl_mod.timed_run(st, wl, costs, duration_s=measure_s)
    ftl_mod.trim(st, 0, model_pages)
    after, _ = ftl_mod.timed_run(st, wl, costs, duration_s=measure_s)
    n = t.controllers
    return TrimResult(drive_name=d.name, fresh_iops=n * float(fresh[:, 0].mean()),
                      tortured_iops=n * float(tortured[:, 0].mean()), after_trim_iops=n * float(after[:, 0].mean()))


# --------------------------------------------------------------------------------------------
# Service model for the array simulation
# --------------------------------------------------------------------------------------------
def _two_point(iops_4k: float, bytes_per_s_128k: float, units: int) -> tuple[float, float]:
    """(fixed_s, per_byte_s) so that ``units`` parallel servers give ``iops_4k`` at 4 KiB and
    ``bytes_per_s_128k`` at 128 KiB."""
    t4 = units / iops_4k
    t128 = units * SEQ_IO_BYTES / bytes_per_s_128k
    per_byte = (t128 - t4) / (SEQ_IO_BYTES - MAP_BYTES)
    if per_byte <= 0:
        return 0.0, t128 / SEQ_IO_BYTES if t128 >= t4 else t4 / MAP_BYTES
    fixed = t4 - MAP_BYTES * per_byte
    if fixed < 0:
        return 0.0, t4 / MAP_BYTES
    return fixed, per_byte


def service_model(drive: Drive | str, *, fill_fraction: float = 1.0, extra_spare_fraction: float = 0.0,
                  write_fraction: float = 1.0, hot_write_fraction: float = 1.0, hot_space_fraction: float = 1.0,
                  random_fraction: float = 1.0, seed: int = 0, simulate: bool = True, profile_s: float = 600.0,
                  model_pages: int = 1 << 18, precondition_drive_writes: float = 3.0,
                  per_controller: bool = False) -> ServiceModel:
    """The drive's per-IO service model with cleaning as work (see ``service_time.py``).

    Read and write service times on ``parallel_units`` servers reproduce the FOB 4 KB and 128 KB
    (sequential) rates. Cleaning: the drive's flash (internal parity excluded) holds the span
    being written (``fill_fraction`` x ``1 - extra_spare_fraction`` of the user capacity); each
    write takes free pages and passes its pages through the back end; cleaning reclaims pages
    at ``relocation_page_s`` per relocated page and ``erase_page_s`` per cleaned page. The array
    kernel's histogram of blocks by valid pages (``block_pages`` bins) gives the greedy victims'
    valid counts under uniform overwrites; ``relocation_scale`` brings its steady state to
    ``wa.py``'s write amplification for the workload's skew and its random share (sequential
    writes invalidate whole blocks). Watermarks: eager drives keep ``EAGER_LOW_FRACTION`` of the flash
    free plus one block, cleaning in idle time in steps of one flash page; lazy drives start
    cleaning (in idle time) below two blocks per controller and clean up to
    ``LAZY_BURST_FRACTION`` of the flash more; when the pool runs out a write waits while the
    cleaner reclaims whole victim erase units (``nand_erase_pages``) until its pages fit.

    ``precondition_drive_writes``: span writes before the run (the used state); 0 leaves the
    drive freshly filled (the consistency experiment). A multi-controller card (SSD 910) gets
    one controller's numbers and ``controllers`` = its controller count: the array simulation
    runs the card as its controllers in RAID 0 (64 KiB chunks); ``per_controller`` gives a single
    controller (``controllers`` = 1), e.g. one partition as the 002 seed's ATTO run sees it.
    ``write_fraction``, ``seed``, ``simulate``, ``profile_s`` and ``model_pages`` are accepted for
    callers of the earlier profile-based model and do not change the result: the cleaning state
    is simulated per drive in the array kernel, whatever the mix.
    """
    del seed, simulate, model_pages
    d = _resolve(drive)
    v: list[Violation] = []
    check_range(v, "fill_fraction", fill_fraction, 0, 1, lo_open=True)
    check_range(v, "extra_spare_fraction", extra_spare_fraction, 0, 0.9)
    check_range(v, "write_fraction", write_fraction, 0, 1)
    check_range(v, "hot_write_fraction", hot_write_fraction, 0, 1, lo_open=True)
    check_range(v, "hot_space_fraction", hot_space_fraction, 0, 1, lo_open=True)
    check_range(v, "random_fraction", random_fraction, 0, 1)
    check_range(v, "profile_s", profile_s, 10, 100_000, unit="seconds")
    check_range(v, "precondition_drive_writes", precondition_drive_writes, 0, 100)
    if not v and hot_space_fraction < 1.0 and hot_write_fraction < hot_space_fraction:
        v.append(Violation(field="hot_write_fraction", reason=f"must be >= hot_space_fraction ({hot_space_fraction}), got {hot_write_fraction}"))
    check(v)
    t = calibrate(d)
    # a multi-controller card is simulated as its controllers in RAID 0 (002 seed): the numbers
    # are one controller's and ``controllers`` says how many the card has (1 for per_controller)
    n = 1
    share = 1.0 / t.controllers  # the share of the card one controller stands for
    iface = t.interface_bytes_per_s * share
    units = t.parallel_units * n
    rr = float(d.random_read_iops or 0.0) * share
    seq_r = float(d.seq_read_bytes_per_s or min(t.interface_bytes_per_s, rr / share * t.page_bytes)) * share
    seq_w = float(d.seq_write_bytes_per_s or 0.0) * share
    rf, rpb = _two_point(min(rr, iface / MAP_BYTES), min(seq_r, iface), units)
    # an SLC write cache (QLC drives): seq_write_bytes_per_s is the direct-to-QLC rate; the front
    # end and a cached page run at the cached rate, a folded page costs one direct QLC program
    slc_pages = float(d.slc_cache_bytes or 0) / MAP_BYTES * share
    slc_page_s = fold_page_s = 0.0
    if slc_pages > 0.0:
        slc_w = float(d.slc_write_bytes_per_s or seq_w / share) * share
        slc_page_s = max(t.host_backend_s * seq_w / slc_w, MAP_BYTES * t.controllers / t.interface_bytes_per_s)
        fold_page_s = t.host_backend_s
        seq_w = slc_w
    wf, wpb = _two_point(min(t.fob_random_write_iops * share, iface / MAP_BYTES), min(seq_w, iface), units)
    span = fill_fraction * (1.0 - extra_spare_fraction)
    wa_target = _workload_wa(t, span, hot_write_fraction, hot_space_fraction, random_fraction)
    # the kernel's victim histogram cleans greedily: its steady state is wa.py's greedy figure for
    # uniform writes at the span's spare (docs/ssd-model.md, "Victim blocks")
    wa_uniform = wa_mod.wa_greedy(effective_spare_factor(t, fill_fraction=fill_fraction, extra_spare_fraction=extra_spare_fraction),
                                t.map_pages_per_block)
    raw_pages = n * t.user_bytes / (1.0 - t.spare_factor) / MAP_BYTES
    span_pages = n * t.user_bytes * span / MAP_BYTES
    block = float(t.map_pages_per_block)
    if t.gc_policy == "eager":
        low = EAGER_LOW_FRACTION * raw_pages
        high = low + n * block
    else:
        low = 2.0 * n * block
        high = low + max(n * block, LAZY_BURST_FRACTION * raw_pages)
    return ServiceModel(
        **_nand_ops(d, t, seq_w),
        drive_name=d.name, mechanical=False, parallel_units=units, read_fixed_s=rf, read_per_byte_s=rpb,
        write_fixed_s=wf, write_per_byte_s=wpb, cleaning=True, gc_eager=t.gc_policy == "eager",
        span_pages=span_pages, raw_pages=raw_pages, precondition_drive_writes=float(precondition_drive_writes),
        low_free_pages=low, high_free_pages=high, step_pages=float(max(1, t.page_bytes // MAP_BYTES)),
        block_pages=block,
        host_page_s=t.host_backend_s / n, relocation_page_s=max(t.relocation_s, t.relocation_front_s) / n,
        erase_page_s=t.erase_per_page_s / n,
        relocation_scale=(wa_target - 1.0) / (wa_uniform - 1.0) if wa_uniform > 1.0 else 1.0,
        write_amplification=wa_target, controllers=1 if per_controller else t.controllers,
        slc_cache_pages=slc_pages, slc_page_s=slc_page_s / n, fold_page_s=fold_page_s / n,
        **_posted_writes(d, t, share, units, wf + MAP_BYTES * wpb)._asdict(),
        read_array_s=NAND_OPS.get(d.nand_type or "", _MLC_OPS).read_s,
    )


#: Dies the array simulation lays NAND operations out on, per controller: a drive with more stands
#: for them with fewer (each operation then covers the pages of several dies' operations).
MAX_SIMULATED_DIES = 64


def nand_dies(d: Drive, t: DriveTiming) -> float:
    """Dies of one controller: its raw NAND over the die size of its NAND type (``NAND_DIE_BYTES``)."""
    nand = d.nand_type if d.nand_type in NAND_DIE_BYTES else "mlc"
    return max(1.0, t.raw_nand_bytes / NAND_DIE_BYTES[nand])


def _nand_ops(d: Drive, t: DriveTiming, seq_w: float) -> dict[str, Any]:
    """The drive's NAND operations for the array simulation, as ``ServiceModel``'s ``nand_*`` fields (docs/ssd-model.md, "NAND
    operations"): a program covers a page on each plane (``page x planes``), an erase a block on
    each plane; the dies are the controller's raw NAND over the die size. At most
    ``MAX_SIMULATED_DIES`` are laid out, each standing for ``dies / simulated`` real ones (its
    operations cover that many times the pages, so each simulated die is as busy as a real one).
    The calibrated back end programs at the sequential write rate; if the datasheet's tPROG would
    keep the dies from it (``dies x page x planes / tPROG < seq_w``), the operation takes the time
    the sequential rate gives it. No catalog drive is known to suspend programs or erases for
    reads (assumed: their controllers predate it in enterprise firmware): a read waits for the
    operation in flight."""
    ops = NAND_OPS.get(d.nand_type or "", _MLC_OPS)
    dies = nand_dies(d, t)
    sim = min(MAX_SIMULATED_DIES, max(1, int(round(dies))))
    per = dies / sim
    op_bytes = float(t.page_bytes * ops.planes * ops.pages_per_program)
    program_s = min(ops.program_s, dies * op_bytes / seq_w) if seq_w > 0 else ops.program_s
    erase_bytes = ops.block_bytes if ops.block_bytes > 0 else float(t.map_pages_per_block * MAP_BYTES * ops.planes)
    return dict(nand_dies=sim, nand_program_pages=op_bytes / MAP_BYTES * per, nand_erase_pages=erase_bytes / MAP_BYTES * per,
                nand_program_s=program_s, nand_erase_s=ops.erase_s, nand_program_spread=ops.program_spread)


def nand_busy_fraction(d: Drive | str) -> float:
    """Share of each die's time in programs while the drive writes at its sequential rate:
    ``seq_w x tPROG / (page x planes x dies)`` (at most 1)."""
    dd = _resolve(d)
    t = calibrate(dd)
    m = service_model(dd, precondition_drive_writes=0.0)
    return min(1.0, m.nand_program_s * float(dd.seq_write_bytes_per_s or 0.0) / t.controllers
               / (m.nand_program_pages * MAP_BYTES * m.nand_dies))


class _PostedWrites(NamedTuple):
    write_buffer_pages: float = 0.0
    write_buffer_s: float = 0.0
    posted_write_fixed_s: float = 0.0
    posted_write_per_byte_s: float = 0.0


def _posted_writes(d: Drive, t: DriveTiming, share: float, units: int, unit_write_4k_s: float) -> _PostedWrites:
    """A write buffer writes are posted to (``write_buffer_bytes``; docs/ssd-model.md, "Posted
    writes"): one controller's share of it in pages, the time its pages take to drain at the
    drive's fresh 4 KiB write pace (the busier of the units and the back end), and the posted
    path -- the controller's command time (one over its FOB random-write rate, the front end
    the write already pays) plus the transfer over its share of the interface."""
    pages = float(d.write_buffer_bytes or 0) / MAP_BYTES * share
    if pages <= 0.0:
        return _PostedWrites()
    drain_page_s = max(unit_write_4k_s / units, t.host_backend_s)
    return _PostedWrites(write_buffer_pages=pages, write_buffer_s=pages * drain_page_s,
                         posted_write_fixed_s=1.0 / (t.fob_random_write_iops * share),
                         posted_write_per_byte_s=1.0 / (t.interface_bytes_per_s * share))


def _workload_wa(t: DriveTiming, span: float, hot_write_fraction: float, hot_space_fraction: float,
                 random_fraction: float) -> float:
    """``wa.py``'s steady-state write amplification of the drive's greedy FTL for the workload
    (the random share's; sequential writes invalidate whole blocks: 1)."""
    a = wa_mod.write_amplification(spare_factor=t.spare_factor, pages_per_block=t.map_pages_per_block, policy="greedy",
                                   hot_write_fraction=hot_write_fraction if hot_space_fraction < 1.0 else 1.0,
                                   hot_space_fraction=hot_space_fraction, span_fraction=span)
    return 1.0 + random_fraction * (a - 1.0)


# --------------------------------------------------------------------------------------------
# Calibration check
# --------------------------------------------------------------------------------------------
def _service_iops(fixed: float, per_byte: float, units: int, io_bytes: int) -> float:
    return units / (fixed + io_bytes * per_byte)


@dataclass(frozen=True, slots=True, kw_only=True)
class CalibrationRow:
    """Model FOB figures (measured by running the model) against the catalog's spec."""

    drive_name: str
    quantity: str
    spec: float
    model: float
    assumed_spec: bool

    @property
    def error(self) -> float:
        return self.model / self.spec - 1.0


def fob_random_write_iops_measured(drive: Drive | str, *, seconds: float = 20.0, seed: int = 0,
                                   model_pages: int = 1 << 18) -> float:
    """FOB 4 KB random write IOPS measured on the timed FTL kernel: a secure-erased drive,
    QD32 random writes for ``seconds`` (before the spare area runs out)."""
    d = _resolve(drive)
    t = calibrate(d)
    cfg = _ftl_config(t, model_pages)
    st = ftl_mod.new_state(cfg, seed=seed)
    scale = t.user_bytes / MAP_BYTES / model_pages
    out, _ = ftl_mod.timed_run(st, ftl_mod.FtlWorkload(kind="uniform"), _timed_costs(t, scale), duration_s=seconds)
    return t.controllers * float(out[:, 0].mean())


def calibration_report(drive: Drive | str) -> list[CalibrationRow]:
    """FOB 4 KB random read / write IOPS and 128 KB sequential read / write, model vs spec."""
    d = _resolve(drive)
    t = calibrate(d)
    sm = service_model(d, simulate=False)
    units = sm.parallel_units * sm.controllers  # a card's controllers in RAID 0 serve in parallel
    rows = [
        CalibrationRow(drive_name=d.name, quantity="random_write_iops", spec=t.fob_random_write_iops,
                       model=fob_random_write_iops_measured(d), assumed_spec=t.fob_random_write_assumed),
        CalibrationRow(drive_name=d.name, quantity="random_read_iops", spec=min(float(d.random_read_iops or 0), t.interface_bytes_per_s / MAP_BYTES),
                       model=_service_iops(sm.read_fixed_s, sm.read_per_byte_s, units, MAP_BYTES), assumed_spec=False),
        CalibrationRow(drive_name=d.name, quantity="seq_write_bytes_per_s", spec=min(float(d.seq_write_bytes_per_s or 0), t.interface_bytes_per_s),
                       model=SEQ_IO_BYTES * _service_iops(sm.write_fixed_s, sm.write_per_byte_s, units, SEQ_IO_BYTES),
                       assumed_spec=False),
    ]
    if d.seq_read_bytes_per_s is not None:
        rows.append(CalibrationRow(drive_name=d.name, quantity="seq_read_bytes_per_s",
                                   spec=min(float(d.seq_read_bytes_per_s), t.interface_bytes_per_s),
                                   model=SEQ_IO_BYTES * _service_iops(sm.read_fixed_s, sm.read_per_byte_s, units, SEQ_IO_BYTES),
                                   assumed_spec=False))
    return rows
