"""``arrayplan controller`` and ``arrayplan submit``: the Kubernetes side of the CLI.

``submit`` is for pipelines that hold cluster credentials but cannot reach the planner's gRPC port:
it turns a plan file into a CapacityPlan, waits for the controller to answer, and exits like
``arrayplan plan``: 0 a recommendation meets every constraint, 3 none does (or the best headroom is
below ``--fail-if-headroom-below``), 2 bad input (plan file, schema rejection by the API server,
InvalidSpec / SearchSpaceTooLarge), 1 anything else (API unreachable, run failed, ``--timeout``).
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import sys
import time
from pathlib import Path
from typing import Any, cast

from .common import DEFAULT_SERVER, EXIT_BAD_INPUT, EXIT_ERROR, EXIT_OK, EXIT_UNMET, err, load_spec, print_json, server_address


def _kube_flags(p: argparse.ArgumentParser) -> None:
    p.add_argument("--kubeconfig", default=os.environ.get("KUBECONFIG") or None,
                   help="kubeconfig file (default $KUBECONFIG, in-cluster service account, or ~/.kube/config)")
    p.add_argument("--context", help="kubeconfig context")
    p.add_argument("-n", "--namespace", help="namespace (default: the context's, or the service account's)")


# -- controller ---------------------------------------------------------------------------------

def cmd_controller(args: argparse.Namespace) -> int:
    from ..controller import ControllerConfig, run_controller

    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s", force=True)
    logging.getLogger("kubernetes").setLevel(logging.WARNING)
    if not args.renew_deadline < args.lease_duration:
        err("--renew-deadline must be shorter than --lease-duration")
        return EXIT_BAD_INPUT
    cfg = ControllerConfig(server_address=server_address(args),
                           namespace=args.namespace, kubeconfig=args.kubeconfig, context=args.context,
                           lease_name=args.lease_name, lease_namespace=args.lease_namespace,
                           lease_duration_s=args.lease_duration, renew_deadline_s=args.renew_deadline,
                           retry_period_s=args.retry_period, identity=args.identity,
                           status_recommendations=args.status_recommendations)
    try:
        return run_controller(cfg)
    except Exception as exc:
        from kubernetes.config.config_exception import ConfigException

        if isinstance(exc, ConfigException):
            err(f"no Kubernetes configuration: {exc}")
            return EXIT_BAD_INPUT
        raise


# -- submit -------------------------------------------------------------------------------------

def _api_error_exit(exc: Any, plan_file: Path | None = None) -> int:
    """Print an API server rejection (with its field causes); bad input -> 2, else 1."""
    body: dict[str, Any] = {}
    try:
        body = json.loads(exc.body or "{}")
    except (TypeError, ValueError):
        pass
    err(f"the API server refused the CapacityPlan: {exc.status} {body.get('message') or exc.reason}")
    for cause in (body.get("details") or {}).get("causes") or []:
        print(f"  {cause.get('field', '')}: {cause.get('message', '')}", file=sys.stderr)
    if exc.status in (400, 422):
        return EXIT_BAD_INPUT
    if exc.status == 404:
        err("is the CapacityPlan CRD installed? (helm install, or kubectl apply -f helm/arrayplan/crds/)")
    return EXIT_ERROR


def _groups(rec: dict[str, Any]) -> str:
    width = rec.get("groupWidth") or 0
    return f" (groups of {width})" if width and width != rec.get("driveCount") else ""


def _render(obj: dict[str, Any], fmt: str) -> None:
    status = obj.get("status") or {}
    name = obj["metadata"]["name"]
    if fmt == "json":
        # The one JSON path (docs/json.md): the status is the CRD's shape, printed like every other
        # --format json (numbers as numbers, a NaN or infinity as null, not as invalid JSON).
        print_json({"name": name, "namespace": obj["metadata"].get("namespace"), "status": status})
        return
    recs = status.get("recommendations") or []
    if fmt == "markdown":
        print(f"### CapacityPlan `{name}`: {status.get('phase')}"
              f"{' (constraints met)' if status.get('constraintsMet') else ''}\n")
        if status.get("summary"):
            print(f"{status['summary']}\n")
        if recs:
            from ..report.markdown import table as markdown_table

            print("\n".join(markdown_table(
                ("#", "drives", "layout", "usable TB", "IOPS", "latency", "TCO $", "binding (headroom)"),
                ((x["rank"], f"{x['driveCount']} x {x['driveModel']}", f"{x['layout']}{_groups(x)}",
                  f"{x['usableCapacityBytes'] / 1e12:.2f}", f"{x['predictedIops']:,.0f}", x["latencyAtPercentile"],
                  f"{x['totalCostUsd']:,.0f}", f"{x['bindingConstraint']} ({x['headroomFraction']:+.1%})") for x in recs))))
        print(f"\nrun `{status.get('runName')}`, trace `{status.get('traceId')}`")
        return
    from rich.console import Console
    from rich.table import Table

    table = Table(title=f"CapacityPlan {name}: {status.get('phase')}", title_justify="left")
    for c in ("#", "drives", "layout", "usable TB", "IOPS", "latency", "TCO $", "binding", "headroom", "meets"):
        table.add_column(c, justify="left" if c in ("drives", "layout", "binding") else "right")
    for x in recs:
        table.add_row(str(x["rank"]), f"{x['driveCount']} x {x['driveModel']}", x["layout"] + _groups(x), f"{x['usableCapacityBytes'] / 1e12:.2f}",
                      f"{x['predictedIops']:,.0f}", x["latencyAtPercentile"], f"{x['totalCostUsd']:,.0f}", x["bindingConstraint"],
                      f"{x['headroomFraction']:+.1%}", "yes" if x["meetsConstraints"] else "no")
    Console(width=None if sys.stdout.isatty() else 200).print(table)
    if status.get("summary"):
        print(status["summary"])
    print(f"run {status.get('runName')}  trace {status.get('traceId')}")


def _done(obj: dict[str, Any], generation: int) -> bool:
    status = obj.get("status") or {}
    return status.get("observedGeneration") == generation and status.get("phase") in ("Succeeded", "Failed")


def _progress_line(obj: dict[str, Any], last: list[str]) -> None:
    status = obj.get("status") or {}
    p = status.get("progress") or {}
    line = f"{status.get('phase') or 'Pending'}"
    if p.get("candidatesToEvaluate"):
        line += f": {p.get('candidatesEvaluated', 0)}/{p['candidatesToEvaluate']} candidates simulated"
    if line != last[0]:
        last[0] = line
        print(f"progress: {line}", file=sys.stderr, flush=True)


def cmd_submit(args: argparse.Namespace) -> int:
    """``arrayplan submit``: create (or, by name, update) a CapacityPlan, wait for the controller's
    answer and print it. Steps: the object (``_plan_object``), its creation (``_create_plan``),
    the wait (``_wait_for_plan``), the answer and exit code (``_finish_plan``)."""
    from kubernetes import client

    from ..controller import default_namespace, load_kube_config
    from ..controller import resource as r

    spec = load_spec(args)
    if spec is None:
        return EXIT_BAD_INPUT
    body = _plan_object(args, r.plan_spec_to_spec(spec))
    try:
        api_client = load_kube_config(args.kubeconfig, args.context)
    except Exception as exc:  # noqa: BLE001
        err(f"no Kubernetes configuration: {exc}")
        return EXIT_ERROR
    namespace = args.namespace or default_namespace(args.kubeconfig, args.context)
    api = client.CustomObjectsApi(api_client)
    obj = _create_plan(api, namespace, body, args)
    if isinstance(obj, int):
        return obj
    name = obj["metadata"]["name"]
    generation = int(obj["metadata"]["generation"])
    print(f"capacityplan {namespace}/{name} generation {generation} submitted; waiting for the controller", file=sys.stderr)
    final = _wait_for_plan(api, namespace, obj, args)
    if isinstance(final, int):
        return final
    return _finish_plan(api, namespace, name, final, args)


def _plan_object(args: argparse.Namespace, spec: dict[str, Any]) -> dict[str, Any]:
    """The CapacityPlan object: named by ``--name``, else generated from the plan file's name."""
    from ..controller import resource as r

    body: dict[str, Any] = {"apiVersion": r.API_VERSION, "kind": r.KIND,
                            "metadata": {"labels": {"app.kubernetes.io/managed-by": "arrayplan-submit"},
                                         "annotations": {"arrayplan.io/plan-file": Path(args.plan_file).name}},
                            "spec": spec}
    if args.name:
        body["metadata"]["name"] = args.name
    else:
        stem = "".join(c if c.isalnum() else "-" for c in Path(args.plan_file).stem.lower()).strip("-")[:40] or "plan"
        body["metadata"]["generateName"] = f"{stem}-"
    return body


def _create_plan(api: Any, namespace: str, body: dict[str, Any], args: argparse.Namespace) -> dict[str, Any] | int:
    """The created object; with ``--name`` of an existing one, that object with the new spec (a new
    generation; the same spec is a no-op). An exit code when the API server refuses or is unreachable."""
    from kubernetes.client.exceptions import ApiException

    from ..controller import resource as r

    try:
        try:
            return cast(dict[str, Any], api.create_namespaced_custom_object(r.GROUP, r.VERSION, namespace, r.PLURAL, body, field_validation="Strict"))
        except ApiException as exc:
            if exc.status != 409 or not args.name:
                return _api_error_exit(exc)
            current = cast(dict[str, Any], api.get_namespaced_custom_object(r.GROUP, r.VERSION, namespace, r.PLURAL, args.name))
            current["spec"] = body["spec"]
            return cast(dict[str, Any], api.replace_namespaced_custom_object(r.GROUP, r.VERSION, namespace, r.PLURAL, args.name, current,
                                                                             field_validation="Strict"))
    except ApiException as exc:
        return _api_error_exit(exc)
    except Exception as exc:  # noqa: BLE001 - connection refused, TLS, DNS
        err(f"cannot reach the Kubernetes API server: {exc}")
        return EXIT_ERROR


def _wait_for_plan(api: Any, namespace: str, obj: dict[str, Any], args: argparse.Namespace) -> dict[str, Any] | int:
    """Watch the object until the controller has answered its generation (progress on stderr);
    an exit code at ``--timeout``, on deletion or when the API server is lost."""
    from kubernetes import watch
    from kubernetes.client.exceptions import ApiException

    from ..controller import resource as r

    name = obj["metadata"]["name"]
    generation = int(obj["metadata"]["generation"])
    deadline = time.monotonic() + args.timeout
    last = [""]
    rv = obj["metadata"]["resourceVersion"]
    final = obj if _done(obj, generation) else None
    while final is None:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            err(f"capacityplan {name} had no answer within --timeout {args.timeout:g} s (is `arrayplan controller` running?)")
            return EXIT_ERROR
        w = watch.Watch()
        try:
            for event in w.stream(api.list_namespaced_custom_object, r.GROUP, r.VERSION, namespace, r.PLURAL,
                                  field_selector=f"metadata.name={name}", resource_version=rv,
                                  timeout_seconds=max(1, min(60, int(remaining)))):
                cur = event.get("raw_object") or {}
                rv = cur.get("metadata", {}).get("resourceVersion", rv)
                if event["type"] == "DELETED":
                    err(f"capacityplan {name} was deleted before it finished")
                    return EXIT_ERROR
                if not args.quiet:
                    _progress_line(cur, last)
                if _done(cur, generation):
                    final = cur
                    w.stop()
                    break
        except ApiException as exc:
            if exc.status == 410:  # expired: read the object again and watch from there
                cur = cast(dict[str, Any], api.get_namespaced_custom_object(r.GROUP, r.VERSION, namespace, r.PLURAL, name))
                rv = cur["metadata"]["resourceVersion"]
                final = cur if _done(cur, generation) else None
                continue
            return _api_error_exit(exc)
        except Exception as exc:  # noqa: BLE001
            err(f"lost the Kubernetes API server: {exc}")
            return EXIT_ERROR
    return final


def _finish_plan(api: Any, namespace: str, name: str, final: dict[str, Any], args: argparse.Namespace) -> int:
    """Print the answer (``--delete``: then delete the object); the exit code says whether the
    plan failed, met its constraints, and kept ``--fail-if-headroom-below``."""
    from kubernetes.client.exceptions import ApiException

    from ..controller import resource as r

    status = final.get("status") or {}
    failed = next((c for c in status.get("conditions") or [] if c.get("type") == "Failed" and c.get("status") == "True"), None)
    if status.get("phase") == "Failed":
        reason = (failed or {}).get("reason", "")
        err(f"capacityplan {name} failed: {reason}: {(failed or {}).get('message', '')}")
        if args.format == "json":
            _render(final, "json")
        return EXIT_BAD_INPUT if reason in r.BAD_INPUT_REASONS else EXIT_ERROR
    _render(final, args.format)
    if args.delete:
        try:
            api.delete_namespaced_custom_object(r.GROUP, r.VERSION, namespace, r.PLURAL, name)
        except ApiException as exc:
            err(f"could not delete capacityplan {name}: {exc.status} {exc.reason}")
    met = bool(status.get("constraintsMet"))
    recs = status.get("recommendations") or []
    if met and args.fail_if_headroom_below is not None and recs:
        best = recs[0]
        if best["headroomFraction"] * 100 < args.fail_if_headroom_below:
            err(f"best recommendation's headroom {best['headroomFraction']:.1%} on {best['bindingConstraint']} is below "
                 f"--fail-if-headroom-below {args.fail_if_headroom_below}%")
            return EXIT_UNMET
    return EXIT_OK if met else EXIT_UNMET


def register(subparsers: Any) -> None:
    from ..api.planfile import seconds_arg

    p = subparsers.add_parser("controller", help="run the CapacityPlan controller (Kubernetes) against a planner server")
    _kube_flags(p)
    p.add_argument("--server", help=f"planner gRPC address (default $ARRAYPLAN_SERVER or {DEFAULT_SERVER})")
    p.add_argument("--lease-name", default="arrayplan-controller", help="coordination.k8s.io Lease for leader election")
    p.add_argument("--lease-namespace", help="namespace of the Lease (default: --namespace)")
    p.add_argument("--lease-duration", type=int, default=15, help="seconds a leader's lease lasts without renewal (default 15)")
    p.add_argument("--renew-deadline", type=float, default=10.0, help="seconds the leader keeps trying to renew before it stops (default 10)")
    p.add_argument("--retry-period", type=float, default=2.0, help="seconds between lease attempts and renewals (default 2)")
    p.add_argument("--identity", help="leader-election identity (default: $POD_NAME or hostname, plus a random suffix)")
    p.add_argument("--status-recommendations", type=int, default=5, choices=range(1, 11), metavar="N",
                   help="recommendations written into status, 1-10 (default 5)")
    p.set_defaults(func=cmd_controller)

    p = subparsers.add_parser("submit", help="create a CapacityPlan from a plan file and wait for the controller's answer")
    p.add_argument("plan_file", type=Path, help="YAML plan file (see examples/)")
    _kube_flags(p)
    p.add_argument("--name", help="object name (default: the file name plus a random suffix); an existing name gets the new spec")
    p.add_argument("--seed", type=int, help="override the plan file's seed")
    p.add_argument("--timeout", type=seconds_arg, default=3600.0, metavar="SECONDS",
                   help="give up after this many seconds, or a duration: 90s, 30min (exit 1; default 3600)")
    p.add_argument("--format", choices=("table", "json", "markdown"), default="table",
                   help="table for people, json (docs/json.md) or markdown for a pull-request comment (default %(default)s)")
    p.add_argument("--quiet", action="store_true", help="no progress output")
    p.add_argument("--delete", action="store_true", help="delete the CapacityPlan after reading its answer")
    p.add_argument("--fail-if-headroom-below", type=float, metavar="PCT", help="exit 3 when the best headroom is below PCT percent")
    p.set_defaults(func=cmd_submit)

