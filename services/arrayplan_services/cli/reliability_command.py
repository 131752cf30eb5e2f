"""``arrayplan reliability``: the durability model of one array, run in-process.

    arrayplan reliability --layout raid6 --drives 24 --group-width 12 --afr 0.01 --repair-hours 24 \\
        --uber 1e-15 --drive-bytes 16e12 --service-life-years 5 --method markov --format json

prints the array's MTTDL and its probability of data loss in one year and over the service life
(plus the redundancy-group shape, the URE probability of a rebuild and, for monte-carlo, standard
errors). Methods: ``markov`` (exact chain, the default), ``closed-form`` (the classic
MTTF^(t+1) / (G (G-1) ... MTTR^t) approximation), ``binomial`` (Backblaze's per-period model),
``monte-carlo`` (simulated, seeded). docs/reliability.md has the models.

``--format json`` prints every field of the engine's ``ArrayReliability`` through
``arrayplan_services.jsonout`` (docs/json.md): the monte-carlo-only fields (``trials``, ``seed``,
the standard errors) are ``null`` for the other methods, an infinite MTTDL (monte-carlo with no
loss observed) is ``null``. ``text`` shows only the fields that have a value.

Bad input exits 2 with the engine's field-naming message on stderr (and the flag it came from);
argparse's own errors exit 2 too.
"""

from __future__ import annotations

import argparse
from typing import Any

from arrayplan_engine import reliability
from arrayplan_engine.errors import ArrayplanError
from arrayplan_engine.layout import LayoutKind, make_layout

from .common import EXIT_BAD_INPUT, EXIT_OK, add_format_flag, engine_error, print_fields, print_json

# Engine field -> the flag a user typed.
_FLAGS = {
    "layout": "--layout",
    "layout.group_width": "--group-width",
    "drive_count": "--drives",
    "annual_failure_rate": "--afr",
    "repair_hours": "--repair-hours",
    "uber": "--uber",
    "drive_capacity_bytes": "--drive-bytes",
    "service_life_years": "--service-life-years",
    "method": "--method",
    "repair_policy": "--repair-policy",
    "trials": "--trials",
    "seed": "--seed",
}


def _emit(result: reliability.ArrayReliability, fmt: str) -> None:
    if fmt == "json":
        print_json(result)
    else:
        print_fields(result.as_dict(), skip_none=True)


def _handler(args: argparse.Namespace) -> int:
    """Durability of one array: MTTDL, annual and service-life loss probability."""
    try:
        kind_key = args.layout.strip().lower()
        group_width = args.group_width
        if group_width is None and not kind_key.startswith("ec:"):
            # One group over every drive (RAID 5/6), the whole stripe (RAID 0/10); a 2-way mirror.
            group_width = 2 if kind_key == LayoutKind.RAID1.value else args.drives
        layout = make_layout(args.layout, group_width)
        drive_bytes = args.drive_bytes if args.drive_bytes is not None else 0.0
        result = reliability.array_reliability(
            layout, args.drives, annual_failure_rate=args.afr, repair_hours=args.repair_hours,
            service_life_years=args.service_life_years, uber=args.uber, drive_capacity_bytes=drive_bytes,
            method=args.method, repair_policy=args.repair_policy, trials=args.trials, seed=args.seed)
    except ArrayplanError as exc:
        engine_error(exc, "reliability", _FLAGS)
        return EXIT_BAD_INPUT
    _emit(result, args.format)
    return EXIT_OK


def register(subparsers: Any) -> None:
    """Add ``reliability`` to an argparse subparsers object."""
    from ..api.planfile import int_arg, size_arg

    p = subparsers.add_parser(
        "reliability", help="mean time to data loss and loss probability of one array (durability model)",
        description="MTTDL and the probability of data loss in a year and over the service life of an array of "
                    "independent redundancy groups. Defaults: one group of --drives drives (RAID 5/6), 2-way "
                    "mirrors (RAID 1), one repair at a time per group.")
    p.add_argument("--layout", required=True, help="raid0 | raid1 | raid10 | raid5 | raid6 | ec:K+M")
    p.add_argument("--drives", type=int_arg, required=True, help="drives in the array (left-overs are spares)")
    p.add_argument("--group-width", type=int_arg, default=None,
                   help="drives per group (RAID 5/6; copies for RAID 1; stripe width for RAID 0/10); default: all drives")
    p.add_argument("--afr", type=float, required=True,
                   help="annual failure rate per drive: failures per drive-year (Backblaze's AFR), e.g. 0.015")
    p.add_argument("--repair-hours", type=float, required=True, help="mean hours to rebuild a failed drive (MTTR)")
    p.add_argument("--uber", type=float, default=0.0, help="unrecoverable bit error rate, errors per bit read (e.g. 1e-15)")
    p.add_argument("--drive-bytes", type=size_arg, default=None, metavar="SIZE",
                   help="drive capacity (needed with --uber): bytes (16000000000000, 16e12) or with a unit (16 TB); docs/units.md")
    p.add_argument("--service-life-years", type=float, default=5.0, help="service life in years (default 5)")
    p.add_argument("--method", choices=[m.value for m in reliability.Method], default=reliability.Method.MARKOV.value,
                   help="markov (exact chain, default) | binomial (Backblaze) | closed-form | monte-carlo")
    p.add_argument("--repair-policy", choices=[r.value for r in reliability.RepairPolicy],
                   default=reliability.RepairPolicy.SINGLE.value,
                   help="single: one rebuild at a time per group (default, the classic formulas' assumption); "
                        "parallel: every failed drive rebuilt at once")
    p.add_argument("--trials", type=int_arg, default=100_000, help="monte-carlo: groups simulated (default 100000)")
    p.add_argument("--seed", type=int_arg, default=0, help="monte-carlo: seed of np.random.SeedSequence (default 0)")
    add_format_flag(p)
    p.set_defaults(func=_handler)
