"""A gRPC health probe (grpc.health.v1.Health/Check) for the image's HEALTHCHECK and `helm test`.

Exit 0 when the server answers SERVING, 1 otherwise (like grpc-health-probe, without another binary
in the image: grpcio and grpcio-health-checking are already there).
    python grpc_health_probe.py --addr 127.0.0.1:50051 [--service arrayplan.v1.PlannerService] [--timeout 5] [--tls-ca CA.pem]
"""

from __future__ import annotations

import argparse
import sys


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--addr", default="127.0.0.1:50051", help="host:port of the gRPC server")
    parser.add_argument("--service", default="", help="service name to check (default: the server as a whole)")
    parser.add_argument("--timeout", type=float, default=5.0, help="seconds before giving up")
    parser.add_argument("--tls-ca", help="connect with TLS, trusting this CA's PEM file (a server started with --tls-cert)")
    args = parser.parse_args(argv)

    import grpc
    from grpc_health.v1 import health_pb2, health_pb2_grpc

    try:
        if args.tls_ca:
            with open(args.tls_ca, "rb") as f:
                channel = grpc.secure_channel(args.addr, grpc.ssl_channel_credentials(root_certificates=f.read()))
        else:
            channel = grpc.insecure_channel(args.addr)
        with channel:
            resp = health_pb2_grpc.HealthStub(channel).Check(health_pb2.HealthCheckRequest(service=args.service),
                                                             timeout=args.timeout)
    except grpc.RpcError as exc:
        print(f"{args.addr}: {exc.code().name}: {exc.details()}", file=sys.stderr)
        return 1
    status = health_pb2.HealthCheckResponse.ServingStatus.Name(resp.status)
    print(f"{args.addr}: {status}")
    return 0 if resp.status == health_pb2.HealthCheckResponse.SERVING else 1


if __name__ == "__main__":
    sys.exit(main())
