"""``arrayplan servers`` (services/arrayplan_services/cli/servers_command.py): through ``register`` on a
fresh argparse parser, and once through the CLI's entry point."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from arrayplan_engine import cluster, cluster_durability
from arrayplan_engine.units import MB, TB
from arrayplan_services.cli import servers_command
from arrayplan_services.cli.common import CommandParser


def _run(argv: list[str]) -> int:
    parser = CommandParser(prog="arrayplan")
    sub = parser.add_subparsers(dest="command", required=True)
    servers_command.register(sub)
    args = parser.parse_args(["servers", *argv])  # no verb: the default verb, pool
    return int(args.func(args))


BASE = ["--servers", "16", "--drives-per-server", "12", "--drive-bytes", "20TB", "--drive-mbps", "250", "--afr", "0.015",
        "--host-loss-rate", "0.01"]


def test_ec_pool_json_matches_the_engine(capsys: pytest.CaptureFixture[str]) -> None:
    assert _run([*BASE, "--scheme", "ec:8+3"]) == 0
    out = json.loads(capsys.readouterr().out)
    pl = cluster.place(cluster.ClusterTopology(server_count=16, drives_per_server=12,
                                               server=cluster.ServerSpec(bay_count=12)), cluster.Pool(scheme=cluster.Scheme.ec(8, 3)))
    rd = cluster_durability.rebuild_time(pl, drive_capacity_bytes=20 * TB, fill_fraction=0.7,
                                         limits=cluster_durability.RecoveryLimits(drive_bytes_per_s=250 * MB))
    assert out["drive_rebuild_s"] == pytest.approx(rd.time_s)
    assert out["domain_failures_tolerated"] == 3 and out["can_reprotect_after_domain_failure"] is True
    assert out["fill_ceiling_fraction"] == pytest.approx(0.84375)
    assert 0 < out["service_life_loss_probability"] < 1e-6


def test_host_outages_give_read_and_write_unavailability(capsys: pytest.CaptureFixture[str]) -> None:
    # size 3 / min_size 2 on 3 hosts, 4 one-hour outages a host-year: y = 4 h / 8760 h;
    # reads stop with all 3 out (y^3), writes with 2 (3 y^2) (one PG set: 3 drives / width 3 -> 64 PGs
    # all on the same 3 hosts, so the set count does not matter).
    argv = ["--servers", "3", "--drives-per-server", "1", "--drive-bytes", "20TB", "--drive-mbps", "250", "--afr", "0.015",
            "--host-outages-per-year", "4", "--host-outage-minutes", "60"]
    assert _run(argv) == 0
    out = json.loads(capsys.readouterr().out)
    y = 4 / 8760
    assert out["read_unavailability_fraction"] == pytest.approx(y**3, rel=1e-9)
    assert out["write_unavailability_fraction"] == pytest.approx(3 * y**2, rel=1e-9)


def test_minio_sets_text(capsys: pytest.CaptureFixture[str]) -> None:
    assert _run([*BASE, "--minio", "--format", "text"]) == 0
    text = capsys.readouterr().out
    assert "minio_set_drive_count" in text and " 16" in text
    assert "replacement drive" in text


def test_impossible_placement_names_field_and_flag(capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["--servers", "5", "--drives-per-server", "12", "--drive-bytes", "20TB", "--drive-mbps", "250",
            "--afr", "0.015", "--scheme", "ec:10+4"]
    assert _run(argv) == 2
    err = capsys.readouterr().err
    assert "topology.server_count: must be >= 14" in err and "(flag --servers)" in err
    assert _run([*argv[:-1], "ec:ten"]) == 2
    assert "scheme: must be 'rep:R'" in capsys.readouterr().err


def test_entry_point_lists_the_command() -> None:
    out = subprocess.run([sys.executable, "-m", "arrayplan_services.cli.main", "servers", *BASE, "--scheme", "rep:3"],
                         capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout)["scheme"].startswith("replicated x3")


def test_servers_search_ranks_the_catalog(capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["--usable", "100TB", "--bays", "12", "--server-cost", "6000", "--drives",
            "hdd-7k2-nearline-8tb,wd-ultrastar-hc570-22tb", "--pools", "rep:3,ec:4+2", "--top", "3"]
    assert _run_search(argv) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["feasible"] >= 1 and len(out["candidates"]) <= 3
    best = out["candidates"][0]
    assert best["drive"] == "wd-ultrastar-hc570-22tb" and best["usable_bytes"] >= 100e12
    costs = [c["cost_usd"] for c in out["candidates"]]
    assert costs == sorted(costs)
    assert _run_search(["--usable", "100TB", "--drives", "nope"]) == 2
    assert "drives: unknown 'nope'" in capsys.readouterr().err
    assert _run_search(["--usable", "100PB", "--max-servers", "3", "--drives", "hdd-7k2-nearline-8tb"]) == 3


def _run_search(argv: list[str]) -> int:
    parser = CommandParser(prog="arrayplan")
    sub = parser.add_subparsers(dest="command", required=True)
    servers_command.register(sub)
    args = parser.parse_args(["servers", "search", *argv])
    return int(args.func(args))
