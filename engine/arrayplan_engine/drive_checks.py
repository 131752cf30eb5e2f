"""A drive against the models' own bounds: what the drive models and the array simulation will
demand of a drive when a plan runs, checked when the drive is given (a plan's custom drive, a
site's catalog file).

A drive that passes the catalog's field ranges can still be one the drive models or the array
simulation refuse when a plan runs (then the plan FAILED as INTERNAL): a 1-byte SSD, a spare factor
outside the FTL model's range, an SSD without a sequential write rate, rates so low an IO takes
hours, a write buffer that never drains. ``drive_model_violations`` builds the drive's model the
way the planner does (the worst case: full drives, no over-provisioning) and runs the simulation's
own checks on it; each failure names the drive field and the range. The models say which rule a
value broke by the violation's code (``errors.SPARE_FACTOR_OUT_OF_RANGE``, ``errors.REQUIRED``,
``errors.OUT_OF_RANGE``), never by the text of its reason.
"""

from __future__ import annotations

import math
from dataclasses import fields as dc_fields

from . import array, hdd, reliability, ssd
from .catalog import Drive
from .errors import MODEL_OUT_OF_RANGE, OUT_OF_RANGE, REQUIRED, SPARE_FACTOR_OUT_OF_RANGE, InvalidInputError, Violation
from .layout import DEFAULT_STRIPE_UNIT_BYTES, make_layout
from .plan_request import PlanRequest
from .units import HOUR_S, YEAR_HOURS
from .workload import Workload

#: One stripe unit (the planner's layouts use 64 KiB) after the largest over-provisioning (0.9).
MIN_DRIVE_CAPACITY_BYTES = 10 * DEFAULT_STRIPE_UNIT_BYTES
#: The least failure rate the durability model's Markov chain computes without overflow (an MTTF
#: of 8.76e15 h; at 1e-100 its matrices overflow for a repair of seconds).
MIN_ANNUAL_FAILURE_RATE = 1e-12
#: ``ssd.calibrate``'s open interval for the FTL spare factor, 1 - user / (raw - parity - reserve).
SPARE_FACTOR_RANGE = ssd.SPARE_FACTOR_RANGE
# The drive fields behind each number of a drive's service model, and what to change.
_MODEL_FIELDS = {
    "read_fixed_s": ("random_read_iops", "reads are too slow for the array simulation (raise random_read_iops)"),
    "read_per_byte_s": ("seq_read_bytes_per_s", "reads are too slow for the array simulation (raise seq_read_bytes_per_s "
                                                 "or random_read_iops)"),
    "write_fixed_s": ("random_write_iops", "writes are too slow for the array simulation (raise random_write_iops)"),
    "write_per_byte_s": ("seq_write_bytes_per_s", "writes are too slow for the array simulation (raise seq_write_bytes_per_s "
                                                   "or random_write_iops)"),
    "posted_write_fixed_s": ("random_write_iops", "posted writes are too slow for the array simulation (raise random_write_iops)"),
    "posted_write_per_byte_s": ("interface", "the interface is too slow for posted writes"),
    "host_page_s": ("seq_write_bytes_per_s", "the flash back end is too slow for the SSD model (raise seq_write_bytes_per_s)"),
    "relocation_page_s": ("seq_write_bytes_per_s", "cleaning is too slow for the SSD model (raise seq_write_bytes_per_s "
                                                    "or random_write_iops)"),
    "erase_page_s": ("pages_per_block", "erasing is too slow for the SSD model"),
    "span_pages": ("capacity_bytes", "too small for the SSD model"),
    "raw_pages": ("raw_nand_bytes", "too little flash for the SSD model"),
    "low_free_pages": ("capacity_bytes", "too small for the SSD model: its spare flash cannot hold the cleaner's free pages "
                                         "(give a larger capacity_bytes and raw_nand_bytes, or fewer pages_per_block)"),
    "high_free_pages": ("capacity_bytes", "too small for the SSD model: its spare flash cannot hold the cleaner's free pages "
                                          "(an erase block per controller above the low watermark; give a larger capacity_bytes "
                                          "and raw_nand_bytes, or fewer pages_per_block)"),
    "write_buffer_pages": ("write_buffer_bytes", "too large for the SSD model"),
    "write_buffer_s": ("write_buffer_bytes", "the write buffer takes too long to drain at the drive's write rate"),
    "slc_cache_pages": ("slc_cache_bytes", "must be smaller than the flash"),
    "slc_page_s": ("slc_write_bytes_per_s", "the SLC cache is too slow for the SSD model"),
    "fold_page_s": ("seq_write_bytes_per_s", "folding the SLC cache is too slow for the SSD model"),
    "parallel_units": ("channels", "out of the simulation's range"),
    "controllers": ("controllers", "out of the simulation's range"),
}
_HDD_FIELDS = {"media_bytes_per_s": "seq_read_bytes_per_s"}  # hdd.service_model's media rate is the drive's sequential read rate


def _spare_factor_violation(drive: Drive, at: str, raw_given: bool) -> Violation:
    """The allowed range of the field the user gave (``capacity_bytes`` when ``raw_nand_bytes`` was
    filled in, else ``raw_nand_bytes``) for an FTL spare factor inside ``SPARE_FACTOR_RANGE``,
    solved from ``ssd.calibrate``'s definition: data NAND = raw x (1 - parity - bad-block reserve),
    parity 1/8 for rain-7+1 and half the spare for raid4-dies."""
    lo, hi = SPARE_FACTOR_RANGE
    q_lo, q_hi = 1.0 - hi, 1.0 - lo  # capacity / data NAND must lie in (q_lo, q_hi)
    reserve = ssd.BAD_BLOCK_RESERVE.get(drive.nand_type or "", 0.0)
    parity = drive.internal_parity or "none"
    user, raw = float(drive.capacity_bytes), float(drive.raw_nand_bytes or 0.0)
    if parity == "raid4-dies":  # data = raw (1 - reserve) - (raw - user) / 2 = raw (1/2 - reserve) + user / 2
        a = 0.5 - reserve
        data = raw * a + 0.5 * user
        cap = (q_lo * a * raw / (1 - 0.5 * q_lo), q_hi * a * raw / (1 - 0.5 * q_hi))
        raw_range = (user * (1 - 0.5 * q_hi) / (q_hi * a), user * (1 - 0.5 * q_lo) / (q_lo * a))
    else:
        k = 1.0 - (1.0 / 8.0 if parity == "rain-7+1" else 0.0) - reserve
        data = raw * k
        cap = (q_lo * k * raw, q_hi * k * raw)
        raw_range = (user / (q_hi * k), user / (q_lo * k))
    sf = 1.0 - user / data if data > 0 else -math.inf

    def inside(bounds: tuple[float, float]) -> str:  # whole bytes a hair inside the open interval: both ends pass calibrate
        return f"[{math.ceil(bounds[0] * (1 + 1e-9))}, {math.floor(bounds[1] * (1 - 1e-9))}]"

    why = (f"gives an FTL spare factor 1 - capacity / (raw NAND less internal parity ({parity}) and the {drive.nand_type} "
           f"bad-block reserve) of {sf:.4f}; the SSD model needs it in ({lo}, {hi})")
    if raw_given:
        return Violation(field=f"{at}raw_nand_bytes", code=SPARE_FACTOR_OUT_OF_RANGE, allowed=inside(raw_range), reason=(
            f"must be in {inside(raw_range)} for capacity_bytes "
            f"{int(user)}, got {int(raw)}: it {why}"))
    return Violation(field=f"{at}capacity_bytes", code=SPARE_FACTOR_OUT_OF_RANGE, allowed=inside(cap), reason=(
        f"must be in {inside(cap)} with raw_nand_bytes {int(raw)} (not given: the "
        f"smallest power-of-two GiB above the capacity), got {int(user)}: it {why}; or give raw_nand_bytes"))


def _reliability_violations(drive: Drive, at: str) -> list[Violation]:
    """What the planner's durability figures demand (``evaluation.durability_of``): a finite MTTF
    and a whole-drive rebuild (at the planner's share of the sequential write rate) within a year."""
    afr = float(drive.annual_failure_rate or 0.0)
    if afr <= 0:
        return []  # no failures modelled: no durability figures
    share = next(f.default for f in dc_fields(PlanRequest) if f.name == "rebuild_rate_fraction_of_seq_write")
    assert isinstance(share, float)
    rate = float(drive.seq_write_bytes_per_s or 50e6) * share
    repair_h = float(drive.capacity_bytes) / rate / HOUR_S
    if not repair_h <= YEAR_HOURS:
        minimum = math.ceil(float(drive.capacity_bytes) / share / (YEAR_HOURS * HOUR_S))
        return [Violation(field=f"{at}seq_write_bytes_per_s", code=OUT_OF_RANGE, allowed=f">= {minimum}", reason=(
            f"must be >= {minimum} for capacity_bytes "
            f"{drive.capacity_bytes}: a rebuild writes the whole drive at {share:g} x the sequential write rate and must end "
            f"within a year ({YEAR_HOURS:g} h) for the durability figures, got {repair_h:,.0f} h"))]
    if afr < MIN_ANNUAL_FAILURE_RATE:
        return [Violation(field=f"{at}annual_failure_rate", code=OUT_OF_RANGE, allowed=f"0 or [{MIN_ANNUAL_FAILURE_RATE:g}, 1]", reason=(
            f"must be 0 (no failures modelled) or in [{MIN_ANNUAL_FAILURE_RATE:g}, 1] failures per drive-year (below, the "
            f"MTTF of {YEAR_HOURS:g} h / rate overflows the durability model), got {afr!r}"))]
    try:
        reliability.array_reliability(make_layout("raid1", 2), 2, annual_failure_rate=afr, repair_hours=repair_h,
                                      service_life_years=1.0, uber=float(drive.uber or 0.0),
                                      drive_capacity_bytes=float(drive.capacity_bytes))
    except InvalidInputError as exc:
        return [Violation(field=f"{at}annual_failure_rate", code=MODEL_OUT_OF_RANGE,
                          reason=f"the durability model refuses this drive: {x}") for x in exc.violations]
    return []


def drive_model_violations(drive: Drive, path: str, *, supplied: set[str] | None = None) -> list[Violation]:
    """Every bound the drive models and the array simulation will apply to ``drive`` when a plan
    runs, checked now: each violation names ``path.FIELD`` and what is allowed. ``supplied`` are
    the fields the user gave (default: those whose provenance is not a filled-in default)."""
    if supplied is None:
        supplied = {k for k, p in drive.provenance.items() if not (p.assumed and p.reason.startswith("not given"))}
    v: list[Violation] = []
    at = f"{path}." if path else ""  # "" names the bare field (a catalog file's)
    if not drive.capacity_bytes >= MIN_DRIVE_CAPACITY_BYTES:
        v.append(Violation(field=f"{at}capacity_bytes", code=OUT_OF_RANGE, allowed=f">= {MIN_DRIVE_CAPACITY_BYTES}", reason=(
            f"must be >= {MIN_DRIVE_CAPACITY_BYTES} (one {DEFAULT_STRIPE_UNIT_BYTES}-byte stripe unit after the largest "
            f"over-provisioning, 0.9), got {drive.capacity_bytes}")))
        return v
    try:
        if drive.kind == "ssd":
            try:
                ssd.calibrate(drive)
            except InvalidInputError as exc:
                for x in exc.violations:
                    name = x.field.removeprefix("drive.")
                    if x.code == SPARE_FACTOR_OUT_OF_RANGE:
                        v.append(_spare_factor_violation(drive, at, "raw_nand_bytes" in supplied))
                    elif x.code == REQUIRED:
                        v.append(Violation(field=f"{at}{name}", code=REQUIRED, allowed="> 0",
                                           reason="is required for kind 'ssd': the SSD model needs it (> 0)"))
                    else:
                        v.append(x.at(f"{at}{name}"))
                return v
            model = ssd.service_model(drive)  # full drives, no over-provisioning: the least spare any candidate has
        else:
            try:
                model = hdd.service_model(drive)
            except InvalidInputError as exc:
                for x in exc.violations:
                    name = _HDD_FIELDS.get(x.field, x.field)
                    if x.code == REQUIRED:
                        allowed = hdd.SERVICE_MODEL_RANGES[x.field].allowed()
                        v.append(Violation(field=f"{at}{name}", code=REQUIRED, allowed=x.allowed,
                                           reason=f"is required for kind 'hdd' (the disk model's media rate): {allowed}"))
                    else:
                        v.append(x.at(f"{at}{name}"))
                return v
        array.ArraySpec(layout=make_layout("raid0", 1), drive_count=1, service_models=(model,),
                        workload=Workload(name="drive-check", read_fraction=0.5, io_size_mix=((4096, 1.0),)),
                        drive_capacity_bytes=float(drive.capacity_bytes))
        v.extend(_reliability_violations(drive, at))
    except InvalidInputError as exc:
        prefix = "spec.service_models[0]."
        for x in exc.violations:
            model_field = x.field.removeprefix(prefix)
            if model_field in _MODEL_FIELDS:
                field, hint = _MODEL_FIELDS[model_field]
                v.append(Violation(field=f"{at}{field}", code=MODEL_OUT_OF_RANGE,
                                   reason=f"{hint}: the drive model's {model_field} {x.reason}"))
            else:
                v.append(Violation(field=path or "(drive)", code=MODEL_OUT_OF_RANGE,
                                   reason=f"the drive model built from these values is outside the simulation's range: "
                                          f"{model_field} {x.reason}"))
    except ArithmeticError as exc:  # values at the edge of floating point (a rate of 5e-324)
        v.append(Violation(field=path or "(drive)", code=MODEL_OUT_OF_RANGE,
                           reason=f"the drive models cannot use these values ({type(exc).__name__}: {exc})"))
    return v
