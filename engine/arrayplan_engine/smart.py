"""Drive telemetry: what a drive says about its own wear, read from ``smartctl --json`` output
(SATA/ATA, SAS/SCSI, NVMe, drives behind RAID controllers) and ``nvme smart-log -o json``.

Pure: functions take documents already loaded from JSON (dicts) and return ``DriveSnapshot``
records; reading files and walking directories is the services' job.

What is read, per protocol:

* NVMe (the NVMe base specification's SMART / Health Information log page, which both smartctl and
  nvme-cli print): ``data_units_written`` in units of 1000 x 512 bytes ("thousands of 512 byte
  data units"), so host bytes = value x 512,000 exactly; ``percentage_used`` (a vendor-specific
  estimate of the share of life used, may exceed 100); ``available_spare`` (percent);
  ``media_errors``; ``power_on_hours``.
* SCSI/SAS: ``scsi_percentage_used_endurance_indicator`` (SSDs, log page 0x11) and the write
  error counter log's ``gigabytes_processed`` (smartctl prints it as "Gigabytes processed
  [10^9 bytes]"); ``scsi_grown_defect_list`` as media errors.
* ATA: vendor attributes, whose meaning and unit depend on the model family. Only attributes in
  ``ATTRIBUTE_MEANINGS`` (each with its source) are read; an attribute named like a counter but
  not in the table is listed in the snapshot's ``unknown_counters`` and never converted. A
  generic ``Total_LBAs_Written`` is trusted only for the families listed, because its unit is
  512-byte sectors on some models and 32 MiB (or GiB) on others.

Identity: ``model`` + ``serial`` + ``capacity_bytes`` (``DriveSnapshot.identity``). Serials are
often redacted (every sample in tests/data/smart says "REDACTED") or repeated by OEM firmware, so
``series_from_snapshots`` never merges on the serial alone, never merges a placeholder serial at
all, and splits a series whose counters go backwards (a different drive with the same serial).
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final, Literal

from .errors import ArrayplanError
from .units import GiB, MiB

Protocol = Literal["ata", "scsi", "nvme"]
Quantity = Literal["not_used", "host_written", "nand_written", "life_remaining_percent", "life_used_percent", "spare_percent",
                   "host_program_pages", "background_program_pages"]

#: NVMe data units: "This value is reported in thousands (i.e., a value of 1 corresponds to
#: 1,000 units of 512 bytes written)" (NVM Express Base Specification, SMART / Health Information
#: log, Data Units Written).
NVME_DATA_UNIT_BYTES: Final = 512_000
SCSI_GIGABYTE: Final = 1_000_000_000

SMARTCTL_MAN: Final = "smartctl(8) man page, RETURN VALUES"
#: smartctl's exit status is a bit mask (smartctl(8), RETURN VALUES).
EXIT_BITS: Final[Mapping[int, str]] = {
    0: "command line did not parse",
    1: "device open failed, or the device did not return an IDENTIFY DEVICE structure",
    2: "some SMART or other ATA command to the disk failed, or a checksum error in a SMART data structure",
    3: "SMART status check returned 'DISK FAILING'",
    4: "prefail attributes found <= threshold",
    5: "SMART status OK but usage/prefail attributes have been <= threshold at some time",
    6: "the device error log contains records of errors",
    7: "the device self-test log contains records of errors",
}
FATAL_EXIT_BITS: Final = (0, 1)

#: Serials that identify nothing (redacted captures, OEM placeholders).
_PLACEHOLDER_SERIAL_RE: Final = re.compile(r"^(|redacted|x+|0+|none|null|not available|to be filled by o\.?e\.?m\.?|default string|n/a)$", re.I)


class TelemetryError(ArrayplanError, ValueError):
    """A telemetry document that holds no drive data (smartctl's own error output, a document of
    another kind); ``source`` names the file."""

    reason_code = "BAD_TELEMETRY"

    def __init__(self, source: str, reason: str) -> None:
        super().__init__(f"{source}: {reason}")
        self.source = source
        self.reason = reason


@dataclass(frozen=True, slots=True, kw_only=True)
class AttributeMeaning:
    """What one vendor ATA attribute means for one model family, and where that is written.

    ``family`` is a regular expression matched (full match) against smartctl's ``model_family``
    (the drivedb entry the drive matched) or, failing that, against the model string.
    ``use`` says whether the raw value or the normalised value carries the quantity;
    ``unit_bytes`` converts a byte counter (None for percentages and page counts)."""

    family: str
    attribute_id: int
    name: str
    quantity: Quantity
    use: Literal["raw", "value"] = "raw"
    unit_bytes: int | None = None
    source: str
    quote: str
    note: str = ""


_DRIVEDB: Final = "smartmontools drivedb.h (github.com/smartmontools/smartmontools, smartmontools/drivedb.h)"
_INTEL_SPEC: Final = ("Intel SSD DC S3700 Series product specification, SMART attributes F1h/E9h (quoted by Intel support in "
                      "communities.intel.com/thread/57909; the DC S3500/S3610 specifications use the same attribute set)")
_INTEL_DC: Final = r"Intel 730 and DC S35x0/3610/3700 Series SSDs"
_INTEL_S4: Final = r"Intel S4510/S4610/S4500/S4600 Series SSDs"
_MICRON_5X: Final = r"Micron 5100 Pro / (5200|52x0|52x0 / 5300) SSDs"
_PHISON: Final = r"Phison Driven( OEM)? SSDs"

#: Known ATA attribute meanings. Sources: the smartmontools drive database (drivedb.h, the entry
#: for the family, quoted) and vendor documents where drivedb points to them.
ATTRIBUTE_MEANINGS: Final[tuple[AttributeMeaning, ...]] = (
    # Intel DC S3500/S3510/S3610/S3700 and S4500/S4510/S4600/S4610 (same attribute set).
    *(m for fam in (_INTEL_DC, _INTEL_S4) for m in (
        AttributeMeaning(family=fam, attribute_id=241, name="Host_Writes_32MiB", quantity="host_written", unit_bytes=32 * MiB,
                         source=_INTEL_SPEC, quote="The raw value is increased by 1 for every 65,536 sectors (32MB) written by the host.",
                         note='65,536 x 512-byte sectors = 32 MiB; drivedb: "-v 241,raw48,Host_Writes_32MiB "'),
        AttributeMeaning(family=fam, attribute_id=225, name="Host_Writes_32MiB", quantity="not_used",
                         source=_DRIVEDB, quote='"-v 225,raw48,Host_Writes_32MiB "', note="the same counter as 241, which is read"),
        AttributeMeaning(family=fam, attribute_id=226, name="Workld_Media_Wear_Indic", quantity="not_used",
                         source=_DRIVEDB, quote='"-v 226,raw48,Workld_Media_Wear_Indic " // Timed Workload Media Wear Indicator (percent*1024)',
                         note="wear during the last workload timer loop (reset by 'smartctl -t vendor,0x40'), not lifetime wear"),
        AttributeMeaning(family=fam, attribute_id=243, name="NAND_Writes_32MiB", quantity="nand_written", unit_bytes=32 * MiB,
                         source=_DRIVEDB, quote='"-v 243,raw48,NAND_Writes_32MiB " // S3510/3610'),
        AttributeMeaning(family=fam, attribute_id=233, name="Media_Wearout_Indicator", quantity="life_remaining_percent", use="value",
                         source=_INTEL_SPEC, quote="Declines linearly from 100 to 1 as the average erase cycle count increases from 0 to "
                                                   "the maximum rated cycles.",
                         note="normalized value; it stops at 1, so a drive past its rating still reads 99 % used"),
    )),
    # Micron 5100 / 5200 / 5210 / 5300 (Micron TN-FD-34, "5100 SSD SMART Implementation", which drivedb cites).
    AttributeMeaning(family=_MICRON_5X, attribute_id=246, name="Total_LBAs_Written", quantity="host_written", unit_bytes=512,
                     source=_DRIVEDB, quote='"-v 246,raw48,Total_LBAs_Written "',
                     note="unit: 512-byte sectors, checked on the 5210 sample: 272,291,616 x 512 B = 139.4 GB equals its "
                          "8,509,113 host program pages x 16 KiB = 139.4 GB"),
    AttributeMeaning(family=_MICRON_5X, attribute_id=247, name="Host_Program_Page_Count", quantity="host_program_pages",
                     source=_DRIVEDB, quote='"-v 247,raw48,Host_Program_Page_Count "'),
    AttributeMeaning(family=_MICRON_5X, attribute_id=248, name="Bckgnd_Program_Page_Cnt", quantity="background_program_pages",
                     source=_DRIVEDB, quote='"-v 248,raw48,Bckgnd_Program_Page_Cnt"'),
    AttributeMeaning(family=_MICRON_5X, attribute_id=202, name="Percent_Lifetime_Remain", quantity="life_remaining_percent", use="value",
                     source=_DRIVEDB, quote='"-v 202,raw48,Percent_Lifetime_Remain "',
                     note="normalized value = percent of rated life remaining (raw 0 / value 100 on the new 5210 sample)"),
    # Phison-controller SSDs (Kingston A400, DC500, ...; drivedb cites MKP_521_Phison_SMART_attribute.pdf).
    AttributeMeaning(family=_PHISON, attribute_id=241, name="Lifetime_Writes_GiB", quantity="host_written", unit_bytes=GiB,
                     source=_DRIVEDB, quote='"-v 241,raw48,Lifetime_Writes_GiB "'),
    AttributeMeaning(family=_PHISON, attribute_id=233, name="Flash_Writes_GiB", quantity="nand_written", unit_bytes=GiB,
                     source=_DRIVEDB, quote='"-v 233,raw48,Flash_Writes_GiB "'),
    AttributeMeaning(family=_PHISON, attribute_id=231, name="SSD_Life_Left", quantity="life_remaining_percent", use="value",
                     source=_DRIVEDB + " (MKP_521_Phison_SMART_attribute.pdf)", quote='"-v 231,raw48,SSD_Life_Left "'),
)

#: Attribute names that look like write or wear counters: reported as unknown when a drive has
#: them but its family is not in ``ATTRIBUTE_MEANINGS``.
_COUNTER_NAME_RE: Final = re.compile(r"(LBAs?_Written|(?<!Fly_)Writes|Wear|Life|Erase_Count|Program_Page)", re.I)


@dataclass(frozen=True, slots=True, kw_only=True)
class DriveSnapshot:
    """One drive's counters at one moment, as one file reported them. SI units; None = the drive
    did not report it (or reported it in a form whose meaning is not known)."""

    source: str
    model: str | None
    serial: str | None
    firmware: str | None = None
    protocol: Protocol
    device_type: str | None = None           # smartctl's device type: sat, scsi, nvme, megaraid,N, sat+megaraid,N ...
    behind_raid_controller: bool = False
    model_family: str | None = None
    capacity_bytes: int | None = None
    rotational: bool | None = None           # True for a spinning disk, None when the file does not say
    time_s: float | None = None              # Unix time of the capture (smartctl local_time.time_t)
    power_on_hours: float | None = None
    host_written_bytes: float | None = None
    nand_written_bytes: float | None = None
    write_amplification: float | None = None  # measured: NAND programs / host writes (lifetime)
    percentage_used: float | None = None     # share of rated life used, percent (NVMe percentage_used, 100 - ATA wear indicators)
    available_spare_percent: float | None = None
    media_errors: int | None = None
    smart_passed: bool | None = None
    exit_status: int | None = None
    counter_sources: Mapping[str, str] = field(default_factory=dict)  # counter -> attribute/field it came from
    unknown_counters: tuple[str, ...] = ()    # counter-like attributes whose meaning is not known
    notes: tuple[str, ...] = ()

    @property
    def serial_is_placeholder(self) -> bool:
        return self.serial is None or bool(_PLACEHOLDER_SERIAL_RE.match(self.serial.strip()))

    @property
    def identity(self) -> tuple[str, str, int]:
        """The merge key: model, serial, capacity (never the serial alone)."""
        return (self.model or "", self.serial or "", self.capacity_bytes or 0)

    @property
    def has_wear_counters(self) -> bool:
        return self.percentage_used is not None or self.host_written_bytes is not None

    def as_record(self) -> dict[str, Any]:
        """A flat record (JSON-ready) of the snapshot."""
        return {
            "source": self.source, "model": self.model, "serial": self.serial, "firmware": self.firmware, "protocol": self.protocol,
            "device_type": self.device_type, "behind_raid_controller": self.behind_raid_controller, "model_family": self.model_family,
            "capacity_bytes": self.capacity_bytes, "rotational": self.rotational, "time_s": self.time_s,
            "power_on_hours": self.power_on_hours, "host_written_bytes": self.host_written_bytes,
            "nand_written_bytes": self.nand_written_bytes, "write_amplification": self.write_amplification,
            "percentage_used": self.percentage_used, "available_spare_percent": self.available_spare_percent,
            "media_errors": self.media_errors, "smart_passed": self.smart_passed, "exit_status": self.exit_status,
            "counter_sources": dict(self.counter_sources), "unknown_counters": list(self.unknown_counters), "notes": list(self.notes),
        }


# -- helpers --------------------------------------------------------------------------------------

def _num(value: Any) -> float | None:
    """A JSON number (or a numeric string such as SCSI's "127551.260"); None otherwise."""
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, (int, float)):
        return float(value) if math.isfinite(float(value)) else None
    if isinstance(value, str):
        try:
            x = float(value.strip())
        except ValueError:
            return None
        return x if math.isfinite(x) else None
    return None


def _int(value: Any) -> int | None:
    x = _num(value)
    return int(x) if x is not None else None


def _str(value: Any) -> str | None:
    if isinstance(value, str):
        s = " ".join(value.split())
        return s or None
    return None


def _mapping(value: Any) -> Mapping[str, Any]:
    """A JSON object, or an empty one when the field is missing or not an object."""
    return value if isinstance(value, Mapping) else {}


def exit_status_problems(exit_status: int) -> list[str]:
    """The meanings of the bits set in smartctl's exit status."""
    return [f"bit {b}: {text}" for b, text in EXIT_BITS.items() if exit_status & (1 << b)]


def meanings_for(model_family: str | None, model: str | None) -> tuple[AttributeMeaning, ...]:
    """The attribute meanings that apply to a drive (by drivedb family, else by model string)."""
    out = []
    for m in ATTRIBUTE_MEANINGS:
        if (model_family and re.fullmatch(m.family, model_family)) or (model and re.fullmatch(m.family, model)):
            out.append(m)
    return tuple(out)


# -- smartctl -------------------------------------------------------------------------------------

def _smartctl_header(doc: Mapping[str, Any], source: str) -> tuple[int | None, list[str]]:
    """Exit status and messages; raises TelemetryError for smartctl's own error output."""
    sc = doc.get("smartctl")
    if not isinstance(sc, Mapping):
        raise TelemetryError(source, "not smartctl --json output (no 'smartctl' object) nor nvme smart-log JSON")
    exit_status = _int(sc.get("exit_status"))
    messages = [str(m.get("string", "")) for m in sc.get("messages", []) if isinstance(m, Mapping)]
    errors = [str(m.get("string", "")) for m in sc.get("messages", []) if isinstance(m, Mapping) and m.get("severity") == "error"]
    fatal = exit_status is not None and any(exit_status & (1 << b) for b in FATAL_EXIT_BITS)
    has_identity = any(k in doc for k in ("model_name", "scsi_model_name", "serial_number"))
    if fatal or (errors and not has_identity):
        device = doc.get("device", {}).get("name") if isinstance(doc.get("device"), Mapping) else None
        why = "; ".join(errors) or "; ".join(exit_status_problems(exit_status or 0))
        raise TelemetryError(source, f"smartctl could not read {device or 'the device'} (exit status {exit_status}: {why})")
    return exit_status, messages


def parse_smartctl(doc: Mapping[str, Any], source: str) -> DriveSnapshot:
    """One ``smartctl --json`` document -> a snapshot. Raises ``TelemetryError`` when the document
    is smartctl's own error output (exit status bits 0-1, "open device failed") or not smartctl's."""
    if not isinstance(doc, Mapping):
        raise TelemetryError(source, f"expected a JSON object, got {type(doc).__name__}")
    exit_status, messages = _smartctl_header(doc, source)
    device = _mapping(doc.get("device"))
    dev_type = _str(device.get("type"))
    proto_name = (_str(device.get("protocol")) or "").lower()
    notes: list[str] = []
    if exit_status:
        notes += [f"smartctl exit status {exit_status}: {p}" for p in exit_status_problems(exit_status)]
    notes += [f"smartctl: {m}" for m in messages if m]
    behind_raid = bool(dev_type and re.search(r"megaraid|cciss|aacraid|areca|3ware|hpt|sssraid", dev_type))
    smart_status = _mapping(doc.get("smart_status"))
    passed = smart_status.get("passed") if isinstance(smart_status.get("passed"), bool) else None
    rot = doc.get("rotation_rate")
    rotational = (rot > 0) if isinstance(rot, int) and not isinstance(rot, bool) else None
    cap = _mapping(doc.get("user_capacity"))
    capacity = _int(cap.get("bytes")) or _int(doc.get("nvme_total_capacity"))
    local_time = _mapping(doc.get("local_time"))
    poh = _mapping(doc.get("power_on_time"))
    power_on_hours = None
    if _num(poh.get("hours")) is not None:
        power_on_hours = float(_num(poh.get("hours")) or 0.0) + float(_num(poh.get("minutes")) or 0.0) / 60.0
    base = dict(source=source, model=_str(doc.get("model_name")) or _str(doc.get("scsi_model_name")), serial=_str(doc.get("serial_number")),
                firmware=_str(doc.get("firmware_version")) or _str(doc.get("scsi_revision")), device_type=dev_type,
                behind_raid_controller=behind_raid, model_family=_str(doc.get("model_family")), capacity_bytes=capacity,
                rotational=rotational, time_s=_num(local_time.get("time_t")), power_on_hours=power_on_hours,
                smart_passed=passed, exit_status=exit_status)
    if "nvme_smart_health_information_log" in doc or proto_name == "nvme":
        log = doc.get("nvme_smart_health_information_log")
        if not isinstance(log, Mapping):
            notes.append("no nvme_smart_health_information_log in the file (run smartctl with -A or -x): wear counters unknown")
            log = {}
        return _nvme_snapshot(log, base, notes, "nvme_smart_health_information_log")
    if proto_name == "scsi" or "scsi_model_name" in doc:
        return _scsi_snapshot(doc, base, notes)
    return _ata_snapshot(doc, base, notes)


def _nvme_snapshot(log: Mapping[str, Any], base: dict[str, Any], notes: list[str], where: str) -> DriveSnapshot:
    sources: dict[str, str] = {}
    duw = _int(log.get("data_units_written"))
    host = None
    if duw is not None:
        host = duw * NVME_DATA_UNIT_BYTES  # an exact integer (JSON prints every digit)
        sources["host_written_bytes"] = f"{where}.data_units_written x 512000"
    used = _num(log.get("percentage_used", log.get("percent_used")))
    if used is not None:
        sources["percentage_used"] = f"{where}.percentage_used"
    spare = _num(log.get("available_spare", log.get("avail_spare")))
    if isinstance(log.get("avail_spare"), str):  # nvme-cli prints "100%"
        spare = _num(str(log["avail_spare"]).rstrip("%"))
    if isinstance(log.get("percent_used"), str):
        used = _num(str(log["percent_used"]).rstrip("%"))
    poh = _num(log.get("power_on_hours"))
    if poh is not None and base.get("power_on_hours") is None:
        base = {**base, "power_on_hours": poh}
    if used is None and host is None:
        notes.append("no wear counters (percentage_used, data_units_written): wear unknown")
    return DriveSnapshot(**base, protocol="nvme", host_written_bytes=host, percentage_used=used, available_spare_percent=spare,
                         media_errors=_int(log.get("media_errors")), counter_sources=sources, notes=tuple(notes))


def _scsi_snapshot(doc: Mapping[str, Any], base: dict[str, Any], notes: list[str]) -> DriveSnapshot:
    sources: dict[str, str] = {}
    used = _num(doc.get("scsi_percentage_used_endurance_indicator"))
    if used is not None:
        sources["percentage_used"] = "scsi_percentage_used_endurance_indicator"
    host = None
    log = doc.get("scsi_error_counter_log")
    if isinstance(log, Mapping) and isinstance(log.get("write"), Mapping):
        gb = _num(log["write"].get("gigabytes_processed"))
        if gb is not None:
            host = gb * SCSI_GIGABYTE
            sources["host_written_bytes"] = "scsi_error_counter_log.write.gigabytes_processed x 10^9 (smartctl: 'Gigabytes processed [10^9 bytes]')"
    if used is None:
        notes.append("no SCSI endurance indicator (log page 0x11; spinning disks have none): wear unknown")
    if base.get("power_on_hours") is None:
        notes.append("no power-on time reported")
    return DriveSnapshot(**base, protocol="scsi", host_written_bytes=host, percentage_used=used,
                         media_errors=_int(doc.get("scsi_grown_defect_list")), counter_sources=sources, notes=tuple(notes))


def _ata_snapshot(doc: Mapping[str, Any], base: dict[str, Any], notes: list[str]) -> DriveSnapshot:
    table = doc.get("ata_smart_attributes", {}).get("table") if isinstance(doc.get("ata_smart_attributes"), Mapping) else None
    attrs: dict[int, Mapping[str, Any]] = {}
    if isinstance(table, list):
        for a in table:
            if isinstance(a, Mapping) and isinstance(a.get("id"), int):
                attrs[a["id"]] = a
    else:
        notes.append("no ATA SMART attribute table in the file (run smartctl with -A or -x)")
    meanings = meanings_for(base.get("model_family"), base.get("model"))
    values: dict[str, float] = {}
    sources: dict[str, str] = {}
    for m in meanings:
        a = attrs.get(m.attribute_id)
        if a is None or a.get("name") != m.name:
            continue  # absent, or the drive names it differently (firmware variant): not this meaning
        raw = _mapping(a.get("raw"))
        x: float | None = _int(raw.get("value")) if m.use == "raw" else _num(a.get("value"))
        if x is None or m.quantity == "not_used":
            continue
        if m.unit_bytes is not None:
            x = x * m.unit_bytes  # integer counters x integer units stay exact integers
        values[m.quantity] = x
        sources[m.quantity] = f"ATA {m.attribute_id} {m.name} ({m.use}; {m.source})"
    known_ids = {m.attribute_id for m in meanings}
    unknown = tuple(f"{i} {a.get('name')}" for i, a in sorted(attrs.items())
                    if i not in known_ids and _COUNTER_NAME_RE.search(str(a.get("name", ""))))
    if unknown:
        notes.append("counter attributes of unknown meaning or unit for this model (not in the attribute table): " + ", ".join(unknown))
    host = values.get("host_written")
    nand = values.get("nand_written")
    wa = None
    out: dict[str, Any] = {}
    if host is not None:
        out["host_written_bytes"] = host
    if nand is not None:
        out["nand_written_bytes"] = nand
    if host and nand:
        wa = nand / host
        sources["write_amplification"] = "nand_written_bytes / host_written_bytes"
    hp, bp = values.get("host_program_pages"), values.get("background_program_pages")
    if hp and bp is not None:
        wa = (hp + bp) / hp
        sources["write_amplification"] = "(host + background program pages) / host program pages"
    used = None
    if "life_remaining_percent" in values:
        used = 100.0 - values["life_remaining_percent"]
        sources["percentage_used"] = "100 - " + sources.pop("life_remaining_percent")
    elif "life_used_percent" in values:
        used = values["life_used_percent"]
        sources["percentage_used"] = sources.pop("life_used_percent")
    if "spare_percent" in values:
        sources["available_spare_percent"] = sources.pop("spare_percent")
    sources.pop("host_program_pages", None)
    sources.pop("background_program_pages", None)
    for q, k in (("host_written", "host_written_bytes"), ("nand_written", "nand_written_bytes")):
        if q in sources:
            sources[k] = sources.pop(q)
    if base.get("power_on_hours") is None and 9 in attrs:
        raw9 = attrs[9].get("raw", {})
        if isinstance(raw9, Mapping) and _num(raw9.get("value")) is not None:
            base = {**base, "power_on_hours": _num(raw9.get("value"))}
    if used is None and host is None:
        kind = "a spinning disk" if base.get("rotational") else "this model"
        notes.append(f"no wear counters known for {kind}: wear unknown")
    media = _int(attrs[5]["raw"].get("value")) if 5 in attrs and isinstance(attrs[5].get("raw"), Mapping) else None
    return DriveSnapshot(**base, protocol="ata", write_amplification=wa, percentage_used=used,
                         available_spare_percent=values.get("spare_percent"), media_errors=media, counter_sources=sources,
                         unknown_counters=unknown, notes=tuple(notes), **out)


# -- nvme-cli -------------------------------------------------------------------------------------

def parse_nvme_smart_log(doc: Mapping[str, Any], source: str, *, model: str | None = None, serial: str | None = None,
                         capacity_bytes: int | None = None) -> DriveSnapshot:
    """``nvme smart-log -o json`` -> a snapshot. nvme-cli's smart log carries no model or serial:
    pass them (from ``nvme id-ctrl``) or the snapshot's identity is unknown."""
    notes: list[str] = []
    if model is None and serial is None:
        notes.append("nvme smart-log output names no model or serial: this snapshot cannot be matched to an array's serials")
    base = dict(source=source, model=model, serial=serial, firmware=None, device_type="nvme", behind_raid_controller=False,
                model_family=None, capacity_bytes=capacity_bytes, rotational=False, time_s=None, power_on_hours=None,
                smart_passed=None, exit_status=None)
    cw = _int(doc.get("critical_warning"))
    if cw is not None:
        base["smart_passed"] = cw == 0
    return _nvme_snapshot(doc, base, notes, "nvme smart-log")


def parse_document(doc: Any, source: str) -> DriveSnapshot:
    """Dispatch: smartctl --json (has a 'smartctl' object) or nvme smart-log (has data_units_written)."""
    if isinstance(doc, Mapping) and "smartctl" not in doc and ("data_units_written" in doc or "percent_used" in doc
                                                                 or "percentage_used" in doc):
        return parse_nvme_smart_log(doc, source)
    return parse_smartctl(doc, source)


# -- series ---------------------------------------------------------------------------------------

@dataclass(frozen=True, slots=True, kw_only=True)
class DriveSeries:
    """Snapshots of one physical drive, oldest first. ``clock`` says what orders them: capture
    time when the files carry distinct times, else power-on hours."""

    identity: tuple[str, str, int]
    snapshots: tuple[DriveSnapshot, ...]
    clock: Literal["time", "power_on_hours", "single"]
    notes: tuple[str, ...] = ()

    @property
    def latest(self) -> DriveSnapshot:
        return self.snapshots[-1]


def _order_key(s: DriveSnapshot) -> tuple[float, float]:
    return (s.power_on_hours if s.power_on_hours is not None else math.inf, s.host_written_bytes or 0.0)


def _monotonic(prev: DriveSnapshot, nxt: DriveSnapshot) -> bool:
    for a, b in ((prev.power_on_hours, nxt.power_on_hours), (prev.host_written_bytes, nxt.host_written_bytes),
                 (prev.percentage_used, nxt.percentage_used), (prev.nand_written_bytes, nxt.nand_written_bytes)):
        if a is not None and b is not None and b < a:
            return False
    return True


def series_from_snapshots(snapshots: Iterable[DriveSnapshot]) -> list[DriveSeries]:
    """Group snapshots into per-drive time series.

    Key: model + serial + capacity. A placeholder serial (redacted, empty, OEM filler) never
    merges: each such snapshot is its own drive. Within a key, snapshots are ordered by capture
    time when all have distinct times, else by power-on hours; when a counter (power-on hours,
    host bytes, NAND bytes, percentage used) goes backwards the key holds more than one drive,
    and the snapshot starts (or joins) another series instead of being merged.
    """
    groups: dict[tuple[str, str, int], list[DriveSnapshot]] = {}
    singles: list[DriveSeries] = []
    for s in snapshots:
        if s.serial_is_placeholder:
            singles.append(DriveSeries(identity=s.identity, snapshots=(s,), clock="single",
                                       notes=(f"{s.source}: serial {s.serial!r} identifies no drive; not merged with any other snapshot",)))
            continue
        groups.setdefault(s.identity, []).append(s)
    out: list[DriveSeries] = []
    for key, items in groups.items():
        times = [s.time_s for s in items]
        by_time = all(t is not None for t in times) and len(set(times)) == len(times)
        items.sort(key=(lambda s: (s.time_s or 0.0)) if by_time else _order_key)
        chains: list[list[DriveSnapshot]] = []
        notes: list[str] = []
        for s in items:
            for chain in chains:
                if _monotonic(chain[-1], s):
                    chain.append(s)
                    break
            else:
                if chains:
                    notes.append(f"{s.source}: serial {key[1]!r} ({key[0]}) seen with counters going backwards: treated as another drive")
                chains.append([s])
        for chain in chains:
            clock: Literal["time", "power_on_hours", "single"] = "single" if len(chain) == 1 else ("time" if by_time else "power_on_hours")
            out.append(DriveSeries(identity=key, snapshots=tuple(chain), clock=clock, notes=tuple(notes)))
    return out + singles


def snapshot_hours(series: DriveSeries) -> Sequence[float]:
    """Each snapshot's position on the series clock, in hours from the first."""
    snaps = series.snapshots
    if series.clock == "time":
        t0 = snaps[0].time_s or 0.0
        return [((s.time_s or 0.0) - t0) / 3600.0 for s in snaps]
    p0 = snaps[0].power_on_hours or 0.0
    return [(s.power_on_hours or 0.0) - p0 for s in snaps]
