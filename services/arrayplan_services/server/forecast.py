"""ForecastArray on the server: the forecast (``api/forecast_convert.py``: request -> engine ->
response) as an executor task, and the re-plan created through the plan admission (the
servicer's method stays thin)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from arrayplan.v1 import planner_pb2 as pb
from arrayplan_engine.catalog import Catalog, Drive
from arrayplan_engine.errors import InvalidInputError

from ..api.forecast_convert import forecast_response

__all__ = ["forecast_array", "forecast_task"]


def forecast_task(shared: tuple[Drive, ...], request_bytes: bytes,
                  carrier: dict[str, str]) -> tuple[tuple[bytes, bytes | None], list[dict[str, Any]]]:
    """ForecastArray's work as an executor task (a worker process or a Ray task): the serialized
    request in, the serialized response and re-plan spec (None without ``create_replan``) out.
    The server creates the re-plan itself, through the plan admission."""
    del carrier
    request = pb.ForecastArrayRequest.FromString(request_bytes)
    response, plan_spec = forecast_response(request, Catalog(shared))
    return (response.SerializeToString(), plan_spec.SerializeToString() if plan_spec is not None else None), []


def forecast_array(request: pb.ForecastArrayRequest, catalog: Catalog,
                   create_plan: Callable[[pb.PlanSpec], pb.Plan] | None = None) -> pb.ForecastArrayResponse:
    """Validate, forecast, convert; with ``create_replan`` the re-plan is created by ``create_plan``."""
    out, plan_spec = forecast_response(request, catalog)
    if plan_spec is not None:
        if create_plan is None:
            raise InvalidInputError.one("create_replan", "this server cannot create plans")
        out.replan_plan_name = create_plan(plan_spec).name
    return out


