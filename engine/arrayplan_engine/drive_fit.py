"""Fit a drive to a measured consistency run: fio's per-second write IOPS in, a catalog drive out.

A user who ran the reviewers' consistency test (secure erase, fill, then 4 KB random writes at
QD32; or SNIA PTS) on their own drive with fio has one write-IOPS figure per second. This module

* reads fio's ``write_iops_log`` format (``time_ms, value, direction, block_bytes, offset[,
  priority]``, one line per sample; with ``log_avg_msec=1000`` one per second) and fio's JSON
  output (``--output-format=json``) with per-second samples (``jobs[].steadystate.data.iops``,
  which fio fills when the job sets ``steadystate``); anything else is refused naming the line;
* writes a simulated run in the ``write_iops_log`` format, so a round trip is testable;
* fits the SSD model's free parameters so the simulated curve matches the measured one: the
  fresh-out-of-box rate (timing: ``random_write_iops``, and the sequential-write pace when the
  FOB rate needs it), the cleaning trait (``gc_policy``: eager or lazy, whichever curve fits
  better) and the effective spare (``raw_nand_bytes``: bisection on the steady-state level). Time
  to steady state is not a free parameter: it follows from the FOB rate and the spare, so it
  checks the fit.

The simulated runs are ``ssd.consistency_experiment`` (the model's public consistency run), the
same code the catalog's drives and ``arrayplan consistency`` use. Pure: text in, text out.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable
from dataclasses import dataclass, replace
from types import MappingProxyType

import numpy as np

from . import ssd
from .catalog import Drive, drive_violations
from .errors import InvalidInputError
from .provenance import Provenance

__all__ = ["CurveFigures", "FitResult", "curve_figures", "fio_log_text", "fit_drive", "parse_fio_log"]

FOB_SECONDS = 5                 # the fresh-out-of-box rate: mean of the first seconds
CLIFF_FRACTION = 0.8            # garbage collection has begun once a second falls below 80 % of FOB
ROUND_S = 60                    # SNIA PTS round
MIN_SECONDS = 5 * ROUND_S       # a log shorter than five rounds cannot show steady state
SPARE_RANGE = (0.01, 4.0)       # spare per user byte searched by the fit
WRITE_DIRECTION = 1             # fio's data direction of a write

_LINE_RE = re.compile(r"^\s*(\d+)\s*,\s*(\d+(?:\.\d*)?)\s*,\s*(\d+)\s*,\s*(\d+)\s*(?:,\s*(\d+)\s*)?(?:,\s*(\d+)\s*)?$")


@dataclass(frozen=True, slots=True, kw_only=True)
class CurveFigures:
    """What a consistency curve shows: the FOB rate, when garbage collection began (the cliff),
    when the SNIA PTS steady-state test first passed and the mean IOPS from then on."""

    fob_iops: float
    gc_onset_s: float
    steady_start_s: float        # NaN if the run never reached steady state
    steady_iops: float           # mean after steady_start_s (the last five rounds if never steady)


def curve_figures(iops: np.ndarray) -> CurveFigures:
    """The figures of a per-second IOPS curve, measured or simulated alike (so a fit compares
    like with like)."""
    x = np.asarray(iops, dtype=np.float64)
    if x.ndim != 1 or x.size < MIN_SECONDS:
        raise InvalidInputError.one("iops", f"must be at least {MIN_SECONDS} per-second samples (five PTS rounds), got {x.size}")
    fob = float(x[:FOB_SECONDS].mean())
    below = np.flatnonzero(x < CLIFF_FRACTION * fob)
    onset = int(below[0]) if below.size else x.size
    n_rounds = x.size // ROUND_S
    rounds = x[: n_rounds * ROUND_S].reshape(n_rounds, ROUND_S).mean(axis=1)
    ss = ssd.pts_steady_state(rounds, first_round=min(n_rounds, math.ceil(onset / ROUND_S)))
    start = ss.start_round * ROUND_S if ss is not None else max(0, x.size - 5 * ROUND_S)
    return CurveFigures(fob_iops=fob, gc_onset_s=float(onset), steady_start_s=float(start) if ss is not None else math.nan,
                        steady_iops=float(x[start:].mean()))


# --------------------------------------------------------------------------------------------
# fio logs


def _parse_iops_log(text: str, source: str) -> np.ndarray:
    sums: dict[int, list[float]] = {}
    seen_write = False
    for n, raw in enumerate(text.splitlines(), start=1):
        line = raw.strip()
        if not line:
            continue
        m = _LINE_RE.match(line)
        if m is None:
            raise InvalidInputError.one(f"{source}:{n}", (
                "not a fio write_iops_log line: expected 'time_ms, iops, direction, block_bytes, offset' "
                f"(integers; fio's log format), got {raw[:80]!r}"))
        t_ms, value, direction = int(m.group(1)), float(m.group(2)), int(m.group(3))
        if direction != WRITE_DIRECTION:
            continue
        seen_write = True
        second = max(0, (t_ms - 1) // 1000)  # fio stamps a window at its end: 1000 ms closes second 0
        sums.setdefault(second, []).append(value)
    if not seen_write:
        raise InvalidInputError.one(source, "holds no write samples (direction 1); log the write job with write_iops_log")
    last = max(sums)
    iops = np.zeros(last + 1)
    for s, values in sums.items():
        iops[s] = float(np.mean(values))
    missing = [s for s in range(last + 1) if s not in sums]
    if missing:
        raise InvalidInputError.one(source, (
            f"has no sample for second {missing[0]} (of {len(missing)} missing); log one sample a second "
            "(log_avg_msec=1000)"))
    return iops


def _parse_fio_json(text: str, source: str) -> np.ndarray:
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as exc:
        raise InvalidInputError.one(f"{source}:{exc.lineno}", f"not valid JSON: {exc.msg}") from None
    jobs = doc.get("jobs") if isinstance(doc, dict) else None
    if not isinstance(jobs, list) or not jobs:
        raise InvalidInputError.one(source, "is JSON but not fio's output (no 'jobs' list)")
    for i, job in enumerate(jobs):
        data = (job.get("steadystate") or {}).get("data") if isinstance(job, dict) else None
        samples = data.get("iops") if isinstance(data, dict) else None
        if isinstance(samples, list) and samples:
            if not all(isinstance(v, (int, float)) and not isinstance(v, bool) and v >= 0 for v in samples):
                raise InvalidInputError.one(f"{source}: jobs[{i}].steadystate.data.iops", "must be a list of numbers >= 0")
            return np.asarray(samples, dtype=np.float64)
    raise InvalidInputError.one(source, (
        "fio JSON without per-second samples: no jobs[].steadystate.data.iops (set steadystate= in the job, "
        "or log the run with write_iops_log and log_avg_msec=1000)"))


def parse_fio_log(text: str, source: str = "<fio log>") -> np.ndarray:
    """Per-second write IOPS from a fio ``write_iops_log`` file or fio JSON output (see the
    module doc). Errors name ``source`` and the line."""
    stripped = text.lstrip()
    iops = _parse_fio_json(text, source) if stripped.startswith(("{", "[")) else _parse_iops_log(text, source)
    if iops.size < MIN_SECONDS:
        raise InvalidInputError.one(source, f"holds {iops.size} seconds; a fit needs at least {MIN_SECONDS} (five 60-s PTS rounds)")
    return iops


def fio_log_text(iops: np.ndarray, *, block_bytes: int = 4096) -> str:
    """A per-second IOPS series in fio's ``write_iops_log`` format (``log_avg_msec=1000``)."""
    return "".join(f"{(i + 1) * 1000}, {round(float(v))}, {WRITE_DIRECTION}, {block_bytes}, 0\n" for i, v in enumerate(iops))


# --------------------------------------------------------------------------------------------
# Fitting


@dataclass(frozen=True, slots=True, kw_only=True)
class FitResult:
    drive: Drive
    measured: CurveFigures
    simulated: CurveFigures
    measured_iops: np.ndarray
    simulated_iops: np.ndarray
    runs: int

    @property
    def steady_error(self) -> float:
        return self.simulated.steady_iops / self.measured.steady_iops - 1.0

    @property
    def steady_start_error(self) -> float:
        m, s = self.measured.steady_start_s, self.simulated.steady_start_s
        return s / m - 1.0 if m > 0 and math.isfinite(m) and math.isfinite(s) else math.nan


def _with(drive: Drive, values: dict[str, object], prov: dict[str, Provenance]) -> Drive:
    p = dict(drive.provenance)
    p.update(prov)
    d = replace(drive, **values, provenance=MappingProxyType(p))  # type: ignore[arg-type]
    bad = drive_violations(d, "fit")
    if bad:
        raise InvalidInputError(bad)
    return d


def _shape_error(measured: np.ndarray, simulated: np.ndarray) -> float:
    """RMS of log(simulated / measured) over 10-s means: how well the curves overlay."""
    n = min(measured.size, simulated.size) // 10 * 10
    a = measured[:n].reshape(-1, 10).mean(axis=1)
    b = simulated[:n].reshape(-1, 10).mean(axis=1)
    return float(np.sqrt(np.mean(np.log(np.maximum(b, 1.0) / np.maximum(a, 1.0)) ** 2)))


def fit_drive(base: Drive, iops: np.ndarray, *, source: str, seed: int = 0, model_pages: int = ssd.DEFAULT_MODEL_PAGES,
              iterations: int = 12, progress: Callable[[str], None] | None = None) -> FitResult:
    """Fit ``base`` (an SSD; its capacity, interface and read figures stay) to a measured
    per-second write-IOPS curve from ``source`` (see the module doc). The fitted values carry
    their provenance: the measured FOB and steady levels quote the log line they start at; the
    fitted spare and cleaning trait are marked assumed with how they were fitted."""
    if base.kind != "ssd":
        raise InvalidInputError.one("base.kind", f"must be 'ssd' (the consistency test is an SSD experiment), got {base.kind!r}")
    x = np.asarray(iops, dtype=np.float64)
    measured = curve_figures(x)
    steady_at = int(measured.steady_start_s) if math.isfinite(measured.steady_start_s) else max(0, x.size - 5 * ROUND_S)
    fob = measured.fob_iops
    values: dict[str, object] = {"random_write_iops": fob, "steady_random_write_iops": min(measured.steady_iops, fob)}
    # Measured, not quoted: the log holds per-second samples, these are means over them.
    prov = {
        "random_write_iops": Provenance(source=source, assumed=True, reason=(
            f"measured in the log: mean of the first {FOB_SECONDS} seconds (fresh out of box)")),
        "steady_random_write_iops": Provenance(source=source, assumed=True, reason=(
            f"measured in the log: mean from second {steady_at} on, where the SNIA PTS steady-state test first passes")),
    }
    seq_w = float(base.seq_write_bytes_per_s or 0.0) / int(base.controllers or 1)
    if fob * ssd.MAP_BYTES / int(base.controllers or 1) > seq_w:
        values["seq_write_bytes_per_s"] = fob * ssd.MAP_BYTES * 1.02
        prov["seq_write_bytes_per_s"] = Provenance(source=source, assumed=True, reason=(
            "raised so the back end carries the measured FOB rate (4 KiB x FOB IOPS, +2 %): the timing the log shows"))
    timed = _with(base, values, prov)
    runs = 0

    def run(d: Drive) -> np.ndarray:
        nonlocal runs
        runs += 1
        return ssd.consistency_experiment(d, duration_s=float(x.size), seed=seed, model_pages=model_pages).iops

    cap = float(timed.capacity_bytes)
    best: tuple[float, Drive, np.ndarray] | None = None
    for policy in ("eager", "lazy"):
        lo, hi = math.log(SPARE_RANGE[0]), math.log(SPARE_RANGE[1])
        candidate: tuple[Drive, np.ndarray] | None = None
        for _ in range(iterations):
            mid = 0.5 * (lo + hi)
            raw = int(round(cap * (1.0 + math.exp(mid))))
            d = _with(timed, {"raw_nand_bytes": raw, "gc_policy": policy}, {})
            try:
                sim = run(d)
            except InvalidInputError:
                # outside the FTL model's spare factors (0.005, 0.95): too little spare once parity
                # and the bad-block reserve are taken (search higher), or too much (search lower)
                if math.exp(mid) < 1.0:
                    lo = mid
                else:
                    hi = mid
                continue
            candidate = (d, sim)
            if curve_figures(sim).steady_iops < measured.steady_iops:
                lo = mid
            else:
                hi = mid
        if candidate is None:
            continue
        d, sim = candidate
        fig = curve_figures(sim)
        err = abs(fig.steady_iops / measured.steady_iops - 1.0) + _shape_error(x, sim)
        if math.isfinite(measured.steady_start_s) and math.isfinite(fig.steady_start_s) and measured.steady_start_s > 0:
            err += abs(fig.steady_start_s / measured.steady_start_s - 1.0)
        if progress is not None:
            progress(f"gc_policy {policy}: spare per user byte {d.spare_bytes_per_user_byte:.3f}, steady {fig.steady_iops:,.0f} IOPS "
                     f"(measured {measured.steady_iops:,.0f}), error {err:.3f}")
        if best is None or err < best[0]:
            best = (err, d, sim)
    if best is None:
        raise InvalidInputError.one("fio_log", "no spare area in the searched range gives a model that runs; check the base drive")
    _, d, sim = best
    fig = curve_figures(sim)
    spare = d.spare_bytes_per_user_byte or 0.0
    fitted = _with(d, {}, {
        "raw_nand_bytes": Provenance(source=source, assumed=True, reason=(
            f"fitted: the effective spare ({spare:.3f} bytes per user byte) at which the model's steady level matches the "
            f"log's {measured.steady_iops:,.0f} IOPS (bisection on consistency_experiment runs)")),
        "gc_policy": Provenance(source=source, assumed=True, reason=(
            f"fitted: the cleaning trait whose simulated curve overlays the log better ({d.gc_policy})")),
    })
    return FitResult(drive=fitted, measured=measured, simulated=fig, measured_iops=x, simulated_iops=sim, runs=runs)

