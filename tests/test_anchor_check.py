"""The anchor check in the clustering transaction (embedded PostgreSQL + pgvector): two look-alike
events whose vectors are close stay apart when their headlines and leads name other people and
other years, the refusal is recorded in story_decisions.vetoes, and `newsdedup explain` shows
which anchors conflicted. Vectors are written by the test (the check reads only the items' text;
the embedding model is not what is under test)."""

from __future__ import annotations

import json

import numpy as np
import pytest
from clustering_fixtures import H0, store_vectors

from newsdedup_dagster.cli import main
from newsdedup_dagster.stages.clustering import explain
from newsdedup_dagster.stages.clustering.passes import cluster_partition
from newsdedup_dagster.stages.clustering.settings import settings_for

pytestmark = pytest.mark.timeout(180)
DIMS = 8

# Two Oscar-host announcements (2008 and 2013) and two office shootings (Vancouver, Detroit): each
# pair's vectors are nearly identical, as a sentence embedding puts look-alike events.
ITEMS = [
    ("oscar-2008", "Hugh Jackman named host of the Academy Awards",
     "Producers Laurence Mark and Bill Condon said on December 12, 2008 that Hugh Jackman will host.", 0),
    ("oscar-2013", "Ellen DeGeneres named host of the Academy Awards",
     "The Academy said on August 2, 2013 that Ellen DeGeneres will host the ceremony again.", 0),
    ("shooting-vancouver", "Fired worker opens fire at office Christmas party",
     "Police in Vancouver said Eric Kirkpatrick opened fire at the Coquitlam wholesaler's party.", 1),
    ("shooting-detroit", "Fired accountant opens fire at former office",
     "Police in Southfield, Michigan said Anthony LaCalamita shot three people at the firm.", 1),
]


def store(conn):
    rng = np.random.default_rng(3)
    conn.execute("INSERT INTO sources (id, name, feed_url, language) VALUES ('wire', 'wire', 'http://wire/feed', 'en')")
    for n, (item_id, title, summary, _axis) in enumerate(ITEMS):
        conn.execute(
            "INSERT INTO items (id, canonical_url, url, title, summary, lang, published_at, partition_hour, source_id)"
            " VALUES (%s, %s, %s, %s, %s, 'en', %s::timestamptz + %s * interval '5 minutes', %s, 'wire')",
            (item_id, f"http://x/{item_id}", f"http://x/{item_id}", title, summary, H0, n, H0))
    vectors = {}
    for item_id, _, _, axis in ITEMS:
        v = np.zeros(DIMS)
        v[axis] = 1.0
        v[4:] = 0.05 * rng.random(DIMS - 4)
        vectors[item_id] = (v / np.linalg.norm(v)).astype(np.float32)
    return store_vectors(conn, "fake:anchors", vectors)


def memberships(conn) -> dict[str, str]:
    rows = conn.execute("SELECT item_id, story_id FROM story_items").fetchall()
    conn.commit()
    return dict(rows)


def vetoes(conn) -> list:
    rows = conn.execute("SELECT story_id, vetoes::text FROM story_decisions ORDER BY 1").fetchall()
    conn.commit()
    return rows


def test_look_alike_events_stay_apart_and_explain_names_the_conflicting_anchors(conn, capsys):
    info = store(conn)
    off = settings_for(info.model, {"item_threshold": "0.5", "story_threshold": "0.5",
                                    "anchor_years": "false", "anchor_min_names": "0"})
    result = cluster_partition(conn, info, H0, off)
    stories = memberships(conn)
    # without the check the vectors merge each pair of look-alike events
    assert stories["oscar-2008"] == stories["oscar-2013"]
    assert stories["shooting-vancouver"] == stories["shooting-detroit"]
    assert result.anchor_vetoes == 0

    result = cluster_partition(conn, info, H0, settings_for(info.model, {"item_threshold": "0.5",
                                                                          "story_threshold": "0.5"}))
    assert memberships(conn) == {}  # every pair refused: four single items, no story
    assert result.anchor_vetoes == 2 and result.left_single == 4


def test_a_refused_attachment_is_recorded_on_the_story_and_shown(conn, capsys):
    info = store(conn)
    # a third report of the 2013 announcement founds a story with it; the 2008 one is refused
    conn.execute(
        "INSERT INTO items (id, canonical_url, url, title, summary, lang, published_at, partition_hour, source_id)"
        " VALUES ('oscar-2013-b', 'http://x/b', 'http://x/b', 'Ellen DeGeneres returns to host the Oscars',"
        " 'The Academy of Motion Picture Arts said on August 2, 2013 that Ellen DeGeneres will host again.', 'en',"
        " %s::timestamptz + interval '30 minutes', %s, 'wire')", (H0, H0))
    conn.execute(
        "INSERT INTO item_embeddings (item_id, model, text_hash, embedding, raw_embedding, partition_hour, published_at)"
        " SELECT 'oscar-2013-b', model, 'oscar-2013-b', embedding, raw_embedding, partition_hour,"
        "        %s::timestamptz + interval '30 minutes' FROM item_embeddings WHERE item_id = 'oscar-2013'", (H0,))
    conn.commit()
    settings = settings_for(info.model, {"item_threshold": "0.5", "story_threshold": "0.5"})
    cluster_partition(conn, info, H0, settings)
    stories = memberships(conn)
    assert stories["oscar-2013"] == stories["oscar-2013-b"] and "oscar-2008" not in stories
    first = vetoes(conn)
    sid = stories["oscar-2013"]
    rows = json.loads(dict(first)[sid])
    refused = [r for r in rows if "oscar-2008" in (r[0], r[1])]
    assert refused and all("names" in r[4] or "years" in r[4] for r in refused)

    story = explain.load(conn, sid)
    assert story.vetoes and {"oscar-2008"} <= {v.other for v in story.vetoes} | {v.item_id for v in story.vetoes}
    assert main(["explain", sid[:12]]) == 0
    out = capsys.readouterr().out
    assert "refused by the anchor check" in out and "oscar-2008" in out
    assert "2008" in out or "jackman" in out  # the conflicting anchors themselves
    assert main(["explain", sid, "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["vetoes"]
    assert "refused by the anchor check" in explain.render_markdown(story)

    cluster_partition(conn, info, H0, settings)  # a rerun of the hour writes the same rows
    assert vetoes(conn) == first


def test_pass1_refuses_a_later_item_of_the_other_event(conn):
    info = store(conn)
    settings = settings_for(info.model, {"item_threshold": "0.5", "story_threshold": "0.5"})
    conn.execute(
        "INSERT INTO items (id, canonical_url, url, title, summary, lang, published_at, partition_hour, source_id)"
        " VALUES ('oscar-2013-b', 'http://x/b', 'http://x/b', 'Ellen DeGeneres returns to host the Oscars',"
        " 'The Academy of Motion Picture Arts said on August 2, 2013 that Ellen DeGeneres will host again.', 'en',"
        " %s::timestamptz + interval '30 minutes', %s, 'wire')", (H0, H0))
    conn.execute(
        "INSERT INTO item_embeddings (item_id, model, text_hash, embedding, raw_embedding, partition_hour, published_at)"
        " SELECT 'oscar-2013-b', model, 'oscar-2013-b', embedding, raw_embedding, partition_hour,"
        "        %s::timestamptz + interval '30 minutes' FROM item_embeddings WHERE item_id = 'oscar-2013'", (H0,))
    conn.commit()
    cluster_partition(conn, info, H0, settings)
    sid = memberships(conn)["oscar-2013"]
    h1 = H0.replace(hour=H0.hour + 1)
    for item_id, year, title in (("late-2008", 2008, "Hugh Jackman will host the Academy Awards"),
                                 ("late-2013", 2013, "Ellen DeGeneres will host the Academy Awards")):
        conn.execute(
            "INSERT INTO items (id, canonical_url, url, title, summary, lang, published_at, partition_hour, source_id)"
            " VALUES (%s, %s, %s, %s, %s, 'en', %s, %s, 'wire')",
            (item_id, f"http://x/{item_id}", f"http://x/{item_id}", title,
             f"The Academy confirmed the choice on Friday, in {year}.", h1, h1))
        conn.execute(
            "INSERT INTO item_embeddings (item_id, model, text_hash, embedding, raw_embedding, partition_hour, published_at)"
            " SELECT %s, model, %s, embedding, raw_embedding, %s, %s FROM item_embeddings WHERE item_id = 'oscar-2013'",
            (item_id, item_id, h1, h1))
    conn.commit()
    result = cluster_partition(conn, info, h1, settings)
    stories = memberships(conn)
    assert stories.get("late-2013") == sid and stories["late-2008"] != sid
    # refused by the 2013 story, it founds one in pass 2 with the window's other 2008 report
    assert stories["late-2008"] == stories["oscar-2008"]
    assert result.attached == 1 and result.anchor_vetoes >= 1
    story = explain.load(conn, sid)
    refused = [v for v in story.vetoes if v.item_id == "late-2008"]
    assert refused and refused[0].pass_no == 1 and refused[0].other is None
    assert refused[0].kinds == ["years"] and refused[0].item_anchors["years"] == ["2008"]
    assert "2013" in refused[0].other_anchors["years"]


# The sample day's first snows: Denver (two English reports), Asahikawa (Japanese), Zugspitze
# (German). Their vectors are one point; only the places tell them apart, across languages.
SNOW = [
    ("denver-a", "en", "First snow of the season blankets Denver, snarling evening commute",
     "Up to 6 inches fell across the metro area, and Denver International Airport reported de-icing delays."),
    ("denver-b", "en", "Denver wakes up to first snow of the season",
     "Crews in Denver treated roads overnight as the first storm of the season arrived."),
    ("asahikawa", "ja", "北海道 旭川で初雪 平年より遅く",
     "北海道の旭川市で2日夜、初雪が観測されました。平年より11日遅い観測です。"),
    ("zugspitze", "de", "Zugspitze: Erster Schnee lockt Skifahrer – Saisonstart verschoben",
     "Auf Deutschlands höchstem Berg liegen 40 Zentimeter Schnee, für den Liftbetrieb reicht das noch nicht."),
]


def store_snow(conn):
    conn.execute("INSERT INTO sources (id, name, feed_url, language) VALUES ('wire', 'wire', 'http://wire/feed', 'en')")
    for n, (item_id, lang, title, summary) in enumerate(SNOW):
        conn.execute(
            "INSERT INTO items (id, canonical_url, url, title, summary, lang, published_at, partition_hour, source_id)"
            " VALUES (%s, %s, %s, %s, %s, %s, %s::timestamptz + %s * interval '5 minutes', %s, 'wire')",
            (item_id, f"http://x/{item_id}", f"http://x/{item_id}", title, summary, lang, H0, n, H0))
    v = np.zeros(DIMS)
    v[2] = 1.0
    v = (v / np.linalg.norm(v)).astype(np.float32)
    return store_vectors(conn, "fake:anchors", {item_id: v for item_id, *_ in SNOW})


def test_first_snows_in_three_countries_stay_apart_across_languages_and_explain_shows_the_places(conn, capsys):
    info = store_snow(conn)
    cluster_partition(conn, info, H0, settings_for(info.model, {"anchor_places": "false"}))
    stories = memberships(conn)
    assert len(set(stories.values())) == 1 and len(stories) == 4   # without places: one story of snow

    result = cluster_partition(conn, info, H0, settings_for(info.model, {}))
    stories = memberships(conn)
    assert stories["denver-a"] == stories["denver-b"]
    assert "asahikawa" not in stories and "zugspitze" not in stories
    assert result.anchor_vetoes >= 3      # en-ja twice, en-de twice, ja-de: every cross-language pair
    sid = stories["denver-a"]
    rows = json.loads(dict(vetoes(conn))[sid])
    refused = {r[0] if r[1] in ("denver-a", "denver-b") else r[1]: r for r in rows}
    assert {"asahikawa", "zugspitze"} <= set(refused)
    assert all(r[4] == ["places"] for r in refused.values())

    story = explain.load(conn, sid)
    by_other = {(v.other if v.item_id.startswith("denver") else v.item_id): v for v in story.vetoes}
    assert by_other["asahikawa"].kinds == ["places"]
    mine, theirs = (by_other["asahikawa"].item_anchors["places"], by_other["asahikawa"].other_anchors["places"])
    assert {"denver US"} <= set(mine) | set(theirs) and any("旭川" in p for p in mine + theirs)
    assert main(["explain", sid[:12]]) == 0
    out = capsys.readouterr().out
    assert "refused by the anchor check" in out and "places" in out
    assert "denver US" in out and "旭川 JP" in out and "deutschlands DE" in out
    assert "places" in explain.render_markdown(story)
