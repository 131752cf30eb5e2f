"""Block trace parsing and characterisation.

Samples vendored in tests/data/traces/ (sources and licences in tests/data/README.md): SNIA IOTTA MSR Cambridge,
SYSTOR'17 and Tencent CBS excerpts (via github.com/ben-manes/caffeine PR 1797), MQSim's DiskSim
traces (MIT), libCacheSim's cloudPhysics sample (GPL-3.0) and DiskSim's valid/ascii.trace.
Each figure is recomputed here by a deliberately plain reference implementation.
"""

from __future__ import annotations

import bz2
import gzip
import math
import tracemalloc
from collections import Counter
from pathlib import Path

import numpy as np
import pytest

from arrayplan_engine.errors import InvalidInputError
from arrayplan_engine.trace import (
    Characteriser,
    TraceReader,
    characterise,
    detect_format,
)
from arrayplan_engine.units import DAY_S

TRACES = Path(__file__).resolve().parents[1] / "data" / "traces"  # vendored; sources in tests/data/README.md


def lines(name: str) -> list[str]:
    p = TRACES / name
    opener = gzip.open if p.suffix == ".gz" else bz2.open if p.suffix == ".bz2" else open
    with opener(p, "rt") as f:  # type: ignore[operator]
        return f.read().splitlines()


# Plain reference parsers: (time_s, device, offset_bytes, size_bytes, is_write).
def ref_records(name: str) -> list[tuple[float, str, int, int, bool]]:
    out = []
    text = lines(name)
    if name.startswith("msr"):
        for ln in text:
            ts, host, disk, typ, off, size, _ = ln.split(",")
            out.append((int(ts) / 1e7, host + disk, int(off), int(size), typ == "Write"))
    elif name.startswith("systor"):
        for ln in text[1:]:
            ts, _, typ, lun, off, size = ln.split(",")
            out.append((float(ts), lun, int(off), int(size), typ == "W"))
    elif name.startswith("cloud_storage"):
        for ln in text:
            ts, off, size, typ, vol = ln.split(",")
            out.append((float(ts), vol, int(off) * 512, int(size) * 512, typ == "1"))
    elif name.startswith(("tpcc", "wsrch")):
        for ln in text:
            t, dev, lba, n, typ = ln.split()
            out.append((int(t) / 1e9, dev, int(lba) * 512, int(n) * 512, typ == "0"))
    elif name.startswith("disksim"):
        for ln in text:
            t, dev, blk, n, flags = ln.split()
            out.append((float(t) / 1e3, dev, int(blk) * 512, int(n) * 512, flags == "0"))
    elif name.startswith("cloudPhysics"):
        for ln in text[1:]:
            _, t, op, size, lbn = ln.split(",")
            out.append((float(t), "0", int(lbn) * 512, int(size), op == "2a"))
    return out


def reference(recs: list[tuple[float, str, int, int, bool]]) -> dict[str, float]:
    last_end: dict[str, int] = {}
    seq = 0
    block_writes: Counter[tuple[str, int]] = Counter()
    blocks: set[tuple[str, int]] = set()
    per_second: Counter[int] = Counter()
    for t, dev, off, size, wr in recs:
        if last_end.get(dev) == off:
            seq += 1
        last_end[dev] = off + size
        for b in range(off // 4096, (off + size - 1) // 4096 + 1):
            blocks.add((dev, b))
            if wr:
                block_writes[(dev, b)] += 1
        per_second[math.floor(t)] += 1
    n = len(recs)
    seconds = max(per_second) - min(per_second) + 1
    mean_w = sum(block_writes.values()) / len(blocks)
    hot = [c for c in block_writes.values() if c > mean_w]
    return {
        "n": n,
        "reads": sum(1 for r in recs if not r[4]),
        "sequential_fraction": seq / n,
        "blocks": len(blocks),
        "devices": len(last_end),
        "seconds": seconds,
        "mean_iops": n / seconds,
        "peak_iops": max(per_second.values()),
        "daily_write_bytes": sum(r[3] for r in recs if r[4]) / seconds * DAY_S,
        "hot_write_fraction": sum(hot) / sum(block_writes.values()) if hot else 1.0,
        "hot_space_fraction": len(hot) / len(blocks) if hot else 1.0,
    }


# name -> (format, records and reads from the data README)
SAMPLES = {
    "msr-cambridge1-sample.csv": ("msr", 1_000, 508),
    "systor17-traces-sample.csv.gz": ("systor", 999, None),
    "systor17-additional-sample.csv.gz": ("systor", 999, None),
    "cloud_storage-sample.bz2": ("tencent", 50_000, None),
    "tpcc-small.trace.gz": ("disksim", 6_999, None),
    "wsrch-small.trace.gz": ("disksim", 24_783, None),
    "cloudPhysicsIO.csv.gz": ("cloudphysics", 113_872, 46_974),
    "disksim-ascii.trace.gz": ("disksim", 100_000, 79_634),
}


def test_every_sample_is_covered() -> None:
    assert {p.name for p in TRACES.iterdir()} == set(SAMPLES)


@pytest.mark.parametrize("name", sorted(SAMPLES))
def test_sample_traces(name: str) -> None:
    fmt, count, reads = SAMPLES[name]
    text = lines(name)
    assert detect_format(text[:5]) == fmt
    c, reader = characterise(text)  # format detected
    ref = reference(ref_records(name))
    assert reader.format == fmt
    assert c.record_count == count == ref["n"]
    if reads is not None:
        assert c.read_count == reads
    assert c.read_count == ref["reads"]
    assert c.read_fraction == pytest.approx(ref["reads"] / count)
    assert c.sequential_fraction == pytest.approx(ref["sequential_fraction"])
    assert c.device_count == ref["devices"]
    assert c.duration_s == ref["seconds"]
    assert c.mean_iops == pytest.approx(ref["mean_iops"])
    assert c.peak_iops == ref["peak_iops"]
    assert c.daily_write_bytes == pytest.approx(ref["daily_write_bytes"])
    if ref["blocks"] <= 65_536:
        assert c.working_set_exact and c.working_set_blocks == ref["blocks"]
        assert c.hot_write_fraction == pytest.approx(ref["hot_write_fraction"])
        assert c.hot_space_fraction == pytest.approx(ref["hot_space_fraction"])
    else:
        # KMV estimate: within 4 standard errors (1 / sqrt(k - 2)); skew from a uniform sample.
        assert not c.working_set_exact
        assert c.working_set_blocks == pytest.approx(ref["blocks"], rel=4 * c.working_set_relative_error)
        assert c.hot_space_fraction == pytest.approx(ref["hot_space_fraction"], abs=0.02)
        assert c.hot_write_fraction == pytest.approx(ref["hot_write_fraction"], abs=0.02)
    w = c.to_workload(name=name)
    assert w.read_fraction == c.read_fraction and w.target_iops == c.mean_iops
    assert sum(wt for _, wt in w.io_size_mix) == pytest.approx(1.0) and len(w.io_size_mix) <= 16


def test_figures_from_the_readme() -> None:
    c, _ = characterise(lines("msr-cambridge1-sample.csv"), "msr")
    assert c.read_fraction == 508 / 1000
    assert 126 <= c.last_time_s - c.first_time_s <= 128  # "~127 s"
    assert c.mean_outstanding_ios is not None and c.mean_outstanding_ios < 1  # Little's law, idle disk
    c, _ = characterise(lines("cloudPhysicsIO.csv.gz"))
    assert (c.read_count, c.write_count) == (46_974, 66_898)
    c, reader = characterise(lines("disksim-ascii.trace.gz"))
    assert reader.disksim_time_unit == "ms" and 1_530 <= c.last_time_s - c.first_time_s <= 1_534  # "~1,533 s"
    assert c.device_count == 14  # distinct device numbers in the file (0..30)
    c, reader = characterise(lines("tpcc-small.trace.gz"))
    assert reader.disksim_time_unit == "ns"
    c, _ = characterise(lines("cloud_storage-sample.bz2"))
    assert c.device_count == 2_038
    # Timestamps out of order within the 64-bin window: counted in the right second, none late.
    assert c.late_arrivals == 0 and c.peak_iops == 48_703


def test_size_histograms() -> None:
    c, _ = characterise(lines("msr-cambridge1-sample.csv"))
    sizes = Counter(int(ln.split(",")[5]) for ln in lines("msr-cambridge1-sample.csv"))
    assert dict(c.io_size_counts) == sizes
    assert sum(n for _, n in c.io_size_log2_histogram) == 1000
    assert c.mean_io_bytes == pytest.approx(sum(s * n for s, n in sizes.items()) / 1000)


BLKPARSE = """\
  8,0    3        1     0.000000000   697  Q   W 223490 + 8 [kjournald]
  8,0    3        2     0.000001000   697  G   W 223490 + 8 [kjournald]
  8,0    3        3     0.000002000   697  P   N [kjournald]
  8,0    3        4     0.000003000   697  Q   W 223498 + 8 [kjournald]
  8,0    3        5     0.000004000   697  M   W 223498 + 8 [kjournald]
  8,0    3        6     0.000010000   697  D   W 223490 + 16 [kjournald]
  8,0    0        7     0.000500000     0  C   W 223490 + 16 [0]
  8,0    1        8     1.200000000  1234  Q   R 1000 + 32 [cat]
  8,0    1        9     1.200010000  1234  D   R 1000 + 32 [cat]
  8,0    1       10     1.200100000  1234  D  RA 1032 + 8 [cat]
  8,0    1       11     1.300000000  1234  D  FWS [sync]
  8,0    1       12     1.400000000  1234  D   D 5000 + 8 [fstrim]
  8,0    1       13     1.500000000  1234  C   R 1000 + 32 [0]
CPU0 (8,0):
 Reads Queued:           1,       16KiB  Writes Queued:           2,        8KiB
Total (8,0):
 Reads Queued:           1,       16KiB  Writes Queued:           2,        8KiB
"""


def test_blkparse_uses_one_action() -> None:
    text = BLKPARSE.splitlines()
    assert detect_format(text) == "blkparse"
    reader = TraceReader("blkparse")  # D events by default
    recs = list(reader.records(text))
    assert [(r.offset_bytes, r.size_bytes, r.is_write) for r in recs] == [
        (223490 * 512, 16 * 512, True), (1000 * 512, 32 * 512, False), (1032 * 512, 8 * 512, False)]
    assert reader.skipped["flush without data"] == 1 and reader.skipped["RWBS D is not a data read or write"] == 1
    q = list(TraceReader("blkparse", blkparse_action="Q").records(text))
    assert [r.size_bytes for r in q] == [4096, 4096, 16384]
    c, _ = characterise(text, "blkparse")
    assert c.record_count == 3 and c.sequential_fraction == pytest.approx(1 / 3)  # 1032 follows 1000+32


SPC = "0,20941264,8192,W,0.551706\n0,20939840,8192,w,0.554041\n1,3436288,15872,r,0.556202\n0,20939856,4096,R,0.560000\n"


def test_spc() -> None:
    text = SPC.splitlines()
    assert detect_format(text) == "spc"
    c, _ = characterise(text)
    assert (c.record_count, c.write_count, c.read_bytes) == (4, 2, 15872 + 4096)
    assert c.sequential_fraction == 0.25  # 20939856 * 512 = end of the 8192 B write at 20939840
    assert c.device_count == 2


# --- malformed traces -------------------------------------------------------------------------

MALFORMED = [
    ("msr", "128166385295514663,hm,0,Write,9056014336,2048,2833\n128166385295514878,hm,0,Write,1,512,2617\n1,hm,0,Erase,0,512,1\n", 3, "Type 'Erase'"),
    ("msr", "128166385295514663,hm,0,Read,9056014336,2048\n", 1, "expected 7 fields"),
    ("systor", "Timestamp,Response,IOType,LUN,Offset,Size\n1.0,0.1,R,0,abc,4096\n", 2, "Offset 'abc' is not an integer"),
    ("tencent", "1538323200,4247200,128,1,1058\n1538323200,4247200,128,2,1058\n", 2, "IOType '2'"),
    ("disksim", "13.19\t30\t0\t5\t1\n17.82\t20\t576560\t6\n", 2, "expected 5 fields"),
    ("cloudphysics", "version,time,op,size,lbn\n1,5633898,zz,512,42932745\n", 2, "not a hexadecimal SCSI opcode"),
    ("blkparse", "  8,0    3        1     0.000000000   697  D   W 223490 + 8 [kjournald]\ngarbage here\n", 2, "not a blkparse event"),
    ("spc", "0,20941264,8192,W,0.551706\n0,20939840,8192,x,0.554041\n", 2, "Opcode 'x'"),
    ("spc", "0,-5,8192,W,0.551706\n", 1, "negative offset"),
    ("tencent", "1538323200,0,4194304,1,1058\n", 1, "over 1073741824 B"),
    ("systor", "Timestamp,Response,IOType,LUN,Offset,Size\n1.0,0.1,R,0,0,4096\nnan,0.1,R,0,0,4096\n", 3, "not a finite number"),
]


@pytest.mark.parametrize(("fmt", "text", "line", "reason"), MALFORMED, ids=[f"{m[0]}-{m[2]}-{m[3][:12]}" for m in MALFORMED])
def test_malformed_lines_give_line_numbers(fmt: str, text: str, line: int, reason: str) -> None:
    with pytest.raises(InvalidInputError) as exc:
        characterise(text.splitlines(), fmt)
    v = exc.value.violations[0]
    assert v.field == f"trace:{line}"
    assert reason in v.reason


def test_max_bad_lines_counts_and_reports() -> None:
    good = "1538323200,4247200,128,1,1058"
    text = [good, "x,1,1,1,1", good, "1,2,3", good, good]
    c, reader = characterise(text, "tencent", max_bad_lines=2)
    assert c.record_count == 4 and reader.bad_lines == 2
    assert [ln for ln, _ in reader.bad_examples] == [2, 4]
    assert any("2 malformed lines skipped" in n for n in c.notes)
    with pytest.raises(InvalidInputError) as exc:
        characterise(text + ["1,2"], "tencent", max_bad_lines=2)
    assert exc.value.violations[0].field == "trace:7" and "3 bad lines, over max_bad_lines=2" in exc.value.violations[0].reason


def test_undetectable_and_empty() -> None:
    with pytest.raises(InvalidInputError) as exc:
        characterise(["hello world"])
    assert exc.value.violations[0].field == "trace:1"
    with pytest.raises(InvalidInputError):
        characterise(["version,time,op,size,lbn"], "cloudphysics")  # no records


# --- constant memory ----------------------------------------------------------------------------

def _batches(n: int, batch: int, seed: int = 7):  # type: ignore[no-untyped-def]
    rng = np.random.default_rng(seed)
    space_blocks = 1 << 28
    for lo in range(0, n, batch):
        m = min(batch, n - lo)
        t = (lo + np.arange(m)) / 1000.0 + rng.uniform(-2.0, 2.0, m)  # 1,000 IOPS, jittered order
        dev = rng.integers(0, 100, m)
        hot = rng.random(m) < 0.8
        block = np.where(hot, rng.integers(0, space_blocks // 10, m), rng.integers(0, space_blocks, m))
        size = rng.choice(np.array([4096, 8192, 65536]), m, p=[0.7, 0.2, 0.1])
        yield t, dev, block * 4096, size, rng.random(m) < 0.3


def test_one_million_records_in_bounded_state() -> None:
    ch = Characteriser(sketch_blocks=4_096, chunk_records=50_000)
    maxima: Counter[str] = Counter()
    tracemalloc.start()
    try:
        after_first = None
        for i, arrays in enumerate(_batches(1_000_000, 100_000)):
            ch.add_arrays(*arrays)
            for k, v in ch.state_sizes().items():
                maxima[k] = max(maxima[k], v)
            current, _ = tracemalloc.get_traced_memory()
            if i == 1:
                after_first = current
        end_current, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert after_first is not None
    # The state after 1M records is no bigger than after 200k (bounded sketches), and the peak
    # (one chunk's arrays) stays far below what 1M records would need.
    assert end_current < after_first * 1.5 + 2_000_000
    assert peak < 150_000_000
    assert maxima["sketch_blocks"] == 4_096
    assert maxima["open_bins"] <= ch.late_window_bins + 2 + 50
    assert maxima["devices_tracked"] == 100
    assert maxima["size_classes"] == 3
    c = ch.result()
    assert c.record_count == 1_000_000
    assert c.late_arrivals == 0
    assert c.read_fraction == pytest.approx(0.7, abs=0.002)
    assert c.mean_iops == pytest.approx(1000, rel=0.01)
    # Distinct 4 KiB blocks, counted exactly here: the KMV estimate is within 4 standard errors.
    keys = []
    for _t, dev, off, size, _w in _batches(1_000_000, 100_000):
        first = off // 4096
        for extra in range(16):
            sel = size // 4096 > extra
            keys.append((dev[sel].astype(np.int64) << 32) + first[sel] + extra)
    all_keys = np.sort(np.concatenate(keys))
    true_blocks = int(np.count_nonzero(np.diff(all_keys))) + 1
    assert c.working_set_relative_error == pytest.approx(1 / math.sqrt(4_094))
    assert c.working_set_blocks == pytest.approx(true_blocks, rel=4 * c.working_set_relative_error)
    # The skew sample sees the 80 % of IOs aimed at 10 % of the space.
    assert c.hot_write_fraction > c.hot_space_fraction


def test_record_by_record_stream_is_bounded() -> None:
    from arrayplan_engine.trace import TraceRecord

    ch = Characteriser(sketch_blocks=1_024, chunk_records=10_000, max_devices=50)
    rng = np.random.default_rng(3)
    offs = rng.integers(0, 1 << 30, 200_000) * 4096
    for i in range(200_000):
        ch.add(TraceRecord(i * 1e-3, f"vol{i % 80}", int(offs[i]), 4096, bool(i % 3 == 0)))
        if i % 10_000 == 0:
            s = ch.state_sizes()
            assert s["buffered_records"] < 10_000 and s["sketch_blocks"] <= 1_024 and s["devices_tracked"] <= 50
    c = ch.result()
    assert c.record_count == 200_000 and c.write_count == 66_667
    assert c.working_set_blocks == pytest.approx(200_000, rel=4 / math.sqrt(1_022))
    assert any("device evictions" in n for n in c.notes)


# -- the LinnOS / Heimdall replayer format, and traces in no documented format ----------------------

# Five lines as the LinnOS/Heimdall/IODA replayer reads them (github.com/huaicheng/replayer,
# replayer/README.md: timestamp ms, disk ID, offset B, size B, 1 read / 0 write).
_LINNOS = ["0.144 0 135520256 16384 1", "0.828 0 965271552 65536 0", "2.383 1 201560064 4096 1",
           "3.000 1 4096 8192 1", "4.000 0 0 4096 0"]


def test_linnos_lines_are_detected_and_read_in_bytes_and_ms() -> None:
    from arrayplan_engine.trace import TraceReader, characterise, detect_format

    assert detect_format(_LINNOS) == "linnos"
    assert detect_format([ln.replace(" ", ",") for ln in _LINNOS]) == "linnos"  # the CSV spelling
    recs = list(TraceReader("linnos").records(_LINNOS))
    assert [r.size_bytes for r in recs] == [16384, 65536, 4096, 8192, 4096]
    assert recs[1].offset_bytes == 965271552 and recs[1].is_write and not recs[0].is_write
    assert recs[2].time_s == pytest.approx(2.383e-3)
    result, _ = characterise(_LINNOS)
    assert result.mean_io_bytes == pytest.approx((16384 + 65536 + 4096 + 8192 + 4096) / 5)  # not 512x
    assert "trace read as linnos (detected from its first lines): LinnOS/Heimdall replayer: timestamp (ms), device, offset (B), " \
           "size (B), type (1 read, 0 write)" in result.notes


def test_disksim_lines_stay_disksim_and_every_answer_says_how_it_was_read() -> None:
    from arrayplan_engine.trace import characterise, detect_format

    disksim = ["13.191135 30 0 5 1", "17.829285 20 576560 6 1", "24.314779 17 0 24 1"]  # DiskSim's valid/ascii.trace
    assert detect_format(disksim) == "disksim"
    result, _ = characterise(disksim, "disksim")
    assert any(n.startswith("trace read as disksim (as given): DiskSim ASCII") for n in result.notes)


@pytest.mark.parametrize("lines", [
    ["1 0 4096 8 1", "2 0 8192 4096 0"],          # sizes that fit blocks and bytes: ambiguous
    ["1 2 3 4 5 6"] * 3,                           # six numbers: no documented format
    ["1,0,4096,4096,7"] * 3,                       # a CSV of five numbers that is neither
    ["hello world this is text"] * 3,
])
def test_a_trace_in_no_documented_format_is_refused_listing_the_formats(lines: list[str]) -> None:
    from arrayplan_engine.errors import InvalidInputError
    from arrayplan_engine.trace import FORMATS, characterise

    with pytest.raises(InvalidInputError, match="no documented trace format") as info:
        characterise(lines)
    text = str(info.value)
    assert all(f in text for f in FORMATS) and "offset (B), size (B)" in text
    assert lines[0] not in text  # the line itself is not echoed
