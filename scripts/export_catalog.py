"""Write every built-in drive as a catalog file under engine/arrayplan_engine/data/drives/.

Run once to turn catalog.py's former constructor calls into data files (values and provenance
unchanged: ``drive_from_toml(drive_to_toml(d)) == d`` for every drive); running it again rewrites
the files in canonical form. File names keep the catalog's order: ``NNN-name.toml``, SSDs first
(001-899), hard disks last (900-999).

    python scripts/export_catalog.py [--check]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from arrayplan_engine.catalog import all_drives, drive_from_toml, drive_to_toml

OUT = Path(__file__).resolve().parents[1] / "engine" / "arrayplan_engine" / "data" / "drives"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--check", action="store_true", help="only check that every file round-trips")
    args = ap.parse_args()
    existing = {p.stem.split("-", 1)[1]: p for p in OUT.glob("*.toml")}
    ssd = hdd = 0
    for d in all_drives():
        text = drive_to_toml(d)
        again = drive_from_toml(text, d.name)
        if again != d or dict(again.provenance) != dict(d.provenance):
            print(f"{d.name}: does not round-trip", file=sys.stderr)
            return 1
        if args.check:
            continue
        if d.name in existing:
            path = existing[d.name]
        elif d.is_ssd:
            ssd += 1
            path = OUT / f"{ssd:03d}-{d.name}.toml"
        else:
            hdd += 1
            path = OUT / f"{900 + hdd:03d}-{d.name}.toml"
        path.write_text(text, encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
