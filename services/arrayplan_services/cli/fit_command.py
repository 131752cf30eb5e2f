"""``arrayplan drives fit --base DRIVE_FILE --fio-log FILE``: fit a drive to a measured
consistency run (engine/arrayplan_engine/drive_fit.py) and print the fitted catalog file, with a
measured-vs-simulated figure.

The base is a catalog file (``arrayplan drives export NAME > base.toml``, then edit) or a
catalog drive name; the log is fio's ``write_iops_log`` (``log_avg_msec=1000``) or fio JSON with
per-second samples. Bad input exits 2 naming the file and line.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from arrayplan_engine.errors import ArrayplanError, Violation, check_range

if TYPE_CHECKING:
    from arrayplan_engine.catalog import Drive

from .common import EXIT_BAD_INPUT, EXIT_OK, err


def load_drive_arg(value: str, catalog_dir: Path | None = None) -> Drive:
    """A drive from a catalog file path (``*.toml``) or a catalog name (plus ``--catalog DIR``)."""
    from arrayplan_engine.catalog import drive_from_toml

    from ..drive_catalog import load_catalog_dir

    path = Path(value)
    if path.suffix == ".toml" or path.is_file():
        try:
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise OSError(f"{value}: cannot read: {exc}") from None
        return drive_from_toml(text, value)
    return load_catalog_dir(catalog_dir).get(value, "drive_model")


def _plot(result: Any, out: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np

    fig, ax = plt.subplots(figsize=(10, 5))
    t = np.arange(result.measured_iops.size)
    ax.scatter(t, np.maximum(result.measured_iops, 1.0), s=2, label="measured (fio log)")
    ax.scatter(np.arange(result.simulated_iops.size), np.maximum(result.simulated_iops, 1.0), s=2,
               label=f"simulated: fitted {result.drive.name} ({result.drive.gc_policy})")
    for fig_, style, who in ((result.measured, "-", "measured"), (result.simulated, "--", "simulated")):
        if fig_.steady_start_s == fig_.steady_start_s:  # not NaN
            ax.axvline(fig_.steady_start_s, linestyle=style, color="grey", linewidth=0.8)
        ax.axhline(fig_.steady_iops, linestyle=style, color="black", linewidth=0.8, label=f"{who} steady {fig_.steady_iops:,.0f} IOPS")
    ax.set_yscale("log")
    ax.set_xlabel("time (s)")
    ax.set_ylabel("4 KiB random write IOPS")
    ax.set_title("consistency run: measured vs the fitted model")
    ax.legend(markerscale=4)
    fig.tight_layout()
    fig.savefig(out)
    plt.close(fig)


def cmd_drives_fit(args: argparse.Namespace) -> int:
    from arrayplan_engine import drive_fit
    from arrayplan_engine.catalog import drive_to_toml

    try:
        base = load_drive_arg(args.base, args.catalog)
        text = Path(args.fio_log).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        err(str(exc), "drives fit")
        return EXIT_BAD_INPUT
    except ArrayplanError as exc:
        err(f"--base: {exc}", "drives fit")
        return EXIT_BAD_INPUT
    bad: list[Violation] = []
    if not check_range(bad, "--iterations", args.iterations, 3, 30, integer=True):
        err(f"{bad[0].field}: {bad[0].reason}", "drives fit")
        return EXIT_BAD_INPUT
    figure = Path(args.figure) if args.figure else Path(Path(args.fio_log).stem + "-fit.png")
    if figure.suffix.lower() not in (".png", ".svg"):
        err(f"--figure: must end in .png or .svg, got {str(figure)!r}", "drives fit")
        return EXIT_BAD_INPUT
    try:
        iops = drive_fit.parse_fio_log(text, str(args.fio_log))
        if args.name:
            from dataclasses import replace

            base = replace(base, name=args.name, display_name=args.name)
        result = drive_fit.fit_drive(base, iops, source=str(args.fio_log), seed=args.seed, iterations=args.iterations,
                                     progress=None if args.quiet else (lambda m: print(f"  {m}", file=sys.stderr)))
    except ArrayplanError as exc:
        err(str(exc), "drives fit")
        return EXIT_BAD_INPUT
    try:
        _plot(result, figure)
    except OSError as exc:
        err(f"--figure: cannot write {str(figure)!r}: {exc}", "drives fit")
        return EXIT_BAD_INPUT
    m, s = result.measured, result.simulated
    print(f"measured:  FOB {m.fob_iops:,.0f} IOPS, steady {m.steady_iops:,.0f} IOPS from {m.steady_start_s:g} s\n"
          f"simulated: FOB {s.fob_iops:,.0f} IOPS, steady {s.steady_iops:,.0f} IOPS from {s.steady_start_s:g} s "
          f"({result.steady_error:+.1%} steady, {result.steady_start_error:+.1%} time to steady; {result.runs} model runs)\n"
          f"figure: {figure}", file=sys.stderr)
    toml = drive_to_toml(result.drive)
    if args.out:
        Path(args.out).write_text(toml, encoding="utf-8")
        print(f"fitted catalog file: {args.out}", file=sys.stderr)
    print(toml, end="")
    return EXIT_OK


def register_verb(verbs: Any) -> None:
    """Add ``fit`` to the verbs of ``drives``."""
    p = verbs.add_parser("fit", help="fit a drive to a measured consistency run (fio log); print its catalog file",
                         description="Fit a drive's free model parameters (FOB timing, cleaning trait, effective spare) to a "
                                     "measured consistency run; print the fitted catalog file and write a measured-vs-simulated figure.")
    p.add_argument("--base", required=True, help="the drive to start from: a catalog file (.toml) or a catalog drive name")
    p.add_argument("--fio-log", required=True, help="fio write_iops_log (log_avg_msec=1000) or fio JSON with steadystate samples")
    p.add_argument("--figure", help="measured-vs-simulated figure, .png or .svg (default: LOG-fit.png here)")
    p.add_argument("--out", help="also write the fitted catalog file here")
    p.add_argument("--name", help="name of the fitted drive (default: the base's)")
    p.add_argument("--catalog", type=Path, metavar="DIR", help="catalog files to find a --base name in")
    p.add_argument("--seed", type=int, default=0, help="seed of the simulated runs the fit compares with (default %(default)s)")
    p.add_argument("--iterations", type=int, default=12, metavar="N",
                   help="bisection steps on the spare per cleaning trait, each a model run as long as the log, in [3, 30]: "
                        "12 (default) resolve the spare to 0.1 %%, 7 to 2.4 %% in about half the time")
    p.add_argument("--quiet", action="store_true", help="no progress lines")
    p.set_defaults(func=cmd_drives_fit)
