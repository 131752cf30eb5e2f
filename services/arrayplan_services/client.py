"""A Python client for the arrayplan server (docs/python.md).

    from arrayplan_services.client import PlannerClient

    with PlannerClient("127.0.0.1:50051") as client:
        plan = client.plan("examples/oltp.yaml", progress=lambda p: print(p.candidates_evaluated))
        best = plan.result.recommendations[0]

Every method returns the API's own messages (``arrayplan.v1``); ``to_json`` turns any of them into
the CLI's JSON convention (numbers as numbers, durations in seconds, every field present). A plan
is given as a ``PlanSpec``, a plan-file path, or a mapping shaped like a plan file (units as a
person writes them: ``{"constraints": {"usable_capacity_bytes": "8 TB"}}``), read by the same
loader as the CLI (``load_plan_file``, ``plan_spec_from_mapping``).

Transport: the CLI's recipe (``connection.open_channel``): plaintext by default (127.0.0.1);
``tls_ca`` (a PEM path or bytes) makes the channel TLS with that root, and ``token`` adds
``authorization: Bearer TOKEN`` to every call (on a plaintext channel that only suits a loopback
address). Like the CLI, ``token`` and ``tls_ca`` default to ``$ARRAYPLAN_TOKEN`` and
``$ARRAYPLAN_TLS_CA``. Failures raise ``ClientError`` with the gRPC code and the server's field violations;
a plan that ends FAILED or CANCELLED raises ``PlanFailedError`` holding the plan.
"""

from __future__ import annotations

import builtins
import os
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any

import grpc

from arrayplan.v1 import planner_pb2 as pb
from arrayplan.v1 import planner_pb2_grpc as pb_grpc

from .api.planfile import PlanFileError, load_plan_file, plan_spec_from_text
from .connection import field_violations, open_channel
from .jsonout import to_json

__all__ = [
    "DEFAULT_ADDRESS",
    "ClientError",
    "PlanFailedError",
    "PlanFileError",
    "PlannerClient",
    "load_plan_file",
    "plan_spec_from_mapping",
    "plan_spec_from_text",
    "to_json",
]

DEFAULT_ADDRESS = "127.0.0.1:50051"
SpecLike = pb.PlanSpec | str | os.PathLike[str] | Mapping[str, Any]


class ClientError(Exception):
    """A failed call: ``code`` (a ``grpc.StatusCode``), ``message`` and ``violations`` (field,
    reason) from the server's BadRequest details."""

    def __init__(self, code: grpc.StatusCode, message: str, violations: list[tuple[str, str]]) -> None:
        self.code = code
        self.message = message
        self.violations = violations
        lines = [f"{code.name}: {message}"] + [f"  {f}: {r}" for f, r in violations]
        super().__init__("\n".join(lines))

    @classmethod
    def from_rpc(cls, exc: grpc.RpcError) -> ClientError:
        return cls(exc.code(), exc.details() or "", field_violations(exc))


class PlanFailedError(Exception):
    """The plan ended FAILED or CANCELLED; ``plan`` holds it (``error_message``, ``error_reason``)."""

    def __init__(self, plan: pb.Plan) -> None:
        self.plan = plan
        state = pb.Plan.State.Name(plan.state).removeprefix("STATE_").lower()
        super().__init__(f"{plan.name} {state}: {plan.error_reason} {plan.error_message}".rstrip())


def plan_spec_from_mapping(data: Mapping[str, Any], base_dir: Path | None = None) -> tuple[pb.PlanSpec, list[str]]:
    """A plan-file-shaped mapping (units as strings allowed) -> ``PlanSpec`` and import warnings.
    Raises ``PlanFileError`` naming each bad field."""
    import yaml

    return plan_spec_from_text(yaml.safe_dump(dict(data), sort_keys=False), "<mapping>", base_dir)


class PlannerClient:
    """The PlannerService over one channel; use as a context manager or call ``close()``."""

    def __init__(self, address: str | None = None, *, tls_ca: str | os.PathLike[str] | bytes | None = None,
                 token: str | None = None, timeout_s: float = 60.0) -> None:
        self.address = address or os.environ.get("ARRAYPLAN_SERVER", DEFAULT_ADDRESS)
        self.timeout_s = timeout_s
        self._channel = open_channel(self.address, tls_ca=tls_ca, token=token)
        self._stub = pb_grpc.PlannerServiceStub(self._channel)

    # -- lifecycle --------------------------------------------------------------------------------
    def close(self) -> None:
        self._channel.close()

    def __enter__(self) -> PlannerClient:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()

    def _call(self, method: str, request: Any, timeout_s: float | None = None) -> Any:
        try:
            return getattr(self._stub, method)(request, timeout=timeout_s or self.timeout_s)
        except grpc.RpcError as exc:
            raise ClientError.from_rpc(exc) from None

    # -- plans ------------------------------------------------------------------------------------
    @staticmethod
    def spec(spec_or_path: SpecLike) -> pb.PlanSpec:
        """A ``PlanSpec`` from a spec, a plan-file path or a plan-file-shaped mapping."""
        if isinstance(spec_or_path, pb.PlanSpec):
            return spec_or_path
        if isinstance(spec_or_path, Mapping):
            return plan_spec_from_mapping(spec_or_path)[0]
        return load_plan_file(Path(spec_or_path))[0]

    def create(self, spec_or_path: SpecLike, *, plan_id: str = "") -> pb.Plan:
        """Create a plan (it starts at once); returns it with its name and trace id."""
        request = pb.CreatePlanRequest(plan=pb.Plan(spec=self.spec(spec_or_path)), plan_id=plan_id)
        return self._call("CreatePlan", request)  # type: ignore[no-any-return]

    def watch(self, name: str, *, cancel_on_disconnect: bool = False, timeout_s: float | None = None) -> Iterator[pb.PlanProgress | pb.Plan]:
        """Progress (``PlanProgress``) while candidates are simulated, then the plan in its
        terminal state (``Plan``), last. The stream's oneof is unwrapped."""
        request = pb.WatchPlanRequest(name=name, cancel_on_disconnect=cancel_on_disconnect)
        try:
            for event in self._stub.WatchPlan(request, timeout=timeout_s):
                yield event.plan if event.HasField("plan") else event.progress
        except grpc.RpcError as exc:
            raise ClientError.from_rpc(exc) from None

    def plan(self, spec_or_path: SpecLike, *, progress: Callable[[pb.PlanProgress], None] | None = None, plan_id: str = "",
             timeout_s: float = 3600.0) -> pb.Plan:
        """Create a plan, wait for it and return the finished plan (``state`` SUCCEEDED; check
        ``result.constraints_met``). ``progress`` is called with each ``PlanProgress``. The plan is
        cancelled if the wait ends early (timeout, KeyboardInterrupt). Raises ``PlanFailedError``
        when it fails or is cancelled, ``ClientError`` for bad input or an unreachable server."""
        created = self.create(spec_or_path, plan_id=plan_id)
        final: pb.Plan | None = None
        for event in self.watch(created.name, cancel_on_disconnect=True, timeout_s=timeout_s):
            if isinstance(event, pb.Plan):
                final = event
            elif progress is not None:
                progress(event)
        if final is None:  # the stream ended without the terminal plan: ask once more
            final = self.get(created.name)
        if final.state != pb.Plan.STATE_SUCCEEDED:
            raise PlanFailedError(final)
        return final

    def get(self, name: str) -> pb.Plan:
        """A stored plan by name (``plans/ID``), with its result once finished."""
        return self._call("GetPlan", pb.GetPlanRequest(name=name))  # type: ignore[no-any-return]

    def list(self, *, page_size: int = 0) -> Iterator[pb.Plan]:
        """Every stored plan, newest first, page by page (without result bodies; ``get`` one)."""
        token = ""
        while True:
            resp = self._call("ListPlans", pb.ListPlansRequest(page_size=page_size, page_token=token))
            yield from resp.plans
            token = resp.next_page_token
            if not token:
                return

    def cancel(self, name: str) -> pb.Plan:
        """Cancel a running plan (its simulation tasks too)."""
        return self._call("CancelPlan", pb.CancelPlanRequest(name=name))  # type: ignore[no-any-return]

    def trace(self, name: str) -> pb.GetPlanTraceResponse:
        """The stored spans of a plan's run (``telemetry.otlp_json.to_otlp_json`` exports them)."""
        return self._call("GetPlanTrace", pb.GetPlanTraceRequest(name=name))  # type: ignore[no-any-return]

    # -- one array, the catalog -------------------------------------------------------------------
    def simulate(self, request: pb.SimulateArrayRequest | None = None, *, timeout_s: float = 600.0,
                 **fields: Any) -> pb.SimulateArrayResponse:
        """SimulateArray: a request, or its fields as keywords (``drive_model=..., drive_count=12,
        layout="raid6", workload=pb.Workload(...)``)."""
        req = request if request is not None else pb.SimulateArrayRequest(**fields)
        return self._call("SimulateArray", req, timeout_s)  # type: ignore[no-any-return]

    def drives(self, kind: str = "all") -> builtins.list[pb.Drive]:
        """The catalog: ``kind`` all, ssd or hdd."""
        kinds = {"all": pb.DRIVE_KIND_UNSPECIFIED, "ssd": pb.DRIVE_KIND_SSD, "hdd": pb.DRIVE_KIND_HDD}
        if kind not in kinds:
            raise ValueError(f"kind must be one of {', '.join(kinds)}, got {kind!r}")
        return list(self._call("ListDrives", pb.ListDrivesRequest(kind=kinds[kind])).drives)

    def drive(self, name: str) -> pb.Drive:
        """One catalog drive with the provenance of each value."""
        return self._call("GetDrive", pb.GetDriveRequest(name=name))  # type: ignore[no-any-return]
