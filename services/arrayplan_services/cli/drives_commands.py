"""``arrayplan drives``: the drive catalog.

* ``drives [list] [NAME]``: the catalog, or one drive with the provenance of each value;
  in-process (the built-in drives plus ``--catalog DIR``) unless ``--server``,
  ``$ARRAYPLAN_SERVER`` or ``--local`` names a server. ``list`` is the default verb, so
  ``arrayplan drives`` and ``arrayplan drives NAME`` list and show.
* ``drives export NAME``: one drive as a catalog file (TOML) that loads back unchanged.
* ``drives fit --base FILE --fio-log FILE``: fit a drive to a measured consistency run
  (fit_command.py).
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

from . import fit_command
from .common import EXIT_BAD_INPUT, EXIT_OK, add_connection_flags, add_format_flag, add_verbs, connect, err, grpc_error_exit, local_catalog

if TYPE_CHECKING:
    from arrayplan.v1 import planner_pb2 as pb


def _drives_in_process(args: argparse.Namespace) -> int:
    """``arrayplan drives`` without a server: the built-in catalog (plus ``--catalog DIR``)."""
    from arrayplan_engine.errors import InvalidInputError

    from ..api.convert import drive_to_proto

    cat = local_catalog(args)
    if cat is None:
        return EXIT_BAD_INPUT
    try:
        drives = [cat.get(args.name, "name")] if args.name else [d for d in cat if args.kind in ("all", d.kind)]
    except InvalidInputError as exc:
        err(str(exc))
        return EXIT_BAD_INPUT
    protos = [drive_to_proto(d) for d in drives]
    if args.format == "json":
        print(_drives_json(protos))
        return EXIT_OK
    _drives_table(protos, bool(args.name))
    return EXIT_OK


def cmd_drives_export(args: argparse.Namespace) -> int:
    """``arrayplan drives export NAME``: one drive as a catalog file (TOML) on stdout."""
    from arrayplan_engine.catalog import drive_to_toml
    from arrayplan_engine.errors import InvalidInputError

    cat = local_catalog(args)
    if cat is None:
        return EXIT_BAD_INPUT
    try:
        drive = cat.get(args.name, "name")
    except InvalidInputError as exc:
        err(str(exc))
        return EXIT_BAD_INPUT
    print(drive_to_toml(drive), end="")
    return EXIT_OK


def cmd_drives(args: argparse.Namespace) -> int:
    import grpc

    from arrayplan.v1 import planner_pb2 as pb

    if not (args.server or os.environ.get("ARRAYPLAN_SERVER") or args.local):
        return _drives_in_process(args)
    try:
        with connect(args) as stub:
            if args.name:
                drives = [stub.GetDrive(pb.GetDriveRequest(name=args.name), timeout=30)]
            else:
                kind = {"ssd": pb.DRIVE_KIND_SSD, "hdd": pb.DRIVE_KIND_HDD, "all": pb.DRIVE_KIND_UNSPECIFIED}[args.kind]
                drives = list(stub.ListDrives(pb.ListDrivesRequest(kind=kind), timeout=30).drives)
    except grpc.RpcError as exc:
        return grpc_error_exit(exc)
    if args.format == "json":
        print(_drives_json(drives))
        return EXIT_OK
    _drives_table(drives, bool(args.name))
    return EXIT_OK


def _drives_json(drives: list[pb.Drive]) -> str:
    """The one JSON shape of ``arrayplan drives``, in-process or via a server: each drive in the
    output convention (``jsonout``), with ``kind`` as the catalog writes it (``ssd`` / ``hdd``, as
    catalog files and ``--kind`` do) and ``sources``, the documents its values are quoted from."""
    from arrayplan.v1 import planner_pb2 as pb

    from .. import jsonout
    from .render import drive_unknown_fields

    rows = []
    for d in drives:
        row = jsonout.to_json(d)
        row.update({f: None for f in drive_unknown_fields(d)})  # a value the catalog does not give: null, not 0
        row["kind"] = pb.DriveKind.Name(d.kind).removeprefix("DRIVE_KIND_").lower()
        row["sources"] = sorted({p.source for p in d.provenance if p.source})
        rows.append(row)
    return jsonout.dumps(rows)


def _drives_table(drives: list[pb.Drive], one: bool) -> None:
    from rich.table import Table

    from arrayplan.v1 import planner_pb2 as pb

    from . import render

    table = Table(title="arrayplan drive catalog", title_justify="left")
    for c in ("name", "kind", "interface", "capacity GB", "spare", "rand read IOPS", "rand write IOPS", "steady write", "endurance TBW", "$", "W active"):
        table.add_column(c, justify="left" if c in ("name", "kind", "interface") else "right")
    for d in drives:
        unknown = render.drive_unknown_fields(d)

        def cell(name: str, text: str, unknown: set[str] = unknown) -> str:
            return render.UNKNOWN if name in unknown else text
        table.add_row(d.name, pb.DriveKind.Name(d.kind).removeprefix("DRIVE_KIND_").lower(), d.interface, f"{d.capacity_bytes / 1e9:,.0f}",
                      f"{d.spare_bytes_per_user_byte:.1%}" if d.spare_bytes_per_user_byte else render.UNKNOWN,
                      cell("random_read_iops", f"{d.random_read_iops:,.0f}"), cell("random_write_iops", f"{d.random_write_iops:,.0f}"),
                      cell("steady_random_write_iops", f"{d.steady_random_write_iops:,.0f}"),
                      cell("endurance_bytes_written", f"{d.endurance_bytes_written / 1e12:,.0f}"),
                      cell("price_usd", f"{d.price_usd:,.0f}"), cell("active_power_w", f"{d.active_power_w:g}"))
    render.stdout_console().print(table)
    if one:
        for p in drives[0].provenance:
            src = f"assumed: {p.reason}" if p.assumed else f"{p.source}: \"{p.quote}\""
            print(f"  {p.field}: {src}")


def register(sub: Any) -> None:
    """Add ``drives`` and its verbs ``list`` (the default), ``export`` and ``fit``."""
    p = sub.add_parser("drives", help="list the drive catalog (or one drive with provenance); drives export NAME; drives fit",
                       description="The drive catalog. Without a verb, `arrayplan drives [NAME]` lists it (or shows one drive): "
                                   "`drives list` is the default verb.")
    verbs = add_verbs(p, "drives_command", default="list")

    v = verbs.add_parser("list", help="list the catalog, or show one drive with the provenance of each value (the default verb)",
                         description="List the drive catalog: in-process (the built-in drives plus --catalog DIR) unless "
                                     "--server, $ARRAYPLAN_SERVER or --local names a server.")
    v.add_argument("name", nargs="?", help="a drive name: show it with the provenance of each value")
    v.add_argument("--kind", choices=("all", "ssd", "hdd"), default="all", help="only SSDs or only HDDs (default all)")
    add_format_flag(v, ("table", "json"))
    v.add_argument("--catalog", type=Path, metavar="DIR", help="in-process: also the catalog files (*.toml) in DIR")
    add_connection_flags(v)
    v.set_defaults(func=cmd_drives)

    v = verbs.add_parser("export", help="print one drive as a catalog file (TOML)",
                         description="Print one drive as a catalog file (TOML) that loads back unchanged.")
    v.add_argument("name", help="a drive name (catalog key or display name)")
    v.add_argument("--catalog", type=Path, metavar="DIR", help="also the catalog files (*.toml) in DIR")
    v.set_defaults(func=cmd_drives_export)

    fit_command.register_verb(verbs)
