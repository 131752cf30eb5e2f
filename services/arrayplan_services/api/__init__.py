"""The API layer: requests (protobuf messages, plan files, array files, workload specs, telemetry
files) become engine objects here, and engine results become protobuf messages.

* ``convert``: proto <-> engine (``plan_request_from_proto``, ``outcome_to_proto``, drives,
  workloads, durations).
* ``planfile``: the one loader of plan files (YAML/JSON, units as a person writes them) into a
  ``PlanSpec``; the CLI, the Python client, the controller's CapacityPlan spec and the chart read
  through it.
* ``workloads``: workload specs (preset, fio job, block trace, inline fields) -> ``Workload``.
* ``arrayfile`` and ``smart_io``: array-in-service files, drive telemetry and capacity samples for
  forecasts and re-plans.

The layer sits on the engine and below everything else (``.importlinter`` checks it): the server,
the CLI, the controller, the report and the planner import from here; nothing here imports them,
Ray, gRPC or OpenTelemetry.
"""
