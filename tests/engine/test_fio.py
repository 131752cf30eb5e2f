"""fio job files -> Workload. Samples: fio's own examples/ (github.com/axboe/fio, GPL-2.0), copied
to tests/data/fio/ (see tests/data/README.md)."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from arrayplan_engine.errors import InvalidInputError
from arrayplan_engine.fio import (
    parse_bssplit,
    parse_fio,
    parse_fio_jobs,
    parse_fio_size,
    parse_time_s,
    skew_from_distribution,
)
from arrayplan_engine.units import GiB, KiB, MiB

FIO = Path(__file__).resolve().parents[1] / "data" / "fio"  # vendored fio examples (GPL-2.0), tests/data/README.md


def load(name: str, **kw):  # type: ignore[no-untyped-def]
    return parse_fio((FIO / name).read_text(), **kw)


# --- every sample file --------------------------------------------------------------------------

# file -> (read_fraction, random_fraction, queue_depth, {io_bytes: weight})
EXPECTED = {
    "example_latency_steadystate.fio": (1.0, 1.0, 32, {4 * KiB: 1.0}),
    "fio-rand-RW.fio": (0.6, 1.0, 16 * 4, {4 * KiB: 1.0}),
    "iometer-file-access-server.fio": (0.8, 1.0, 64, {512: 0.10, 1 * KiB: 0.05, 2 * KiB: 0.05, 4 * KiB: 0.60, 8 * KiB: 0.02,
                                                      16 * KiB: 0.04, 32 * KiB: 0.04, 64 * KiB: 0.10}),
    "jesd219.fio": (0.4, 1.0, 256 * 4, {512: 0.04, 1024: 0.01, 1536: 0.01, 2048: 0.01, 2560: 0.01, 3072: 0.01, 3584: 0.01,
                                        4 * KiB: 0.67, 8 * KiB: 0.10, 16 * KiB: 0.07, 32 * KiB: 0.03, 64 * KiB: 0.03}),
    "latency-profile.fio": (1.0, 1.0, 128, {4 * KiB: 1.0}),
    # 4 stonewalled phases, each 10g of 4k: equal IO shares; 2 of 4 read, 2 of 4 random.
    "ssd-test.fio": (0.5, 0.5, 4, {4 * KiB: 1.0}),
    # Two time-based phases of 5m x 4 jobs: equal shares; 128k sequential writes, 4k random reads.
    "steadystate.fio": (0.5, 0.5, 4, {4 * KiB: 0.5, 128 * KiB: 0.5}),
    "tiobench-example.fio": (0.5, 0.5, 4, {4 * KiB: 1.0}),
    "zipf.fio": (1.0, 1.0, 1, {4 * KiB: 1.0}),
}


def test_every_sample_file_is_covered() -> None:
    names = {p.name for p in FIO.glob("*.fio")}
    assert names == set(EXPECTED) | {"ssd-steadystate.fio", "sprandom.fio"}


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_sample_files(name: str) -> None:
    rf, rnd, qd, mix = EXPECTED[name]
    w, warnings = load(name)
    assert w.read_fraction == pytest.approx(rf)
    assert w.random_fraction == pytest.approx(rnd)
    assert w.queue_depth == qd
    assert dict(w.io_size_mix) == pytest.approx(mix)
    assert all(x.startswith("fio") for x in warnings)


def test_jesd219_bssplit_zoned_and_warnings() -> None:
    w, warnings = load("jesd219.fio")
    # zoned:50/5:30/15:20/80 -> zones denser than average (10x and 2x) are hot: 80% to 20%.
    assert (w.hot_write_fraction, w.hot_space_fraction) == pytest.approx((0.80, 0.20))
    assert w.mean_io_bytes == pytest.approx(
        0.04 * 512 + 0.01 * (1024 + 1536 + 2048 + 2560 + 3072 + 3584) + 0.67 * 4096 + 0.10 * 8192 + 0.07 * 16384 + 0.03 * (32768 + 65536)
    )
    named = {x.split(":")[2] for x in warnings if x.count(":") >= 2}
    assert {"ioengine", "direct", "norandommap", "randrepeat", "blockalign", "group_reporting"} <= named
    # Each warning carries the option's line in the file.
    lines = (FIO / "jesd219.fio").read_text().splitlines()
    for x in warnings:
        _, line, option = x.split(":")[:3]
        assert lines[int(line) - 1].strip().startswith(option)


def test_ssd_steadystate_two_phases() -> None:
    w, warnings = load("ssd-steadystate.fio")
    jobs, _ = parse_fio_jobs((FIO / "ssd-steadystate.fio").read_text())
    assert [j.phase for j in jobs] == [0, 1]
    # No sizes: both phases cover the same device, so the IO counts are 1/1M vs 4 jobs x 1/4k.
    fill, rand = 1 / MiB, 4 / (4 * KiB)
    assert w.read_fraction == 0.0
    assert w.random_fraction == pytest.approx(rand / (fill + rand))
    assert w.queue_depth == round((16 * fill + 32 * 4 * rand) / (fill + rand))
    assert dict(w.io_size_mix)[1 * MiB] == pytest.approx(fill / (fill + rand))
    assert any("stonewalled phases" in x for x in warnings)
    assert any("write_bw_log" in x for x in warnings)


def test_sprandom_needs_its_variable() -> None:
    text = (FIO / "sprandom.fio").read_text()
    with pytest.raises(InvalidInputError) as exc:
        parse_fio(text)
    assert exc.value.violations[0].field == "fio:32:bs"
    assert "FIO_BS" in exc.value.violations[0].reason
    w, warnings = parse_fio(text, env={"FIO_BS": "8192"})
    assert w.io_size_mix == ((8 * KiB, 1.0),) and w.read_fraction == 0.0 and w.queue_depth == 64
    assert {"sprandom", "spr_op", "spr_num_regions"} <= {x.split(":")[2] for x in warnings}


def test_zipf_sample_skew_reads_only() -> None:
    w, warnings = load("zipf.fio")
    # A read-only job: the workload's skew describes writes, so it stays uniform, with a warning.
    assert (w.hot_write_fraction, w.hot_space_fraction) == (1.0, 1.0)
    assert any("random_distribution" in x and "not carried" in x for x in warnings)


# --- values -----------------------------------------------------------------------------------

@pytest.mark.parametrize(
    ("text", "kb_base", "expected"),
    [("4k", 1024, 4096), ("4K", 1024, 4096), ("4kb", 1024, 4096), ("1M", 1024, MiB), ("10g", 1024, 10 * GiB), ("512", 1024, 512),
     ("4ki", 1024, 4000), ("1mi", 1024, 1_000_000), ("4k", 1000, 4000), ("4KiB", 1000, 4096), ("0x1000", 1024, 4096)],
)
def test_sizes(text: str, kb_base: int, expected: int) -> None:
    assert parse_fio_size(text, kb_base=kb_base) == expected


def test_times() -> None:
    assert parse_time_s("60") == 60 and parse_time_s("5m") == 300 and parse_time_s("2h") == 7200
    assert parse_time_s("500ms") == pytest.approx(0.5) and parse_time_s("1d") == 86_400


def test_bssplit_syntax() -> None:
    r, w = parse_bssplit("4k/50:1k/:32k/")
    assert dict(r) == pytest.approx({4096: 0.5, 1024: 0.25, 32768: 0.25}) and r == w
    r, w = parse_bssplit("2k/50:4k/50,4k/90:8k/10")
    assert dict(r) == pytest.approx({2048: 0.5, 4096: 0.5})
    assert dict(w) == pytest.approx({4096: 0.9, 8192: 0.1})


def test_concurrent_jobs_combined_by_io_share() -> None:
    text = """
[global]
size=1g
[reader]
rw=randread
bs=4k
iodepth=8
[writer]
rw=randwrite
bs=64k
iodepth=4
numjobs=2
"""
    w, _ = parse_fio(text)
    ios_r, ios_w = GiB / (4 * KiB), 2 * GiB / (64 * KiB)
    assert w.read_fraction == pytest.approx(ios_r / (ios_r + ios_w))
    assert w.queue_depth == 8 + 4 * 2
    assert dict(w.io_size_mix) == pytest.approx({4 * KiB: ios_r / (ios_r + ios_w), 64 * KiB: ios_w / (ios_r + ios_w)})
    assert w.working_set_bytes == 2 * GiB  # each writer clone has its own 1g file


def test_options_mapped() -> None:
    text = """
[global]   ; comment after a header
rw=randrw
rwmixread=70
rwmixwrite=20   # the later one wins, as in fio: 80 % reads
[j]
bs=8k,32k
iodepth=4
numjobs=2
rate_iops=400
size=50%
percentage_random=50
random_distribution=pareto:0.2
runtime=2m
"""
    w, warnings = parse_fio(text)
    assert w.read_fraction == pytest.approx(0.8)
    assert dict(w.io_size_mix) == pytest.approx({8 * KiB: 0.8, 32 * KiB: 0.2})
    # rate_iops=400 caps reads and writes at 400 each (a value not ended by a comma applies to
    # both): at 80 % reads the read cap binds, 400 / 0.8 = 500 IOPS per job, x 2 jobs.
    assert w.target_iops == pytest.approx(400 / 0.8 * 2)
    assert w.working_set_fraction == 0.5
    assert w.random_fraction == pytest.approx(0.5)
    assert w.queue_depth == 8
    assert w.hot_write_fraction > 0.7 and w.hot_space_fraction < 0.15
    assert not [x for x in warnings if "not supported" in x]


def test_unsupported_options_are_named_with_their_lines() -> None:
    text = "[global]\nthinktime=10\n[a]\nrw=randwrite\nzonemode=zbd\nverify=md5\nioengine=io_uring\nrandom_distribution=zoned_abs=60/20G:40/100G\n"
    w, warnings = parse_fio(text)
    assert w.read_fraction == 0.0
    assert "fio:2:thinktime: is not supported; the workload ignores it" in warnings
    assert not [x for x in warnings if "=10" in x or "md5" in x or "io_uring" in x or "60/20G" in x], "no value is repeated"
    assert any(x.startswith("fio:5:zonemode:") for x in warnings)
    assert any(x.startswith("fio:6:verify:") for x in warnings)
    assert any(x.startswith("fio:7:ioengine:") and "no effect" in x for x in warnings)
    assert any(x.startswith("fio:8:random_distribution:") and "zoned_abs" in x and "not supported" in x for x in warnings)
    assert (w.hot_write_fraction, w.hot_space_fraction) == (1.0, 1.0)
    assert all(x in w.notes for x in warnings)


def test_trim_variants_warn() -> None:
    w, warnings = parse_fio("[t]\nrw=trim\n[w]\nrw=randtrimwrite\nbs=16k\n")
    assert w.read_fraction == 0.0 and w.io_size_mix == ((16 * KiB, 1.0),)
    assert any("fio:2:rw" in x and "left out" in x for x in warnings)
    assert any("fio:4:rw" in x and "only its writes" in x for x in warnings)


# --- skew reductions ----------------------------------------------------------------------------

def test_zoned_reduction() -> None:
    s = skew_from_distribution("zoned:60/10:30/20:8/30:2/40")
    assert (s.hot_access_fraction, s.hot_space_fraction) == pytest.approx((0.90, 0.30))
    s = skew_from_distribution("zoned:10/50:90/50,50/5:30/15:20/80")  # write set is the second
    assert (s.hot_access_fraction, s.hot_space_fraction) == pytest.approx((0.80, 0.20))


def test_continuous_reductions_match_closed_forms() -> None:
    # zipf theta < 1 over many blocks: F(f) ~ f^(1-theta); density > 1 below f* = (1-theta)^(1/theta).
    theta = 0.5
    f_star = (1 - theta) ** (1 / theta)
    s = skew_from_distribution("zipf:0.5", blocks=1 << 30)
    assert s.hot_space_fraction == pytest.approx(f_star, abs=0.003)
    assert s.hot_access_fraction == pytest.approx(f_star ** (1 - theta), abs=0.003)
    # pareto:h -> index = N U^p, p = log h / log(1-h): F(x) = x^a, a = 1/p; hot x* = a^(1/(1-a)).
    a = math.log(0.8) / math.log(0.2)
    x_star = a ** (1 / (1 - a))
    s = skew_from_distribution("pareto:0.2")
    assert s.hot_space_fraction == pytest.approx(x_star, abs=0.003)
    assert s.hot_access_fraction == pytest.approx(x_star**a, abs=0.003)
    # normal:10 -> sd 0.1 of the range; density > 1 where |z| < sqrt(2 ln(1 / (sd sqrt(2 pi)))).
    z = math.sqrt(2 * math.log(1 / (0.1 * math.sqrt(2 * math.pi))))
    s = skew_from_distribution("normal:10")
    assert s.hot_space_fraction == pytest.approx(2 * z * 0.1, abs=0.003)
    assert s.hot_access_fraction == pytest.approx(math.erf(z / math.sqrt(2)), abs=0.003)
    # Zipf above 1 depends on the block count: more blocks, a smaller hot share of the space.
    assert skew_from_distribution("zipf:1.2", blocks=1 << 30).hot_space_fraction < skew_from_distribution("zipf:1.2", blocks=1 << 16).hot_space_fraction


# --- malformed files: line-numbered errors -------------------------------------------------------

MALFORMED = [
    ("rw=read\n[job]\n", "fio:1:rw", "outside a [section]"),
    ("[job\nrw=read\n", "fio:1:section", "malformed section header"),
    ("[global]\n\n[job]\niodepth=abc\n", "fio:4:iodepth", "integer"),
    ("[job]\nbs=4q\n", "fio:2:bs", "bad size"),
    ("[job]\nrw=randwrite\nbs=1000\n", "fio:3:bs", "multiple of 512"),
    ("[job]\nrw=randrw\nrwmixread=150\n", "fio:3:rwmixread", "[0, 100]"),
    ("[job]\nbssplit=4k/60:8k/50\n", "fio:2:bssplit", "over 100"),
    ("[job]\nbssplit=4k-60\n", "fio:2:bssplit", "size/percentage"),
    ("[job]\nrw=randomwrite\n", "fio:2:rw", "unknown mode"),
    ("[job]\nrw=randwrite\nrandom_distribution=zoned:50/5:30/15:10/80\n", "fio:3:random_distribution", "add up to 100"),
    ("[job]\nrandom_distribution=lognormal:2\n", "fio:2:random_distribution", "unknown distribution"),
    ("[job]\nrandom_distribution=pareto:1.5\n", "fio:2:random_distribution", "(0, 1)"),
    # inf was once taken as a theta (every IO to one block); the range asks for a finite number
    ("[job]\nrandom_distribution=zipf:inf\n", "fio:2:random_distribution", "zipf theta must be a finite number > 0, got inf"),
    ("[job]\nbssplit=4k/150\n", "fio:2:bssplit", "the percentage in '4k/150' must be in [0, 100], got 150.0"),
    ("[job]\nnumjobs=0\n", "fio:2:numjobs", "[1, 65536]"),
    ("[job]\nsize=\n", "fio:2:size", "empty value"),
    ("[job]\ninclude other.fio\n", "fio:2:include", "not followed"),
    ("[global]\nrw=read\n", "fio:2:section", "no job"),
    ("[job]\nbs=${BS}\n", "fio:2:bs", "${BS} is not set"),
    ("[global]\nbs=9k9\n[a]\n[b]\n", "fio:2:bs", "bad size"),  # inherited: the [global] line is named
    ("[job]\nruntime=forever\n", "fio:2:runtime", "bad time"),
    ("[a]\nrw=trim\n", "fio:2:rw", "only trims"),
    ("[job]\n= 5\n", "fio:2:option", "malformed line"),
]


@pytest.mark.parametrize(("text", "field", "reason"), MALFORMED, ids=[m[1] + ":" + m[2] for m in MALFORMED])
def test_malformed_files_name_the_line_and_option(text: str, field: str, reason: str) -> None:
    with pytest.raises(InvalidInputError) as exc:
        parse_fio(text)
    v = exc.value.violations[0]
    assert v.field == field
    assert reason in v.reason
