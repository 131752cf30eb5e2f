"""``arrayplan serve``: run the gRPC planning service (docs/service.md).

Every flag is checked before the server starts: a bad one exits 2 naming the flag and its
allowed range, a store that cannot be opened exits 2 with one line (the file or URL without its
password, and what to do).
"""

from __future__ import annotations

import argparse
import logging
import os
from pathlib import Path
from typing import Any

from .common import DEFAULT_DATA_DIR, EXIT_BAD_INPUT, EXIT_ERROR, EXIT_OK, err, local_catalog


def cmd_serve(args: argparse.Namespace) -> int:
    from arrayplan_engine.catalog import builtin_catalog

    from ..redaction import install_log_filter, register_secrets, url_secrets
    from ..server.app import TlsConfig, build_server, serve_forever
    from ..server.auth import Authenticator, TokenFileError
    from ..server.leases import MAX_LEASE_S, MIN_LEASE_S
    from ..store import StoreConnectError, StoreDamagedError, StoreUrlError, check_data_dir

    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    register_secrets(url_secrets(args.store_url or ""))  # no message or log line carries the store's password
    install_log_filter()
    if args.max_running_plans < 1 or args.max_queued_plans < 0:
        err("--max-running-plans must be >= 1 and --max-queued-plans >= 0")
        return EXIT_BAD_INPUT
    for flag, value, low, high in (("--max-running-heavy", args.max_running_heavy, 1, 1024),
                                   ("--max-queued-heavy", args.max_queued_heavy, 0, 10_000),
                                   ("--max-heavy-per-caller", args.max_heavy_per_caller, 1, 1024),
                                   ("--lease-s", args.lease_s, MIN_LEASE_S, MAX_LEASE_S)):
        if not low <= value <= high:  # NaN fails too
            err(f"{flag} must be in [{low:g}, {high:g}], got {value:g}")
            return EXIT_BAD_INPUT
    store_url = (args.store_url or "").strip() or None
    if bool(args.tls_cert) != bool(args.tls_key) or (args.tls_client_ca and not args.tls_cert):
        err("--tls-cert and --tls-key go together (and --tls-client-ca needs both)")
        return EXIT_BAD_INPUT
    problem = check_data_dir(Path(args.data_dir))
    if problem is not None:
        err(f"the data dir cannot hold the run store: {problem}")
        return EXIT_BAD_INPUT
    catalog = local_catalog(args)  # a malformed catalog file stops the server here, naming file, line and field
    if catalog is None:
        return EXIT_BAD_INPUT
    if args.catalog:
        logging.getLogger("arrayplan").info("catalog: %d drives (%s added from %s)", len(catalog),
                                            len(catalog) - len(builtin_catalog()), args.catalog)
    tls = None
    if args.tls_cert:
        tls = TlsConfig(cert_file=args.tls_cert, key_file=args.tls_key, client_ca_file=args.tls_client_ca)
        for flag, f in (("--tls-cert", args.tls_cert), ("--tls-key", args.tls_key), ("--tls-client-ca", args.tls_client_ca)):
            if f is not None and not Path(f).is_file():
                err(f"{flag}: {f} is not a readable file")
                return EXIT_BAD_INPUT
    if args.auth_token_file:
        try:
            Authenticator(args.auth_token_file, allow_open_mode=args.allow_open_token_file)
        except TokenFileError as exc:
            err(f"--auth-token-file: {exc}")
            return EXIT_BAD_INPUT
    try:
        server = build_server(host=args.host, port=args.port, data_dir=args.data_dir, executor_kind=args.executor,
                              ray_address=args.ray_address, num_cpus=args.num_cpus, candidate_limit=args.candidate_limit,
                              max_running_plans=args.max_running_plans, max_queued_plans=args.max_queued_plans,
                              tls=tls, auth_token_file=args.auth_token_file, reflection_enabled=not args.no_reflection,
                              health_port=args.health_port, catalog=catalog, shared_reads=args.shared_reads,
                              max_running_heavy=args.max_running_heavy, max_queued_heavy=args.max_queued_heavy,
                              max_heavy_per_caller=args.max_heavy_per_caller, store_url=store_url, lease_s=args.lease_s,
                              allow_open_token_file=args.allow_open_token_file)
    except (StoreDamagedError, StoreUrlError, StoreConnectError) as exc:  # one line: the file or URL (no password), what to do
        err(str(exc))
        return EXIT_BAD_INPUT
    except OSError as exc:
        err(str(exc).splitlines()[0] if str(exc) else type(exc).__name__)
        return EXIT_ERROR
    except Exception as exc:  # noqa: BLE001 - one line, not a traceback (TLS files, the store)
        from ..store import unavailable_condition

        condition = unavailable_condition(exc)
        err(f"cannot start: {'the run store is ' + condition if condition else type(exc).__name__ + ': ' + str(exc).splitlines()[0]}")
        return EXIT_BAD_INPUT if condition else EXIT_ERROR
    from .. import numba_cache

    cold = numba_cache.cold_kernels()
    if cold:
        logging.getLogger("arrayplan").warning(
            "numba kernels not compiled yet in %s (%s): the first plan compiles them (about a minute); "
            "`make setup` or `python -m arrayplan_services.numba_cache --warm examples` does it ahead",
            numba_cache.default_cache_dir(), ", ".join(cold))
    where = f"{args.host}:{server.port}"
    msg = (f"arrayplan serving on {where} (run store {server.store.location}, "
           f"executor {args.executor}{' at ' + args.ray_address if args.ray_address else ''})\n"
           f"  try: arrayplan plan examples/oltp.yaml --server {where}\n"
           f"       bin/grpcurl {'-cacert CA.pem' if tls else '-plaintext'} {where} grpc.health.v1.Health/Check")
    serve_forever(server, msg)
    return EXIT_OK


def register(sub: Any) -> None:
    """Add ``serve``."""
    p = sub.add_parser("serve", help="run the gRPC planning service")
    p.add_argument("--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1)")
    p.add_argument("--port", type=int, default=50051, help="port (default 50051; 0 = any free port)")
    p.add_argument("--data-dir", type=Path, default=DEFAULT_DATA_DIR, help="run store directory (default ./data)")
    p.add_argument("--ray-address", default=os.environ.get("RAY_ADDRESS"), help="existing Ray cluster (default: start a local one)")
    p.add_argument("--executor", choices=("ray", "local"), default="ray", help="where simulations run (default ray)")
    p.add_argument("--num-cpus", type=int, default=None, help="CPUs for a local Ray (default: all)")
    p.add_argument("--candidate-limit", type=int, default=20_000, help="largest candidate space a plan may have")
    p.add_argument("--catalog", type=Path, metavar="DIR",
                   help="add every drive catalog file (*.toml, docs/catalog.md) in DIR to the built-in drives")
    p.add_argument("--max-running-plans", type=int, default=4, help="plans that run at once; more wait PENDING in a queue (default 4)")
    p.add_argument("--max-queued-plans", type=int, default=64,
                   help="plans that may wait; beyond, CreatePlan answers RESOURCE_EXHAUSTED with a RetryInfo (default 64)")
    p.add_argument("--tls-cert", type=Path, help="serve TLS with this PEM certificate (chain) ...")
    p.add_argument("--tls-key", type=Path, help="... and this PEM private key")
    p.add_argument("--tls-client-ca", type=Path, help="mutual TLS: require client certificates signed by this PEM CA")
    p.add_argument("--auth-token-file", type=Path,
                   help="require bearer tokens: lines 'NAME TOKEN [admin]' (reloaded on SIGHUP; health stays open); a regular "
                        "file others cannot read or its group write (mode 600 or 640), each token under one name")
    p.add_argument("--allow-open-token-file", action="store_true",
                   help="accept a token file others may read or its group may write (refused by default, as ssh refuses such keys)")
    p.add_argument("--shared-reads", action="store_true",
                   help="with tokens: every token may read every plan, trace and spec (default: their creator and admin tokens only)")
    p.add_argument("--no-reflection", action="store_true", help="do not serve gRPC server reflection")
    p.add_argument("--health-port", type=int, help="also serve the health service alone, plaintext, on this port (for probes "
                                                     "that cannot speak TLS, e.g. the kubelet's)")
    p.add_argument("--store-url", default=os.environ.get("ARRAYPLAN_STORE_URL") or None, metavar="URL",
                   help="keep the run store in PostgreSQL (postgresql://USER:PASSWORD@HOST:PORT/DB; default $ARRAYPLAN_STORE_URL), "
                        "shared by several replicas; without it, SQLite in --data-dir")
    p.add_argument("--lease-s", type=float, default=30.0,
                   help="with --store-url: how long a replica's hold on a plan lasts without renewal; a dead replica's plans are "
                        "resumed by another after this (1-3600, default 30)")
    p.add_argument("--max-running-heavy", type=int, default=4,
                   help="SimulateArray/RunConsistencyTest/ForecastArray calls that run at once (1-1024, default 4)")
    p.add_argument("--max-queued-heavy", type=int, default=16,
                   help="heavy calls that may wait; beyond, RESOURCE_EXHAUSTED with a RetryInfo (0-10000, default 16)")
    p.add_argument("--max-heavy-per-caller", type=int, default=4,
                   help="heavy calls one caller may have running or waiting (1-1024, default 4)")
    p.set_defaults(func=cmd_serve)
