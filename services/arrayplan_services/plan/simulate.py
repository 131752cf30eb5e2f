"""SimulateArray and RunConsistencyTest: the simulations of one explicit array (or drive) run on
the executor between the request read and the answer written by ``api/simulate_convert.py``."""

from __future__ import annotations

import dataclasses
import threading
from collections.abc import Callable, Sequence
from typing import Any

from opentelemetry import trace

from arrayplan.v1 import planner_pb2 as pb
from arrayplan_engine import array, cost, endurance, fail_slow, simulation, ssd
from arrayplan_engine.catalog import Catalog, Drive
from arrayplan_engine.errors import InvalidInputError
from arrayplan_engine.layout import Layout, usable_capacity_bytes
from arrayplan_engine.workload import Workload

from .. import telemetry
from ..api.simulate_convert import (
    DEFAULT_REPLICATIONS,
    DEFAULT_SERVICE_LIFE_YEARS,
    consistency_response,
    consistency_violations,
    duration_s,
    simulate_response,
    slow_episodes,
    spec_violations,
    validate_consistency_request,
    validate_simulate_request,
)
from ..fanout import Cancelled, Executor, TaskCall
from ..fanout.tasks import consistency_run, simulate_window

__all__ = ["consistency_test", "simulate_array", "simulated_endurance_years"]

# endurance_years when the simulated workload writes nothing (the proto carries no infinity)
NEVER_WEARS_OUT_YEARS = 1e9


def _replications(results: Sequence[array.ArrayResult], specs: Sequence[array.ArraySpec]) -> simulation.Replications:
    """The windows' results merged per replication (their seeds), in replication order."""
    by_seed: dict[int, list[array.ArrayResult]] = {}
    for res in results:
        by_seed.setdefault(res.seed, []).append(res)
    return simulation.Replications(runs=tuple(array.merge_results(sorted(by_seed[s.seed], key=lambda x: x.window_start_s))
                                              for s in specs))


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class Question:
    """A SimulateArray request read (``question_of``): the array and the simulation's spec."""

    drive: Drive
    layout: Layout
    workload: Workload
    fill_fraction: float  # of the members' user capacity holding data
    discards: str  # the members' free space kept: none or passed (auto resolved for the layout)
    spec: array.ArraySpec  # replication 0's, every window


def question_of(request: pb.SimulateArrayRequest, catalog: Catalog, *, reorder_window: int = 1,
                warmup_s: float | None = None) -> Question:
    """The request validated and its array spec built with the planner's factory
    (``simulation.array_spec``: same drive, layout, workload, fill and seed -> the same
    simulation), the members in their used state (every LBA mapped without discards: the array as
    initialised)."""
    drive, layout, workload = validate_simulate_request(request, catalog)
    fill = request.fill_fraction if request.HasField("fill_fraction") else 1.0
    discards = endurance.effective_discards(layout, request.discards or "auto")
    mapped = 1.0 if discards == "none" and drive.kind == "ssd" else fill
    with telemetry.tracer().start_as_current_span("arrayplan.service_model", attributes={"arrayplan.drive_model": drive.name}):
        try:
            spec = simulation.array_spec(drive, layout, request.drive_count, workload, fill_fraction=mapped, duration_s=duration_s(request),
                                       seed=request.seed, failed_drives=request.failed_drive_count,
                                       rebuild_rate_bytes_per_s=request.rebuild_rate_bytes_per_second,
                                       reorder_window=reorder_window, **({"warmup_s": warmup_s} if warmup_s is not None else {}))
        except InvalidInputError as exc:
            raise spec_violations(exc) from None
    if request.coordinated_reads:
        spec = dataclasses.replace(spec, coordinated_reads=True)
    return Question(drive=drive, layout=layout, workload=workload, fill_fraction=fill, discards=discards, spec=spec)


def simulate_array(request: pb.SimulateArrayRequest, catalog: Catalog, executor: Executor, *,
                   is_active: Callable[[], bool] = lambda: True, windows: int | None = None, reorder_window: int = 1,
                   warmup_s: float | None = None,
                   on_replications: Callable[[simulation.Replications], None] | None = None) -> pb.SimulateArrayResponse:
    """The array simulation of one explicit array in independent replications
    (``simulation.replication_spec``: replication 0 is the request's seed, so one replication is
    the single run of old, bit for bit), each split into time windows that run as tasks on the
    executor (Ray) and merge exactly; a client that goes away cancels the tasks. The figures pool
    the replications with 95 % intervals (``simulation.Replications``). With coordinated reads,
    the same replications run again without them (the same seeds: common random numbers).

    Options the wire format does not carry, for ``arrayplan simulate --local``: ``windows`` (time
    windows per replication; default one per executor worker, at most one per simulated second),
    ``reorder_window`` (disks' SATF queue), ``warmup_s`` (the unrecorded warm-up; default
    ``simulation.array_spec``'s) and ``on_replications`` (called with the replications, for the
    figures drawn from the runs)."""
    q = question_of(request, catalog, reorder_window=reorder_window, warmup_s=warmup_s)
    drive, layout, workload, spec = q.drive, q.layout, q.workload, q.spec
    replications = request.replications or DEFAULT_REPLICATIONS
    try:
        workers = windows or max(1, min(executor.worker_count, int(duration_s(request))))
        rep_specs = [simulation.replication_spec(spec, r) for r in range(replications)]
        parts = [p for s in rep_specs for p in array.split_simulation(s, workers)]
    except InvalidInputError as exc:
        raise spec_violations(exc) from None
    episodes = slow_episodes(request, spec.simulated_drive_count, spec.duration_s)
    if episodes:
        parts = [p for s in rep_specs for p in fail_slow.slow_specs(s, episodes)]
    # without the policy: the same windows of the same replications
    plain_parts = [dataclasses.replace(p, coordinated_reads=False) for p in parts] if request.coordinated_reads else []
    slow_parts: list[array.ArraySpec] = []
    if request.fail_slow_field_rates:
        # the same run with the first member of group 0 at the field study's 2x threshold
        slow_parts = array.split_simulation(fail_slow.with_slow_members(spec, {0: fail_slow.FIELD_SLOWDOWN}), workers)
    tracer = telemetry.tracer()
    with tracer.start_as_current_span("arrayplan.simulate_fanout", kind=trace.SpanKind.PRODUCER,
                                      attributes={"arrayplan.task_count": len(parts), "arrayplan.array.drive_count": request.drive_count}):
        reps = _replications(_run_cancellable(executor, simulate_window, parts, is_active), rep_specs)
        plain = _replications(_run_cancellable(executor, simulate_window, plain_parts, is_active), rep_specs) if plain_parts else None
        slow_results: list[array.ArrayResult] = _run_cancellable(executor, simulate_window, slow_parts, is_active) if slow_parts else []
    if on_replications is not None:
        on_replications(reps)
    usable = usable_capacity_bytes(layout, request.drive_count, drive.capacity_bytes)
    years = simulated_endurance_years(drive, layout, request.drive_count, workload, achieved_iops=reps.achieved_iops().value,
                                      fill_fraction=q.fill_fraction, usable_capacity_bytes=usable,
                                      service_life_years=request.service_life_years or DEFAULT_SERVICE_LIFE_YEARS,
                                      discards=q.discards)
    slow = array.merge_results(sorted(slow_results, key=lambda x: x.window_start_s)) if slow_results else None
    return simulate_response(drive=drive, layout=layout, request=request, reps=reps, plain=plain, slow=slow,
                             replications=replications, usable_capacity_bytes=usable, endurance_years=years,
                             # the drives and their bays (a bay is never free: docs/clusters.md, "A drive bay's cost and power")
                             purchase_cost_usd=cost.purchase_cost_usd(drive.price_usd or 0.0, request.drive_count,
                                                                      usd_per_bay=cost.ENCLOSURE_USD_PER_BAY))


def simulated_endurance_years(drive: Drive, layout: Layout, drive_count: int, workload: Workload, *, achieved_iops: float,
                              fill_fraction: float, usable_capacity_bytes: float, service_life_years: int,
                              discards: str = "passed") -> float:
    """Years until the members' rated endurance is used up, by the planner's wear model
    (``endurance.service_life_wear``): host bytes per member x the layout's write factor x the
    FTL's write amplification at the array's fill and the workload's random share and skew,
    against the rating (TBW at the rating workload's write amplification, or raw NAND x P/E), with
    the workload's growth over ``service_life_years``. A closed loop (no target rate, no daily
    volume) writes at the simulated rate. 0 for a drive without a write-endurance limit (HDDs, or
    no rating); ``NEVER_WEARS_OUT_YEARS`` when nothing is written."""
    if drive.kind != "ssd" or not (drive.endurance_bytes_written or (drive.raw_nand_bytes and drive.pe_cycles)):
        return 0.0
    if workload.daily_write_bytes <= 0 and workload.target_iops <= 0:
        workload = dataclasses.replace(workload, target_iops=achieved_iops)
    wear = endurance.service_life_wear(drive, layout, drive_count, workload, years=service_life_years,
                                       data_bytes_year1=fill_fraction * usable_capacity_bytes,
                                       usable_capacity_bytes=usable_capacity_bytes, discards=discards)
    return min(wear.endurance_years, NEVER_WEARS_OUT_YEARS)


def _run_cancellable(executor: Executor, fn: Callable[..., Any], batches: Sequence[Any], is_active: Callable[[], bool]) -> list[Any]:
    """Run ``fn`` over ``batches`` on the executor under the current span (its results in
    completion order, the spans' records dropped); a client that goes away (``is_active`` false)
    cancels the tasks, and the current span then says ``arrayplan.cancelled``."""
    results: list[Any] = []
    cancel = threading.Event()

    def on_result(call: TaskCall, value: tuple[Any, list[dict[str, Any]]]) -> None:
        del call
        results.append(value[0])

    watcher = threading.Thread(target=_watch_client, args=(is_active, cancel), daemon=True)
    watcher.start()
    try:
        executor.run(fn, None, [TaskCall(batch=b, weight=1) for b in batches], telemetry.inject_carrier(), on_result=on_result,
                     cancel=cancel)
    except Cancelled:
        trace.get_current_span().set_attribute("arrayplan.cancelled", True)
        raise
    finally:
        cancel.set()
    return results


def _watch_client(is_active: Callable[[], bool], cancel: threading.Event) -> None:
    """Cancel the simulation's tasks when the client's deadline passes or it goes away."""
    while not cancel.wait(0.2):
        if not is_active():
            cancel.set()


def consistency_test(request: pb.RunConsistencyTestRequest, catalog: Catalog, executor: Executor, *,
                     is_active: Callable[[], bool] = lambda: True) -> pb.RunConsistencyTestResponse:
    """RunConsistencyTest: the engine's consistency experiment as one task on the executor,
    converted; a client that goes away cancels it."""
    drive, duration_s = validate_consistency_request(request, catalog)
    try:
        r: ssd.ConsistencyResult = _run_cancellable(executor, consistency_run,
                                                    [(drive, duration_s, request.over_provisioning_fraction, request.seed)], is_active)[0]
    except InvalidInputError as exc:
        raise consistency_violations(exc) from None
    return consistency_response(r)
