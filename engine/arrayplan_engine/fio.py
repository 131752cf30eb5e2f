"""fio job files -> ``Workload``.

``parse_fio(text)`` reads the TEXT of a fio job file (the services layer opens the file) and
returns the workload it describes plus a list of warnings. Every option the model does not use is
named in a warning with its line; nothing is dropped silently. Malformed files raise
``InvalidInputError`` whose field is ``fio:LINE:option``.

What is understood (docs/workloads.md has the full table):

* ini structure: ``[global]`` sections set defaults for the jobs *below* them; each other section
  is a job; ``;``/``#`` comments (whole line, or after whitespace at the end of a line);
  ``${VAR}`` is expanded from the ``env`` mapping given by the caller (an unset variable is an
  error: fio would substitute an empty string and fail).
* ``rw``/``readwrite``, ``rwmixread``/``rwmixwrite`` (the later one wins, as in fio),
  ``percentage_random``, ``bs``/``blocksize``, ``bssplit`` (``size/pct:size/pct``, blank
  percentages filled evenly, ``read,write`` lists), ``bsrange``, ``iodepth``, ``numjobs``,
  ``random_distribution`` (zipf, pareto, normal, zoned -> a two-class hot/cold skew, see
  ``skew_from_distribution``), ``size``/``io_size``/``number_ios``/``offset`` (bytes or %),
  ``rate_iops``/``rate``, ``runtime``/``timeout``, ``time_based``, ``stonewall``, ``kb_base``.
* Sizes follow fio: ``4k`` = 4096 with the default ``kb_base=1024`` (and ``4ki`` = 4000, fio's
  compatibility quirk); suffixes are case-insensitive with an optional ``b``.

Jobs are combined by their IO shares: a job's share is ``numjobs x`` the number of IOs it issues
(``size`` or ``io_size`` / mean IO size; when every job is ``time_based`` with a ``runtime``,
``numjobs x runtime`` instead, i.e. equal IO rate per job). Jobs between ``stonewall``s run
together, so their queue depths (``iodepth x numjobs``) add; the workload's queue depth is the
IO-weighted mean over those phases.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

import numpy as np

from .errors import POSITIVE, InvalidInputError, Range
from .units import GiB, KiB
from .workload import MAX_IO_BYTES, MAX_QUEUE_DEPTH, Workload

# Options read by the model (canonical names after aliasing).
_ALIASES = {
    "readwrite": "rw",
    "blocksize": "bs",
    "blocksize_range": "bsrange",
    "ba": "blockalign",
    "io_limit": "io_size",
    "timeout": "runtime",
    "wait_for_previous": "stonewall",
}
_MAPPED = {
    "rw", "rwmixread", "rwmixwrite", "percentage_random", "bs", "bssplit", "bsrange", "iodepth",
    "numjobs", "random_distribution", "size", "io_size", "number_ios", "offset", "rate_iops", "rate",
    "runtime", "time_based", "stonewall", "kb_base", "name", "description", "filename", "loops",
}
# Options that do not change the IO mix the planner models (how fio submits or reports IO, which
# file it opens, when it stops measuring). They are still named in a warning.
_NO_EFFECT = {
    "ioengine", "direct", "buffered", "directory", "group_reporting", "new_group", "thread",
    "threads", "write_bw_log", "write_lat_log", "write_iops_log", "write_hist_log", "log_avg_msec",
    "log_hist_msec", "randrepeat", "randseed", "norandommap", "softrandommap", "random_generator",
    "blockalign", "invalidate", "ramp_time", "startdelay", "ss", "ss_dur", "ss_ramp", "steadystate",
    "steadystate_duration", "steadystate_ramp_time", "steadystate_check_interval", "clocksource",
    "gtod_reduce", "disable_lat", "disable_clat", "disable_slat", "disable_bw_measurement",
    "per_job_logs", "unified_rw_reporting", "refill_buffers", "scramble_buffers", "zero_buffers",
    "iodepth_batch", "iodepth_batch_submit", "iodepth_batch_complete", "iodepth_batch_complete_min",
    "iodepth_batch_complete_max", "iodepth_low", "cpus_allowed", "cpumask", "nice", "prio",
    "prioclass", "exitall", "exitall_on_error", "create_serialize", "create_fsync", "fallocate",
    "overwrite", "allow_mounted_write", "filename_format", "unique_filename", "lockfile", "hugepage-size",
    "iomem", "mem", "iomem_align", "mem_align", "sqthread_poll", "hipri", "fixedbufs", "registerfiles",
    "thinktime_blocks",
}

_RW_MODES: dict[str, tuple[float | None, bool, str]] = {
    # mode: (read fraction (None = rwmixread), random, trim handling)
    "read": (1.0, False, ""),
    "write": (0.0, False, ""),
    "randread": (1.0, True, ""),
    "randwrite": (0.0, True, ""),
    "rw": (None, False, ""),
    "readwrite": (None, False, ""),
    "randrw": (None, True, ""),
    "trim": (None, False, "only"),
    "randtrim": (None, True, "only"),
    "trimwrite": (0.0, False, "mixed"),
    "randtrimwrite": (0.0, True, "mixed"),
}

_SIZE_RE = re.compile(r"^(\d+(?:\.\d+)?)\s*([kmgtpe]?)(i?)(b?)$", re.IGNORECASE)
_TIME_RE = re.compile(r"^(\d+(?:\.\d+)?)\s*(d|h|m|s|sec|ms|msec|us|usec)?$", re.IGNORECASE)
_VAR_RE = re.compile(r"\$\{([^}]*)\}")
# What a warning repeats of a key: an option name (anything else is text from the file).
_OPTION_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,40}")
_INLINE_COMMENT_RE = re.compile(r"\s+[#;].*$")
_POWERS = {"": 0, "k": 1, "m": 2, "g": 3, "t": 4, "p": 5, "e": 6}
_DEFAULT_SPACE_BLOCKS = 1 << 28  # 1 TiB of 4 KiB blocks, when a zipf job gives no size


_PERCENT = Range(lo=0, hi=100)


def _err(line: int, option: str, reason: str) -> InvalidInputError:
    return InvalidInputError.one(f"fio:{line}:{option}", reason)


# --------------------------------------------------------------------------------------------
# Values
# --------------------------------------------------------------------------------------------

def parse_fio_size(value: str, *, kb_base: int = 1024, line: int = 0, option: str = "size") -> int:
    """A fio size (``4k``, ``1M``, ``10g``, ``512``, ``0x1000``) in bytes, by fio's own rules (its HOWTO,
    "kb_base"): with the default ``kb_base=1024`` every suffix is a power of 1024, ``4kb`` included,
    and ``4ki`` is 4,000 (fio's compatibility quirk). Only for fio job files: sizes a person writes
    elsewhere (plan files, array files, CSVs, flags) use ``units.parse_size_bytes``, where
    ``8 KB`` is 8,000 B (docs/units.md)."""
    v = value.strip()
    if v.lower().startswith("0x"):
        try:
            return int(v, 16)
        except ValueError:
            raise _err(line, option, f"bad hexadecimal size {value!r}") from None
    m = _SIZE_RE.match(v)
    if not m:
        raise _err(line, option, f"bad size {value!r}: expected a number with an optional k/m/g/t/p suffix (e.g. 4k, 1M)")
    number, prefix, iec, _ = m.groups()
    power = _POWERS[prefix.lower()]
    if not prefix and iec:
        raise _err(line, option, f"bad size {value!r}")
    # fio's default kb_base=1024 gives k = 1024 and (a compatibility quirk) ki = 1000.
    binary = (kb_base == 1024) != bool(iec)
    base = 1024 if binary else 1000
    return round(float(number) * float(base**power))


def parse_time_s(value: str, *, line: int = 0, option: str = "runtime") -> float:
    """A fio time (``60``, ``5m``, ``2h``, ``500ms``) in seconds; no unit means seconds."""
    m = _TIME_RE.match(value.strip())
    if not m:
        raise _err(line, option, f"bad time {value!r}: expected a number with an optional d/h/m/s/ms/us suffix")
    number, unit = float(m.group(1)), (m.group(2) or "s").lower()
    scale = {"d": 86_400.0, "h": 3_600.0, "m": 60.0, "s": 1.0, "sec": 1.0, "ms": 1e-3, "msec": 1e-3, "us": 1e-6, "usec": 1e-6}[unit]
    return number * scale


def _parse_int(value: str, line: int, option: str, lo: int, hi: int) -> int:
    try:
        n = int(value.strip(), 0)
    except ValueError:
        raise _err(line, option, f"{Range(lo=lo, hi=hi, integer=True).allowed()}, got {value!r}") from None
    reason = Range(lo=lo, hi=hi, integer=True).reason(n)
    if reason is not None:
        raise _err(line, option, reason)
    return n


def _parse_bool(value: str | None, line: int, option: str) -> bool:
    if value is None:
        return True
    v = value.strip().lower()
    if v in ("1", "true", "yes", "on"):
        return True
    if v in ("0", "false", "no", "off"):
        return False
    raise _err(line, option, f"must be a boolean (0 or 1), got {value!r}")


def _per_direction(value: str) -> tuple[str | None, str | None]:
    """fio's ``read,write[,trim]`` lists: a value not terminated by a comma applies onwards."""
    parts = value.split(",")
    read = parts[0].strip() or None
    write = (parts[1].strip() or None) if len(parts) > 1 else read
    return read, write


def _check_io_size(size: int, line: int, option: str) -> int:
    if size < 512 or size > MAX_IO_BYTES or size % 512:
        raise _err(line, option, f"block size {size} B cannot be modelled: it must be a multiple of 512 in [512, {MAX_IO_BYTES}]")
    return size


def parse_bssplit(value: str, *, kb_base: int = 1024, line: int = 0) -> tuple[tuple[tuple[int, float], ...], tuple[tuple[int, float], ...]]:
    """``bssplit=4k/10:64k/50:32k/40[,...]`` -> (read mix, write mix) as (bytes, fraction) pairs.

    Blank percentages share the remainder evenly, as fio does; a total over 100 is an error."""
    read_s, write_s = _per_direction(value)

    def one(spec: str | None) -> tuple[tuple[int, float], ...]:
        if spec is None:
            return ((4 * KiB, 1.0),)
        entries: list[tuple[int, float | None]] = []
        for item in spec.split(":"):
            item = item.strip()
            if not item:
                raise _err(line, "bssplit", f"empty entry in {spec!r}; expected size/percentage:size/percentage")
            size_s, sep, pct_s = item.partition("/")
            if not sep:
                raise _err(line, "bssplit", f"entry {item!r} must be size/percentage (e.g. 4k/60)")
            size = _check_io_size(parse_fio_size(size_s, kb_base=kb_base, line=line, option="bssplit"), line, "bssplit")
            if pct_s.strip() == "":
                entries.append((size, None))
                continue
            try:
                pct = float(pct_s)
            except ValueError:
                raise _err(line, "bssplit", f"percentage {pct_s!r} in {item!r} is not a number") from None
            reason = _PERCENT.reason(pct)
            if reason is not None:
                raise _err(line, "bssplit", f"the percentage in {item!r} {reason}")
            entries.append((size, pct))
        given = sum(p for _, p in entries if p is not None)
        if given > 100.0 + 1e-9:
            raise _err(line, "bssplit", f"percentages add up to {given:g}, over 100")
        blanks = [s for s, p in entries if p is None]
        fill = (100.0 - given) / len(blanks) if blanks else 0.0
        weights: dict[int, float] = {}
        for size, share in entries:
            weights[size] = weights.get(size, 0.0) + (fill if share is None else share)
        total = sum(weights.values())
        if total <= 0.0:
            raise _err(line, "bssplit", "all percentages are zero")
        return tuple((s, w / total) for s, w in weights.items() if w > 0)

    return one(read_s), one(write_s)


# --------------------------------------------------------------------------------------------
# Access skew
# --------------------------------------------------------------------------------------------

@dataclass(frozen=True, slots=True, kw_only=True)
class Skew:
    """Two-class reduction of an access distribution: ``hot_access_fraction`` of the IOs go to
    ``hot_space_fraction`` of the space."""

    hot_access_fraction: float
    hot_space_fraction: float
    note: str


def _two_class(masses: np.ndarray) -> tuple[float, float]:
    """Hot set = the cells denser than average (the split that maximises hot access share minus
    hot space share, i.e. the largest gap between the access curve and uniform)."""
    masses = np.asarray(masses, dtype=np.float64)
    masses = masses / masses.sum()
    n = masses.size
    hot = masses > (1.0 / n) * (1.0 + 1e-9)
    if not hot.any():
        return 1.0, 1.0
    return float(masses[hot].sum()), float(hot.sum() / n)


def _zoned(spec: str, line: int) -> Skew:
    zones: list[tuple[float, float]] = []
    for item in spec.split(":"):
        a, sep, s = item.partition("/")
        try:
            access, space = float(a), float(s)
        except ValueError:
            raise _err(line, "random_distribution", f"zone {item!r} must be access%/space% (e.g. 50/5)") from None
        if not sep or access < 0 or space < 0:
            raise _err(line, "random_distribution", f"zone {item!r} must be access%/space% with both >= 0")
        zones.append((access, space))
    ta, ts = sum(a for a, _ in zones), sum(s for _, s in zones)
    if abs(ta - 100.0) > 1e-6 or abs(ts - 100.0) > 1e-6:
        raise _err(line, "random_distribution", f"zoned percentages must each add up to 100 (access {ta:g}, space {ts:g})")
    hot_a = sum(a for a, s in zones if (s == 0 and a > 0) or (s > 0 and a / s > 1.0 + 1e-12))
    hot_s = sum(s for a, s in zones if (s == 0 and a > 0) or (s > 0 and a / s > 1.0 + 1e-12))
    if hot_a == 0:
        return Skew(hot_access_fraction=1.0, hot_space_fraction=1.0, note=f"zoned:{spec} is uniform")
    return Skew(
        hot_access_fraction=hot_a / 100.0,
        hot_space_fraction=hot_s / 100.0,
        note=f"zoned:{spec} -> zones denser than average are hot: {hot_a:g}% of IOs to {hot_s:g}% of the space",
    )


def _zipf_cells(theta: float, blocks: int, cells: int = 65_536) -> np.ndarray:
    """Masses of ``cells`` groups of consecutive ranks of a Zipf(theta) over ``blocks`` items."""
    k_exact = 2_000

    def harmonic(n: np.ndarray) -> np.ndarray:
        # H(n, theta) = sum_{k<=n} k^-theta: exact prefix sums up to k_exact, then the midpoint
        # integral for the tail (relative error < 1e-8 for k_exact = 2000).
        prefix = np.concatenate(([0.0], np.cumsum(np.arange(1, k_exact + 1, dtype=np.float64) ** -theta)))
        n = np.asarray(n, dtype=np.float64)
        out: np.ndarray = prefix[np.minimum(n, k_exact).astype(np.int64)]
        tail = n > k_exact
        if tail.any():
            lo, hi = k_exact + 0.5, n[tail] + 0.5
            if abs(theta - 1.0) < 1e-12:
                out[tail] += np.log(hi / lo)
            else:
                out[tail] += (hi ** (1.0 - theta) - lo ** (1.0 - theta)) / (1.0 - theta)
        return out

    cells = min(cells, blocks)
    bounds = np.unique(np.round(np.linspace(0, blocks, cells + 1)).astype(np.int64))
    h = harmonic(bounds)
    return np.diff(h)


def _cdf_cells(cdf: Callable[[float], float], cells: int = 4_096) -> np.ndarray:
    x = np.linspace(0.0, 1.0, cells + 1)
    return np.diff(np.array([cdf(v) for v in x], dtype=np.float64))


def skew_from_distribution(value: str, *, blocks: int | None = None, line: int = 0) -> Skew:
    """fio ``random_distribution`` -> a two-class hot/cold skew (the write set when separate
    read/write sets are given).

    The reduction (the approximation the planner states): cut the address space into cells,
    and call hot the cells whose access density exceeds the average. This is the split with the
    largest gap between the access curve and uniform access.

    * ``zoned:a/s:...`` -> exactly the zones denser than average (jesd219's 50/5:30/15:20/80 ->
      80% of IOs to 20% of the space).
    * ``zipf:theta`` -> Zipf over ``blocks`` items (fio's block count, size / block size;
      2^28 assumed when unknown), 65,536 cells of consecutive ranks.
    * ``pareto:h`` -> fio's generator, index = N * U^p with p = log(h) / log(1 - h), so the
      first x of the space gets x^(1/p) of the IOs (pareto:0.2 -> 80% of IOs to the first 20%);
      4,096 cells.
    * ``normal:dev`` -> a normal density with standard deviation ``dev`` % of the range,
      truncated to the range; 4,096 cells.
    An optional centre (``zipf:1.2:0.25``) moves the hot spot but not its size, so it is ignored.
    """
    v = value.strip()
    kind, _, rest = v.partition(":")
    kind = kind.strip().lower()
    if kind == "random" and not rest:
        return Skew(hot_access_fraction=1.0, hot_space_fraction=1.0, note="uniform random")
    if kind == "zoned":
        read_s, write_s = _per_direction(rest)
        spec = write_s or read_s
        if not spec:
            raise _err(line, "random_distribution", "zoned needs zones, e.g. zoned:50/5:30/15:20/80")
        return _zoned(spec, line)
    params = [p for p in rest.split(":")] if rest else []
    if kind not in ("zipf", "pareto", "normal", "gauss"):
        raise _err(line, "random_distribution",
                   f"unknown distribution {v!r}; supported: random, zipf:THETA, pareto:H, normal:DEV, zoned:A/S:...")
    if not params or params[0].strip() == "":
        raise _err(line, "random_distribution", f"{kind} needs a parameter, e.g. zipf:1.2, pareto:0.2, normal:10")
    try:
        p0 = float(params[0])
    except ValueError:
        raise _err(line, "random_distribution", f"{kind} parameter {params[0]!r} is not a number") from None
    if kind == "zipf":
        if (reason := POSITIVE.reason(p0)) is not None:
            raise _err(line, "random_distribution", f"zipf theta {reason}")
        n = blocks if blocks and blocks > 0 else _DEFAULT_SPACE_BLOCKS
        hot_a, hot_s = _two_class(_zipf_cells(p0, n))
        src = f"{n} blocks" + ("" if blocks else " (assumed: no size given)")
        note = f"zipf:{p0:g} over {src} -> {hot_a:.1%} of IOs to {hot_s:.1%} of the space"
    elif kind == "pareto":
        if (reason := Range(lo=0, hi=1, lo_open=True, hi_open=True).reason(p0)) is not None:
            raise _err(line, "random_distribution", f"pareto h {reason}")
        power = math.log(p0) / math.log(1.0 - p0)
        hot_a, hot_s = _two_class(_cdf_cells(lambda x: x ** (1.0 / power)))
        note = f"pareto:{p0:g} -> {hot_a:.1%} of IOs to {hot_s:.1%} of the space"
    else:
        if (reason := Range(lo=0, hi=100, lo_open=True, note="(% of the range)").reason(p0)) is not None:
            raise _err(line, "random_distribution", f"normal deviation {reason}")
        sigma = p0 / 100.0
        hot_a, hot_s = _two_class(_cdf_cells(lambda x: 0.5 * (1.0 + math.erf((x - 0.5) / (sigma * math.sqrt(2.0))))))
        note = f"normal:{p0:g} (sd {p0:g}% of the range) -> {hot_a:.1%} of IOs to {hot_s:.1%} of the space"
    return Skew(hot_access_fraction=hot_a, hot_space_fraction=hot_s, note=note)


# --------------------------------------------------------------------------------------------
# Job file structure
# --------------------------------------------------------------------------------------------

@dataclass(frozen=True, slots=True, kw_only=True)
class FioJob:
    """One job section after [global] inheritance, reduced to the numbers the model uses."""

    name: str
    line: int
    phase: int
    read_fraction: float
    random_fraction: float
    io_size_mix: tuple[tuple[int, float], ...]
    mean_io_bytes: float
    iodepth: int
    numjobs: int
    rate_iops: float | None
    size_bytes: int | None
    size_fraction: float | None
    io_bytes: int | None
    number_ios: int | None
    runtime_s: float | None
    time_based: bool
    shared_file: bool
    hot_access_fraction: float = 1.0
    hot_space_fraction: float = 1.0
    skew_note: str = ""
    trim_only: bool = False
    rw_line: int = 0


@dataclass(slots=True)
class _Section:
    name: str
    line: int
    options: dict[str, tuple[str | None, int]] = field(default_factory=dict)
    inherited: dict[str, tuple[str | None, int]] = field(default_factory=dict)


def _sections(text: str, env: Mapping[str, str] | None) -> list[_Section]:
    env = env or {}
    jobs: list[_Section] = []
    global_opts: dict[str, tuple[str | None, int]] = {}
    current: dict[str, tuple[str | None, int]] | None = None
    for lineno, raw in enumerate(text.splitlines(), start=1):
        s = raw.strip()
        if not s or s[0] in "#;":
            continue
        s = _INLINE_COMMENT_RE.sub("", s).strip()
        if s.startswith("["):
            if not s.endswith("]") or not s[1:-1].strip():
                raise _err(lineno, "section", f"malformed section header {raw.strip()!r}; expected [name]")
            name = s[1:-1].strip()
            if name == "global":
                current = global_opts
            else:
                sec = _Section(name=name, line=lineno, inherited=dict(global_opts))
                jobs.append(sec)
                current = sec.options
            continue
        if s.startswith("include ") or s == "include":
            raise _err(lineno, "include", "include directives are not followed; inline the included file")
        key, sep, value_s = s.partition("=")
        key = key.strip().lower()
        if not key or not re.fullmatch(r"[a-z0-9_\-]+", key):
            raise _err(lineno, key or "option", f"malformed line {raw.strip()!r}; expected option=value or [section]")
        if current is None:
            raise _err(lineno, key, "option outside a [section]; put it under [global] or a job")
        value: str | None = None
        if sep:
            value = value_s.strip()
            if value == "":
                raise _err(lineno, key, "empty value")
            for var in _VAR_RE.findall(value):
                if var not in env:
                    raise _err(lineno, key, f"${{{var}}} is not set; pass its value in env (fio would substitute an empty string)")
            value = _VAR_RE.sub(lambda m: str(env[m.group(1)]), value)
        key = _ALIASES.get(key, key)
        current[key] = (value, lineno)
    return jobs


class _JobOptions:
    """One job's options (its section's over the inherited [global] ones) and the warnings they
    raise: each (line, option) once, naming the line and the option, never the line's text (a
    key that is not an option name, a line of some other file, is not repeated, nor any value)."""

    def __init__(self, sec: _Section, warnings: list[str], seen: set[tuple[int, str]]) -> None:
        self.opts = {**sec.inherited, **sec.options}
        self.warnings = warnings
        self.seen = seen

    def warn(self, line: int, key: str, msg: str) -> None:
        if (line, key) not in self.seen:
            self.seen.add((line, key))
            shown_key = key if _OPTION_NAME.fullmatch(key) else "<option>"
            self.warnings.append(f"fio:{line}:{shown_key}: {msg}")

    def get(self, key: str) -> tuple[str | None, int] | None:
        return self.opts.get(key)

    def val(self, key: str) -> tuple[str, int] | None:
        item = self.opts.get(key)
        if item is None:
            return None
        value, line = item
        if value is None:
            raise _err(line, key, "needs a value (option=value)")
        return value, line

    def warn_unmapped(self) -> None:
        """Unmapped options: named, never dropped silently."""
        for key, (_value, line) in sorted(self.opts.items(), key=lambda kv: kv[1][1]):
            if key in _MAPPED:
                continue
            if key in _NO_EFFECT:
                self.warn(line, key, "ignored (no effect on the IO mix the planner models)")
            else:
                self.warn(line, key, "is not supported; the workload ignores it")


@dataclass(frozen=True, slots=True)
class _Direction:
    """What rw, rwmixread/rwmixwrite and percentage_random say about a job's IO directions."""

    mode: str
    rw_line: int
    random: bool
    trim_only: bool
    read_fraction: float
    random_fraction: float


def _direction(o: _JobOptions, sec: _Section) -> _Direction:
    mode, rw_line = "read", sec.line
    if (item := o.val("rw")) is not None:
        mode_s, rw_line = item
        mode, _, modifier = mode_s.strip().lower().partition(":")
        if mode not in _RW_MODES:
            raise _err(rw_line, "rw", f"unknown mode {mode_s!r}; expected one of {', '.join(_RW_MODES)}")
        if modifier:
            o.warn(rw_line, "rw", f"an offset modifier (rw={mode}:...) is not supported (ignored)")
    fixed_read, random, trim = _RW_MODES[mode]
    trim_only = trim == "only"
    if trim:
        o.warn(rw_line, "rw", f"rw={mode}: trims are not modelled" + (
            "; this job is left out of the mix" if trim_only else "; only its writes are kept"))

    # rwmixread / rwmixwrite: the later of the two wins when both are given.
    read_fraction = 0.5 if fixed_read is None else fixed_read
    mix_r, mix_w = o.val("rwmixread"), o.val("rwmixwrite")
    if mix_r is not None:
        _parse_int(mix_r[0], mix_r[1], "rwmixread", 0, 100)
    if mix_w is not None:
        _parse_int(mix_w[0], mix_w[1], "rwmixwrite", 0, 100)
    if fixed_read is None:
        chosen = max((m for m in (mix_r, mix_w) if m is not None), key=lambda m: m[1], default=None)
        if chosen is not None:
            pct = int(chosen[0].strip(), 0)
            read_fraction = pct / 100.0 if chosen is mix_r else 1.0 - pct / 100.0
    else:
        for key, item in (("rwmixread", mix_r), ("rwmixwrite", mix_w)):
            if item is not None:
                o.warn(item[1], key, f"{key} has no effect with rw={mode}")

    random_fraction = 1.0 if random else 0.0
    if (item := o.val("percentage_random")) is not None:
        r_s, w_s = _per_direction(item[0])
        r_pct = _parse_int(r_s or "100", item[1], "percentage_random", 0, 100)
        w_pct = _parse_int(w_s or "100", item[1], "percentage_random", 0, 100)
        if random:
            random_fraction = (read_fraction * r_pct + (1.0 - read_fraction) * w_pct) / 100.0
        else:
            o.warn(item[1], "percentage_random", f"percentage_random has no effect with rw={mode}")
    return _Direction(mode=mode, rw_line=rw_line, random=random, trim_only=trim_only, read_fraction=read_fraction,
                      random_fraction=random_fraction)


_Mix = tuple[tuple[int, float], ...]


def _block_sizes(o: _JobOptions, kb_base: int) -> tuple[_Mix, _Mix]:
    """(read mix, write mix): bssplit > bsrange > bs (fio lets bssplit override bs)."""
    read_mix: _Mix = ((4 * KiB, 1.0),)
    write_mix: _Mix = ((4 * KiB, 1.0),)
    if (item := o.val("bs")) is not None:
        r_s, w_s = _per_direction(item[0])
        if r_s:
            read_mix = ((_check_io_size(parse_fio_size(r_s, kb_base=kb_base, line=item[1], option="bs"), item[1], "bs"), 1.0),)
        if w_s:
            write_mix = ((_check_io_size(parse_fio_size(w_s, kb_base=kb_base, line=item[1], option="bs"), item[1], "bs"), 1.0),)
    if (item := o.val("bsrange")) is not None:
        r_s, w_s = _per_direction(item[0])
        for direction, spec in (("read", r_s), ("write", w_s)):
            if not spec:
                continue
            m = re.fullmatch(r"\s*([^:\-]+)\s*[:\-]\s*([^:\-]+)\s*", spec)
            if not m:
                raise _err(item[1], "bsrange", f"range {spec!r} must be MIN-MAX (e.g. 4k-16k)")
            lo = parse_fio_size(m.group(1), kb_base=kb_base, line=item[1], option="bsrange")
            hi = parse_fio_size(m.group(2), kb_base=kb_base, line=item[1], option="bsrange")
            lo, hi = min(lo, hi), max(lo, hi)
            _check_io_size(lo, item[1], "bsrange")
            _check_io_size(hi - hi % lo, item[1], "bsrange")
            count = hi // lo
            sizes = sorted({lo * int(k) for k in np.round(np.linspace(1, count, min(count, 64)))})
            mix = tuple((s, 1.0 / len(sizes)) for s in sizes)
            if len(sizes) > 1:
                o.warn(item[1], "bsrange", f"{direction}s: sizes taken uniform over {len(sizes)} multiples of {lo} B from {lo} to {hi} B")
            if direction == "read":
                read_mix = mix
            else:
                write_mix = mix
    if (item := o.val("bssplit")) is not None:
        read_mix, write_mix = parse_bssplit(item[0], kb_base=kb_base, line=item[1])
    return read_mix, write_mix


def _mean(mix: _Mix) -> float:
    return sum(s * w for s, w in mix)


def _size_or_pct(o: _JobOptions, key: str, kb_base: int) -> tuple[int | None, float | None]:
    item = o.val(key)
    if item is None:
        return None, None
    s, line = item[0].strip(), item[1]
    if s.endswith("%"):
        try:
            pct = float(s[:-1])
        except ValueError:
            raise _err(line, key, f"bad percentage {s!r}") from None
        allowed = Range(lo=0, hi=100, hi_open=True) if key == "offset" else Range(lo=0, hi=100, lo_open=True)
        if (reason := allowed.reason(pct)) is not None:
            raise _err(line, key, f"percentage {reason}")
        return None, pct / 100.0
    return parse_fio_size(s, kb_base=kb_base, line=line, option=key), None


def _rate_iops(o: _JobOptions, kb_base: int, d: _Direction, read_mix: _Mix, write_mix: _Mix) -> float | None:
    rate_iops: float | None = None
    if (item := o.val("rate_iops")) is not None:
        r_s, w_s = _per_direction(item[0])
        r_rate: float = _parse_int(r_s, item[1], "rate_iops", 0, 2**40) if r_s else 0
        w_rate: float = _parse_int(w_s, item[1], "rate_iops", 0, 2**40) if w_s else 0
        rate_iops = _split_rate(r_rate, w_rate, d.read_fraction)
    elif (item := o.val("rate")) is not None:
        r_s, w_s = _per_direction(item[0])
        r_bw = parse_fio_size(r_s, kb_base=kb_base, line=item[1], option="rate") if r_s else 0
        w_bw = parse_fio_size(w_s, kb_base=kb_base, line=item[1], option="rate") if w_s else 0
        r_rate = r_bw / _mean(read_mix) if r_bw else 0.0
        w_rate = w_bw / _mean(write_mix) if w_bw else 0.0
        rate_iops = _split_rate(r_rate, w_rate, d.read_fraction)
        o.warn(item[1], "rate", f"rate (bytes/s: {r_bw:g} read, {w_bw:g} write) converted to {rate_iops:.1f} IOPS at the mean block size")
    if rate_iops is not None and rate_iops <= 0:
        rate_iops = None
    return rate_iops


def _skew(o: _JobOptions, d: _Direction, io_mix: _Mix, size_bytes: int | None) -> tuple[float, float, str]:
    """(hot access fraction, hot space fraction, note) from random_distribution."""
    hot_a, hot_s, skew_note = 1.0, 1.0, ""
    if (item := o.val("random_distribution")) is not None and item[0].strip().lower().startswith("zoned_abs"):
        o.warn(item[1], "random_distribution",
               "zoned_abs (absolute zone sizes) is not supported; uniform access assumed")
    elif (item := o.val("random_distribution")) is not None:
        min_bs = min(s for s, _ in io_mix)
        blocks = (size_bytes // min_bs) if size_bytes else None
        skew = skew_from_distribution(item[0], blocks=blocks, line=item[1])
        if d.random and d.read_fraction >= 1.0:
            o.warn(item[1], "random_distribution",
                   f"{skew.note}; this job only reads and the workload's skew describes writes, so it is not carried")
        elif d.random:
            hot_a, hot_s, skew_note = skew.hot_access_fraction, skew.hot_space_fraction, skew.note
            if item[0].strip().lower().startswith(("zipf", "pareto", "normal", "gauss")):
                o.warn(item[1], "random_distribution", f"approximated as a two-class skew: {skew.note}")
        else:
            o.warn(item[1], "random_distribution", f"random_distribution has no effect with rw={d.mode}")
    return hot_a, hot_s, skew_note


def _job_from_section(sec: _Section, phase: int, warnings: list[str], seen: set[tuple[int, str]]) -> FioJob:
    o = _JobOptions(sec, warnings, seen)
    o.warn_unmapped()
    kb_base = 1024
    if (item := o.val("kb_base")) is not None:
        kb_base = _parse_int(item[0], item[1], "kb_base", 1000, 1024)
        if kb_base not in (1000, 1024):
            raise _err(item[1], "kb_base", f"must be 1000 or 1024, got {kb_base}")
    d = _direction(o, sec)
    read_mix, write_mix = _block_sizes(o, kb_base)
    read_fraction = d.read_fraction
    merged: dict[int, float] = {}
    for mix, share in ((read_mix, read_fraction), (write_mix, 1.0 - read_fraction)):
        for s, w in mix:
            if share * w > 0:
                merged[s] = merged.get(s, 0.0) + share * w
    io_mix = tuple(sorted(merged.items()))
    mean_io = read_fraction * _mean(read_mix) + (1.0 - read_fraction) * _mean(write_mix)

    iodepth = 1
    if (item := o.val("iodepth")) is not None:
        iodepth = _parse_int(item[0], item[1], "iodepth", 1, MAX_QUEUE_DEPTH)
    numjobs = 1
    if (item := o.val("numjobs")) is not None:
        numjobs = _parse_int(item[0], item[1], "numjobs", 1, 65_536)

    size_bytes, size_fraction = _size_or_pct(o, "size", kb_base)
    if size_bytes == 0:
        raise _err(o.opts["size"][1], "size", "must be > 0")
    _offset_bytes, offset_fraction = _size_or_pct(o, "offset", kb_base)
    if size_fraction is None and offset_fraction:
        size_fraction = 1.0 - offset_fraction
    io_bytes: int | None = None
    if (item := o.val("io_size")) is not None:
        io_bytes = parse_fio_size(item[0], kb_base=kb_base, line=item[1], option="io_size")
    number_ios: int | None = None
    if (item := o.val("number_ios")) is not None:
        number_ios = _parse_int(item[0], item[1], "number_ios", 1, 2**62)
    loops = 1
    if (item := o.val("loops")) is not None:
        loops = _parse_int(item[0], item[1], "loops", 1, 2**31)

    runtime_s: float | None = None
    if (item := o.val("runtime")) is not None:
        runtime_s = parse_time_s(item[0], line=item[1], option="runtime")
        if runtime_s <= 0:
            raise _err(item[1], "runtime", "must be > 0")
    time_based = False
    if (tb := o.get("time_based")) is not None:
        time_based = _parse_bool(tb[0], tb[1], "time_based")

    rate_iops = _rate_iops(o, kb_base, d, read_mix, write_mix)
    hot_a, hot_s, skew_note = _skew(o, d, io_mix, size_bytes)

    if io_bytes is not None and loops > 1:
        io_bytes *= loops
    elif size_bytes is not None and loops > 1:
        io_bytes = size_bytes * loops

    return FioJob(
        name=sec.name,
        line=sec.line,
        phase=phase,
        read_fraction=read_fraction,
        random_fraction=d.random_fraction,
        io_size_mix=io_mix,
        mean_io_bytes=mean_io,
        iodepth=iodepth,
        numjobs=numjobs,
        rate_iops=rate_iops,
        size_bytes=size_bytes,
        size_fraction=size_fraction,
        io_bytes=io_bytes,
        number_ios=number_ios,
        runtime_s=runtime_s,
        time_based=time_based,
        shared_file="filename" in o.opts,
        hot_access_fraction=hot_a,
        hot_space_fraction=hot_s,
        skew_note=skew_note,
        trim_only=d.trim_only,
        rw_line=d.rw_line,
    )


def _split_rate(r_rate: float, w_rate: float, read_fraction: float) -> float:
    """fio caps each direction separately; the job's total rate is what both caps allow at its
    read share."""
    caps = []
    if read_fraction > 0 and r_rate > 0:
        caps.append(r_rate / read_fraction)
    if read_fraction < 1 and w_rate > 0:
        caps.append(w_rate / (1.0 - read_fraction))
    return min(caps) if caps else 0.0


def parse_fio_jobs(text: str, *, env: Mapping[str, str] | None = None) -> tuple[list[FioJob], list[str]]:
    """Every job of a fio job file (after [global] inheritance) and the warnings."""
    sections = _sections(text, env)
    if not sections:
        raise _err(max(1, len(text.splitlines())), "section", "the file defines no job section (only [global] or nothing)")
    warnings: list[str] = []
    seen: set[tuple[int, str]] = set()
    jobs: list[FioJob] = []
    phase = 0
    for i, sec in enumerate(sections):
        opts = {**sec.inherited, **sec.options}
        if i > 0 and "stonewall" in opts and _parse_bool(opts["stonewall"][0], opts["stonewall"][1], "stonewall"):
            phase += 1
        jobs.append(_job_from_section(sec, phase, warnings, seen))
    return jobs, warnings


def parse_fio(
    text: str,
    *,
    name: str | None = None,
    source: str = "",
    env: Mapping[str, str] | None = None,
) -> tuple[Workload, list[str]]:
    """The workload a fio job file describes, and warnings naming every option not modelled."""
    jobs, warnings = parse_fio_jobs(text, env=env)
    return combine_jobs(jobs, name=name or jobs[0].name, source=source, warnings=warnings)


def combine_jobs(
    jobs: list[FioJob], *, name: str, source: str = "", warnings: list[str] | None = None
) -> tuple[Workload, list[str]]:
    """Combine jobs by their IO shares into one workload (rules in the module docstring)."""
    warnings = list(warnings or [])
    live = [j for j in jobs if not j.trim_only]
    if not live:
        raise _err(jobs[0].rw_line or jobs[0].line, "rw", "every job only trims; there are no reads or writes to model")

    # IO shares.
    if all(j.time_based and j.runtime_s for j in live):
        weights = [j.numjobs * float(j.runtime_s or 0.0) for j in live]
        if len(live) > 1:
            warnings.append("fio: IO shares of the time-based jobs taken as numjobs x runtime (equal IO rate per job assumed)")
    else:
        known = [b for j in live for b in ((j.io_bytes or j.size_bytes),) if b]
        ref = max(known) if known else GiB
        weights = []
        for j in live:
            if j.number_ios:
                ios = float(j.number_ios)
            else:
                nbytes = j.io_bytes or j.size_bytes
                if not nbytes and len(live) > 1:
                    warnings.append(
                        f"fio:{j.line}:size: the job of this section gives no size; its IO share assumes it covers "
                        f"{'the largest size given' if known else 'the same space as the other jobs'}"
                    )
                ios = float(nbytes or ref) / j.mean_io_bytes
            weights.append(j.numjobs * ios)
    total = sum(weights)
    shares = [w / total for w in weights]

    read_fraction = sum(s * j.read_fraction for s, j in zip(shares, live))
    random_fraction = sum(s * j.random_fraction for s, j in zip(shares, live))
    merged: dict[int, float] = {}
    for s, j in zip(shares, live):
        for size, w in j.io_size_mix:
            merged[size] = merged.get(size, 0.0) + s * w
    io_mix = tuple(sorted((size, w) for size, w in merged.items() if w > 0))

    # Phases (stonewall groups): concurrent jobs' queue depths and rates add.
    phases: dict[int, list[tuple[float, FioJob]]] = {}
    for s, j in zip(shares, live):
        phases.setdefault(j.phase, []).append((s, j))
    qd = 0.0
    rate = 0.0
    all_rated = all(j.rate_iops for j in live)
    for members in phases.values():
        share = sum(s for s, _ in members)
        qd += share * sum(j.iodepth * j.numjobs for _, j in members)
        if all_rated:
            rate += share * sum(float(j.rate_iops or 0.0) * j.numjobs for _, j in members)
    if not all_rated and any(j.rate_iops for j in live):
        warnings.append("fio: rate_iops is set on some jobs only; the workload is taken as closed loop (target_iops 0)")
    queue_depth = max(1, min(MAX_QUEUE_DEPTH, round(qd)))
    if len(phases) > 1:
        warnings.append(
            f"fio: {len(phases)} stonewalled phases combined into one mix by IO share; queue depth is the "
            f"IO-weighted mean of the phases' ({queue_depth})"
        )

    # Skew of the random writes.
    ww = [s * (1.0 - j.read_fraction) * j.random_fraction for s, j in zip(shares, live)]
    hot_w, hot_s = 1.0, 1.0
    if sum(ww) > 0:
        wsum = sum(ww)
        hot_w = sum(w * j.hot_access_fraction for w, j in zip(ww, live)) / wsum
        hot_s = sum(w * j.hot_space_fraction for w, j in zip(ww, live)) / wsum
        if len({(j.hot_access_fraction, j.hot_space_fraction) for w, j in zip(ww, live) if w > 0}) > 1:
            warnings.append("fio: jobs with different random_distribution combined by write share (approximation)")

    fractions = [j.size_fraction for j in live if j.size_fraction is not None]
    working_set_fraction = max(fractions) if fractions else 1.0
    ws_bytes = max(
        (float(j.size_bytes) * (1 if j.shared_file else j.numjobs) for j in live if j.size_bytes), default=0.0
    )

    notes = [
        f"[{j.name}] line {j.line}: phase {j.phase}, IO share {s:.4f}, read {j.read_fraction:.3f}, random "
        f"{j.random_fraction:.3f}, mean IO {j.mean_io_bytes:.0f} B, iodepth {j.iodepth} x numjobs {j.numjobs}"
        + (f", {j.skew_note}" if j.skew_note else "")
        for s, j in zip(shares, live)
    ]
    workload = Workload(
        name=name,
        read_fraction=min(1.0, max(0.0, read_fraction)),
        random_fraction=min(1.0, max(0.0, random_fraction)),
        io_size_mix=io_mix,
        queue_depth=queue_depth,
        target_iops=rate,
        hot_write_fraction=min(1.0, hot_w),
        hot_space_fraction=min(1.0, hot_s),
        working_set_fraction=working_set_fraction,
        working_set_bytes=ws_bytes,
        source=source or "fio job file",
        notes=tuple(notes) + tuple(warnings),
    )
    return workload, warnings
