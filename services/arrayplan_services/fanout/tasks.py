"""Task functions the executors run. Engine functions are wrapped here, at the edge: the engine
itself is never decorated with ``ray.remote``."""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any

from arrayplan_engine import array, candidates, evaluation, hdd_comparison, plan_request, ssd
from arrayplan_engine.catalog import Catalog, Drive

from .. import telemetry


def evaluate_candidates(shared: tuple[plan_request.PlanRequest, tuple[Drive, ...]], batch: Sequence[candidates.Candidate],
                        carrier: dict[str, str]) -> tuple[list[evaluation.Evaluation], list[dict[str, Any]]]:
    """Evaluate a batch of candidates under the plan's trace; returns the evaluations and, when the
    worker keeps spans in memory, the finished span records for the driver to store."""
    collector = telemetry.configure_worker()
    request, drives = shared
    catalog = Catalog(drives)
    with telemetry.consumer_span(
        "arrayplan.evaluate_batch", carrier,
        **{"arrayplan.candidate_count": len(batch), "arrayplan.first_candidate_index": batch[0].index if batch else -1,
           "process.pid": os.getpid()},
    ) as span:
        trace_id = format(span.get_span_context().trace_id, "032x")
        out = []
        tracer = telemetry.tracer()
        for cand in batch:
            with tracer.start_as_current_span("arrayplan.simulate_candidate", attributes={
                "arrayplan.candidate_index": cand.index, "arrayplan.drive_model": cand.drive_model,
                "arrayplan.layout": cand.layout, "arrayplan.array.drive_count": cand.drive_count,
            }):
                out.append(evaluation.evaluate(request, cand, catalog, seed=evaluation.candidate_seed(request, cand)))
    spans = collector.drain(trace_id) if collector is not None else []
    return out, spans


def simulate_window(shared: None, spec: array.ArraySpec, carrier: dict[str, str]) -> tuple[array.ArrayResult, list[dict[str, Any]]]:
    """One time window of an array simulation (SimulateArray's fan-out)."""
    del shared
    collector = telemetry.configure_worker()
    with telemetry.consumer_span("arrayplan.simulate_window", carrier, **{
        "arrayplan.window_start_s": spec.window_start_s, "arrayplan.duration_s": spec.duration_s,
        "arrayplan.array.drive_count": spec.drive_count, "process.pid": os.getpid()}) as span:
        trace_id = format(span.get_span_context().trace_id, "032x")
        result = array.simulate(spec)
    return result, (collector.drain(trace_id) if collector is not None else [])


def consistency_run(shared: None, args: tuple[Drive, float, float, int],
                    carrier: dict[str, str]) -> tuple[ssd.ConsistencyResult, list[dict[str, Any]]]:
    """RunConsistencyTest's one simulation (drive, duration_s, extra spare, seed) as a task, so a
    caller that goes away cancels it like SimulateArray's windows."""
    del shared
    drive, duration_s, op, seed = args
    collector = telemetry.configure_worker()
    with telemetry.consumer_span("arrayplan.consistency_run", carrier, **{
        "arrayplan.drive_model": drive.name, "arrayplan.duration_s": duration_s, "process.pid": os.getpid()}) as span:
        trace_id = format(span.get_span_context().trace_id, "032x")
        result = ssd.consistency_experiment(drive, duration_s=duration_s, op=op, seed=seed)
    return result, (collector.drain(trace_id) if collector is not None else [])


def size_hdd(shared: tuple[plan_request.PlanRequest, tuple[Drive, ...], evaluation.Evaluation], disk: str,
             carrier: dict[str, str]) -> tuple[hdd_comparison.HddEquivalence | None, list[dict[str, Any]]]:
    """One disk of a plan's hard-disk comparison stage sized for the winner
    (``hdd_comparison.size_hdd``), where the evaluations run."""
    collector = telemetry.configure_worker()
    request, drives, best = shared
    catalog = Catalog(drives)
    with telemetry.consumer_span("arrayplan.size_hdd", carrier, **{
            "arrayplan.drive_model": disk, "arrayplan.candidate_index": best.candidate.index, "process.pid": os.getpid()}) as span:
        trace_id = format(span.get_span_context().trace_id, "032x")
        result = hdd_comparison.size_hdd(request, best, catalog, catalog.get(disk))
    return result, (collector.drain(trace_id) if collector is not None else [])
