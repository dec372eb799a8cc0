"""Invisible and direction-changing characters from a feed (U+202E, U+2066-2069, zero-width and tag
characters) reach neither the database nor the site, the feeds or the digest: feed text is cleaned
at ingest by the same rules as model output (shared/text/cleaning.py), and every shown line again on output
(rows stored before the rule). Real feed server on 127.0.0.1, the real ingest path, the real
`story_feeds` asset and the digest renderer."""

from __future__ import annotations

import unicodedata
from dataclasses import replace
from datetime import UTC, date, datetime

from feedserver import FAST, FeedServer, rss
from hourly_helpers import stage_hour
from hypothesis import given, settings, strategies as st
from test_events_fixtures import add_story

from newsdedup_dagster.resources import LLMResource
from newsdedup_dagster.shared.presentation.stories import SourceLink, StoryRecord, build_view
from newsdedup_dagster.shared.sources import Source
from newsdedup_dagster.shared.text.cleaning import BIDI_CONTROLS, KEPT_FORMAT, clean_model_text
from newsdedup_dagster.shared.text.sanitise import clean_text
from newsdedup_dagster.stages.digest.render import render
from newsdedup_dagster.stages.ingest.store import ingest_partition

H = datetime(2026, 11, 2, 10, tzinfo=UTC)
INVISIBLE = ["\u202e", "\u202d", "\u202a", "\u2066", "\u2067", "\u2068", "\u2069", "\u200b", "\u200e", "\u200f",
             "\u2060", "\ufeff", "\u00ad", "\U000e0041", "\u061c"]


def _visible_only(text: str) -> bool:
    return not any(unicodedata.category(ch) in ("Cc", "Cf", "Cs") and ch not in KEPT_FORMAT
                   or ch in BIDI_CONTROLS for ch in text)


def _spiked(text: str) -> str:
    """`text` with every invisible character inserted between its words."""
    words = text.split(" ")
    return "".join(w + INVISIBLE[i % len(INVISIBLE)] + " " for i, w in enumerate(words)).strip()


@settings(max_examples=300, deadline=None)
@given(st.lists(st.one_of(st.sampled_from(INVISIBLE + ["\u200d", "\u200c", "<b>", "&amp;", " "]),
                          st.text(max_size=6)), max_size=40).map("".join))
def test_feed_text_is_cleaned_by_the_model_output_rules(text):
    out = clean_text(text)
    assert _visible_only(out)
    assert clean_model_text(out) == out  # nothing the model-output rules would still remove
    if "<" not in text and "&" not in text:  # no markup: every letter, digit and mark survives, in order
        letters = [ch for ch in unicodedata.normalize("NFC", text) if unicodedata.category(ch)[0] in "LMN"]
        assert [ch for ch in out if unicodedata.category(ch)[0] in "LMN"] == letters


def test_zero_width_joiners_survive_as_in_model_output():
    # Persian and emoji sequences need ZWNJ / ZWJ: kept by both rules.
    assert clean_text("می\u200cخواهم 👩\u200d💻") == "می\u200cخواهم 👩\u200d💻"


def test_feed_text_through_the_ingest_path(conn):
    body = rss([{"title": _spiked("Parliament passes the budget bill"),
                 "link": "https://news.example.com/budget", "guid": "b1",
                 "description": _spiked("Lawmakers approved the spending plan late on Monday."),
                 "author": _spiked("Jane Doe")}],
               title=_spiked("Daily News"))
    with FeedServer() as server:
        server.add("/feed.xml", body)
        sources = [Source(id="spiked", name="Spiked", feed_url=server.url("/feed.xml"), language="en", country="GB",
                          allow_private=True)]
        report = ingest_partition(conn, sources, H, mode="live", fetch_config=replace(FAST, total_timeout=30.0))
    assert [row.items for row in report.rows] == [1]
    title, summary, author = conn.execute("SELECT title, summary, author FROM items").fetchone()
    assert title == "Parliament passes the budget bill"
    assert summary == "Lawmakers approved the spending plan late on Monday."
    assert author == "Jane Doe"


def test_stored_text_with_invisible_characters_is_cleaned_on_every_output(clean_db, conn, tmp_path, monkeypatch):
    """Rows written before the ingest rule (or by anything else) still leave no invisible character
    in the Atom feeds, the JSON feeds, the site's pages or the digest."""
    monkeypatch.setenv("NEWSDEDUP_PUBLISH_LANGS", "en")
    monkeypatch.setenv("NEWSDEDUP_PUBLISH_DIR", str(tmp_path))
    spiked = _spiked("Evil headline reversed")
    add_story(conn, "s1", "quake", 9.0, titles={"en": spiked}, headline=spiked, summary=_spiked("A summary here."),
              significance=7.0)
    conn.execute("UPDATE sources SET name = %s", (_spiked("Outlet name"),))
    conn.commit()
    result = stage_hour("story_feeds", "2026-11-02-10:00", clean_db, llm=LLMResource())
    assert result.success
    outputs = [p for p in tmp_path.rglob("*") if p.is_file() and p.suffix in (".xml", ".json", ".html")]
    assert any(p.suffix == ".html" for p in outputs) and any(p.name == "atom.xml" for p in outputs)
    for path in outputs:
        text = path.read_text(encoding="utf-8")
        assert _visible_only(text.replace("\n", " ").replace("\t", " ")), path
    assert any("Evil headline reversed" in p.read_text(encoding="utf-8") for p in outputs)

    record = StoryRecord("s1", 7.0, spiked, _spiked("Summary of it."), "en", spiked, "en",
                         datetime(2026, 11, 2, 9, tzinfo=UTC),
                         sources=[SourceLink(_spiked("Outlet name"), "https://news.example.com/a", "en")], source_total=1)
    digest = render(build_view(date(2026, 11, 2), "en", [record]))
    for part in (digest.html, digest.text, digest.subject, digest.markdown):
        assert _visible_only(part.replace("\n", " ").replace("\t", " "))
    assert "Evil headline reversed" in digest.text
