"""Cluster candidate search: servers x drives per server x drive model x pool, cheapest first."""

from __future__ import annotations

import dataclasses

import pytest

from arrayplan_engine import cluster as c
from arrayplan_engine import cluster_search as cs
from arrayplan_engine.catalog import builtin_catalog
from arrayplan_engine.errors import InvalidInputError
from arrayplan_engine.units import TB

CATALOG = builtin_catalog()
SMALL_AND_LARGE = [CATALOG.get("hdd-7k2-nearline-8tb"), CATALOG.get("wd-ultrastar-hc570-22tb")]


def test_a_paid_bay_moves_a_100_tb_archive_to_larger_drives() -> None:
    # With servers free, a 100 TB archive is cheapest on many 8 TB drives, one per server; once a
    # 12-bay server costs 6,000 USD, on 3 servers of 22 TB drives.
    free = cs.search_clusters(cs.ClusterQuestion(usable_bytes=100 * TB, server=c.ServerSpec(bay_count=12),
                                                 max_server_count=32), SMALL_AND_LARGE)
    paid = cs.search_clusters(cs.ClusterQuestion(usable_bytes=100 * TB,
                                                 server=c.ServerSpec(bay_count=12, cost_usd=6000.0, power_w=200.0),
                                                 max_server_count=32), SMALL_AND_LARGE)
    assert free.candidates[0].drive == "hdd-7k2-nearline-8tb"
    assert paid.candidates[0].drive == "wd-ultrastar-hc570-22tb"
    assert paid.candidates[0].server_count < free.candidates[0].server_count
    best = paid.candidates[0]
    assert best.capex_usd == pytest.approx(best.server_count * (6000 + best.drives_per_server * 450.0))


def test_every_candidate_meets_the_question_and_is_its_columns_fewest_servers() -> None:
    q = cs.ClusterQuestion(usable_bytes=300 * TB, max_loss_probability=1e-7, max_server_count=24,
                           server=c.ServerSpec(bay_count=12, cost_usd=5000.0), pools=("rep:3", "ec:8+3", "minio"))
    r = cs.search_clusters(q, SMALL_AND_LARGE)
    assert r.candidates and r.evaluated == sum(r.rejected.values()) + len(r.candidates)
    for cand in r.candidates:
        assert cand.usable_bytes >= q.usable_bytes and cand.loss_probability <= q.max_loss_probability
        assert cand.binding in ("capacity", "durability")
    costs = [x.cost_usd for x in r.candidates]
    assert costs == sorted(costs)
    # one server fewer in the winner's column fails a constraint (or cannot be placed)
    best = r.candidates[0]
    fewer = dataclasses.replace(q, min_server_count=1, max_server_count=best.server_count - 1,
                                drives_per_server=(best.drives_per_server,),
                                pools=("minio" if best.pool.startswith("minio") else best.pool,))
    drive = CATALOG.get(best.drive)
    assert not [x for x in cs.search_clusters(fewer, [drive]).candidates if x.drives_per_server == best.drives_per_server]


def test_pareto_front_is_not_dominated() -> None:
    r = cs.search_clusters(cs.ClusterQuestion(usable_bytes=100 * TB, max_server_count=20,
                                              server=c.ServerSpec(bay_count=12, cost_usd=6000.0),
                                              pools=("rep:3", "ec:4+2", "minio")), SMALL_AND_LARGE)
    for p in r.pareto:
        assert not any(o.cost_usd < p.cost_usd and o.loss_probability < p.loss_probability for o in r.candidates)
    assert r.pareto[0] == r.candidates[0]


def test_bad_questions_name_the_field() -> None:
    with pytest.raises(InvalidInputError) as e:
        cs.search_clusters(cs.ClusterQuestion(usable_bytes=1 * TB, drives_per_server=(14,)), SMALL_AND_LARGE)
    assert e.value.violations[0].field == "drives_per_server[0]"
    with pytest.raises(InvalidInputError) as e:
        cs.search_clusters(cs.ClusterQuestion(usable_bytes=1 * TB, pools=("raid5",)), SMALL_AND_LARGE)
    assert e.value.violations[0].field == "pools[0]" and "'ec:K+M'" in e.value.violations[0].reason
    with pytest.raises(InvalidInputError) as e:
        cs.search_clusters(cs.ClusterQuestion(usable_bytes=1 * TB, min_server_count=5, max_server_count=4), SMALL_AND_LARGE)
    assert e.value.violations[0].field == "max_server_count"
