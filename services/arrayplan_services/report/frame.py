"""The report's frame: what it shows, computed once from a finished ``pb.Plan`` (the question,
the ranked arrays, the top ones' latency CDFs) for the figures and the templates to draw.

Every figure but the latency CDFs is read from the plan. The CDFs need more than it holds: a
``Recommendation`` carries three latency figures only (p50, the requested percentile, the worst
second). When the plan's spec has a workload, the top arrays' worst years (and no other year or
array) are simulated once each through the planner's own factory
(``evaluation.candidate_year_case``: same array spec, service models, seed and simulated time, so
the very run the plan's figures come from), as tasks on an ``Executor`` (the seam the planner and
SimulateArray use: in-process or Ray) running ``fanout.tasks.simulate_window``, the function
SimulateArray runs, within the caller's wall-clock budget. Otherwise (or if the simulation fails
or runs out of time) the CDF is drawn through the plan's percentiles and the caption says so.
"""

from __future__ import annotations

import math
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from statistics import NormalDist
from typing import Any

import numpy as np

from arrayplan.v1 import planner_pb2 as pb

from ..fanout import Cancelled, Executor, LocalExecutor, TaskCall
from . import DEFAULT_SIMULATION_TIMEOUT_S
from .columns import layout_name, seconds_of, usd

TOP_N = 3


def short(r: pb.Recommendation) -> str:
    """'RAID6 16 × S3500 480GB' (the display name without the vendor prefix)."""
    name = (r.drive_display_name or r.drive_model).split(" (", 1)[0]
    for prefix in ("Intel SSD DC ", "Intel SSD ", "Intel "):
        if name.startswith(prefix):
            name = name[len(prefix):]
            break
    return f"{layout_name(r)} {r.drive_count} × {name}"


def key(r: pb.Recommendation) -> tuple[Any, ...]:
    return (r.drive_model, r.drive_count, r.layout, r.group_width, round(r.over_provisioning_fraction, 6))


def check(r: pb.Recommendation, constraint: str) -> pb.ConstraintCheck | None:
    for k in r.checks:
        if k.constraint == constraint:
            return k
    return None


@dataclass(frozen=True, slots=True, kw_only=True)
class Frame:
    """What every section needs to know about the question, read once from the plan."""

    percentile: float
    latency_target_s: float
    endurance_limit_fraction: float
    service_life_years: int
    required_iops: float
    # The final year's needs (growth included), from the engine's checks; 0 when not checked.
    final_required_iops: float = 0.0
    final_capacity_bytes: float = 0.0
    recommendations: tuple[pb.Recommendation, ...]
    top: tuple[pb.Recommendation, ...]

    @property
    def pct_label(self) -> str:
        return f"p{self.percentile:g}"


def frame_of(plan: pb.Plan) -> Frame:
    recs = tuple(plan.result.recommendations)
    c = plan.spec.constraints
    percentile = c.latency_percentile or 99.0
    target = seconds_of(c.latency_target) if c.HasField("latency_target") else 0.0
    limit = 1.0 - c.endurance_margin_fraction
    required_iops = c.min_iops or plan.spec.workload.target_iops
    for r in recs:  # the checks carry what the engine actually applied
        k = check(r, "latency")
        if k is not None and not target:
            target = k.required
        k = check(r, "endurance")
        if k is not None:
            limit = k.required
        k = check(r, "iops")
        if k is not None and not required_iops:
            required_iops = k.required
    # The checks are made in each array's worst year: the last one for growing needs.
    final_iops = max((k.required for r in recs if (k := check(r, "iops")) is not None), default=0.0)
    final_capacity = max((k.required for r in recs if (k := check(r, "usable_capacity")) is not None), default=0.0)
    years = plan.spec.service_life_years or (len(recs[0].years) if recs and recs[0].years else 5)
    return Frame(percentile=percentile, latency_target_s=target, endurance_limit_fraction=limit,
                 service_life_years=years, required_iops=required_iops, final_required_iops=final_iops,
                 final_capacity_bytes=final_capacity, recommendations=recs, top=recs[:TOP_N])


def _grown(now: float, final: float, years: int, text: str) -> str:
    """' (X in year N)' when the final year's need differs from the first year's (growth)."""
    return f" ({text} in year {years})" if final > 0 and abs(final - now) > 0.005 * now else ""



@dataclass(slots=True)
class Cdf:
    latency_s: np.ndarray
    fraction: np.ndarray
    simulated: bool
    ios: int = 0
    at_percentile_s: float = math.nan
    saturated: bool = False


@dataclass(slots=True)
class CdfSet:
    curves: dict[int, Cdf] = field(default_factory=dict)  # by rank
    note: str = ""
    simulated: bool = False
    elapsed_s: float = 0.0
    simulated_s: float = 0.0  # the longest simulated window among the curves
    simulation_count: int = 0  # array simulations started (one per top array, its worst year)



def worst_year(r: pb.Recommendation) -> int:
    """The year whose latency is worst (the one the plan's latency figure comes from)."""
    return max(r.years, key=lambda y: seconds_of(y.latency_at_percentile)).year if r.years else 1


def simulate_cdfs(plan: pb.Plan, frame: Frame, *, executor: Executor | None = None,
                  timeout_s: float = DEFAULT_SIMULATION_TIMEOUT_S,
                  progress: Callable[[str], None] | None = None) -> CdfSet:
    """The top arrays' latency CDFs from the array simulation of each one's worst year.

    The plan carries every figure the report shows but the CDFs (a recommendation holds p50, the
    requested percentile and the worst second, year by year), so this is the report's only array
    simulation: one task per top array (``len(frame.top)``, at most ``TOP_N``), its worst year only
    (``worst_year``), not split into windows (the CDF is the plan's run, bit for bit), run once on
    ``executor`` (in this process by default) with ``fanout.tasks.simulate_window``, SimulateArray's
    task function; each task is capped at ``simulation.MAX_SIMULATED_HOST_IOS`` host IOs by the
    planner's factory. ``progress`` gets a line before and one per finished task. ``timeout_s``
    bounds the wall time: past it the outstanding tasks are cancelled (Ray stops their workers;
    in-process, the running kernel finishes in the background and its result is dropped) and the
    CDFs fall back to the plan's percentiles, with the reason in ``note``.
    """
    import time

    from arrayplan_engine import array, candidates, evaluation

    from .. import telemetry
    from ..api.convert import plan_request_from_proto
    from ..fanout.tasks import simulate_window

    out = CdfSet()
    if not plan.spec.HasField("workload"):
        out.note = "the plan carries no workload to simulate"
        return out
    calls: list[TaskCall] = []
    ranks: dict[int, int] = {}  # id(call) -> rank
    try:
        req = plan_request_from_proto(plan.spec, "plan.spec")
        for r in frame.top:
            if r.HasField("cluster"):  # its latency is composed per drive (cluster_plan), not one array's window
                continue
            year = worst_year(r)
            cand = candidates.find_candidate(req, drive_model=r.drive_model, layout=r.layout, group_width=r.group_width,
                                            drive_count=r.drive_count, over_provisioning_fraction=r.over_provisioning_fraction)
            call = TaskCall(batch=evaluation.candidate_year_case(req, cand, year).spec, weight=1)
            calls.append(call)
            ranks[id(call)] = r.rank
    except Exception as exc:  # noqa: BLE001 - a report never fails on one figure
        out.note = f"the plan's arrays could not be rebuilt for simulation ({exc})"
        return out
    results: dict[int, Any] = {}
    errors: list[BaseException] = []
    cancel = threading.Event()
    ex = executor if executor is not None else LocalExecutor()

    say = progress or (lambda _line: None)

    def on_result(call: TaskCall, value: tuple[Any, list[dict[str, Any]]]) -> None:
        results[ranks[id(call)]] = (call.batch, value[0])
        say(f"latency CDF {len(results)}/{len(calls)} simulated (#{ranks[id(call)]}, {time.monotonic() - t0:.1f} s)")

    def run() -> None:
        try:
            ex.run(simulate_window, None, calls, telemetry.inject_carrier(), on_result=on_result, cancel=cancel)
        except Cancelled:
            pass
        except BaseException as exc:  # noqa: BLE001 - reported in the caption
            errors.append(exc)

    out.simulation_count = len(calls)
    say(f"simulating the worst year of the top {len(calls)} arrays once each for the latency CDFs "
        f"(the plan carries their percentiles, not their distributions; at most {timeout_s:.0f} s)")
    t0 = time.monotonic()
    worker = threading.Thread(target=run, name="arrayplan-report-simulation", daemon=True)
    worker.start()
    worker.join(timeout_s)
    if worker.is_alive():
        cancel.set()
        out.note = f"the array simulation did not finish within {timeout_s:g} s (a cold numba cache compiles first)"
        return out
    out.elapsed_s = time.monotonic() - t0
    if errors:
        out.note = f"the array simulation failed ({str(errors[0])[:200]})"
        return out
    edges = array.latency_bucket_edges_s()
    for rank, (spec, res) in sorted(results.items()):
        # CDF at the bucket edges, from the lower edge of the first occupied bucket (fraction 0).
        h = res.latency_histograms[0]
        n = int(h.sum())
        if not n:
            continue
        nz = np.nonzero(h)[0]
        lo, hi = int(nz[0]), int(nz[-1]) + 1
        out.simulated_s = max(out.simulated_s, float(spec.duration_s))
        out.curves[rank] = Cdf(latency_s=edges[lo:hi + 1], fraction=np.concatenate(([0.0], np.cumsum(h[lo:hi]) / n)),
                               simulated=True, ios=n, at_percentile_s=res.latency_percentile_s(frame.percentile / 100.0),
                               saturated=bool(res.saturated))
    out.simulated = bool(out.curves)
    if not out.simulated:
        out.note = "the array simulation recorded no IOs"
    return out


def interpolated_cdf(r: pb.Recommendation, percentile: float) -> Cdf | None:
    """A log-normal CDF through the plan's p50 and its latency at the requested percentile."""
    p50, pq = seconds_of(r.latency_p50), seconds_of(r.latency_at_percentile)
    q = percentile / 100.0
    if not (p50 > 0 and pq > p50 and 0.5 < q < 1.0):
        return None
    nd = NormalDist()
    sigma = (math.log(pq) - math.log(p50)) / nd.inv_cdf(q)
    z = np.linspace(nd.inv_cdf(0.01), nd.inv_cdf(0.99999), 200)
    return Cdf(latency_s=np.exp(math.log(p50) + sigma * z), fraction=np.array([nd.cdf(float(v)) for v in z]),
                simulated=False)



def perf_models(plan: pb.Plan) -> list[str]:
    return [m for m in plan.result.models if m.split(":", 1)[0] not in ("endurance", "reliability", "cost")]



def verdict(plan: pb.Plan, frame: Frame) -> tuple[str, str]:
    """(css class, sentence)."""
    if plan.state != pb.Plan.STATE_SUCCEEDED:
        state = pb.Plan.State.Name(plan.state).removeprefix("STATE_").lower()
        why = f": {plan.error_message}" if plan.error_message else ""
        return "bad", f"The plan {state}{why}"
    met = [r for r in frame.recommendations if r.meets_constraints]
    if not frame.recommendations:
        return "bad", "There are no recommendations: no candidate array was evaluated (see the summary for why)."
    if plan.result.constraints_met and met:
        w = frame.recommendations[0]
        return "ok", (f"{len(met)} recommended arrays meet every constraint. Best: {short(w)}, "
                      f"{usd(w.total_cost_usd)} over {frame.service_life_years} years.")
    return "bad", ("No array meets every constraint. The table shows the nearest misses (in red); "
                   "each explanation names what it misses.")


def question(plan: pb.Plan, frame: Frame) -> list[str]:
    """The question as short phrases (from the spec when the plan carries it)."""
    out = []
    w = plan.spec.workload
    if plan.spec.HasField("workload"):
        name = w.display_name or w.preset or "custom workload"
        parts = [name]
        if w.HasField("read_fraction"):
            parts.append(f"{w.read_fraction:.0%} reads")
        if w.io_size_mix:
            parts.append("IO " + "/".join(f"{s.io_bytes // 1024} KiB" for s in w.io_size_mix))
        if w.HasField("daily_write_bytes") and w.daily_write_bytes:
            parts.append(f"{w.daily_write_bytes / 1e12:.3g} TB written/day")
        if w.HasField("growth_fraction_per_year") and w.growth_fraction_per_year:
            parts.append(f"{w.growth_fraction_per_year:.0%}/year growth")
        out.append("workload: " + ", ".join(parts))
    c = plan.spec.constraints
    if c.usable_capacity_bytes:
        fill = c.max_fill_fraction if c.HasField("max_fill_fraction") else 1.0
        held = f" usable, its data at most {fill:.0%} full" if fill < 1 else ""
        out.append(f"usable capacity ≥ {c.usable_capacity_bytes / 1e12:.3g} TB"
                   + _grown(c.usable_capacity_bytes, frame.final_capacity_bytes, frame.service_life_years,
                            f"{frame.final_capacity_bytes / 1e12:.3g} TB{held}"))
    if frame.required_iops:
        out.append(f"IOPS ≥ {frame.required_iops:,.0f}" + _grown(frame.required_iops, frame.final_required_iops,
                                                                  frame.service_life_years, f"{frame.final_required_iops:,.0f}"))
    if frame.latency_target_s:
        out.append(f"{frame.pct_label} ≤ {frame.latency_target_s * 1e3:.3g} ms"
                   + (" with fail-slow drives at field rates (The Tail at Store)" if c.fail_slow_field_rates else ""))
    if c.HasField("worst_second_latency_target"):
        out.append(f"worst second ≤ {seconds_of(c.worst_second_latency_target) * 1e3:.3g} ms")
    out.append(f"endurance used ≤ {frame.endurance_limit_fraction:.0%}")
    for value, text in ((c.max_purchase_cost_usd, f"budget ≤ {usd(c.max_purchase_cost_usd)}"),
                        (c.max_drive_count, f"≤ {c.max_drive_count} drive slots"),
                        (c.max_power_w, f"power ≤ {c.max_power_w:,.0f} W"),
                        (c.max_data_loss_probability, f"P(data loss) ≤ {c.max_data_loss_probability:.2g}")):
        if value:
            out.append(text)
    if plan.spec.coordinated_reads:
        out.append("coordinated reads on parity layouts (reads around a member busy on its die; not RAID 0 or mirrors), "
                   "each tail also without them")
    out.append(f"service life {frame.service_life_years} years")
    return out


def hdd_sentence(plan: pb.Plan) -> str:
    if not plan.result.HasField("hdd_equivalence"):
        return ""
    h = plan.result.hdd_equivalence
    what = h.explanation or f"{h.drive_count} × {h.hdd_model} in {h.layout.upper()} would carry the same workload."
    out = f"{what} They cost {usd(h.purchase_cost_usd)} to buy and draw {h.power_w:,.0f} W"
    if plan.result.recommendations:
        w = plan.result.recommendations[0]
        out += (f", against {usd(w.purchase_cost_usd)} and {w.power_w:,.0f} W for #1 "
                f"({w.drive_count} × {w.drive_display_name or w.drive_model})")
    return out + "."


def plan_id(plan: pb.Plan) -> str:
    return plan.name.rsplit("/", 1)[-1] if plan.name else "unnamed plan"


def title(plan: pb.Plan) -> str:
    wl = plan.spec.workload.display_name or plan.spec.workload.preset
    return f"Capacity plan {plan_id(plan)}" + (f" — {wl}" if wl else "")


def meta(plan: pb.Plan) -> list[tuple[str, str]]:
    out = [("stored run", plan.name or "–"), ("trace id", plan.trace_id or "–"),
           ("state", pb.Plan.State.Name(plan.state).removeprefix("STATE_").lower())]
    if plan.HasField("end_time"):
        out.append(("finished", plan.end_time.ToDatetime().strftime("%Y-%m-%d %H:%M UTC")))
    if plan.spec.seed:
        out.append(("seed", str(plan.spec.seed)))
    return out


