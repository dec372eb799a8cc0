"""`newsdedup explain`: what admitted each article, recorded by the clustering transaction itself.

Two tight groups of items joined by one deliberate bridge item (cosine ~0.70 to both groups, 0.99
inside each): with plain UnionFind (the 3mins.news method) the bridge merges them and `explain` must name the
bridge edge as the weakest link; with the chaining guard the groups come apart and `explain` must
show the cut community and the bridge edge that was cut.
"""

from __future__ import annotations

import json

import numpy as np
import pytest
from clustering_fixtures import H0, insert_items, store_vectors

from newsdedup_dagster.cli import main
from newsdedup_dagster.stages.clustering import explain
from newsdedup_dagster.stages.clustering.passes import cluster_partition
from newsdedup_dagster.stages.clustering.settings import settings_for

pytestmark = pytest.mark.timeout(180)
DIMS = 8


def bridged_groups() -> dict[str, np.ndarray]:
    rng = np.random.default_rng(11)
    vectors = {}
    for name, axis in (("a", 0), ("b", 1)):
        for n in range(4):
            v = np.zeros(DIMS)
            v[axis] = 1.0
            v[2 + n] += 0.15 * rng.random()
            vectors[f"{name}{n}"] = (v / np.linalg.norm(v)).astype(np.float32)
    bridge = np.zeros(DIMS)
    bridge[:2] = 1.0
    vectors["x-bridge"] = (bridge / np.linalg.norm(bridge)).astype(np.float32)
    return vectors


def store(conn, vectors):
    insert_items(conn, [(i, f"headline {i}", "en" if i[0] != "b" else "de", f"src-{i[0]}") for i in sorted(vectors)], H0)
    return store_vectors(conn, "fake:explain", vectors)


def story_of(conn, item_id: str) -> str:
    sid = conn.execute("SELECT story_id FROM story_items WHERE item_id = %s", (item_id,)).fetchone()[0]
    conn.commit()
    return sid


def recorded(conn) -> tuple:
    rows = conn.execute(
        "SELECT item_id, story_id, pass, similarity, gap_hours, via_item_id, threshold, partition_hour"
        " FROM story_items ORDER BY item_id").fetchall()
    decisions = conn.execute(
        "SELECT story_id, partition_hour, edges::text, cut_groups::text FROM story_decisions ORDER BY 1, 2").fetchall()
    conn.commit()
    return rows, decisions


def test_plain_unionfind_merge_names_the_bridge_as_the_weakest_link(conn, capsys):
    info = store(conn, bridged_groups())
    settings = settings_for(info.model, {"item_threshold": "0.6", "story_threshold": "0.99", "guard": "none"})
    cluster_partition(conn, info, H0, settings)
    sid = story_of(conn, "a0")
    assert story_of(conn, "b0") == sid  # the wrong merge the bridge causes

    story = explain.load(conn, sid)
    assert {m.item_id for m in story.members} == {f"a{n}" for n in range(4)} | {f"b{n}" for n in range(4)} | {"x-bridge"}
    assert all(m.pass_no == 2 and m.threshold == pytest.approx(0.6) for m in story.members)
    assert {m.lang for m in story.members} == {"en", "de"} and "src-b" in {m.source for m in story.members}
    weakest = story.weakest
    assert weakest.kind == "edge" and "x-bridge" in (weakest.item_a, weakest.item_b)
    assert 0.6 <= weakest.similarity < 0.8 and weakest.margin == pytest.approx(weakest.similarity - 0.6, abs=1e-5)
    left, right = weakest.splits_into
    a_side, b_side = (left, right) if "a0" in left else (right, left)
    assert {f"a{n}" for n in range(4)} <= set(a_side) and {f"b{n}" for n in range(4)} <= set(b_side)
    assert not set(a_side) & set(b_side)
    # the edges that held the merge: everything weak among them runs through the bridge
    kept = [e for e in story.edges if e.kept]
    assert kept and all("x-bridge" in (e.item_a, e.item_b) for e in kept if e.similarity < 0.9)

    assert main(["explain", sid[:12]]) == 0
    out = capsys.readouterr().out
    assert ">> weakest link: edge" in out and "x-bridge" in out.splitlines()[2]
    assert "splits 4 | 5" in out or "splits 5 | 4" in out
    assert main(["explain", sid, "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["weakest"]["kind"] == "edge" and len(data["members"]) == 9


def test_guard_cut_is_shown_with_the_bridge_edge_it_cut(conn, capsys):
    info = store(conn, bridged_groups())
    settings = settings_for(info.model, {"item_threshold": "0.6", "story_threshold": "0.99"})
    cluster_partition(conn, info, H0, settings)
    a_story, b_story = story_of(conn, "a0"), story_of(conn, "b0")
    assert a_story != b_story
    bridge_side = story_of(conn, "x-bridge")
    other = b_story if bridge_side == a_story else a_story
    story = explain.load(conn, bridge_side)
    cut = [c for c in story.cut_groups if c.became_story_id == other]
    assert len(cut) == 1 and len(cut[0].item_ids) == 4
    edge = cut[0].strongest_cut_edge
    assert edge is not None and edge.item_a == "x-bridge" and edge.item_b in cut[0].item_ids and not edge.kept
    assert "cut away by the chaining guard" in explain.render_text(story)
    md = explain.render_markdown(story)
    assert "cut away: 4 items (story `" in md and "| pass |" in md


def test_rerunning_the_hour_leaves_identical_explanation_rows(conn):
    info = store(conn, bridged_groups())
    settings = settings_for(info.model, {"item_threshold": "0.6", "story_threshold": "0.99"})
    cluster_partition(conn, info, H0, settings)
    first = recorded(conn)
    assert first[1] and all(r[5] for r in first[0])  # pass-2 members all name their neighbour
    cluster_partition(conn, info, H0, settings)
    assert recorded(conn) == first
    reset = settings_for(info.model, {"item_threshold": "0.6", "story_threshold": "0.99",
                                      "later_partitions": "reset"})
    cluster_partition(conn, info, H0, reset)
    assert recorded(conn) == first


def test_unknown_story_is_an_error(conn, capsys):
    assert main(["explain", "st_nope"]) == 1
    assert "no story" in capsys.readouterr().err


def test_markdown_block_shows_feed_markdown_as_text(conn):
    """A headline written as Markdown (an image and a link) stays text in the stories asset's block."""
    from test_markdown_text import HOSTILE_HEADLINE, live_parts, shown_text

    vectors = bridged_groups()
    insert_items(conn, [(i, f"{HOSTILE_HEADLINE} {i}", "en", "src-[x](https://phish.example)") for i in sorted(vectors)],
                 H0)
    info = store_vectors(conn, "fake:explain", vectors)
    cluster_partition(conn, info, H0, settings_for(info.model, {"item_threshold": "0.6", "story_threshold": "0.99",
                                                                "guard": "none"}))
    md = explain.render_markdown(explain.load(conn, story_of(conn, "a0")))
    assert "| title |" in md
    assert live_parts(md, allowed=("code_inline", "strong_open")) == []
    assert f"{HOSTILE_HEADLINE} a0" in shown_text(md)


def test_explain_shows_what_the_article_stage_read_of_each_page(conn, capsys):
    """A member whose page was read shows its words and first paragraph; one without text, why;
    the markdown block counts both (article_texts rows as the article stage writes them)."""
    vectors = bridged_groups()
    info = store(conn, vectors)
    cluster_partition(conn, info, H0, settings_for(info.model, {"item_threshold": "0.6", "story_threshold": "0.99",
                                                                "guard": "none"}))
    conn.execute(
        "INSERT INTO article_texts (item_id, status, reason, url, word_count, lead, fetched_hour)"
        " VALUES ('a0', 'ok', NULL, 'https://a.example/0', 412, 'The council voted on Monday to close the bridge.', %s),"
        "        ('a1', 'failed', 'robots', 'https://a.example/1', NULL, NULL, %s)", (H0, H0))
    conn.commit()
    sid = story_of(conn, "a0")
    assert main(["explain", sid]) == 0
    out = capsys.readouterr().out
    assert "article pages: 1 of 9 pages read (412 words); no text: robots 1" in out
    assert "The council voted on Monday to close the bridge." in out
    assert any(line.split()[:2] == ["a1", "robots"] for line in out.splitlines())
    md = explain.render_markdown(explain.load(conn, sid))
    assert "article pages: 1 of 9 pages read (412 words); no text: robots 1" in md
    # a story none of whose pages the stage has looked at says nothing about pages
    conn.execute("DELETE FROM article_texts")
    conn.commit()
    assert "article pages" not in explain.render_text(explain.load(conn, sid))
