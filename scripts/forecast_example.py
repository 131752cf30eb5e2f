"""Write the example array in service (examples/array-in-service/): smartctl --json snapshots and a
capacity CSV generated from the engine's own endurance model, so ``arrayplan forecast`` has a
realistic time series to read. Synthetic by construction, and said so in every file's argv.

    python scripts/forecast_example.py examples/array-in-service

The array: 12 x Intel DC S3500 480GB (model string INTEL SSDSC2BB480G4) in two RAID 5 groups of
six, started 2024-01-01, carrying an OLTP-like workload (70 % reads, 8 KiB random, 80 % of writes
on 20 % of the space, 1.2 TB/day growing 20 %/year), 45 % full at the start. Group g2 was built
from drives reused from an older array: they arrived with 66 % of their rated life used. Monthly
snapshots for 18 months; each month's writes vary (lognormal, 10 % CV, seed 2024).
"""

from __future__ import annotations

import csv
import datetime as dt
import json
import math
import sys
from pathlib import Path
from typing import Any

import numpy as np

from arrayplan_engine import endurance
from arrayplan_engine.catalog import builtin_catalog
from arrayplan_engine.layout import make_layout, usable_capacity_bytes
from arrayplan_engine.units import DAY_S, TB, YEAR_DAYS, MiB
from arrayplan_engine.workload import Workload

START = dt.datetime(2024, 1, 1, tzinfo=dt.UTC)
MONTHS = 18
DRIVE = "intel-dc-s3500-480gb"
MODEL = "INTEL SSDSC2BB480G4"
CAPACITY_BYTES = 480_103_981_056
WORKLOAD = Workload(name="oltp-8k", read_fraction=0.7, random_fraction=1.0, io_size_mix=((8192, 1.0),), daily_write_bytes=1.2 * TB,
                    hot_write_fraction=0.8, hot_space_fraction=0.2, growth_per_year=0.2)
FILL_START = 0.45
REUSED_LIFE_USED = 0.66


def _doc(serial: str, dev: str, t: dt.datetime, hours: float, host_bytes: float, life_used: float) -> dict[str, Any]:
    wear_value = max(1, 100 - math.floor(life_used * 100))
    return {
        "json_format_version": [1, 0],
        "smartctl": {"version": [7, 3], "exit_status": 0,
                     "argv": ["smartctl", "--json", "-x", dev, "(synthetic: scripts/forecast_example.py, the engine's endurance model)"]},
        "device": {"name": dev, "info_name": f"{dev} [SAT]", "type": "sat", "protocol": "ATA"},
        "model_family": "Intel 730 and DC S35x0/3610/3700 Series SSDs", "model_name": MODEL, "serial_number": serial,
        "firmware_version": "G2010150", "user_capacity": {"blocks": CAPACITY_BYTES // 512, "bytes": CAPACITY_BYTES},
        "rotation_rate": 0, "in_smartctl_database": True,
        "local_time": {"time_t": int(t.timestamp()), "asctime": t.strftime("%a %b %d %H:%M:%S %Y UTC")},
        "smart_status": {"passed": True}, "power_on_time": {"hours": int(hours)},
        "ata_smart_attributes": {"revision": 1, "table": [
            {"id": 9, "name": "Power_On_Hours", "value": 100, "worst": 100, "thresh": 0, "raw": {"value": int(hours), "string": str(int(hours))}},
            {"id": 233, "name": "Media_Wearout_Indicator", "value": wear_value, "worst": wear_value, "thresh": 0, "raw": {"value": 0, "string": "0"}},
            {"id": 241, "name": "Host_Writes_32MiB", "value": 100, "worst": 100, "thresh": 0,
             "raw": {"value": int(host_bytes // (32 * MiB)), "string": str(int(host_bytes // (32 * MiB)))}},
        ]},
    }


def write_example(out: Path, seed: int = 2024) -> None:
    rng = np.random.default_rng(seed)
    drive = builtin_catalog().get(DRIVE)
    layout = make_layout("raid5", 6)
    usable = usable_capacity_bytes(layout, 12, drive.capacity_bytes)
    wear = endurance.service_life_wear(drive, layout, 12, WORKLOAD, years=3, data_bytes_year1=FILL_START * usable, usable_capacity_bytes=usable)
    per_byte_year = [y.life_used_fraction / y.host_bytes_per_drive for y in wear.years]
    sigma = math.sqrt(math.log1p(0.10**2))
    (out / "telemetry").mkdir(parents=True, exist_ok=True)
    month_s = YEAR_DAYS / 12 * DAY_S
    for i in range(12):
        serial = f"BTWL{4100 + i:04d}0480BGN"
        reused = i >= 6
        life = REUSED_LIFE_USED if reused else 0.0
        host = life / per_byte_year[0] if reused else 0.0
        hours0 = 26_000.0 if reused else 0.0
        docs = []
        for m in range(MONTHS + 1):
            if m > 0:
                y = wear.years[(m - 1) // 12]
                b = y.host_bytes_per_drive / 12 * float(rng.lognormal(-sigma**2 / 2, sigma))
                host += b
                life += b * per_byte_year[(m - 1) // 12]
            t = START + dt.timedelta(seconds=m * month_s)
            docs.append(_doc(serial, f"/dev/sd{chr(ord('a') + i)}", t, hours0 + m * month_s / 3600, host, life))
        # One file per drive: a list of snapshots, as a collector that appends each scrape keeps them.
        (out / "telemetry" / f"{serial}.json").write_text("[\n" + ",\n".join(json.dumps(d, separators=(",", ":")) for d in docs) + "\n]\n")
    with (out / "capacity.csv").open("w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["time", "used_bytes"])
        for m in range(MONTHS + 1):
            t = START + dt.timedelta(seconds=m * month_s)
            used = FILL_START * usable * (1 + WORKLOAD.growth_per_year) ** (m / 12) * float(rng.normal(1.0, 0.01))
            w.writerow([t.strftime("%Y-%m-%d"), f"{used:.0f}"])


if __name__ == "__main__":
    write_example(Path(sys.argv[1] if len(sys.argv) > 1 else "examples/array-in-service"))
