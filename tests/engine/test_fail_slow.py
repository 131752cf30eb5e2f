"""Fail-slow drives (The Tail at Store, FAST'16): injected episodes and the field-rate tail.

Sources: Hao et al., "The Tail at Store: A Revelation from Millions of Hours of Disk and SSD
Deployments", FAST'16, section 3: a drive is more than 2x slower than its peers 0.2 % (disk) /
0.6 % (SSD) of the time; a RAID group holds one 1.5 % / 2.2 % of the time.
"""

from __future__ import annotations

import math
from dataclasses import replace

import pytest

from arrayplan_engine import array as arr
from arrayplan_engine import fail_slow as fs
from arrayplan_engine import simulation
from arrayplan_engine.catalog import builtin_catalog
from arrayplan_engine.errors import InvalidInputError
from arrayplan_engine.layout import make_layout
from arrayplan_engine.workload import Workload

CATALOG = builtin_catalog()


def _spec(*, iops: float, duration_s: float = 4.0, layout: str = "raid5", count: int = 8, width: int = 8,
          read_fraction: float = 0.7, drive: str = "intel-dc-s3700-200gb") -> arr.ArraySpec:
    wl = Workload(read_fraction=read_fraction, io_size_mix=((4096, 1.0),), queue_depth=32, target_iops=iops)
    return simulation.array_spec(CATALOG.get(drive), make_layout(layout, width), count, wl, fill_fraction=0.8, duration_s=duration_s,
                         seed=5)


def test_slowed_model_multiplies_every_time_and_keeps_the_rest() -> None:
    m = _spec(iops=1000).service_models[0]
    s = fs.slowed_model(m, 3.0)
    assert s.read_fixed_s == pytest.approx(3 * m.read_fixed_s, rel=1e-15)
    assert s.host_page_s == pytest.approx(3 * m.host_page_s, rel=1e-15)
    assert s.nand_program_s == pytest.approx(3 * m.nand_program_s, rel=1e-15)
    assert (s.raw_pages, s.span_pages, s.parallel_units, s.write_amplification) == \
           (m.raw_pages, m.span_pages, m.parallel_units, m.write_amplification)
    with pytest.raises(InvalidInputError, match="factor"):
        fs.slowed_model(m, 0.5)


def test_one_slow_member_sets_the_stripes_tail() -> None:
    """A RAID 5 read-modify-write waits for every member it touches: with one member 4x slower,
    the writes that touch it (a 4-unit RMW of an 8-wide group touches a given member with
    probability 1 - C(7,4)/C(8,4) = 1/2) wait about 4x longer on it, so the write tail moves by
    more than 2x, while the median read (7/8 of reads miss the member) stays within 10 %."""
    base = _spec(iops=4000)
    normal = arr.simulate(base)
    slow = arr.simulate(fs.with_slow_members(base, {3: 4.0}))
    assert slow.latency_percentile_s(0.99, "write") > 2.0 * normal.latency_percentile_s(0.99, "write")
    assert slow.latency_percentile_s(0.5, "read") == pytest.approx(normal.latency_percentile_s(0.5, "read"), rel=0.10)
    # same offered rate, below saturation either way
    assert slow.achieved_iops == pytest.approx(normal.achieved_iops, rel=0.05)


def test_episode_pieces_cover_the_window_and_slow_only_their_seconds() -> None:
    base = _spec(iops=4000, duration_s=6.0)
    pieces = fs.slow_specs(base, (fs.SlowEpisode(drive_index=2, factor=5.0, start_s=2.0, duration_s=2.0),))
    assert [(p.window_start_s, p.duration_s) for p in pieces] == [(0.0, 2.0), (2.0, 2.0), (4.0, 2.0)]
    m0 = base.service_models[0]
    assert [len(p.service_models) for p in pieces] == [1, 8, 1]
    assert pieces[1].service_models[2].read_fixed_s == pytest.approx(5 * m0.read_fixed_s)
    assert pieces[1].service_models[1] is m0
    merged = arr.merge_results([arr.simulate(p) for p in pieces])
    assert merged.duration_s == pytest.approx(6.0)
    per_second = merged.second_p99_latency_s
    # the episode's seconds carry the tail: their p99 above every second outside it
    assert min(per_second[2:4]) > max(per_second[[0, 1, 4, 5]])


def test_episodes_are_validated_with_their_field() -> None:
    base = _spec(iops=1000)
    with pytest.raises(InvalidInputError, match=r"slow_drives\[0\]\.drive_index"):
        fs.slow_specs(base, (fs.SlowEpisode(drive_index=8, factor=2.0),))
    with pytest.raises(InvalidInputError, match=r"slow_drives\[0\]\.factor"):
        fs.slow_specs(base, (fs.SlowEpisode(drive_index=0, factor=0.9),))
    with pytest.raises(InvalidInputError, match=r"slow_drives\[0\]\.start_s"):
        fs.slow_specs(base, (fs.SlowEpisode(drive_index=0, factor=2.0, start_s=4.0),))


def test_field_time_fraction_is_the_studys_group_rate() -> None:
    # one group: the study's figure itself; 10 independent groups: 1 - (1 - q)^10
    assert fs.slow_time_fraction("ssd", 1) == pytest.approx(0.022, rel=1e-12)
    assert fs.slow_time_fraction("hdd", 1) == pytest.approx(0.015, rel=1e-12)
    assert fs.slow_time_fraction("ssd", 10) == pytest.approx(1 - 0.978**10, rel=1e-12)
    # the per-drive rate is consistent with the group rate: a group of n drives is slow about
    # n x 0.6 % of the time for small n (the study's groups averaged ~4-8 drives)
    assert 3 <= fs.FIELD_RATES["ssd"].group_slow_fraction / fs.FIELD_RATES["ssd"].drive_slow_fraction <= 8


def test_mixture_percentile_is_a_time_weighted_quantile() -> None:
    """Below the slow share the mixture's quantile is the normal run's; above 1 - slow share it
    reaches into the slow run's tail; with share 0 or 1 it is one of the runs (within one
    histogram bucket, < 0.8 %)."""
    base = _spec(iops=4000)
    normal = arr.simulate(base)
    slow = arr.simulate(fs.with_slow_members(base, {0: 4.0}))
    for q in (0.5, 0.99, 0.999):
        assert fs.mixture_percentile_s(normal, slow, 0.0, q) == pytest.approx(normal.latency_percentile_s(q), rel=0.008)
        assert fs.mixture_percentile_s(normal, slow, 1.0, q) == pytest.approx(slow.latency_percentile_s(q), rel=0.008)
    pi = fs.slow_time_fraction("ssd", 1)
    mid = fs.mixture_percentile_s(normal, slow, pi, 0.999)
    assert normal.latency_percentile_s(0.999) <= mid <= slow.latency_percentile_s(0.999)
    # the median hardly moves: 2.2 % of the time slow
    assert fs.mixture_percentile_s(normal, slow, pi, 0.5) == pytest.approx(normal.latency_percentile_s(0.5), rel=0.03)
    assert math.isfinite(fs.mixture_percentile_s(normal, slow, pi, 1.0))


def test_closed_loop_mixture_weights_by_completions() -> None:
    """A closed loop completes fewer IOs while slow: the mixture weights each state's latencies by
    its time share x its completion rate. Checked against the mixture's distribution computed
    independently from each run's fraction of IOs above the answer: the share of the mixture's IOs
    above its q-quantile is 1 - q, to within the IOs of one histogram bucket."""
    wl = replace(_spec(iops=0.0).workload, target_iops=0.0, queue_depth=4)
    base = replace(_spec(iops=0.0), workload=wl)
    normal = arr.simulate(base)
    slow = arr.simulate(fs.with_slow_members(base, {0: 8.0}))
    assert slow.achieved_iops < 0.8 * normal.achieved_iops
    pi = 0.3
    wn, ws = (1 - pi) * normal.achieved_iops, pi * slow.achieved_iops
    for q in (0.5, 0.9, 0.99):
        v = fs.mixture_percentile_s(normal, slow, pi, q)
        above = (wn * normal.latency_fraction_above(v * 1.008) + ws * slow.latency_fraction_above(v * 1.008)) / (wn + ws)
        below = (wn * normal.latency_fraction_above(v / 1.008) + ws * slow.latency_fraction_above(v / 1.008)) / (wn + ws)
        assert above <= 1 - q <= below
