"""Why the controller keeps its own Lease election (controller/lease.py's docstring): the facts about
the installed ``kubernetes.leaderelection`` that decided it, checked against the installed client.
A client upgrade that changes one of them fails here, and the choice can be made again."""

from __future__ import annotations

import inspect

import pytest
from kubernetes.leaderelection import electionconfig, leaderelection
from kubernetes.leaderelection.resourcelock import leaselock

from arrayplan_services.controller.lease import LeaderElector


def test_its_config_ends_the_process_on_the_periods_the_cluster_tests_use() -> None:
    """tests/cluster/clusterlib.py runs the controller at --lease-duration 2 --renew-deadline 1.5
    --retry-period 0.3; the library's Config calls sys.exit on a retry period under 1 s."""
    with pytest.raises(SystemExit, match="retry_period"):
        electionconfig.Config(object(), 2, 1.5, 0.3, lambda: None, None)
    LeaderElector(object(), "ns", "lease", "me", lease_duration_s=2, renew_deadline_s=1.5, retry_period_s=0.3)  # ours takes them


def test_its_loops_take_no_stop_and_it_has_no_release() -> None:
    assert list(inspect.signature(leaderelection.LeaderElection.acquire).parameters) == ["self"]
    assert list(inspect.signature(leaderelection.LeaderElection.renew_loop).parameters) == ["self", "leading_failed"]
    assert not hasattr(leaderelection.LeaderElection, "release")
    # Ours: acquire waits on the caller's stop event, and a clean stop releases the Lease.
    assert "stop" in inspect.signature(LeaderElector.acquire).parameters
    assert callable(LeaderElector.release)


def test_its_lock_takes_no_api_client_and_writes_only_the_record() -> None:
    assert list(inspect.signature(leaselock.LeaseLock.__init__).parameters) == ["self", "name", "namespace", "identity"]
    spec_writer = inspect.getsource(leaselock.LeaseLock.get_lease_spec)
    assert "annotations" not in inspect.getsource(leaselock.LeaseLock.update) and "lease_transitions" not in spec_writer


def test_it_times_leases_by_the_wall_clock() -> None:
    source = inspect.getsource(leaderelection)
    assert "time.time()" in source and "monotonic" not in source
