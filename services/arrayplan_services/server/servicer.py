"""PlannerService: thin methods that validate, call one function, convert."""

from __future__ import annotations

import grpc

from arrayplan.v1 import planner_pb2 as pb
from arrayplan.v1 import planner_pb2_grpc as pb_grpc
from arrayplan_engine.catalog import Catalog
from arrayplan_engine.errors import InvalidInputError, UnknownNameError, Violation

from .. import simulate, telemetry
from ..planner import PlanRunner
from .convert import drive_to_proto


class PlannerServicer(pb_grpc.PlannerServiceServicer):
    def __init__(self, runner: PlanRunner, catalog: Catalog) -> None:
        self.runner = runner
        self.catalog = catalog

    def CreatePlan(self, request: pb.CreatePlanRequest, context: grpc.ServicerContext) -> pb.Plan:
        if not request.HasField("plan"):
            raise InvalidInputError.one("plan", "is required")
        return self.runner.create(request.plan, request.plan_id)

    def GetPlan(self, request: pb.GetPlanRequest, context: grpc.ServicerContext) -> pb.Plan:
        return self.runner.get(request.name)

    def GetPlanTrace(self, request: pb.GetPlanTraceRequest, context: grpc.ServicerContext) -> pb.GetPlanTraceResponse:
        return self.runner.trace(request.name)

    def ListPlans(self, request: pb.ListPlansRequest, context: grpc.ServicerContext) -> pb.ListPlansResponse:
        plans, token = self.runner.list(request.page_size, request.page_token)
        return pb.ListPlansResponse(plans=plans, next_page_token=token)

    def CancelPlan(self, request: pb.CancelPlanRequest, context: grpc.ServicerContext) -> pb.Plan:
        return self.runner.cancel(request.name)

    def WatchPlan(self, request: pb.WatchPlanRequest, context: grpc.ServicerContext):  # type: ignore[no-untyped-def]
        finished = False
        try:
            for event in self.runner.watch(request.name, is_active=context.is_active):
                finished = event.HasField("plan")
                yield event
        finally:
            if request.cancel_on_disconnect and not finished and not context.is_active():
                # The client's deadline passed or it cancelled the call: stop the plan's tasks.
                self.runner.cancel(request.name)

    def SimulateArray(self, request: pb.SimulateArrayRequest, context: grpc.ServicerContext) -> pb.SimulateArrayResponse:
        response = simulate.simulate_array(request, self.catalog, self.runner.executor, is_active=context.is_active)
        response.trace_id = telemetry.current_trace_id()
        return response

    def RunConsistencyTest(self, request: pb.RunConsistencyTestRequest, context: grpc.ServicerContext) -> pb.RunConsistencyTestResponse:
        with telemetry.tracer().start_as_current_span("arrayplan.consistency_test", attributes={"arrayplan.drive_model": request.drive_model}):
            response = simulate.consistency_test(request, self.catalog)
        response.trace_id = telemetry.current_trace_id()
        return response

    def ListDrives(self, request: pb.ListDrivesRequest, context: grpc.ServicerContext) -> pb.ListDrivesResponse:
        if request.page_size < 0 or request.page_size > 1000:
            raise InvalidInputError.one("page_size", f"must be in [0, 1000], got {request.page_size}")
        drives = [d for d in self.catalog if request.kind == pb.DRIVE_KIND_UNSPECIFIED
                  or (d.kind == "ssd") == (request.kind == pb.DRIVE_KIND_SSD)]
        start = 0
        if request.page_token:
            if not request.page_token.isdigit() or int(request.page_token) > len(drives):
                raise InvalidInputError.one("page_token", "is not a token this server issued")
            start = int(request.page_token)
        size = request.page_size or len(drives)
        page = drives[start:start + size]
        token = str(start + size) if start + size < len(drives) else ""
        return pb.ListDrivesResponse(drives=[drive_to_proto(d) for d in page], next_page_token=token)

    def GetDrive(self, request: pb.GetDriveRequest, context: grpc.ServicerContext) -> pb.Drive:
        if not request.name:
            raise InvalidInputError([Violation(field="name", reason="is required (a catalog drive name)")])
        try:
            return drive_to_proto(self.catalog.get(request.name))
        except UnknownNameError as exc:
            raise UnknownNameError("name", request.name, exc.known) from None

    def ForecastArray(self, request: pb.ForecastArrayRequest, context: grpc.ServicerContext) -> pb.ForecastArrayResponse:
        from .forecast import forecast_array

        response = forecast_array(request, self.catalog, create_plan=lambda spec: self.runner.create(pb.Plan(spec=spec)))
        response.trace_id = telemetry.current_trace_id()
        return response
