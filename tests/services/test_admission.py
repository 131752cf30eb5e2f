"""The one admission policy plans and heavy calls share (``arrayplan_services.admission``): slots,
a FIFO queue handed each freed slot in turn, a per-caller share, a resumed run never refused, the
retry estimate between 1 s and 10 minutes."""

from __future__ import annotations

import pytest

from arrayplan_services.admission import MAX_RETRY_S, MIN_RETRY_S, Admission, AdmissionFullError


def test_slots_then_fifo_then_refused() -> None:
    a: Admission[str] = Admission(max_running=2, max_queued=2, mean_run_s=30.0)
    assert a.admit("p1") and a.admit("p2")  # two slots
    assert not a.admit("p3") and not a.admit("p4")  # queued, in order
    assert (a.running, a.queued, a.position("p3"), a.position("p4"), a.position("p1")) == (2, 2, 1, 2, 0)
    with pytest.raises(AdmissionFullError) as full:
        a.admit("p5")
    # 30 s mean x (1 + 2 queued) / 2 slots = 45 s
    assert (full.value.running, full.value.queued, full.value.retry_after_s, full.value.caller_limit) == (2, 2, 45.0, None)
    assert not a.admit("resumed", force=True)  # a resumed run is queued beyond the limit
    assert a.queued == 3
    # a finished run's slot goes to the first in line; running stays 2
    a.finish(elapsed_s=10.0)
    assert a.hand_over() == "p3" and a.running == 2
    assert a.mean_run_s == pytest.approx(0.8 * 30.0 + 0.2 * 10.0)
    assert a.leave("p4") and not a.leave("p4")  # left the queue before it started
    assert a.clear_queue() == ["resumed"] and a.queued == 0
    a.finish()
    assert a.hand_over() is None and a.running == 1  # nobody waits: the slot is given back


def test_per_caller_share_and_retry_bounds() -> None:
    a: Admission[object] = Admission(max_running=1, max_queued=10, max_per_caller=2, mean_run_s=0.01)
    t1, t2, t3 = object(), object(), object()
    assert a.admit(t1, "alice") and not a.admit(t2, "alice")
    with pytest.raises(AdmissionFullError) as share:
        a.admit(t3, "alice")
    assert share.value.caller_limit == 2
    assert share.value.retry_after_s == MIN_RETRY_S  # never below 1 s
    assert not a.admit(t3, "bob")  # another caller still queues
    assert a.leave(t2)  # alice's waiting call leaves: her share has room again
    assert not a.admit(object(), "alice")
    slow: Admission[str] = Admission(max_running=1, max_queued=0, mean_run_s=1e6)
    slow.admit("x")
    with pytest.raises(AdmissionFullError) as full:
        slow.admit("y")
    assert full.value.retry_after_s == MAX_RETRY_S  # never above 10 minutes
