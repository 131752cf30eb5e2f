"""arrayplan_services.retry: exponential backoff with a cap and jitter, and the loops that use it."""

from __future__ import annotations

import inspect
import random
import threading

import pytest

from arrayplan_services.retry import Backoff, BackoffPolicy


def test_without_jitter_the_delays_double_up_to_the_cap_and_reset_starts_over() -> None:
    b = Backoff(BackoffPolicy(initial_s=1.0, max_s=5.0, jitter_fraction=0.0))
    assert [b.next_delay_s() for _ in range(6)] == [1.0, 2.0, 4.0, 5.0, 5.0, 5.0]
    b.reset()
    assert b.next_delay_s() == 1.0


def test_jittered_delays_stay_between_the_jitter_floor_and_the_capped_ceiling() -> None:
    policy = BackoffPolicy(initial_s=0.5, max_s=30.0, factor=2.0, jitter_fraction=0.25)
    b = Backoff(policy, random.Random(7))
    delays = [b.next_delay_s() for _ in range(200)]
    for n, d in enumerate(delays):
        ceiling = min(0.5 * 2.0**n, 30.0)
        assert 0.75 * ceiling <= d <= ceiling, (n, d)
    assert max(delays) <= 30.0
    # Past the cap the delays still spread over [22.5, 30] s (two processes do not retry in step).
    tail = delays[20:]
    assert min(tail) < 24.0 and max(tail) > 28.5


def test_two_loops_that_start_together_do_not_retry_in_step() -> None:
    policy = BackoffPolicy(initial_s=1.0, max_s=30.0)
    a, b = Backoff(policy, random.Random(1)), Backoff(policy, random.Random(2))
    pairs = [(a.next_delay_s(), b.next_delay_s()) for _ in range(10)]
    assert all(x != y for x, y in pairs)


def test_a_seeded_rng_gives_the_same_delays() -> None:
    policy = BackoffPolicy(initial_s=1.0, max_s=8.0)
    runs = [[b.next_delay_s() for _ in range(5)] for b in (Backoff(policy, random.Random(3)), Backoff(policy, random.Random(3)))]
    assert runs[0] == runs[1]


def test_many_attempts_do_not_overflow() -> None:
    policy = BackoffPolicy(initial_s=1.0, max_s=30.0, factor=10.0, jitter_fraction=0.0)
    assert policy.ceiling_s(10_000) == 30.0


@pytest.mark.parametrize(("kwargs", "message"), [
    ({"initial_s": 0.0}, "BackoffPolicy.initial_s: must be > 0, got 0.0"),
    ({"initial_s": 2.0, "max_s": 1.0}, "BackoffPolicy.max_s: must be >= initial_s (2), got 1.0"),
    ({"factor": 0.5}, "BackoffPolicy.factor: must be >= 1, got 0.5"),
    ({"jitter_fraction": 1.0}, "BackoffPolicy.jitter_fraction: must be in [0, 1), got 1.0"),
    ({"max_s": float("inf")}, "BackoffPolicy.max_s: must be >= initial_s (1), got inf"),
])
def test_bad_policies_name_the_field_and_the_allowed_range(kwargs: dict[str, float], message: str) -> None:
    with pytest.raises(ValueError) as exc:
        BackoffPolicy(**kwargs)
    assert str(exc.value) == message


def test_wait_returns_at_once_when_stopped() -> None:
    stop = threading.Event()
    stop.set()
    b = Backoff(BackoffPolicy(initial_s=3600.0, max_s=3600.0))
    assert b.wait(stop) is True  # a stopped loop does not sit out an hour's backoff
    assert b.attempt == 1


def test_both_retry_loops_use_the_helper() -> None:
    from arrayplan_services.controller import reconciler
    from arrayplan_services.fanout import executor

    for fn in (executor.RayExecutor._reconnect, reconciler.Controller._watch_loop):
        src = inspect.getsource(fn)
        assert "Backoff(" in src and "next_delay_s()" in src and "* 2" not in src, fn.__qualname__
    assert executor.RAY_RECONNECT_BACKOFF.max_s == executor.RAY_RECONNECT_BACKOFF_MAX_S == 5.0
    assert reconciler.WATCH_BACKOFF.max_s == 30.0
