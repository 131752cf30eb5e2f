"""The plan option ``constraints.fail_slow_field_rates``: each candidate-year is simulated again
with a member 2x slower, and the latency check reads the percentile over time at The Tail at
Store's field rates (FAST'16: a RAID group holds a >2x slower drive 2.2 % (SSD) of the time);
the answer carries the figure with and without."""

from __future__ import annotations

import math
from dataclasses import replace

from arrayplan_engine import evaluation, plan_request, recommend
from arrayplan_engine.workload import Workload


def _request(*, fail_slow: bool, percentile: float = 99.9, target_s: float = 0.0) -> plan_request.PlanRequest:
    # reads only: no NAND program waits, so the tail at p99.9 is the slow member's (2 x a read)
    wl = Workload(read_fraction=1.0, io_size_mix=((8192, 1.0),), queue_depth=32, target_iops=20_000, daily_write_bytes=1e11)
    return plan_request.PlanRequest(
        workload=wl, service_life_years=2, seed=3,
        # 2 TB in RAID 6 of 8 x 400 GB (2.4 TB): 83 % full, above the default fill target
        constraints=plan_request.Constraints(usable_capacity_bytes=2e12, latency_percentile=percentile, latency_target_s=target_s,
                                   fail_slow_field_rates=fail_slow, max_fill_fraction=1.0),
        candidate_space=plan_request.CandidateSpace(drive_models=("intel-dc-s3700-400gb",), layouts=("raid6",), group_widths=(8,),
                                          min_drive_count=8, max_drive_count=8))


def _only(req: plan_request.PlanRequest) -> evaluation.Evaluation:
    out = recommend.plan(req)
    assert len(out.recommendations) == 1
    return out.recommendations[0].evaluation


def test_without_the_option_nothing_changes() -> None:
    e = _only(_request(fail_slow=False))
    assert math.isnan(e.latency_at_percentile_fail_slow_s.value)
    assert all(math.isnan(y.latency_at_percentile_fail_slow_s.value) for y in e.years)


def test_the_answer_carries_the_tail_with_and_without() -> None:
    plain = _only(_request(fail_slow=False))
    slow = _only(_request(fail_slow=True))
    # the same simulations without the slow member: the same figures
    assert slow.latency_at_percentile_s == plain.latency_at_percentile_s
    # one RAID 6 group of 8: a member 2x slower 2.2 % of the time takes 1/8 of the reads then,
    # 0.27 % of all reads: the p99.9 over time is a read on the slow member, ~2x the array's own
    lat, lat_slow = slow.latency_at_percentile_s.value, slow.latency_at_percentile_fail_slow_s.value
    assert 1.6 * lat <= lat_slow <= 2.4 * lat
    assert lat_slow == max(y.latency_at_percentile_fail_slow_s.value for y in slow.years)


def test_the_latency_check_reads_the_figure_with_fail_slow_drives() -> None:
    """A target between the tail without and with fail-slow drives: met without the option, not
    met with it."""
    slow = _only(_request(fail_slow=True))
    lo, hi = slow.latency_at_percentile_s.value, slow.latency_at_percentile_fail_slow_s.value
    assert hi > 1.5 * lo
    target = 0.5 * (lo + hi)
    without = _only(replace(_request(fail_slow=False), constraints=replace(_request(fail_slow=False).constraints, latency_target_s=target)))
    with_ = _only(replace(_request(fail_slow=True), constraints=replace(_request(fail_slow=True).constraints, latency_target_s=target)))
    lat_without = next(k for k in without.checks if k.constraint == "latency")
    lat_with = next(k for k in with_.checks if k.constraint == "latency")
    assert lat_without.predicted.value == lo and lat_without.met
    assert lat_with.predicted.value == hi and not lat_with.met


def test_the_figure_with_fail_slow_drives_has_an_interval_and_the_check_reads_its_high_end() -> None:
    """Each replication is simulated again with the slow member and mixed with its own run: the
    pooled mixture is the point, sectioning over the replications its 95 % interval (as the
    percentile without fail-slow drives). With 30 % writes the tail spreads over the latency
    buckets (the reads-only request above puts every replication's p99.9 in one bucket: a zero
    width); model run, seed 3: 1.59 ms, interval 1.57-1.62 ms, asserted wider than 1 %. A target
    between the point and the high end: the point headroom is positive, the check fails at the
    pessimistic end and says it is at 95 %."""
    base = _request(fail_slow=True)
    req = replace(base, workload=replace(base.workload, read_fraction=0.7))
    slow = _only(req)
    v, lo, hi = slow.latency_at_percentile_fail_slow_s.value, slow.latency_at_percentile_fail_slow_s.low, slow.latency_at_percentile_fail_slow_s.high
    assert math.isfinite(lo) and math.isfinite(hi) and lo <= v <= hi and hi > 1.01 * lo
    assert all(y.latency_at_percentile_fail_slow_s.low <= y.latency_at_percentile_fail_slow_s.value
               <= y.latency_at_percentile_fail_slow_s.high for y in slow.years)
    # the interval is the year whose high end is highest
    assert hi == max(y.latency_at_percentile_fail_slow_s.high for y in slow.years)
    target = 0.5 * (v + hi)
    tight = replace(req, constraints=replace(req.constraints, latency_target_s=target))
    e = evaluation.evaluate(tight, slow.candidate)
    k = next(k for k in e.checks if k.constraint == "latency")
    assert k.confidence_level == 0.95 and k.predicted.high == hi
    assert k.headroom_fraction > 0 and k.pessimistic_headroom_fraction < 0 and not k.met
