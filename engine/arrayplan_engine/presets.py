"""Workload presets: the IO mixes the seed reviews describe, each number with its provenance.

Every preset is a ``Workload`` plus a list of ``Provenance`` records (the type the drive catalog
uses too, ``provenance.py``). A record either quotes the
seed (``source`` relative to the shared project folder, ``quote`` a verbatim substring of that file;
tests/engine/test_presets.py checks every quote occurs in its file) or says ``assumed`` with the
reason, when the seed leaves the value open. The same facts are carried into the workload's
``source`` and ``notes`` so a plan report can show them.

Rules used throughout (docs/workloads.md):

* read_fraction = reads / (reads + writes) from the stated operation counts;
* an IO size breakdown that leaves part of the IOs undescribed is renormalised over the sizes it
  names (``assumed``: the undescribed IOs follow the same mix);
* "sequential share" -> random_fraction = 1 - sequential share;
* average queue depth (a real number) -> the nearest integer queue depth (the exact figure is in
  the notes); the traces are replayed closed loop, so ``target_iops`` stays 0.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from .errors import UnknownNameError
from .provenance import Provenance
from .units import GB, KiB, MiB
from .workload import Workload

SEED_SSD_320 = "seeds/000_d5886dd2adcf9a04.txt"
SEED_S3500 = "seeds/001_4993870e060cd6fa.txt"
SEED_SSD_910 = "seeds/002_40abfca3ec444397.txt"
FIO_JESD219 = "data/fio/jesd219.fio"
FIO_IOMETER = "data/fio/iometer-file-access-server.fio"


@dataclass(frozen=True, slots=True, kw_only=True)
class Preset:
    """A named workload with the provenance of each of its values."""

    name: str
    description: str
    workload: Workload
    provenance: tuple[Provenance, ...]
    aliases: tuple[str, ...] = field(default=())

    @property
    def assumed_fields(self) -> tuple[str, ...]:
        return tuple(p.field for p in self.provenance if p.assumed)


def _q(field_: str, file: str, quote: str) -> Provenance:
    return Provenance(field=field_, source=file, quote=quote)


def _a(field_: str, reason: str) -> Provenance:
    return Provenance(field=field_, assumed=True, reason=reason)


def _mix(*pairs: tuple[int, float]) -> tuple[tuple[int, float], ...]:
    total = sum(w for _, w in pairs)
    return tuple((size, w / total) for size, w in pairs)


def _make(
    name: str,
    description: str,
    provenance: tuple[Provenance, ...],
    *,
    source: str,
    aliases: tuple[str, ...] = (),
    extra_notes: tuple[str, ...] = (),
    **fields: object,
) -> Preset:
    notes = tuple(str(p) for p in provenance) + extra_notes
    workload = Workload(name=name, source=source, notes=notes, **fields)  # type: ignore[arg-type]
    return Preset(name=name, description=description, workload=workload, provenance=provenance, aliases=aliases)


_RENORM = "the seed describes only {pct}% of the IOs by size; the rest are taken to follow the same mix (weights renormalised)"


def _build() -> tuple[Preset, ...]:
    presets: list[Preset] = []

    # --- AnandTech Storage Bench 2010 (seed 000, Intel SSD 320 review) ---------------------------
    presets.append(_make(
        "anandtech-2010-typical",
        "AnandTech Storage Bench 2010 light/typical desktop workload (~5 minutes of office use)",
        (
            _q("read_fraction", SEED_SSD_320, "The light workload is composed of 37,501 reads and 20,268 writes"),
            _q("io_size_mix", SEED_SSD_320,
               "Over 30% of the IOs are 4KB, 11% are 16KB, 22% are 32KB and approximately 13% are 64KB in size"),
            _a("io_size_mix", _RENORM.format(pct=76) + "; 'over 30%' taken as 30%"),
            _q("random_fraction", SEED_SSD_320, "Less than 30% of the operations are absolutely sequential in nature"),
            _a("random_fraction", "'less than 30%' sequential taken as exactly 30% (random_fraction 0.70)"),
            _q("queue_depth", SEED_SSD_320, "Average queue depth is 6.09 IOs"),
        ),
        source=f"{SEED_SSD_320}: AnandTech Storage Bench 2010, light/typical workload",
        aliases=("anandtech-2010-light",),
        extra_notes=("37,501 reads + 20,268 writes recorded over ~5 minutes; replayed closed loop at QD 6.09 (rounded to 6)",),
        read_fraction=37_501 / (37_501 + 20_268),
        random_fraction=0.70,
        io_size_mix=_mix((4 * KiB, 30), (16 * KiB, 11), (32 * KiB, 22), (64 * KiB, 13)),
        queue_depth=6,
    ))
    presets.append(_make(
        "anandtech-2010-heavy",
        "AnandTech Storage Bench 2010 heavy multitasking workload (22 minutes)",
        (
            _q("read_fraction", SEED_SSD_320, "it consists of 128,895 read operations and 72,411 write operations"),
            _q("random_fraction", SEED_SSD_320, "Roughly 44% of all IOs were sequential"),
            _q("io_size_mix", SEED_SSD_320,
               "Approximately 30% of all accesses were 4KB in size, 12% were 16KB in size, 14% were 32KB and 20% were 64KB"),
            _a("io_size_mix", _RENORM.format(pct=76)),
            _q("queue_depth", SEED_SSD_320, "Average queue depth was 3.59"),
        ),
        source=f"{SEED_SSD_320}: AnandTech Storage Bench 2010, heavy multitasking workload",
        extra_notes=("128,895 reads + 72,411 writes over 22 minutes; replayed closed loop at QD 3.59 (rounded to 4)",),
        read_fraction=128_895 / (128_895 + 72_411),
        random_fraction=1.0 - 0.44,
        io_size_mix=_mix((4 * KiB, 30), (16 * KiB, 12), (32 * KiB, 14), (64 * KiB, 20)),
        queue_depth=4,
    ))
    presets.append(_make(
        "anandtech-2010-gaming",
        "AnandTech Storage Bench 2010 gaming workload (predominantly sequential reads)",
        (
            _q("read_fraction", SEED_SSD_320, "The gaming workload is made up of 75,206 read operations and only 4,592 write operations"),
            _q("io_size_mix", SEED_SSD_320, "Only 20% of the accesses are 4KB in size, nearly 40% are 64KB and 20% are 32KB"),
            _a("io_size_mix", _RENORM.format(pct=80) + "; 'nearly 40%' taken as 40%"),
            _q("random_fraction", SEED_SSD_320, "A whopping 69% of the IOs are sequential"),
            _q("queue_depth", SEED_SSD_320, "The average queue depth is 7.76 IOs"),
        ),
        source=f"{SEED_SSD_320}: AnandTech Storage Bench 2010, gaming workload",
        extra_notes=("75,206 reads + 4,592 writes; replayed closed loop at QD 7.76 (rounded to 8)",),
        read_fraction=75_206 / (75_206 + 4_592),
        random_fraction=1.0 - 0.69,
        io_size_mix=_mix((4 * KiB, 20), (32 * KiB, 20), (64 * KiB, 40)),
        queue_depth=8,
    ))

    # --- Enterprise Storage Bench (seed 002, Intel SSD 910 review) --------------------------------
    presets.append(_make(
        "oracle-swingbench",
        "Oracle Swingbench OLTP: 100-150 concurrent users on a 10 GB database, low queue depth",
        (
            _q("read_fraction", SEED_SSD_910, "Swingbench consists of over 1.28 million read IOs and 3.55 million writes"),
            _q("io_size_mix", SEED_SSD_910, "88% of the operations in this benchmark are 8KB or smaller"),
            _q("io_size_mix", SEED_SSD_910, "The read/write GB ratio is nearly 1:1 (bigger reads than writes)"),
            _a("io_size_mix",
               "the 88% of IOs that are 8KB or smaller taken as 8 KiB; solving bytes read = bytes written for the "
               "remaining 12% (all reads) gives ~39 KiB, rounded to 40 KiB"),
            _a("random_fraction", "the seed gives no sequential share; an OLTP database is taken as fully random"),
            _q("queue_depth", SEED_SSD_910, "its queue depth averages only 1.33"),
            _q("working_set_bytes", SEED_SSD_910, "The database size is fairly small at 10GB"),
        ),
        source=f"{SEED_SSD_910}: Enterprise Storage Bench - Oracle Swingbench",
        extra_notes=("1.28M reads + 3.55M writes; replayed closed loop at QD 1.33 (rounded to 1)",),
        read_fraction=1.28 / (1.28 + 3.55),
        random_fraction=1.0,
        io_size_mix=_mix((8 * KiB, 88), (40 * KiB, 12)),
        queue_depth=1,
        working_set_bytes=10 * GB,
    ))
    sql_sizes = (
        _q("io_size_mix", SEED_SSD_910, "IO Size | % of Total"),
        _q("io_size_mix", SEED_SSD_910, "8KB | 21%"),
        _q("io_size_mix", SEED_SSD_910, "64KB | 35%"),
        _q("io_size_mix", SEED_SSD_910, "128KB | 35%"),
    )
    sql_mix = _mix((8 * KiB, 21), (64 * KiB, 35), (128 * KiB, 35))
    presets.append(_make(
        "sql-updatedailystats",
        "Microsoft SQL Server UpdateDailyStats: AnandTech's daily statistics job, mostly reads",
        (
            _q("read_fraction", SEED_SSD_910, "with 431K read operations and 179K write ops"),
            *sql_sizes,
            _a("io_size_mix", _RENORM.format(pct=91)),
            _a("random_fraction", "the seed gives no sequential share; taken as fully random (worst case)"),
            _q("queue_depth", SEED_SSD_910, "Average queue depth is 4.2 and only 34% of all IOs are issued at a queue depth of 1"),
        ),
        source=f"{SEED_SSD_910}: Enterprise Storage Bench - Microsoft SQL UpdateDailyStats",
        extra_notes=("431K reads + 179K writes, 3:1 GB read:written; closed loop at QD 4.2 (rounded to 4)",),
        read_fraction=431 / (431 + 179),
        random_fraction=1.0,
        io_size_mix=sql_mix,
        queue_depth=4,
    ))
    presets.append(_make(
        "sql-weeklymaintenance",
        "Microsoft SQL Server WeeklyMaintenance: consistency check and index rebuild of a 30 GB database",
        (
            _q("read_fraction", SEED_SSD_910, "approximately 1.8M reads and 1M writes"),
            _q("queue_depth", SEED_SSD_910, "Average queue depth is up to 5.43"),
            _q("working_set_bytes", SEED_SSD_910, "This procedure runs a consistency check on the 30GB database"),
            *sql_sizes,
            _a("io_size_mix",
               "the seed gives no size breakdown for this trace; the UpdateDailyStats breakdown of the same stats "
               "database is used, renormalised over its 91%"),
            _a("random_fraction", "the seed gives no sequential share; taken as fully random (worst case)"),
        ),
        source=f"{SEED_SSD_910}: Enterprise Storage Bench - Microsoft SQL WeeklyMaintenance",
        extra_notes=("~1.8M reads + ~1M writes; closed loop at QD 5.43 (rounded to 5)",),
        read_fraction=1.8 / (1.8 + 1.0),
        random_fraction=1.0,
        io_size_mix=sql_mix,
        queue_depth=5,
        working_set_bytes=30 * GB,
    ))

    # --- The reviewers' performance consistency test (seed 001, S3500 review) --------------------
    presets.append(_make(
        "consistency-4k-randwrite",
        "Performance consistency test: sequential fill, then 4 KB random writes over all LBAs at QD32 for 2000 s",
        (
            _q("working_set_fraction", SEED_S3500, "took a freshly secure erased SSD and filled it with sequential data"),
            _q("read_fraction", SEED_S3500,
               "Next I kicked off a 4KB random write workload across all LBAs at a queue depth of 32 using incompressible data"),
            _q("duration", SEED_S3500, "the entire 2000 second test period"),
        ),
        source=f"{SEED_S3500}: performance consistency test (4 KB random write, QD32, 2000 s)",
        extra_notes=("duration 2000 s; IOPS recorded every second",),
        read_fraction=0.0,
        random_fraction=1.0,
        io_size_mix=((4 * KiB, 1.0),),
        queue_depth=32,
        working_set_fraction=1.0,
    ))

    # --- Real fio job files in the shared data (fio examples/, GPL-2.0) --------------------------
    presets.append(_make(
        "jesd219-enterprise",
        "JEDEC JESD219 enterprise endurance workload as in fio's examples/jesd219.fio",
        (
            _q("read_fraction", FIO_JESD219, "rwmixread=40"),
            _q("random_fraction", FIO_JESD219, "rw=randrw"),
            _q("io_size_mix", FIO_JESD219,
               "bssplit=512/4:1024/1:1536/1:2048/1:2560/1:3072/1:3584/1:4k/67:8k/10:16k/7:32k/3:64k/3"),
            _q("queue_depth", FIO_JESD219, "iodepth=256"),
            _q("queue_depth", FIO_JESD219, "numjobs=4"),
            _q("hot_write_fraction", FIO_JESD219, "random_distribution=zoned:50/5:30/15:20/80"),
            _a("hot_write_fraction",
               "the three zones reduced to two classes: the zones denser than average (50/5 and 30/15) are hot, "
               "so 80% of IOs go to 20% of the space (see fio.skew_from_distribution)"),
        ),
        source=f"{FIO_JESD219} (fio examples, JESD219 endurance workload)",
        extra_notes=("queue depth = iodepth 256 x numjobs 4",),
        read_fraction=0.40,
        random_fraction=1.0,
        io_size_mix=_mix((512, 4), (1024, 1), (1536, 1), (2048, 1), (2560, 1), (3072, 1), (3584, 1),
                         (4 * KiB, 67), (8 * KiB, 10), (16 * KiB, 7), (32 * KiB, 3), (64 * KiB, 3)),
        queue_depth=1024,
        hot_write_fraction=0.80,
        hot_space_fraction=0.20,
    ))
    presets.append(_make(
        "iometer-file-server",
        "Intel IOmeter File Server access pattern as in fio's examples/iometer-file-access-server.fio",
        (
            _q("io_size_mix", FIO_IOMETER, "bssplit=512/10:1k/5:2k/5:4k/60:8k/2:16k/4:32k/4:64k/10"),
            _q("read_fraction", FIO_IOMETER, "rwmixread=80"),
            _q("random_fraction", FIO_IOMETER, "rw=randrw"),
            _q("queue_depth", FIO_IOMETER, "iodepth=64"),
        ),
        source=f"{FIO_IOMETER} (fio examples, IOmeter File Server pattern, 'Moderate' load)",
        read_fraction=0.80,
        random_fraction=1.0,
        io_size_mix=_mix((512, 10), (1 * KiB, 5), (2 * KiB, 5), (4 * KiB, 60), (8 * KiB, 2), (16 * KiB, 4),
                         (32 * KiB, 4), (64 * KiB, 10)),
        queue_depth=64,
    ))

    # --- Generic shapes an engineer expects: every value assumed, with the reason ----------------
    presets.append(_make(
        "oltp-8k-70-30",
        "Generic OLTP: 8 KiB random IO, 70% reads / 30% writes, QD32",
        (
            _a("read_fraction", "the conventional '70/30' OLTP mix of storage vendor sizing; not from a seed"),
            _a("io_size_mix", "8 KiB, the common database page size; not from a seed"),
            _a("random_fraction", "OLTP index and row lookups taken as fully random; not from a seed"),
            _a("queue_depth", "32, a loaded server's SATA/SAS queue depth as in the seeds' enterprise tests"),
        ),
        source="assumed: generic OLTP sizing shape (no seed)",
        read_fraction=0.70,
        random_fraction=1.0,
        io_size_mix=((8 * KiB, 1.0),),
        queue_depth=32,
    ))
    presets.append(_make(
        "vdi",
        "Generic virtual desktop steady state: write-heavy small random IO",
        (
            _a("read_fraction", "steady-state VDI (after boot storms) is commonly sized as 20% reads / 80% writes; not from a seed"),
            _a("io_size_mix", "mostly 4 KiB with some 8 KiB and 32 KiB, a rule of thumb for desktop guests; not from a seed"),
            _a("random_fraction", "many guests interleaved on one array look 80% random; not from a seed"),
            _a("queue_depth", "32; not from a seed"),
        ),
        source="assumed: generic VDI steady-state shape (no seed)",
        read_fraction=0.20,
        random_fraction=0.80,
        io_size_mix=((4 * KiB, 0.6), (8 * KiB, 0.25), (32 * KiB, 0.15)),
        queue_depth=32,
    ))
    presets.append(_make(
        "backup-seq-write",
        "Generic backup target: large sequential writes",
        (
            _a("read_fraction", "a backup ingest is all writes; not from a seed"),
            _a("io_size_mix", "1 MiB, the usual backup stream transfer size; not from a seed"),
            _a("random_fraction", "streams are sequential; not from a seed"),
            _a("queue_depth", "8 outstanding 1 MiB writes; not from a seed"),
        ),
        source="assumed: generic backup-target shape (no seed)",
        read_fraction=0.0,
        random_fraction=0.0,
        io_size_mix=((1 * MiB, 1.0),),
        queue_depth=8,
    ))
    return tuple(sorted(presets, key=lambda p: p.name))


_PRESETS: tuple[Preset, ...] = _build()
_BY_NAME: Mapping[str, Preset] = {
    **{p.name: p for p in _PRESETS},
    **{alias: p for p in _PRESETS for alias in p.aliases},
}


def all_presets() -> tuple[Preset, ...]:
    """Every preset (sorted by name), each with its workload and provenance."""
    return _PRESETS


def preset_names() -> tuple[str, ...]:
    """The names ``get_preset`` accepts, aliases included, sorted."""
    return tuple(sorted(_BY_NAME))


def get_preset_info(name: str, field: str = "workload.preset") -> Preset:
    """The preset called ``name`` (or one of its aliases) with its provenance."""
    try:
        return _BY_NAME[name]
    except (KeyError, TypeError):
        raise UnknownNameError(field, str(name), _BY_NAME) from None


def get_preset(name: str, field: str = "workload.preset") -> Workload:
    """The workload of the preset called ``name``; ``UnknownNameError`` lists the known names."""
    return get_preset_info(name, field).workload
