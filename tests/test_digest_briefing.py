"""The digest's compact briefing: the category named in the reader's language, the first key points
each followed by the outlets of the articles it cites (a point citing no outlet of the story is left
out), an extractive briefing marked as such, hostile text escaped; and the same through the
database (story_briefings as the pipeline stores it) into the stored digest."""

from __future__ import annotations

from datetime import UTC, date, datetime

import pytest
from feed_validators import VNU_JAR, html_errors, java
from lxml import etree
from test_briefings_stage import PAGE, _page
from test_llm_stages import HOUR, add_story, run  # noqa: F401  (fixtures)

from newsdedup_dagster.resources import LLMResource
from newsdedup_dagster.shared.presentation.labels import LABELS
from newsdedup_dagster.shared.presentation.stories import (
    POINTS_SHOWN,
    StoryBriefing,
    StoryRecord,
    briefing_perspectives,
    briefing_points,
    build_view,
)
from newsdedup_dagster.shared.presentation.taxonomy import category_name
from newsdedup_dagster.stages.digest.build import render_day
from newsdedup_dagster.stages.digest.render import render

T = datetime(2026, 11, 2, 9, tzinfo=UTC)
DAY = date(2026, 11, 2)


PERSPECTIVES = [
    {"text": "British outlets stress the cost to schools.", "citations": ["a2"], "country": "GB", "lang": "en"},
    {"text": "Wire copy stresses the margin of the vote.", "citations": ["a1"], "country": "us", "lang": "en"},
]


def briefing(method: str = "extractive", points=None, perspectives=None) -> StoryBriefing:
    points = points if points is not None else [
        {"text": "Parliament approved the budget by 301 votes to 250.", "citations": ["a1", "a2"], "lang": "en"},
        {"text": "The opposition called the vote rushed.", "citations": ["a2"], "lang": "en"},
        {"text": "A line citing an article of another story.", "citations": ["elsewhere"], "lang": "en"},
        {"text": "Spending on schools rises by 4 %.", "citations": ["a1"], "lang": "en"},
        {"text": "A fourth shown point would be one too many.", "citations": ["a1"], "lang": "en"},
    ]
    return StoryBriefing("politics", method, {"points": points, "perspectives": perspectives or []},
                         {"a1": "Reuters", "a2": "BBC News"})


def story(b: StoryBriefing | None) -> StoryRecord:
    return StoryRecord("s1", 7.0, "Budget passes", "Lawmakers approved it.", "en", "Budget passes", "en", T,
                       briefing=b)


def test_points_name_the_outlets_they_cite_and_foreign_citations_are_left_out():
    points = briefing_points(briefing())
    assert len(points) == POINTS_SHOWN
    assert points[0].outlets == ("Reuters", "BBC News") and points[1].outlets == ("BBC News",)
    assert all("another story" not in p.text for p in points)
    assert briefing_points(None) == () and briefing_points(briefing(points=[])) == ()
    # Malformed stored values are skipped, not fatal.
    odd = briefing(points=["text only", {"text": None, "citations": ["a1"]}, {"text": "Kept.", "citations": "a1"}])
    assert [p.text for p in briefing_points(odd)] == []


@pytest.mark.parametrize("lang", ["en", "ja", "ar"])
def test_the_digest_shows_the_category_points_and_the_extractive_mark(lang):
    rendered = render(build_view(DAY, lang, [story(briefing())]))
    name = category_name("politics", lang)
    labels = LABELS[lang]
    for part in (rendered.html, rendered.text):
        assert name in part and labels["key_points"] in part and labels["briefing_note"] in part
        assert "Parliament approved the budget by 301 votes to 250." in part
        assert "Reuters, BBC News" in part
        assert "one too many" not in part
    assert 'lang="en"' in rendered.html                      # the points keep their own language
    model = render(build_view(DAY, lang, [story(briefing("model"))]))
    assert labels["briefing_note"] not in model.html and labels["key_points"] in model.html
    bare = render(build_view(DAY, lang, [story(None)]))
    assert labels["key_points"] not in bare.html and labels["key_points"] not in bare.text


@pytest.mark.parametrize("lang", ["en", "ja", "ar"])
def test_the_digest_shows_each_countrys_perspective_with_its_outlets(lang):
    rendered = render(build_view(DAY, lang, [story(briefing(perspectives=PERSPECTIVES))]))
    uk, us = {"en": ("United Kingdom", "United States"), "ja": ("イギリス", "アメリカ合衆国"),
              "ar": ("المملكة المتحدة", "الولايات المتحدة")}[lang]
    for part in (rendered.html, rendered.text):
        assert LABELS[lang]["perspectives"] in part
        assert f"{uk}: " in part and f"{us}: " in part
    assert "* " + uk + ": British outlets stress the cost to schools. (BBC News)" in rendered.text
    assert "* " + us + ": Wire copy stresses the margin of the vote. (Reuters)" in rendered.text
    doc = etree.fromstring(rendered.html.encode("utf-8"), etree.HTMLParser())
    lines = doc.xpath("//ul[@class='perspectives']/li")
    assert len(lines) == 2 and lines[0].xpath("./bdi")[0].get("lang") == "en"


def test_a_perspective_left_alone_or_citing_no_outlet_is_not_in_the_digest():
    foreign = [PERSPECTIVES[0], {**PERSPECTIVES[1], "citations": ["elsewhere"]}]
    same_country = [PERSPECTIVES[0], {**PERSPECTIVES[1], "country": "gb"}]
    for perspectives in (foreign, same_country, PERSPECTIVES[:1]):
        assert briefing_perspectives(briefing(perspectives=perspectives), "en") == ()
        rendered = render(build_view(DAY, "en", [story(briefing(perspectives=perspectives))]))
        assert LABELS["en"]["perspectives"] not in rendered.text
    assert briefing_perspectives(None, "en") == ()
    # The translation of the current version, when there is one.
    translated = dict(briefing(perspectives=PERSPECTIVES).briefing,
                      perspectives=[{**p, "text": "[fr] " + p["text"], "lang": "fr"} for p in PERSPECTIVES])
    stored = StoryBriefing("politics", "model", briefing(perspectives=PERSPECTIVES).briefing,
                           {"a1": "Reuters", "a2": "BBC News"}, {"fr": translated})
    fr = briefing_perspectives(stored, "fr")
    assert [(p.country, p.text, p.lang, p.outlets) for p in fr] == [
        ("Royaume-Uni", "[fr] British outlets stress the cost to schools.", "fr", ("BBC News",)),
        ("États-Unis", "[fr] Wire copy stresses the margin of the vote.", "fr", ("Reuters",))]


def test_hostile_point_text_is_escaped():
    hostile = briefing(points=[{"text": '<script>alert(1)</script> "><img src=x onerror=alert(2)>',
                                "citations": ["a1"], "lang": "en"}])
    html = render(build_view(DAY, "en", [story(hostile)])).html
    assert "<script>alert" not in html and "<img src=x" not in html and "&lt;script&gt;" in html


def test_the_stored_digest_carries_the_briefing_the_stage_wrote(conn, clean_db, tmp_path):
    """story_scores (offline) briefs a story from its pages; the day's digest shows its points with
    the outlets' names, as stored in `digests` and written to the outbox."""
    add_story(conn, "s1", 3, langs=("en",))
    _page(conn, "s1-i0")
    _page(conn, "s1-i1", PAGE.replace("at dawn on Tuesday", "early on Tuesday"))
    run(["story_scores"], clean_db, LLMResource())
    day = render_day(conn, HOUR.date(), ["en", "ja"], outbox_dir=tmp_path)
    assert [s.story_id for s in day.selected] == ["s1"]
    en, ja = day.files["en"].rendered, day.files["ja"].rendered
    assert "Tolosa" in en.html and "Source 0, Source 1" in en.text and LABELS["en"]["briefing_note"] in en.text
    assert category_name("disasters", "ja") in ja.html and LABELS["ja"]["key_points"] in ja.html
    stored = conn.execute("SELECT text_body FROM digests WHERE lang = 'en'").fetchone()[0]
    conn.commit()
    assert "Tolosa" in stored


@pytest.mark.skipif(not VNU_JAR.exists() or not java(),
                    reason="Nu Html Checker not installed (.ci/run: npm install --prefix tests/data/vnu vnu-jar)")
def test_digests_with_a_briefing_pass_the_nu_html_checker(tmp_path):
    pages = []
    for lang in ("en", "ja", "ar", "hi", "ru"):
        page = tmp_path / f"digest-{lang}.html"
        page.write_text(render(build_view(DAY, lang, [story(briefing(perspectives=PERSPECTIVES))])).html,
                        encoding="utf-8")
        pages.append(page)
    assert html_errors(pages) == []
