"""stories / item_embeddings assets on a real database, with small fixtures."""

from __future__ import annotations

import threading
import time
from datetime import timedelta

import pytest
from clustering_fixtures import EU_AI, H0, QUAKE_DAY1, QUAKE_DAY2, UNRELATED, insert_items, key, memberships, snapshot
from hourly_helpers import stage_hour

from newsdedup_dagster.resources import EmbedderResource
from newsdedup_dagster.shared import db

STORY_ASSETS = ("stories",)

pytestmark = pytest.mark.timeout(300)


def run(url, hour, assets=("item_embeddings", "stories"), options=None):
    """The hour of each named stage, in the chain's order: name -> result."""
    embedder = EmbedderResource()
    result = {}
    for name in assets:
        result[name] = stage_hour(name, key(hour), url, embedder=embedder, options=options)
        assert result[name].success, name
    return result


def story_metadata(result):
    return result["stories"].metadata


def check_results(result):
    return {name: passed for stage in result.values() for name, passed in stage.checks().items()}


def test_eu_ai_regulation_in_four_languages_is_one_story(conn, clean_db):
    insert_items(conn, EU_AI + UNRELATED, H0)
    result = run(clean_db, H0)
    members = memberships(conn)
    eu = {members.get(i) for i, *_ in EU_AI}
    assert len(eu) == 1 and None not in eu, members
    assert "u-1" not in members and "u-2" not in members
    checks = check_results(result)
    assert checks and all(checks.values()), checks
    md = story_metadata(result)
    assert md["new_stories"].value == 1
    langs = ",".join(r.data["languages"] for r in md["stories"].records)
    assert "en" in langs and "ja" in langs
    # the hour's largest story explained: every article, the pass that admitted it, the weakest link
    explained = md["largest_stories_explained"].value
    assert "weakest link" in explained and all(f"`{i[:10]}`" in explained for i, *_ in EU_AI)


def test_two_earthquakes_a_day_apart_stay_two_stories(conn, clean_db):
    day2 = H0 + timedelta(hours=24)
    insert_items(conn, QUAKE_DAY1, H0)
    insert_items(conn, QUAKE_DAY2, day2)
    run(clean_db, H0)
    run(clean_db, day2)
    members = memberships(conn)
    first = {members[i] for i, *_ in QUAKE_DAY1}
    second = {members[i] for i, *_ in QUAKE_DAY2}
    assert len(first) == 1 and len(second) == 1 and first != second


def test_pass1_attaches_later_items_and_rematerialising_is_idempotent(conn, clean_db):
    h1 = H0 + timedelta(hours=1)
    insert_items(conn, QUAKE_DAY1[:2], H0)
    insert_items(conn, QUAKE_DAY1[2:], h1)
    run(clean_db, H0)
    result = run(clean_db, h1)
    assert story_metadata(result)["attached_pass1"].value == 1
    before = snapshot(conn)
    run(clean_db, h1)           # same partition again
    assert snapshot(conn) == before
    run(clean_db, H0)           # an earlier partition again: its story keeps the later attachment
    after = snapshot(conn)
    assert after[1] == before[1]
    assert after[0] == before[0]


def test_backfill_in_time_order_reproduces_the_hourly_runs(conn, clean_db):
    hours = [H0 + timedelta(hours=n) for n in range(4)]
    batches = [QUAKE_DAY1[:2] + EU_AI[:2], QUAKE_DAY1[2:] + EU_AI[2:], UNRELATED, []]
    # live: each hour's items arrive, then that hour runs
    for hour, rows in zip(hours, batches):
        insert_items(conn, rows, hour)
        run(clean_db, hour)
    live = snapshot(conn)
    with db.connection(clean_db) as c:
        c.execute("TRUNCATE story_items, stories CASCADE")
        c.commit()
    # backfill: everything already ingested, hours processed in time order
    for hour in hours:
        run(clean_db, hour, STORY_ASSETS)
    assert snapshot(conn) == live


def test_rerunning_a_clustered_range_with_reset_rebuilds_the_same_stories(conn, clean_db):
    hours = [H0 + timedelta(hours=n) for n in range(4)]
    batches = [QUAKE_DAY1[:2] + EU_AI[:2], QUAKE_DAY1[2:] + EU_AI[2:], UNRELATED, []]
    for hour, rows in zip(hours, batches):
        insert_items(conn, rows, hour)
        run(clean_db, hour)
    live = snapshot(conn)
    # Re-run the whole range over the existing stories (as a backfill does): identical result.
    for hour in hours:
        result = run(clean_db, hour, STORY_ASSETS, options={"stories": {"later_partitions": "reset"}})
    assert snapshot(conn) == live
    assert story_metadata(result)["later_partitions"].value == "reset"


def test_two_clustering_runs_never_overlap(conn, clean_db):
    """The advisory lock: a run waits while another holds it, and fails after lock_timeout_s."""
    from newsdedup_dagster.stages.clustering.passes import cluster_partition
    from newsdedup_dagster.stages.clustering.settings import settings_for
    from newsdedup_dagster.stages.clustering.store import CLUSTER_LOCK_KEY, ClusteringBusy
    from newsdedup_dagster.stages.embeddings.store import active_model

    insert_items(conn, QUAKE_DAY1, H0)
    run(clean_db, H0)
    info = active_model(conn)
    conn.commit()
    holder = db.connect(clean_db, autocommit=True)
    holder.execute("SELECT pg_advisory_lock(%s)", (CLUSTER_LOCK_KEY,))
    try:
        with pytest.raises(ClusteringBusy):
            cluster_partition(conn, info, H0, settings_for(info.model, {"lock_timeout_s": "0.3"}))
        conn.rollback()
        done = threading.Event()

        def second():
            with db.connect(clean_db) as other:
                cluster_partition(other, info, H0, settings_for(info.model, {"lock_timeout_s": "30"}))
            done.set()

        thread = threading.Thread(target=second)
        thread.start()
        time.sleep(0.5)
        assert not done.is_set()  # waiting for the lock
    finally:
        holder.execute("SELECT pg_advisory_unlock(%s)", (CLUSTER_LOCK_KEY,))
        holder.close()
    thread.join(30)
    assert done.is_set()


def test_stories_are_computed_by_the_hourly_chain_in_its_pool():
    """Two clustering runs never overlap: stories is computed by the one hourly op, whose pool
    queues its runs (a backfill is one run over its range, in time order)."""
    from dagster import AssetKey, BackfillPolicy

    from newsdedup_dagster.assets.hourly import HOURLY_OP, hourly_chain

    assert hourly_chain.op.name == HOURLY_OP == "hourly_chain"
    assert hourly_chain.op.pool == "newsdedup_hourly"
    assert AssetKey("stories") in hourly_chain.keys and AssetKey("item_embeddings") in hourly_chain.keys
    assert hourly_chain.backfill_policy == BackfillPolicy.single_run()
    assert hourly_chain.can_subset  # one asset, or any subset, can be materialised alone


def test_checks_flag_corruption(conn, clean_db):
    """The invariant checks fail when the data is wrong (not only pass when it is right)."""
    from newsdedup_dagster.stages.clustering.passes import check_invariants, cluster_partition
    from newsdedup_dagster.stages.clustering.settings import settings_for
    from newsdedup_dagster.stages.embeddings.store import active_model

    insert_items(conn, QUAKE_DAY1 + UNRELATED, H0)
    run(clean_db, H0)
    info = active_model(conn)
    conn.commit()
    settings = settings_for(info.model)
    result = cluster_partition(conn, info, H0, settings)
    good = check_invariants(conn, info, H0, settings, result)
    assert good.centroid_max_error < 1e-4 and not good.disconnected_stories and good.all_considered
    # corrupt: a wrong centroid, an unrelated item glued into the story, a duplicate in two stories
    story = conn.execute("SELECT story_id FROM story_items LIMIT 1").fetchone()[0]
    conn.execute("UPDATE stories SET centroid = (SELECT embedding FROM item_embeddings WHERE item_id = 'u-1')")
    conn.execute("INSERT INTO story_items (item_id, story_id, pass, similarity, partition_hour) VALUES ('u-2', %s, 2, 0.9, %s)", (story, H0))
    conn.commit()
    bad = check_invariants(conn, info, H0, settings, result)
    assert bad.centroid_max_error > 1e-3
    assert bad.disconnected_stories == [story]
