"""The briefing of each story, built in the story_scores stage from its articles' pages (or feed
summaries), stored once per change of its articles or pages, offline (the heuristic scorer's run:
no model endpoint). Real parts: the embedded PostgreSQL."""

from __future__ import annotations

import gzip
import json

from test_llm_stages import HOUR, add_story, grow_story, run  # noqa: F401  (fixtures)

from newsdedup_dagster.resources import LLMResource

PAGE = ("The earthquake struck the mountain region at dawn on Tuesday, officials said.\n"
        "Rescue teams reached the village of Tolosa and evacuated 140 residents.\n"
        "“Every house on the hillside has been checked,” said Marta Ruiz, the regional emergency chief.\n"
        "Roads into the valley stay closed while engineers inspect two bridges.")


def _page(conn, item_id: str, text: str = PAGE) -> None:
    conn.execute(
        "INSERT INTO article_texts (item_id, status, url, text_gzip, text_chars, lead, word_count, fetched_hour)"
        " VALUES (%s, 'ok', %s, %s, %s, %s, %s, %s)",
        (item_id, f"https://news.example/{item_id}", gzip.compress(text.encode()), len(text),
         text.splitlines()[0], len(text.split()), HOUR))
    conn.commit()


def _briefing(conn, story_id: str):
    row = conn.execute("SELECT briefing, dropped, method, category, briefed_at FROM story_briefings WHERE story_id = %s",
                       (story_id,)).fetchone()
    conn.commit()
    return row


def test_each_story_gets_a_checked_briefing_from_its_pages(conn, clean_db):
    add_story(conn, "s1", 3, langs=("en",))
    _page(conn, "s1-i0")
    _page(conn, "s1-i1", PAGE.replace("at dawn on Tuesday", "early on Tuesday"))
    results = run(["story_scores"], clean_db, LLMResource())
    briefing, dropped, method, category, first_written = _briefing(conn, "s1")
    assert (method, category, dropped) == ("extractive", "disasters", {})
    points = [briefing["summary"], *briefing["points"]]
    assert 3 <= len(points) <= 6
    for point in points:
        assert set(point["citations"]) <= {"s1-i0", "s1-i1", "s1-i2"} and point["citations"]
    # The sentence both pages carry cites both.
    rescue = next(p for p in points if "Tolosa" in p["text"])
    assert set(rescue["citations"]) == {"s1-i0", "s1-i1"}
    assert [(q["speaker"], q["role"]) for q in briefing["quotes"]] == [("Marta Ruiz", "the regional emergency chief")]
    assert briefing["quotes"][0]["text"] in PAGE
    metadata = {k: getattr(v, "value", v) for k, v in results["story_scores"].metadata.items()}
    assert metadata["briefed"] == 1 and metadata["briefings_with_quotes"] == 1
    assert metadata["briefing_articles_from_pages"] == 2
    # The demo's briefing line counts the same rows.
    from newsdedup_dagster.shared import db
    stories, with_points, with_quotes, n_points, n_quotes, dropped, with_players, n_players = conn.execute(
        db.load_sql("demo_briefing_counts")).fetchone()
    conn.commit()
    assert (stories, with_points, with_quotes, n_quotes, dropped) == (1, 1, 1, 1, 0)
    assert n_points == len(briefing["points"])
    # The speaker is named in both pages: a key player, traced to both articles.
    assert (with_players, n_players) == (1, 1) and briefing["players"] == ["Marta Ruiz"]
    assert briefing["named"]["Marta Ruiz"] == ["s1-i0", "s1-i1"]

    # Nothing changed: a rerun leaves the row alone; a new page does change the briefing's material.
    run(["story_scores"], clean_db, LLMResource())
    assert _briefing(conn, "s1")[4] == first_written
    _page(conn, "s1-i2", "Officials in Tolosa said 140 residents had been evacuated before noon on Tuesday.\n"
                          "Schools across the valley will stay closed until Thursday, the mayor said.")
    again = run(["story_scores"], clean_db, LLMResource())
    assert again["story_scores"].metadata["briefed"].value == 1 and _briefing(conn, "s1")[4] > first_written


def test_a_story_without_pages_is_briefed_from_its_feed_summaries(conn, clean_db):
    add_story(conn, "s2", 2, langs=("en",))
    run(["story_scores"], clean_db, LLMResource())
    briefing, dropped, method, _category, _ = _briefing(conn, "s2")
    assert method == "extractive" and dropped == {}
    assert briefing["summary"]["text"].startswith("A strong earthquake struck.")
    assert json.dumps(briefing, ensure_ascii=False)
