"""Block traces -> ``Workload``, streaming, in constant memory.

Two parts, both pure (the services layer opens the file and hands over lines):

* **Record parsers** (``TraceReader``): one line in, one ``TraceRecord`` out (time in seconds,
  device, byte offset, byte size, read/write, response time when the trace has it). Formats:

  ============  ======================================================================================
  ``msr``       MSR Cambridge CSV, no header: Timestamp (Windows filetime, 100 ns), Hostname,
                DiskNumber, Type (Read/Write), Offset (B), Size (B), ResponseTime (100 ns)
  ``systor``    SYSTOR'17 CSV, header ``Timestamp,Response,IOType,LUN,Offset,Size``; s, s, R/W, B, B
  ``tencent``   Tencent CBS CSV, no header: Timestamp (s), Offset (512 B sectors), Size (sectors),
                IOType (0 read, 1 write), VolumeID
  ``disksim``   DiskSim ASCII: arrival time, device, block (512 B), block count, flags (bit 0: 1 read,
                0 write). Arrival is in ms in DiskSim's own traces and in ns in MQSim's; ``time_unit``
                chooses, or the first record decides (a decimal point -> ms; an integer >= 10^6 -> ns;
                otherwise ms)
  ``cloudphysics`` CSV ``version,time,op,size,lbn``: time (s), SCSI opcode in hex (READ 08/28/88/a8,
                WRITE 0a/2a/8a/aa; other commands are skipped and counted), size (B), lbn (512 B)
  ``blkparse``  ``blkparse`` default text: ``8,0 3 1 0.000000000 697 D W 223490 + 8 [proc]``; only the
                events of one action are used, **D** (issued to the driver: what the device sees,
                after merges) by default, or Q (queued by the file system) or C (completed); RWBS
                with R is a read, with W a write; discards, flushes without data and other actions
                are skipped and counted; the summary blkparse prints at the end ends the records
  ``spc``       SPC / UMass: ASU, LBA (512 B), Size (B), Opcode (r/w), Timestamp (s)[, ...]
  ``linnos``    LinnOS / Heimdall trace replayer: timestamp (ms), device, offset (B), size (B), type
                (1 read, 0 write), space- or comma-separated
  ============  ======================================================================================

  A malformed line raises ``InvalidInputError`` with field ``trace:LINE`` and the reason; with
  ``max_bad_lines`` > 0 that many are skipped, counted and reported instead. A line of more than
  ``MAX_LINE_CHARS`` characters (64 Ki; a record is under 200) is always refused, whatever
  ``max_bad_lines`` says: it is no trace line, and whoever reads the file hands it over cut at
  ``MAX_LINE_CHARS + 1`` characters (``io.TextIOBase.readline(MAX_LINE_CHARS + 1)``), so a
  10 GB file without a newline is refused after 64 KiB, never read whole.

* **Characterisation** (``Characteriser``): consumes records one by one (buffered into numpy
  chunks of ``chunk_records``) and keeps only bounded state:

  - IO size histogram: exact sizes up to ``max_size_classes`` distinct sizes (later new sizes
    go only to the log2 histogram, which is always complete), and a log2 histogram;
  - read share; sequentiality: an IO is sequential when it starts within
    ``seq_tolerance_bytes`` (default 0: exactly) of where the previous IO *on the same device, in
    trace order* ended; the last end offset is kept for at most ``max_devices`` devices (LRU);
  - arrival rate and burstiness from per-``bin_s`` (1 s) counts: IO rate = IOs / (bins spanned x
    bin_s), peak-to-mean ratio and index of dispersion (variance / mean of the per-bin counts,
    1 for Poisson arrivals). Traces are not always in time order (SYSTOR'17, Tencent), so bins
    stay open for ``late_window_bins`` bins behind the newest; an IO later than that still counts
    in the rate but not in the per-bin statistics (reported as ``late_arrivals``);
  - working set and skew from one **bottom-k (KMV) sketch** of 4 KiB block hashes: the
    ``sketch_blocks`` smallest 64-bit hashes of (device, block) with each block's write and total
    touch counts. Distinct blocks are exact while they fit; beyond that the KMV estimate
    (k - 1) / (h_k / 2^64) has a relative standard error of 1 / sqrt(k - 2) (0.39 % for k =
    65,536). The kept blocks are a uniform random sample of the distinct blocks with exact
    counts, so the hot/cold split is estimated on them: hot blocks are those written more often
    than the mean, hot_write_fraction = their share of block writes, hot_space_fraction = their
    share of the touched blocks (sampling error ~ 1 / sqrt(sample size));
  - daily write volume = bytes written / observed duration x 86,400;
  - mean outstanding IOs by Little's law (sum of response times / duration) when the trace has
    response times (MSR, SYSTOR'17); it becomes the workload's queue depth.
"""

from __future__ import annotations

import hashlib
import math
import re
from collections import OrderedDict
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import NamedTuple

import numpy as np

from .errors import NON_NEGATIVE, InvalidInputError, Violation, echo
from .units import DAY_S, SECTOR_BYTES, GiB, KiB
from .workload import MAX_IO_BYTES, Workload

FORMATS = ("msr", "systor", "tencent", "disksim", "cloudphysics", "blkparse", "spc", "linnos")
#: How each format's columns are read: every answer built from a trace states it (a note on the
#: workload), so a trace read in the wrong format shows in the answer, not only in its numbers.
COLUMNS_READ = {
    "msr": "MSR Cambridge CSV: Timestamp (Windows filetime, 100 ns), Hostname, DiskNumber, Type (Read/Write), Offset (B), "
           "Size (B), ResponseTime (100 ns)",
    "systor": "SYSTOR'17 CSV: Timestamp (s), Response (s), IOType (R/W), LUN, Offset (B), Size (B)",
    "tencent": "Tencent CBS CSV: Timestamp (s), Offset (512 B sectors), Size (512 B sectors), IOType (0 read, 1 write), VolumeID",
    "disksim": "DiskSim ASCII: arrival time, device, block (512 B), block count (512 B blocks), flags (bit 0: 1 read, 0 write)",
    "cloudphysics": "CloudPhysics CSV: version, time (s), SCSI opcode (hex), size (B), lbn (512 B)",
    "blkparse": "blkparse text: dev cpu seq time (s) pid action RWBS sector (512 B) + count (512 B sectors)",
    "spc": "SPC/UMass CSV: ASU, LBA (512 B), Size (B), Opcode (r/w), Timestamp (s)",
    "linnos": "LinnOS/Heimdall replayer: timestamp (ms), device, offset (B), size (B), type (1 read, 0 write)",
}
MAX_RECORD_BYTES = 1 * GiB  # a single IO larger than this is a malformed record
MAX_LINE_CHARS = 64 * 1024  # a longer line is not a trace line (records are under 200 characters)
MAX_OFFSET_BYTES = 1 << 60  # an offset past an exbibyte is a malformed record (and would overflow int64 sums)
MAX_TIME_S = 1e11  # a time past ~3,000 years (Windows filetime counts from 1601) is a malformed record
_I64 = 1 << 63
_U64 = (1 << 64) - 1


class TraceRecord(NamedTuple):
    """One block IO. ``latency_s`` is NaN when the trace has no response time."""

    time_s: float
    device: str
    offset_bytes: int
    size_bytes: int
    is_write: bool
    latency_s: float = math.nan


class _Bad(Exception):
    """A malformed line (the reason is the message)."""


class _Skip(Exception):
    """A well-formed line that carries no read or write (header, other command, summary)."""


class _End(Exception):
    """The end of the records (blkparse's closing summary)."""


# --------------------------------------------------------------------------------------------
# Line parsers
# --------------------------------------------------------------------------------------------

def _int(s: str, what: str) -> int:
    try:
        v = int(s)
    except ValueError:  # also an int of over 4,300 digits (Python's own bound)
        raise _Bad(f"{what} {echo(s.strip())} is not an integer") from None
    if not -_I64 <= v < _I64:
        raise _Bad(f"{what} is out of range (a 64-bit integer)")
    return v


def _float(s: str, what: str) -> float:
    try:
        v = float(s)
    except ValueError:
        raise _Bad(f"{what} {echo(s.strip())} is not a number") from None
    if math.isnan(v) or math.isinf(v):
        raise _Bad(f"{what} {echo(s.strip())} is not a finite number")
    return v


def check_line_length(line: str, lineno: int, field: str = "trace") -> None:
    """Refuse a line of more than ``MAX_LINE_CHARS`` characters (``InvalidInputError`` on
    ``FIELD:LINE``, without the line's text)."""
    if len(line) > MAX_LINE_CHARS:
        raise InvalidInputError(Violation(field=f"{field}:{lineno}", reason=(
            f"the line is over {MAX_LINE_CHARS:,} characters (MAX_LINE_CHARS; a trace record is under 200): "
            "not a trace, or a file without line breaks")))


def _fields(line: str, n: int, sep: str | None, layout: str) -> list[str]:
    parts = line.split(sep) if sep else line.split()
    if len(parts) < n:
        raise _Bad(f"expected {n} fields ({layout}), got {len(parts)}")
    return parts


def _check(offset: int, size: int) -> None:
    if offset < 0:
        raise _Bad(f"negative offset {offset}")
    if offset > MAX_OFFSET_BYTES:
        raise _Bad(f"offset {offset} B is over {MAX_OFFSET_BYTES} B")
    if size < 0:
        raise _Bad(f"negative size {size}")
    if size > MAX_RECORD_BYTES:
        raise _Bad(f"IO size {size} B is over {MAX_RECORD_BYTES} B")
    if size == 0:
        raise _Skip("zero-length IO")


def _direction(text: str, what: str, read: str, write: str) -> bool:
    """Whether a record's direction field ``what`` (``read`` or ``write``, in any case) is a write."""
    kind = text.strip().lower()
    if kind not in (read.lower(), write.lower()):
        raise _Bad(f"{what} {echo(text.strip())} must be {read} or {write}")
    return kind == write.lower()


def _extent(offset_text: str, size_text: str, unit_bytes: int = 1) -> tuple[int, int]:
    """A record's checked ``(offset, size)`` in bytes from its Offset and Size fields (in ``unit_bytes``)."""
    offset, size = _int(offset_text, "Offset") * unit_bytes, _int(size_text, "Size") * unit_bytes
    _check(offset, size)
    return offset, size


def _parse_msr(line: str) -> TraceRecord:
    p = _fields(line, 7, ",", "Timestamp,Hostname,DiskNumber,Type,Offset,Size,ResponseTime")
    is_write = _direction(p[3], "Type", "Read", "Write")
    offset, size = _extent(p[4], p[5])
    return TraceRecord(_int(p[0], "Timestamp") * 1e-7, f"{p[1].strip()},{p[2].strip()}", offset, size,
                       is_write, _int(p[6], "ResponseTime") * 1e-7)


def _parse_systor(line: str) -> TraceRecord:
    if line.startswith("Timestamp"):
        raise _Skip("header")
    p = _fields(line, 6, ",", "Timestamp,Response,IOType,LUN,Offset,Size")
    is_write = _direction(p[2], "IOType", "R", "W")
    offset, size = _extent(p[4], p[5])
    latency = _float(p[1], "Response") if p[1].strip() else math.nan
    return TraceRecord(_float(p[0], "Timestamp"), p[3].strip(), offset, size, is_write, latency)


def _parse_tencent(line: str) -> TraceRecord:
    p = _fields(line, 5, ",", "Timestamp,Offset,Size,IOType,VolumeID")
    kind = p[3].strip()
    if kind not in ("0", "1"):
        raise _Bad(f"IOType {echo(kind)} must be 0 (read) or 1 (write)")
    offset, size = _extent(p[1], p[2], SECTOR_BYTES)
    return TraceRecord(_float(p[0], "Timestamp"), p[4].strip(), offset, size, kind == "1")


def _make_disksim(scale: list[float | None]) -> Callable[[str], TraceRecord]:
    def parse(line: str) -> TraceRecord:
        p = _fields(line, 5, None, "arrival device block count flags")
        unit_s = scale[0]
        if unit_s is None:
            t = p[0]
            unit_s = scale[0] = 1e-3 if ("." in t or "e" in t.lower()) else (1e-9 if _float(t, "arrival time") >= 1e6 else 1e-3)
        flags = _int(p[4], "flags")
        offset, size = _int(p[2], "block") * SECTOR_BYTES, _int(p[3], "block count") * SECTOR_BYTES
        _check(offset, size)
        return TraceRecord(_float(p[0], "arrival time") * unit_s, p[1].strip(), offset, size, not (flags & 1))
    return parse


_SCSI_READ = {0x08, 0x28, 0x88, 0xA8}
_SCSI_WRITE = {0x0A, 0x2A, 0x8A, 0xAA}


def _parse_cloudphysics(line: str) -> TraceRecord:
    if line.startswith("version"):
        raise _Skip("header")
    p = _fields(line, 5, ",", "version,time,op,size,lbn")
    try:
        op = int(p[2], 16)
    except ValueError:
        raise _Bad(f"op {echo(p[2].strip())} is not a hexadecimal SCSI opcode") from None
    size, lbn = _int(p[3], "size"), _int(p[4], "lbn")
    if op not in _SCSI_READ and op not in _SCSI_WRITE:
        raise _Skip(f"SCSI opcode {op:#04x} is not a read or write")
    offset = lbn * SECTOR_BYTES
    _check(offset, size)
    return TraceRecord(_float(p[1], "time"), "0", offset, size, op in _SCSI_WRITE)


_BLK_EVENT = re.compile(
    r"^\s*(\d+,\d+)\s+(\d+)\s+(\d+)\s+(\d+\.\d+)\s+(\d+)\s+([A-Za-z]{1,2})\s+([A-Z]*)\s*(.*)$"
)
_BLK_EXTENT = re.compile(r"^(\d+)\s*\+\s*(\d+)")


def _make_blkparse(action: str) -> Callable[[str], TraceRecord]:
    def parse(line: str) -> TraceRecord:
        m = _BLK_EVENT.match(line)
        if not m:
            s = line.strip()
            if s.startswith(("CPU", "Total", "Throughput", "Events", "Skips")):
                raise _End()
            raise _Bad("not a blkparse event line (dev cpu seq time pid action rwbs ...)")
        dev, _cpu, _seq, t, _pid, act, rwbs, rest = m.groups()
        if act != action:
            raise _Skip(f"action {act}")
        if "D" in rwbs or "N" in rwbs or ("R" not in rwbs and "W" not in rwbs):
            raise _Skip(f"RWBS {rwbs or '-'} is not a data read or write")
        ext = _BLK_EXTENT.match(rest)
        if not ext:
            if "F" in rwbs:
                raise _Skip("flush without data")
            raise _Bad(f"{act} event without 'sector + count'")
        offset, size = _int(ext.group(1), "sector") * SECTOR_BYTES, _int(ext.group(2), "count") * SECTOR_BYTES
        _check(offset, size)
        return TraceRecord(float(t), dev, offset, size, "W" in rwbs)
    return parse


def _parse_linnos(line: str) -> TraceRecord:
    """The LinnOS / Heimdall / IODA trace replayer's input (github.com/huaicheng/replayer,
    replayer/README.md: "1: timestamp in ms, 2: disk ID (not used), 3: offset in bytes, 4: I/O
    size in bytes, 5: r/w type, 1 for read and 0 for write"); space- or comma-separated."""
    p = _fields(line, 5, "," if "," in line else None, "timestamp(ms) device offset(B) size(B) type(1 read, 0 write)")
    kind = p[4].strip()
    if kind not in ("0", "1"):
        raise _Bad(f"type {echo(kind)} must be 1 (read) or 0 (write)")
    offset, size = _int(p[2], "offset"), _int(p[3], "size")
    _check(offset, size)
    return TraceRecord(_float(p[0], "timestamp") * 1e-3, p[1].strip(), offset, size, kind == "0")


def _five_numbers(lines: Sequence[str]) -> list[list[str]] | None:
    """The lines as five numeric columns (space- or comma-separated), or None."""
    rows = []
    for ln in lines:
        parts = [x.strip() for x in (ln.split(",") if "," in ln else ln.split())]
        if len(parts) != 5:
            return None
        try:
            [float(x) for x in parts]
        except ValueError:
            return None
        rows.append(parts)
    return rows


def _byte_columns(rows: list[list[str]]) -> bool | None:
    """Whether columns 3 and 4 of five-number lines are bytes (LinnOS: offsets and sizes in bytes,
    every size a positive multiple of 512) or 512 B blocks (DiskSim: block counts under 512);
    None when the lines say neither (some of each: ambiguous, the format must be given)."""
    def as_int(x: str) -> int | None:
        try:
            return int(x)
        except ValueError:
            return None

    sizes = [as_int(r[3]) for r in rows]
    offsets = [as_int(r[2]) for r in rows]
    if any(v is None for v in sizes + offsets):
        return None
    in_bytes = all(v is not None and v >= 512 and v % 512 == 0 for v in sizes) and all(v is not None and v % 512 == 0 for v in offsets)
    in_blocks = all(v is not None and 0 <= v < 512 for v in sizes)
    if in_bytes and all(r[4] in ("0", "1") for r in rows):
        return True
    if in_blocks:
        return False
    return None


def _parse_spc(line: str) -> TraceRecord:
    p = _fields(line, 5, ",", "ASU,LBA,Size,Opcode,Timestamp")
    kind = p[3].strip().lower()
    if kind not in ("r", "w"):
        raise _Bad(f"Opcode {echo(p[3].strip())} must be r or w")
    offset, size = _int(p[1], "LBA") * SECTOR_BYTES, _int(p[2], "Size")
    _check(offset, size)
    return TraceRecord(_float(p[4], "Timestamp"), p[0].strip(), offset, size, kind == "w")


def detect_format(lines: Sequence[str]) -> str | None:
    """Guess the format from the first non-empty lines; None when nothing fits."""
    sample = [ln.strip() for ln in lines if ln.strip()][:5]
    if not sample:
        return None
    head = sample[0]
    if head.lower().startswith("version,time,op,size,lbn"):
        return "cloudphysics"
    if head.lower().startswith("timestamp,response,iotype"):
        return "systor"
    if _BLK_EVENT.match(head):
        return "blkparse"
    parts = head.split(",")
    if len(parts) >= 7 and parts[3].strip().lower() in ("read", "write"):
        return "msr"
    if len(parts) == 5 and parts[3].strip() in ("0", "1"):
        return "tencent"
    if len(parts) >= 5 and parts[3].strip().lower() in ("r", "w"):
        return "spc"
    # Five numbers: DiskSim (block and count in 512 B blocks) or the LinnOS replayer (offset and
    # size in bytes). Told apart by the sizes (a byte size is a multiple of 512, a block count is
    # under 512); lines that fit both or neither are refused: read in the wrong one, sizes are off
    # by 512x, and the plan would be answered as if they were right.
    rows = _five_numbers(sample)
    if rows is not None:
        in_bytes = _byte_columns(rows)
        if in_bytes is None:
            return None
        if not in_bytes and "," in head:
            return None  # DiskSim is space-separated
        return "linnos" if in_bytes else "disksim"
    return None


class TraceReader:
    """Parses the lines of one trace into records, counting what it skips.

    ``fmt`` is one of ``FORMATS``; ``time_unit`` ("ms" or "ns") applies to ``disksim``;
    ``blkparse_action`` ("D", "Q" or "C") picks the blkparse events used. ``field`` prefixes the
    line number in errors (``trace:LINE``)."""

    def __init__(
        self,
        fmt: str,
        *,
        max_bad_lines: int = 0,
        time_unit: str | None = None,
        blkparse_action: str = "D",
        field: str = "trace",
    ) -> None:
        if fmt not in FORMATS:
            raise InvalidInputError.one(f"{field}.format", f"unknown trace format {fmt!r}; known: {', '.join(FORMATS)}")
        if time_unit not in (None, "ms", "ns"):
            raise InvalidInputError.one(f"{field}.time_unit", f"must be 'ms' or 'ns', got {time_unit!r}")
        if blkparse_action not in ("D", "Q", "C"):
            raise InvalidInputError.one(f"{field}.blkparse_action", f"must be D, Q or C, got {blkparse_action!r}")
        NON_NEGATIVE.require(f"{field}.max_bad_lines", max_bad_lines)
        self.format = fmt
        self.field = field
        self.max_bad_lines = max_bad_lines
        self.blkparse_action = blkparse_action
        self._scale: list[float | None] = [None if time_unit is None else {"ms": 1e-3, "ns": 1e-9}[time_unit]]
        parsers: dict[str, Callable[[str], TraceRecord]] = {
            "msr": _parse_msr,
            "systor": _parse_systor,
            "tencent": _parse_tencent,
            "disksim": _make_disksim(self._scale),
            "cloudphysics": _parse_cloudphysics,
            "blkparse": _make_blkparse(blkparse_action),
            "spc": _parse_spc,
            "linnos": _parse_linnos,
        }
        self._parse = parsers[fmt]
        self.lines_read = 0
        self.records_read = 0
        self.skipped: dict[str, int] = {}
        self.bad_lines = 0
        self.bad_examples: list[tuple[int, str]] = []

    @property
    def disksim_time_unit(self) -> str | None:
        s = self._scale[0]
        return None if s is None else ("ms" if s == 1e-3 else "ns")

    def records(self, lines: Iterable[str], first_line: int = 1) -> Iterator[TraceRecord]:
        """Records in trace order; raises ``InvalidInputError`` (field ``trace:LINE``) on a bad line
        once more than ``max_bad_lines`` were seen."""
        parse = self._parse
        lineno = first_line - 1
        for lineno, raw in enumerate(lines, start=first_line):
            self.lines_read += 1
            check_line_length(raw, lineno, self.field)
            line = raw.strip()
            if not line or line[0] == "#":
                continue
            try:
                rec = parse(line)
                if not -MAX_TIME_S <= rec.time_s <= MAX_TIME_S:
                    raise _Bad(f"time {rec.time_s:g} s is beyond +-{MAX_TIME_S:g} s")
            except _Skip as why:
                key = str(why)
                self.skipped[key] = self.skipped.get(key, 0) + 1
                continue
            except _End:
                return
            except _Bad as why:
                self.bad_lines += 1
                if len(self.bad_examples) < 5:
                    self.bad_examples.append((lineno, str(why)))
                if self.bad_lines > self.max_bad_lines:
                    reason = f"{why} ({self.format} line: {line[:80]!r})"
                    if self.max_bad_lines:
                        reason += f"; {self.bad_lines} bad lines, over max_bad_lines={self.max_bad_lines}"
                    raise InvalidInputError(Violation(field=f"{self.field}:{lineno}", reason=reason)) from None
                continue
            self.records_read += 1
            yield rec

    def summary(self) -> list[str]:
        """Human-readable notes: skipped and bad lines."""
        out = [f"{n} lines skipped: {why}" for why, n in sorted(self.skipped.items())]
        if self.bad_lines:
            first = "; ".join(f"line {ln}: {r}" for ln, r in self.bad_examples)
            out.append(f"{self.bad_lines} malformed lines skipped (max_bad_lines={self.max_bad_lines}); {first}")
        return out


# --------------------------------------------------------------------------------------------
# Characterisation
# --------------------------------------------------------------------------------------------

_C1 = np.uint64(0x9E3779B97F4A7C15)
_C2 = np.uint64(0xBF58476D1CE4E5B9)
_C3 = np.uint64(0x94D049BB133111EB)


def _mix64(x: np.ndarray) -> np.ndarray:
    """splitmix64 finaliser over a uint64 array (wrapping arithmetic)."""
    with np.errstate(over="ignore"):
        z = x.astype(np.uint64, copy=True) + _C1
        z = (z ^ (z >> np.uint64(30))) * _C2
        z = (z ^ (z >> np.uint64(27))) * _C3
        return z ^ (z >> np.uint64(31))


def device_key(device: str) -> int:
    """A stable 64-bit key of a device name (blake2b; the same in every process)."""
    return int.from_bytes(hashlib.blake2b(device.encode(), digest_size=8).digest(), "little")


@dataclass(frozen=True, slots=True, kw_only=True)
class TraceCharacterisation:
    """What a trace says about its workload (units in the names; fractions in [0, 1])."""

    record_count: int
    read_count: int
    write_count: int
    read_bytes: int
    write_bytes: int
    read_fraction: float
    sequential_fraction: float
    seq_tolerance_bytes: int
    mean_io_bytes: float
    io_size_counts: tuple[tuple[int, int], ...]  # exact sizes (bytes, IOs), by size
    io_size_log2_histogram: tuple[tuple[int, int], ...]  # (upper bound 2^k bytes, IOs in (2^(k-1), 2^k])
    io_size_mix: tuple[tuple[int, float], ...]  # <= 16 classes for the Workload
    first_time_s: float
    last_time_s: float
    bin_s: float
    duration_s: float  # bins spanned x bin_s
    mean_iops: float
    peak_iops: float
    peak_to_mean_iops_ratio: float
    index_of_dispersion: float
    late_arrivals: int
    device_count: int
    working_set_blocks: float
    working_set_bytes: float
    working_set_exact: bool
    working_set_relative_error: float
    block_bytes: int
    hot_write_fraction: float
    hot_space_fraction: float
    skew_sample_blocks: int
    daily_write_bytes: float
    mean_outstanding_ios: float | None
    notes: tuple[str, ...] = field(default=())

    def to_workload(self, *, name: str = "trace", source: str = "", default_queue_depth: int = 32) -> Workload:
        """The workload this trace describes: open loop at its mean IO rate."""
        notes = list(self.notes)
        if self.mean_outstanding_ios is not None:
            qd = max(1, min(65_536, round(self.mean_outstanding_ios)))
            notes.append(f"queue_depth {qd} = mean outstanding IOs by Little's law ({self.mean_outstanding_ios:.2f})")
        else:
            qd = default_queue_depth
            notes.append(f"queue_depth {qd} assumed: the trace has no response times")
        hot_w, hot_s = self.hot_write_fraction, self.hot_space_fraction
        notes.append(
            f"{self.record_count} IOs over {self.duration_s:g} s; working set {self.working_set_bytes:.4g} B"
            + ("" if self.working_set_exact else f" (+/-{self.working_set_relative_error:.2%})")
            + f"; skew {hot_w:.3f} of block writes to {hot_s:.3f} of the touched blocks"
        )
        return Workload(
            name=name,
            read_fraction=self.read_fraction,
            random_fraction=1.0 - self.sequential_fraction,
            io_size_mix=self.io_size_mix,
            queue_depth=qd,
            target_iops=self.mean_iops,
            daily_write_bytes=self.daily_write_bytes,
            hot_write_fraction=hot_w,
            hot_space_fraction=hot_s,
            working_set_bytes=self.working_set_bytes,
            peak_to_mean_iops_ratio=max(1.0, self.peak_to_mean_iops_ratio),
            source=source or "block trace",
            notes=tuple(notes),
        )


class Characteriser:
    """Streams records into bounded-memory statistics (see the module docstring)."""

    def __init__(
        self,
        *,
        block_bytes: int = 4 * KiB,
        sketch_blocks: int = 65_536,
        seq_tolerance_bytes: int = 0,
        bin_s: float = 1.0,
        late_window_bins: int = 64,
        max_devices: int = 65_536,
        max_size_classes: int = 4_096,
        chunk_records: int = 65_536,
        max_expanded_blocks: int = 1 << 20,
    ) -> None:
        if block_bytes < 512 or sketch_blocks < 16 or bin_s <= 0 or chunk_records < 1:
            raise InvalidInputError.one("trace.characteriser", "block_bytes >= 512, sketch_blocks >= 16, bin_s > 0, chunk_records >= 1")
        self.block_bytes = block_bytes
        self.sketch_blocks = sketch_blocks
        self.seq_tolerance_bytes = seq_tolerance_bytes
        self.bin_s = bin_s
        self.late_window_bins = late_window_bins
        self.max_devices = max_devices
        self.max_size_classes = max_size_classes
        self.chunk_records = chunk_records
        self.max_expanded_blocks = max_expanded_blocks
        # Buffer (bounded by chunk_records).
        self._t: list[float] = []
        self._dev: list[int] = []
        self._off: list[int] = []
        self._size: list[int] = []
        self._w: list[bool] = []
        self._lat: list[float] = []
        self._dev_cache: dict[str, int] = {}
        # Totals.
        self.n = 0
        self.n_write = 0
        self.read_bytes = 0
        self.write_bytes = 0
        self.sequential = 0
        self.t_min = math.inf
        self.t_max = -math.inf
        self.lat_sum = 0.0
        self.lat_n = 0
        # Sizes.
        self.size_counts: dict[int, int] = {}
        self.size_overflow = 0
        self.log2_counts = np.zeros(64, dtype=np.int64)
        # Sequentiality: device -> end offset of its last IO (LRU, <= max_devices).
        self.last_end: OrderedDict[int, int] = OrderedDict()
        self.devices_seen = 0
        self.device_evictions = 0
        # Arrival bins.
        self.open_bins: dict[int, int] = {}
        self.bin_first: int | None = None
        self.bin_last: int | None = None
        self.finalized_below: int | None = None
        self.bins_nonempty = 0
        self.bin_sum = 0
        self.bin_sumsq = 0.0
        self.bin_max = 0
        self.late = 0
        # Bottom-k sketch of block hashes: sorted hashes, write and touch counts.
        self.sk_hash = np.empty(0, dtype=np.uint64)
        self.sk_writes = np.empty(0, dtype=np.int64)
        self.sk_touch = np.empty(0, dtype=np.int64)
        self.sk_threshold = _U64  # hashes above this are not kept
        self.sk_saturated = False

    # -- feeding -------------------------------------------------------------------------------
    def add(self, rec: TraceRecord) -> None:
        """Add one record."""
        key = self._dev_cache.get(rec.device)
        if key is None:
            if len(self._dev_cache) >= self.max_devices:
                self._dev_cache.clear()  # keys are recomputed identically; only a cache
            key = self._dev_cache[rec.device] = device_key(rec.device)
        self._t.append(rec.time_s)
        self._dev.append(key)
        self._off.append(rec.offset_bytes)
        self._size.append(rec.size_bytes)
        self._w.append(rec.is_write)
        self._lat.append(rec.latency_s)
        if len(self._t) >= self.chunk_records:
            self._flush()

    def add_all(self, records: Iterable[TraceRecord]) -> Characteriser:
        for rec in records:
            self.add(rec)
        return self

    def add_arrays(
        self,
        time_s: np.ndarray,
        device_ids: np.ndarray,
        offset_bytes: np.ndarray,
        size_bytes: np.ndarray,
        is_write: np.ndarray,
        latency_s: np.ndarray | None = None,
    ) -> None:
        """Add a batch of records given as arrays (device ids are integers). Processed in slices of
        ``chunk_records``, so memory stays bounded whatever the batch size."""
        self._flush()
        n = len(time_s)
        keys = _mix64(np.asarray(device_ids).astype(np.uint64) ^ np.uint64(0x5BD1E995))
        for lo in range(0, n, self.chunk_records):
            hi = min(n, lo + self.chunk_records)
            lat = np.full(hi - lo, np.nan) if latency_s is None else np.asarray(latency_s[lo:hi], dtype=np.float64)
            self._process(
                np.asarray(time_s[lo:hi], dtype=np.float64), keys[lo:hi],
                np.asarray(offset_bytes[lo:hi], dtype=np.int64), np.asarray(size_bytes[lo:hi], dtype=np.int64),
                np.asarray(is_write[lo:hi], dtype=bool), lat,
            )

    def _flush(self) -> None:
        if not self._t:
            return
        t = np.array(self._t, dtype=np.float64)
        dev = np.array(self._dev, dtype=np.uint64)
        off = np.array(self._off, dtype=np.int64)
        size = np.array(self._size, dtype=np.int64)
        w = np.array(self._w, dtype=bool)
        lat = np.array(self._lat, dtype=np.float64)
        for buf in (self._t, self._dev, self._off, self._size, self._w, self._lat):
            buf.clear()
        self._process(t, dev, off, size, w, lat)

    # -- bounded state sizes (for tests and diagnostics) ---------------------------------------
    def state_sizes(self) -> dict[str, int]:
        return {
            "buffered_records": len(self._t),
            "sketch_blocks": int(self.sk_hash.size),
            "open_bins": len(self.open_bins),
            "devices_tracked": len(self.last_end),
            "device_cache": len(self._dev_cache),
            "size_classes": len(self.size_counts),
        }

    # -- chunk processing ----------------------------------------------------------------------
    def _process(self, t: np.ndarray, dev: np.ndarray, off: np.ndarray, size: np.ndarray, w: np.ndarray, lat: np.ndarray) -> None:
        n = t.size
        if n == 0:
            return
        self.n += n
        nw = int(w.sum())
        self.n_write += nw
        self.write_bytes += int(size[w].sum())
        self.read_bytes += int(size[~w].sum())
        self.t_min = min(self.t_min, float(t.min()))
        self.t_max = max(self.t_max, float(t.max()))
        ok = ~np.isnan(lat)
        self.lat_sum += float(lat[ok].sum())
        self.lat_n += int(ok.sum())
        self._sizes(size)
        self._sequential(dev, off, size)
        self._bins(t)
        self._blocks(dev, off, size, w)

    def _sizes(self, size: np.ndarray) -> None:
        u, c = np.unique(size, return_counts=True)
        for s, k in zip(u.tolist(), c.tolist()):
            if s in self.size_counts:
                self.size_counts[s] += k
            elif len(self.size_counts) < self.max_size_classes:
                self.size_counts[s] = k
            else:
                self.size_overflow += k
        k2 = np.ceil(np.log2(np.maximum(size, 1).astype(np.float64))).astype(np.int64)
        self.log2_counts += np.bincount(np.clip(k2, 0, 63), minlength=64)

    def _sequential(self, dev: np.ndarray, off: np.ndarray, size: np.ndarray) -> None:
        order = np.argsort(dev, kind="stable")
        d, o = dev[order], off[order]
        e = o + size[order]
        prev = np.empty_like(o)
        prev[1:] = e[:-1]
        has_prev = np.ones(d.size, dtype=bool)
        starts = np.flatnonzero(np.concatenate(([True], d[1:] != d[:-1])))
        ends = np.concatenate((starts[1:] - 1, [d.size - 1]))
        for s_i, e_i in zip(starts.tolist(), ends.tolist()):
            key = int(d[s_i])
            last = self.last_end.pop(key, None)
            if last is None:
                has_prev[s_i] = False
                self.devices_seen += 1
            else:
                prev[s_i] = last
            self.last_end[key] = int(e[e_i])
            if len(self.last_end) > self.max_devices:
                self.last_end.popitem(last=False)
                self.device_evictions += 1
        seq = has_prev & (np.abs(o - prev) <= self.seq_tolerance_bytes)
        self.sequential += int(seq.sum())

    def _bins(self, t: np.ndarray) -> None:
        b = np.floor(t / self.bin_s).astype(np.int64)
        u, c = np.unique(b, return_counts=True)
        lo, hi = int(u[0]), int(u[-1])
        self.bin_first = lo if self.bin_first is None else min(self.bin_first, lo)
        self.bin_last = hi if self.bin_last is None else max(self.bin_last, hi)
        for k, cnt in zip(u.tolist(), c.tolist()):
            if self.finalized_below is not None and k < self.finalized_below:
                self.late += cnt
            else:
                self.open_bins[k] = self.open_bins.get(k, 0) + cnt
        horizon = self.bin_last - self.late_window_bins
        if self.finalized_below is None or horizon > self.finalized_below:
            for k in [k for k in self.open_bins if k < horizon]:
                self._finalize_bin(self.open_bins.pop(k))
            self.finalized_below = horizon

    def _finalize_bin(self, count: int) -> None:
        self.bins_nonempty += 1
        self.bin_sum += count
        self.bin_sumsq += float(count) * count
        self.bin_max = max(self.bin_max, count)

    def _blocks(self, dev: np.ndarray, off: np.ndarray, size: np.ndarray, w: np.ndarray) -> None:
        bb = self.block_bytes
        first = off // bb
        nb = (off + size - 1) // bb - first + 1
        # Slices of records whose blocks fit in max_expanded_blocks (one record at least).
        csum = np.cumsum(nb)
        lo = 0
        n = nb.size
        while lo < n:
            base = csum[lo - 1] if lo else 0
            hi = int(np.searchsorted(csum, base + self.max_expanded_blocks, side="right"))
            hi = max(hi, lo + 1)
            self._sketch(dev[lo:hi], first[lo:hi], nb[lo:hi], w[lo:hi])
            lo = hi

    def _sketch(self, dev: np.ndarray, first: np.ndarray, nb: np.ndarray, w: np.ndarray) -> None:
        total = int(nb.sum())
        rec = np.repeat(np.arange(nb.size), nb)
        starts = np.cumsum(nb) - nb
        blocks = first[rec] + (np.arange(total) - starts[rec])
        h = _mix64(dev[rec] ^ _mix64(blocks.astype(np.uint64)))
        keep = h <= np.uint64(self.sk_threshold)
        if not keep.all():
            h = h[keep]
            rec = rec[keep]
        if h.size == 0:
            return
        writes = w[rec].astype(np.int64)
        all_h = np.concatenate((self.sk_hash, h))
        all_w = np.concatenate((self.sk_writes, writes))
        all_t = np.concatenate((self.sk_touch, np.ones(h.size, dtype=np.int64)))
        uh, inv = np.unique(all_h, return_inverse=True)
        sw = np.bincount(inv, weights=all_w, minlength=uh.size).astype(np.int64)
        st = np.bincount(inv, weights=all_t, minlength=uh.size).astype(np.int64)
        if uh.size > self.sketch_blocks:
            k = self.sketch_blocks
            uh, sw, st = uh[:k], sw[:k], st[:k]
            self.sk_threshold = int(uh[-1])
            self.sk_saturated = True
        self.sk_hash, self.sk_writes, self.sk_touch = uh, sw, st

    # -- result --------------------------------------------------------------------------------
    def result(self) -> TraceCharacterisation:
        """The characterisation of everything added so far (the state is kept; more can follow)."""
        self._flush()
        if self.n == 0:
            raise InvalidInputError.one("trace", "the trace holds no read or write records")
        for cnt in self.open_bins.values():
            self._finalize_bin(cnt)
        self.open_bins.clear()
        assert self.bin_first is not None and self.bin_last is not None
        self.finalized_below = self.bin_last + 1
        n_bins = self.bin_last - self.bin_first + 1
        duration = n_bins * self.bin_s
        mean_bin = (self.bin_sum + self.late) / n_bins
        mean_bin_stats = self.bin_sum / n_bins
        var = max(0.0, self.bin_sumsq / n_bins - mean_bin_stats**2)
        dispersion = var / mean_bin_stats if mean_bin_stats > 0 else 0.0
        mean_iops = mean_bin / self.bin_s
        peak_iops = self.bin_max / self.bin_s

        # Working set and skew from the bottom-k sketch.
        k = self.sk_hash.size
        if self.sk_saturated:
            blocks_est = (k - 1) / ((self.sk_threshold + 1) / 2.0**64)
            rel_err = 1.0 / math.sqrt(k - 2)
        else:
            blocks_est, rel_err = float(k), 0.0
        hot_w, hot_s = 1.0, 1.0
        wsum = int(self.sk_writes.sum())
        if wsum > 0 and k > 0:
            mean_w = wsum / k
            hot = self.sk_writes > mean_w
            if hot.any():
                hot_w = float(self.sk_writes[hot].sum()) / wsum
                hot_s = float(hot.sum()) / k

        sizes = sorted(self.size_counts.items())
        mix = _size_mix(self.size_counts, self.log2_counts, self.size_overflow)
        mean_io = (self.read_bytes + self.write_bytes) / self.n
        notes = [
            f"sequential: starts within {self.seq_tolerance_bytes} B of the previous IO's end on the same device (trace order)",
            f"arrival rate over {n_bins} bins of {self.bin_s:g} s; index of dispersion {dispersion:.3g}",
            "working set: " + ("exact distinct 4 KiB blocks" if not self.sk_saturated else
                               f"bottom-{self.sketch_blocks} (KMV) estimate, relative standard error {rel_err:.2%}"),
        ]
        if self.late:
            notes.append(f"{self.late} IOs arrived over {self.late_window_bins} bins late: in the rate, not in the per-bin statistics")
        if self.size_overflow:
            notes.append(f"{self.size_overflow} IOs of sizes beyond the first {self.max_size_classes} distinct sizes: log2 histogram only")
        if self.device_evictions:
            notes.append(f"{self.device_evictions} device evictions from the sequentiality table (max {self.max_devices})")
        return TraceCharacterisation(
            record_count=self.n,
            read_count=self.n - self.n_write,
            write_count=self.n_write,
            read_bytes=self.read_bytes,
            write_bytes=self.write_bytes,
            read_fraction=(self.n - self.n_write) / self.n,
            sequential_fraction=self.sequential / self.n,
            seq_tolerance_bytes=self.seq_tolerance_bytes,
            mean_io_bytes=mean_io,
            io_size_counts=tuple(sizes),
            io_size_log2_histogram=tuple((1 << i, int(c)) for i, c in enumerate(self.log2_counts.tolist()) if c),
            io_size_mix=mix,
            first_time_s=self.t_min,
            last_time_s=self.t_max,
            bin_s=self.bin_s,
            duration_s=duration,
            mean_iops=mean_iops,
            peak_iops=peak_iops,
            peak_to_mean_iops_ratio=peak_iops / mean_iops if mean_iops > 0 else 1.0,
            index_of_dispersion=dispersion,
            late_arrivals=self.late,
            device_count=self.devices_seen,
            working_set_blocks=blocks_est,
            working_set_bytes=blocks_est * self.block_bytes,
            working_set_exact=not self.sk_saturated,
            working_set_relative_error=rel_err,
            block_bytes=self.block_bytes,
            hot_write_fraction=hot_w,
            hot_space_fraction=hot_s,
            skew_sample_blocks=k,
            daily_write_bytes=self.write_bytes / duration * DAY_S,
            mean_outstanding_ios=(self.lat_sum / duration) if self.lat_n >= 0.5 * self.n else None,
            notes=tuple(notes),
        )


def _size_mix(counts: dict[int, int], log2_counts: np.ndarray, overflow: int, classes: int = 16) -> tuple[tuple[int, float], ...]:
    """At most ``classes`` IO sizes for the Workload: sizes rounded up to 512 B multiples (and
    capped at the model's maximum), the most frequent kept, every other size's IOs given to the
    kept size nearest on a log scale."""
    merged: dict[int, float] = {}
    for s, c in counts.items():
        r = min(MAX_IO_BYTES, max(512, -(-s // 512) * 512))
        merged[r] = merged.get(r, 0.0) + c
    if overflow:
        # Sizes past the exact table: represent them by their log2 bucket's upper bound, in
        # proportion to that bucket's IOs not in the exact table (an approximation, noted).
        exact_by_bucket = np.zeros(64)
        for s, c in counts.items():
            exact_by_bucket[min(63, math.ceil(math.log2(max(s, 1))))] += c
        rest = np.maximum(log2_counts - exact_by_bucket, 0)
        for i in np.flatnonzero(rest).tolist():
            r = min(MAX_IO_BYTES, max(512, 1 << i))
            merged[r] = merged.get(r, 0.0) + float(rest[i])
    top = sorted(merged.items(), key=lambda kv: (-kv[1], kv[0]))[:classes]
    kept = {s: c for s, c in top}
    for s, ios in merged.items():
        if s not in kept:
            nearest = min(kept, key=lambda k: (abs(math.log(k / s)), k))
            kept[nearest] += ios
    total = sum(kept.values())
    return tuple((s, c / total) for s, c in sorted(kept.items()))


def characterise(
    lines: Iterable[str],
    fmt: str | None = None,
    *,
    max_bad_lines: int = 0,
    time_unit: str | None = None,
    blkparse_action: str = "D",
    characteriser: Characteriser | None = None,
) -> tuple[TraceCharacterisation, TraceReader]:
    """Parse and characterise a trace's lines in one pass; ``fmt`` None detects the format from
    the first lines. Returns the characterisation and the reader (its skip/bad-line counts)."""
    it = iter(lines)
    head: list[str] = []
    if fmt is None:
        for line in it:
            check_line_length(line, len(head) + 1)
            head.append(line)
            if sum(1 for h in head if h.strip()) >= 5:
                break
        fmt = detect_format(head)
        if fmt is None:
            raise InvalidInputError.one("trace:1", "the first lines are in no documented trace format (or fit more than one); "
                                        f"give format: one of {', '.join(FORMATS)} ({'; '.join(COLUMNS_READ.values())})")
        detected = True
    else:
        detected = False
    reader = TraceReader(fmt, max_bad_lines=max_bad_lines, time_unit=time_unit, blkparse_action=blkparse_action)
    ch = characteriser or Characteriser()

    def all_lines() -> Iterator[str]:
        yield from head
        yield from it

    ch.add_all(reader.records(all_lines()))
    result = ch.result()
    extra = [f"trace read as {fmt} ({'detected from its first lines' if detected else 'as given'}): {COLUMNS_READ[fmt]}"]
    extra += reader.summary()
    if fmt == "disksim":
        extra.append(f"DiskSim arrival times read in {reader.disksim_time_unit}")
    if fmt == "blkparse":
        extra.append(f"blkparse: {reader.blkparse_action} events used")
    if extra:
        result = _with_notes(result, tuple(extra))
    return result, reader


def _with_notes(c: TraceCharacterisation, extra: tuple[str, ...]) -> TraceCharacterisation:
    from dataclasses import replace

    return replace(c, notes=c.notes + extra)


__all__ = [
    "COLUMNS_READ",
    "FORMATS",
    "MAX_LINE_CHARS",
    "MAX_RECORD_BYTES",
    "Characteriser",
    "TraceCharacterisation",
    "TraceReader",
    "TraceRecord",
    "characterise",
    "check_line_length",
    "detect_format",
    "device_key",
]
