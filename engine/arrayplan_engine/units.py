"""Unit constants. SI base units inside the engine (bytes, seconds, watts, US dollars).

Names carry their unit (``capacity_bytes``, ``latency_s``); convert only at the edges with these
constants. The list of quantities and their units is docs/nomenclature.md.
"""

from typing import Final

# Decimal byte multiples, as drive vendors rate capacity (1 GB = 10^9 bytes).
KB: Final = 1_000
MB: Final = 1_000_000
GB: Final = 1_000_000_000
TB: Final = 1_000_000_000_000
PB: Final = 1_000_000_000_000_000

# Binary multiples, as NAND is built (a "256 GiB" die set) and as IO sizes are written (4 KiB).
KiB: Final = 1_024
MiB: Final = 1_024**2
GiB: Final = 1_024**3
TiB: Final = 1_024**4

SECTOR_BYTES: Final = 512

# Time.
US: Final = 1e-6
MS: Final = 1e-3
MINUTE_S: Final = 60.0
HOUR_S: Final = 3_600.0
DAY_S: Final = 86_400.0
YEAR_DAYS: Final = 365.0
YEAR_S: Final = YEAR_DAYS * DAY_S
YEAR_HOURS: Final = YEAR_DAYS * 24.0

# Interface line rates after 8b/10b or 128b/130b encoding, in bytes per second of payload.
SATA_1_5G_BYTES_PER_S: Final = 150 * MB
SATA_3G_BYTES_PER_S: Final = 300 * MB
SATA_6G_BYTES_PER_S: Final = 600 * MB
SAS_6G_BYTES_PER_S: Final = 600 * MB
SAS_12G_BYTES_PER_S: Final = 1_200 * MB
PCIE_GEN1_LANE_BYTES_PER_S: Final = 250 * MB
PCIE_GEN2_LANE_BYTES_PER_S: Final = 500 * MB
PCIE_GEN3_LANE_BYTES_PER_S: Final = 985 * MB
