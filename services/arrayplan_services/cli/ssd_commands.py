"""``arrayplan ftl`` and ``arrayplan consistency``: the SSD model's experiments, run in-process.

``ftl`` runs the page-mapped FTL simulation to steady state and prints the measured write
amplification beside the analytic model's. Its spare is ``--spare-fraction-of-raw`` (old name
``--spare-factor``, same meaning): ``1 - user pages / raw pages``, spare as a fraction of the raw
NAND, not the catalog's ``spare_factor`` (spare per byte of user capacity ``s``; convert with
``s / (1 + s)``). ``consistency`` runs the reviewers' performance-
consistency test (fill, then 4 KB random writes at QD32, IOPS every second) for one or more
drives, writes the reviews' style figure (log-scale IOPS vs time, then a zoom on steady state)
and prints the consistency figures. Bad input exits 2 with the engine's message on stderr.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from arrayplan_engine import ftl, ssd
from arrayplan_engine.errors import ArrayplanError, InvalidInputError

from .common import EXIT_BAD_INPUT, EXIT_OK, add_format_flag, err, print_json


def _emit(payload: Any, fmt: str) -> None:
    if fmt == "json":
        print_json(payload)
        return
    rows = payload if isinstance(payload, list) else [payload]
    for row in rows:
        print("  ".join(f"{k}={v}" for k, v in row.items()))


def _ftl_handler(args: argparse.Namespace) -> int:
    try:
        workload = ftl.parse_workload(args.workload, "workload")
        ppb = args.pages_per_block
        blocks = args.blocks
        if blocks is not None:
            if blocks < 16:
                raise InvalidInputError.one("blocks", f"must be an integer >= 16, got {blocks}")
            user_pages = int(blocks * ppb * (1.0 - args.spare_fraction_of_raw))
        else:
            user_pages = args.user_pages
        config = ftl.FtlConfig(user_pages=user_pages, pages_per_block=ppb, spare_fraction_of_raw=args.spare_fraction_of_raw,
                               policy=args.policy, window=args.window)
        result = ftl.simulate(config, workload, seed=args.seed)
    except ArrayplanError as exc:
        err(f"{exc}", "ftl")
        return EXIT_BAD_INPUT
    _emit(result.summary(), args.format)
    return EXIT_OK


def _plot(results: list[ssd.ConsistencyResult], out: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np

    fig, (ax_all, ax_zoom) = plt.subplots(2, 1, figsize=(10, 8))
    starts = [r.steady_start_s for r in results if np.isfinite(r.steady_start_s)]
    zoom_from = int(min(starts)) if starts else int(results[0].duration_s * 0.7)
    for r in results:
        label = f"{r.drive_name}" + (f" (+{r.op_fraction:.0%} OP)" if r.op_fraction > 0 else "")
        t = np.arange(r.iops.size)
        ax_all.scatter(t, np.maximum(r.iops, 1.0), s=2, label=label)
        ax_zoom.scatter(t[zoom_from:], np.maximum(r.iops[zoom_from:], 1.0), s=3, label=label)
    ax_all.set_yscale("log")
    ax_all.set_title("4 KB random write, QD32, after a sequential fill")
    ax_all.set_xlabel("time (s)")
    ax_all.set_ylabel("IOPS")
    ax_all.legend(markerscale=4)
    ax_zoom.set_yscale("log")
    ax_zoom.set_title(f"steady state (from t = {zoom_from} s)")
    ax_zoom.set_xlabel("time (s)")
    ax_zoom.set_ylabel("IOPS")
    fig.tight_layout()
    fig.savefig(out)
    plt.close(fig)


def _consistency_handler(args: argparse.Namespace) -> int:
    from .fit_command import load_drive_arg

    if not args.out and not args.fio_log_out:
        err("give --out FIGURE and/or --fio-log-out FILE", "consistency")
        return EXIT_BAD_INPUT
    out = Path(args.out) if args.out else None
    if out is not None and out.suffix.lower() not in (".png", ".svg"):
        err(f"out: must end in .png or .svg, got {args.out!r}", "consistency")
        return EXIT_BAD_INPUT
    if args.fio_log_out and len(args.drives) != 1:
        err("--fio-log-out takes one drive", "consistency")
        return EXIT_BAD_INPUT
    try:
        # A drive is a catalog name or a catalog file (.toml), e.g. one `arrayplan drives fit` wrote.
        results = [ssd.consistency_experiment(load_drive_arg(name), duration_s=args.duration_s, op=args.op, seed=args.seed,
                                              scale=args.scale)
                   for name in args.drives]
    except ArrayplanError as exc:
        err(f"{exc}", "consistency")
        return EXIT_BAD_INPUT
    except OSError as exc:
        err(f"{exc}", "consistency")
        return EXIT_BAD_INPUT
    if args.fio_log_out:
        from arrayplan_engine.drive_fit import fio_log_text

        try:
            Path(args.fio_log_out).write_text(fio_log_text(results[0].iops), encoding="utf-8")
        except OSError as exc:
            err(f"fio-log-out: cannot write {args.fio_log_out!r}: {exc}", "consistency")
            return EXIT_BAD_INPUT
    if out is not None:
        try:
            _plot(results, out)
        except OSError as exc:
            err(f"out: cannot write {args.out!r}: {exc}", "consistency")
            return EXIT_BAD_INPUT
    rows = [{**r.figures(), "figure": str(out) if out else None, "fio_log": args.fio_log_out} for r in results]
    _emit(rows if len(rows) > 1 or args.format == "text" else rows[0], args.format)
    return EXIT_OK


def register(subparsers: Any) -> None:
    """Add ``ftl`` and ``consistency`` to an argparse subparsers object."""
    p = subparsers.add_parser("ftl", help="run the FTL simulation to steady state; measured vs analytic WA",
                              description=_ftl_handler.__doc__ or "FTL write amplification experiment")
    p.add_argument("--spare-fraction-of-raw", "--spare-factor", dest="spare_fraction_of_raw", type=float, required=True,
                   help=("spare NAND as a fraction of the RAW NAND: 1 - user pages / raw pages, in [0.01, 0.9]. "
                         "--spare-factor is the old name of this flag (same meaning). Not the catalog's spare_factor "
                         "(spare per byte of user capacity s): convert with s / (1 + s)"))
    p.add_argument("--pages-per-block", type=int, default=64, help="pages per erase block (default 64)")
    p.add_argument("--policy", default="greedy", help="greedy | windowed | fifo (default greedy)")
    p.add_argument("--window", type=int, default=ftl.DEFAULT_WINDOW, help="window of the windowed policy (blocks)")
    p.add_argument("--workload", default="uniform", help="uniform | sequential | hotcold:R,F | zipf:S")
    p.add_argument("--blocks", type=int, default=None, help="erase blocks in the model (default: from --user-pages)")
    p.add_argument("--user-pages", type=int, default=1 << 18, help="logical pages in the model (default 262144)")
    p.add_argument("--seed", type=int, default=0, help="seed of the random streams: the same inputs and seed give the same figures (default %(default)s)")
    add_format_flag(p)
    p.set_defaults(func=_ftl_handler)

    c = subparsers.add_parser("consistency", help="the reviewers' performance-consistency test, with a figure",
                              description="Fill, then 4 KB random writes at QD32; IOPS every second; figure and figures.")
    c.add_argument("drives", nargs="+", metavar="DRIVE", help="catalog drive names or catalog files (several share one figure)")
    c.add_argument("--op", type=float, default=0.0, help="extra over-provisioning: fraction of the capacity left unused")
    c.add_argument("--duration-s", type=float, default=2000.0, help="seconds of random writes (default 2000)")
    c.add_argument("--scale", type=int, default=None,
                   help=("simulate the similar drive this many times smaller at QD 32/scale and count each of its IOs as "
                         "scale (docs/ssd-model.md, Similar drives); 1 simulates every IO of the drive; a divisor of 32 "
                         "(default: the least that keeps the run within "
                         f"{ssd.CONSISTENCY_IO_BUDGET / 1e6:g} M IOs, at least QD {ssd.SIMILAR_MIN_QUEUE_DEPTH})"))
    c.add_argument("--out", help="figure file, .png or .svg (default: no figure)")
    c.add_argument("--fio-log-out", metavar="FILE",
                   help="also write the run in fio's write_iops_log format (one drive), for `arrayplan drives fit`")
    c.add_argument("--seed", type=int, default=0, help="seed of the random streams: the same inputs and seed give the same figures (default %(default)s)")
    add_format_flag(c)
    c.set_defaults(func=_consistency_handler)
