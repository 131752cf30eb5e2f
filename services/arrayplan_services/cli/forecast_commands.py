"""``arrayplan telemetry FILE_OR_DIR...`` (what the drives' own counters say) and ``arrayplan
forecast ARRAY_FILE`` (wear-out and full dates for an array in service, and a re-plan).

Exit codes: 0 everything read; 4 some files or drives could not be used (each named on stderr,
the rest processed); 2 bad input (nothing usable, a bad array file); 1 anything else.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

EXIT_OK, EXIT_ERROR, EXIT_BAD_INPUT, EXIT_PARTIAL = 0, 1, 2, 4


def _err(msg: str) -> None:
    print(f"arrayplan: {msg}", file=sys.stderr)


def _gb(x: float | None) -> str:
    return "-" if x is None else f"{x / 1e9:,.0f}"


def _opt(x: Any, fmt: str = "{:g}") -> str:
    return "-" if x is None else fmt.format(x)


def cmd_telemetry(args: argparse.Namespace) -> int:
    from ..smart_io import read_telemetry

    snapshots, problems = read_telemetry(args.paths)
    for p in problems:
        _err(str(p))
    if args.format == "json":
        print(json.dumps([s.as_record() for s in snapshots], indent=2))
    else:
        from rich.console import Console
        from rich.table import Table

        table = Table(title=f"drive telemetry: {len(snapshots)} snapshots", title_justify="left")
        for c in ("source", "model", "serial", "protocol", "capacity GB", "power-on h", "host written GB", "NAND written GB", "WA",
                  "used %", "spare %", "SMART"):
            table.add_column(c, justify="left" if c in ("source", "model", "serial", "protocol", "SMART") else "right")
        for s in snapshots:
            table.add_row(Path(s.source).name, s.model or "?", s.serial or "?", s.protocol + (" (RAID ctl)" if s.behind_raid_controller else ""),
                          _gb(s.capacity_bytes), _opt(s.power_on_hours, "{:,.0f}"), _gb(s.host_written_bytes), _gb(s.nand_written_bytes),
                          _opt(s.write_amplification, "{:.2f}"), _opt(s.percentage_used), _opt(s.available_spare_percent),
                          {True: "PASSED", False: "FAILED", None: "?"}[s.smart_passed])
        Console(width=None if sys.stdout.isatty() else 220).print(table)
        if args.verbose_notes:
            for s in snapshots:
                for n in s.notes:
                    print(f"  {Path(s.source).name}: {n}")
    if not snapshots:
        return EXIT_BAD_INPUT
    return EXIT_PARTIAL if problems else EXIT_OK


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = sub.add_parser("telemetry", help="read smartctl --json / nvme smart-log JSON files and show each drive's counters")
    p.add_argument("paths", nargs="+", type=Path, metavar="FILE_OR_DIR", help="telemetry files, or directories of *.json files")
    p.add_argument("--format", choices=("table", "json"), default="table", help="json: one record per drive snapshot")
    p.add_argument("--notes", dest="verbose_notes", action="store_true", help="table: also print each snapshot's notes")
    p.set_defaults(func=cmd_telemetry)
