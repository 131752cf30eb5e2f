"""SimulateArray with fail-slow drives: injected episodes and the tail at The Tail at Store's field
rates (Hao et al., FAST'16: a RAID group holds a drive more than 2x slower than its peers 2.2 %
(SSD) of the time)."""

from __future__ import annotations

import pytest
from google.protobuf import duration_pb2

from arrayplan.v1 import planner_pb2 as pb
from arrayplan_engine.catalog import builtin_catalog
from arrayplan_engine.errors import InvalidInputError
from arrayplan_services.fanout import LocalExecutor
from arrayplan_services.plan import simulate


def _request(**kw: object) -> pb.SimulateArrayRequest:
    wl = pb.Workload(read_fraction=0.7, random_fraction=1.0, queue_depth=32, target_iops=20_000,
                     io_size_mix=[pb.IoSizeShare(io_bytes=4096, weight=1.0)])
    req = pb.SimulateArrayRequest(drive_model="intel-dc-s3700-200gb", drive_count=16, layout="raid6", group_width=8, workload=wl,
                                  fill_fraction=0.8, duration=duration_pb2.Duration(seconds=3), seed=7)
    for k, v in kw.items():
        setattr(req, k, v)
    return req


def test_field_rates_report_the_tail_with_fail_slow_drives() -> None:
    resp = simulate.simulate_array(_request(fail_slow_field_rates=True), builtin_catalog(), LocalExecutor())
    # two RAID 6 groups: 1 - (1 - 0.022)^2 of the time one holds a slow member
    assert resp.fail_slow_time_fraction == pytest.approx(1 - 0.978**2, rel=1e-12)
    ns = lambda d: d.ToNanoseconds()  # noqa: E731
    # the median is the array's own (95.6 % of the time no member is slow), within 3 %
    assert ns(resp.latency_with_fail_slow.p50) == pytest.approx(ns(resp.latency.p50), rel=0.03)
    # the far tail is set by the slow member: never below the array's own, and the maximum is the slow run's
    assert ns(resp.latency_with_fail_slow.p9999) >= ns(resp.latency.p9999)
    assert ns(resp.latency_with_fail_slow.max) >= ns(resp.latency.max)


def test_an_injected_episode_moves_the_write_tail() -> None:
    plain = simulate.simulate_array(_request(), builtin_catalog(), LocalExecutor())
    req = _request()
    req.slow_drives.add(drive_index=2, slowdown_factor=5.0)
    slow = simulate.simulate_array(req, builtin_catalog(), LocalExecutor())
    # RAID 6 small writes (6 member IOs of an 8-wide group) touch member 2 3 times in 4: their
    # p99 waits on its 5x slower service
    assert slow.write_latency.p99.ToNanoseconds() > 2 * plain.write_latency.p99.ToNanoseconds()
    assert not slow.HasField("latency_with_fail_slow")


@pytest.mark.parametrize(("episode", "field"), [
    ({"drive_index": 16, "slowdown_factor": 2.0}, "slow_drives[0].drive_index"),
    ({"drive_index": 0, "slowdown_factor": 0.5}, "slow_drives[0].slowdown_factor"),
    ({"drive_index": 0, "slowdown_factor": 2.0, "start": duration_pb2.Duration(seconds=3)}, "slow_drives[0].start"),
])
def test_bad_episodes_name_their_field(episode: dict[str, object], field: str) -> None:
    req = _request()
    req.slow_drives.add(**episode)
    with pytest.raises(InvalidInputError) as exc:
        simulate.simulate_array(req, builtin_catalog(), LocalExecutor())
    assert [v.field for v in exc.value.violations] == [field]


def test_cli_slow_drive_argument() -> None:
    import argparse
    import math

    from arrayplan_services.cli.simulate_command import slow_drive_arg

    assert slow_drive_arg("3:2.5") == fs_episode(3, 2.5, 0.0, math.inf)
    assert slow_drive_arg("3:4:10:30") == fs_episode(3, 4.0, 10.0, 30.0)
    for bad in ("3", "a:2", "3:2:x", "1:2:3:4:5"):
        with pytest.raises(argparse.ArgumentTypeError, match="INDEX:FACTOR"):
            slow_drive_arg(bad)


def fs_episode(i: int, f: float, start: float, duration: float) -> object:
    from arrayplan_engine.fail_slow import SlowEpisode

    return SlowEpisode(drive_index=i, factor=f, start_s=start, duration_s=duration)
