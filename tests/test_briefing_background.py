"""A briefing's background and what to watch: only from the story's articles and, for an event
reported over several days, from its earlier stories (cited by their pages). A model's lines are
checked like points (a citation outside what it was given, no citation, a number or name nothing
cited holds, the wrong language: dropped and counted by reason); offline, the background lists the
event's earlier stories, dated and linked, and nothing is said of what comes next. On the story
page in every site language, in the feeds' entries, valid for the Nu Html Checker. Real parts: the
embedded PostgreSQL, the local OpenAI-compatible server, the publish stage."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

import pytest
from fake_openai import default_responder
from feed_validators import VNU_JAR, html_errors, java
from lxml import etree
from test_briefings_model import briefing_requests, good_reply, metadata, prompt_ids, quake_story
from test_briefings_stage import _briefing
from test_llm_stages import HOUR, KEY, add_story, llm_env, online, run  # noqa: F401  (fixtures)

from newsdedup_dagster.config import PublishSettings
from newsdedup_dagster.shared.presentation.labels import SITE_LANGS, labels_for, text_direction
from newsdedup_dagster.shared.presentation.stories import EventRecord, SourceLink, StoryRecord
from newsdedup_dagster.stages.briefings import model as briefing_model
from newsdedup_dagster.stages.briefings.briefing import Article, EarlierStory
from newsdedup_dagster.stages.briefings.verify import checked_briefing
from newsdedup_dagster.stages.publish.build import publish_hour
from newsdedup_dagster.stages.publish.model import FeedCandidate, SourceArticle, StoredBriefing, story_views
from newsdedup_dagster.stages.publish.render import FeedMeta, render_entry_content, render_story

HTML = etree.HTMLParser()
DAY_BEFORE = datetime(2026, 11, 1, 22, tzinfo=UTC)
ARTICLES = [
    Article("n1", "Reuters", "en", "Quake aftershocks", "Aftershocks shook the valley on Wednesday. "
            "Parliament will vote on emergency funds on Friday, the minister said."),
    Article("n2", "BBC News", "en", "Valley cut off", "Two bridges into the valley remain closed."),
]
EARLIER = [EarlierStory("first-quake", "Earthquake of magnitude 6.1 strikes the Tolosa valley",
                        "The quake killed 40 people, officials said.", "en", DAY_BEFORE)]


def _reply(**lines) -> dict:
    return {"category": "disasters", "summary": {"text": "Aftershocks shook the valley.", "citations": ["n1"]},
            "points": [], "quotes": [], "players": [], "places": [], **lines}


# ------------------------------------------------------------------ the checks
def test_background_and_watch_lines_cite_the_articles_or_the_events_earlier_stories():
    briefing = checked_briefing(_reply(
        background=[{"text": "An earthquake of magnitude 6.1 struck the Tolosa valley.",
                     "citations": [], "stories": ["first-quake"]},
                    {"text": "Two bridges into the valley remain closed.", "citations": ["n2"],
                     "stories": ["first-quake"]}],
        watch=[{"text": "Parliament votes on emergency funds on Friday.", "citations": ["n1"]}]),
        ARTICLES, "en", EARLIER)
    assert [(c.citations, c.stories) for c in briefing.background] == [((), ("first-quake",)),
                                                                      (("n2",), ("first-quake",))]
    assert [(c.text, c.citations, c.stories, c.lang) for c in briefing.watch] == [
        ("Parliament votes on emergency funds on Friday.", ("n1",), (), "en")]
    assert briefing.dropped == {}
    stored = briefing.as_dict()
    assert stored["background"][0] == {"text": "An earthquake of magnitude 6.1 struck the Tolosa valley.",
                                       "citations": [], "stories": ["first-quake"], "lang": "en"}


@pytest.mark.parametrize("line, reason", [
    ({"text": "The quake killed 40 people.", "citations": [], "stories": ["another-event-story"]}, "foreign_story"),
    ({"text": "The quake killed 40 people.", "citations": ["other-story-article"]}, "foreign_citation"),
    ({"text": "Experts expect a stronger quake.", "citations": []}, "uncited"),
    ({"text": "The quake killed 900 people.", "citations": [], "stories": ["first-quake"]}, "unsupported"),
    ({"text": "The aftershocks were felt in Lisbon.", "citations": ["n1"]}, "unsupported"),
    ({"text": "Das Parlament stimmt am Freitag über die Nothilfe für das Tal ab.", "citations": ["n1"]},
     "wrong_language"),
    ("not a line", "malformed"),
])
def test_a_line_outside_the_material_is_dropped_and_counted(line, reason):
    for key in ("background", "watch"):
        briefing = checked_briefing(_reply(**{key: [line]}), ARTICLES, "en", EARLIER)
        assert getattr(briefing, key) == ()
        assert briefing.dropped[reason] >= 1, (key, briefing.dropped)
    # No earlier story was given: citing one is citing outside the material.
    alone = checked_briefing(_reply(background=[{"text": "The quake killed 40 people.", "citations": [],
                                                 "stories": ["first-quake"]}]), ARTICLES, "en")
    assert alone.background == () and alone.dropped == {"foreign_story": 1, "uncited": 1}


def test_lines_beyond_the_limit_are_dropped_as_over_limit():
    line = {"text": "Two bridges into the valley remain closed.", "citations": ["n2"]}
    briefing = checked_briefing(_reply(background=[line] * 5, watch=[line] * 3), ARTICLES, "en", EARLIER)
    assert len(briefing.background) == 3 and len(briefing.watch) == 2
    assert briefing.dropped == {"over_limit": 3}


def test_the_prompt_gives_the_earlier_stories_and_their_ids_come_back_as_stories():
    request = briefing_model.request_for(ARTICLES, "en", EARLIER)
    lines = request.user.split("\n")
    block = lines[lines.index(briefing_model.EARLIER_OPEN) + 1:lines.index(briefing_model.EARLIER_CLOSE)]
    assert [json.loads(x) for x in block] == [{
        "id": "e1", "date": "2026-11-01", "headline": EARLIER[0].headline, "summary": EARLIER[0].summary}]
    assert briefing_model.request_for(ARTICLES, "en").user.count(briefing_model.EARLIER_OPEN) == 0
    assert '"background"' in briefing_model.SYSTEM_PROMPT and '"watch"' in briefing_model.SYSTEM_PROMPT
    reply = _reply(background=[{"text": "An earthquake of magnitude 6.1 struck the Tolosa valley.",
                                "citations": ["e1", "a2"]},
                               {"text": "The quake killed 40 people.", "citations": ["e7"]}],
                   watch=[{"text": "Parliament votes on emergency funds on Friday.", "citations": ["1"]}])
    reply["summary"]["citations"] = ["a1"]
    reply["points"] = [{"text": "Two bridges into the valley remain closed.", "citations": ["a2"]}]
    briefing = briefing_model.briefing_from_reply(reply, request, ARTICLES)
    assert [(c.citations, c.stories) for c in briefing.background] == [(("n2",), ("first-quake",))]
    assert [c.citations for c in briefing.watch] == [("n1",)]
    assert briefing.dropped == {"foreign_story": 1, "uncited": 1}


# ------------------------------------------------------------------ through the stage, with the model
def _earlier_story(conn):
    """s0, reported the day before s1, scored and briefed in its own hour; both in one event."""
    add_story(conn, "s0", 2, langs=("en",), hour=DAY_BEFORE + timedelta(hours=1))


def _event(conn):
    conn.execute("INSERT INTO events (id, model, title, centroid, first_published_at, last_published_at,"
                 " created_partition, updated_partition, story_count)"
                 " SELECT 'ev1', model, 'Tolosa earthquake', centroid, %s, %s, %s, %s, 2 FROM stories WHERE id = 's0'",
                 (DAY_BEFORE, HOUR, DAY_BEFORE, HOUR))
    for sid in ("s0", "s1"):
        conn.execute("INSERT INTO event_stories (story_id, event_id, partition_hour) VALUES (%s, 'ev1', %s)",
                     (sid, HOUR - timedelta(hours=1)))
    conn.commit()


# A background line the earlier story states: its headline as the prompt gives it.
_EARLIER_HEADLINE: dict[str, str] = {}


def _earlier_headline(req) -> str:
    lines = req.user_text.split("\n")
    block = lines[lines.index(briefing_model.EARLIER_OPEN) + 1:lines.index(briefing_model.EARLIER_CLOSE)]
    return json.loads(block[0])["headline"]


def _with_background(req):
    if not briefing_requests(req):
        return default_responder(req)
    answer = good_reply(req)
    if briefing_model.EARLIER_OPEN in req.user_text:
        first = prompt_ids(req)["s1-i0"]
        answer["background"] = [
            {"text": _EARLIER_HEADLINE.setdefault("text", _earlier_headline(req)), "citations": ["e1"]},
            {"text": "It was the strongest quake since 1931.", "citations": ["e1"]},     # invented: no one says it
            {"text": "It followed a first tremor.", "citations": ["e9"]},                # a story it was not given
        ]
        answer["watch"] = [{"text": "Roads into the valley stay closed while engineers inspect two bridges.",
                            "citations": [first]},
                           {"text": "Engineers will reopen the roads next week.", "citations": []}]   # uncited
    return answer


def test_the_models_background_cites_the_earlier_story_and_the_rest_is_counted(conn, clean_db, fake, llm_env, online,  # noqa: F811
                                                                                 tmp_path):
    fake.responder = _with_background
    _earlier_story(conn)
    run(["story_scores"], clean_db, online(), partition="2026-11-01-23:00")
    quake_story(conn)
    _event(conn)
    meta = metadata(run(["story_scores"], clean_db, online()))
    briefing, dropped, method, _, _ = _briefing(conn, "s1")
    assert method == "model"
    assert briefing["background"] == [{"text": _EARLIER_HEADLINE["text"], "citations": [],
                                       "stories": ["s0"], "lang": "en"}]
    assert [w["text"] for w in briefing["watch"]] == [
        "Roads into the valley stay closed while engineers inspect two bridges."]
    assert dropped == {"unsupported": 1, "foreign_story": 1, "uncited": 2}
    assert meta["briefing_lines_dropped"] == dropped
    # s0's prompt had no earlier story (none was reported before it), s1's had s0 as e1.
    prompts = [r.user_text for r in fake.requests if briefing_requests(r)]
    assert sum(briefing_model.EARLIER_OPEN in p for p in prompts) == 1
    assert _briefing(conn, "s0")[0].get("background") == []

    # Published: the line with a link to s0's page, in each language, and in the feed entry.
    settings = PublishSettings(output_dir=tmp_path, base_url="https://news.example.org/")
    publish_hour(conn, HOUR, settings, ["en", "fr"], now=HOUR + timedelta(hours=2), force=True)
    for lang in ("en", "fr"):
        page = etree.parse(str(tmp_path / lang / "story" / "s1.html"), HTML)
        (item,) = page.xpath("//section[@class='briefing']/ul[@class='background']/li")
        assert _EARLIER_HEADLINE["text"] in item.xpath("string(./bdi)")
        assert item.xpath("./a[@class='earlier']/@href") == ["../story/s0.html"]
        assert (tmp_path / lang / "story" / "s0.html").exists()
        assert page.xpath("//section[@class='briefing']/h3/text()")[-2:] == [labels_for(lang)["background"],
                                                                              labels_for(lang)["what_to_watch"]]
    feed = json.loads((tmp_path / "en" / "feed.json").read_text(encoding="utf-8"))
    content = next(i["content_html"] for i in feed["items"] if i["_newsdedup"]["story_id"] == "s1")
    assert "https://news.example.org/en/story/s0.html" in content and "engineers inspect two bridges" in content


# ------------------------------------------------------------------ offline: the earlier stories, listed
T = datetime(2026, 11, 3, 9, tzinfo=UTC)


def _records():
    event = EventRecord("ev1", "Tolosa earthquake", None, None, False, 3, T - timedelta(days=2), T)
    out = []
    for sid, days, headline in (("day1", 2, "Quake strikes the Tolosa valley"), ("day2", 1, "Death toll rises to 40"),
                                ("day3", 0, "Aftershocks shake the valley")):
        record = StoryRecord(sid, 5.0, headline, "", "en", headline, "en", T - timedelta(days=days), event=event,
                             translations={"ja": (f"[ja] {headline}", "")})
        record.sources.append(SourceLink("Reuters", f"https://www.reuters.com/{sid}", "en"))
        out.append(record)
    # A story reported the same day is not background (the event's earlier days are).
    same_day = StoryRecord("day3b", 5.0, "Rescuers reach the last village", "", "en", "x", "en",
                           T - timedelta(hours=3), event=event)
    return [*out, same_day]


def _views(lang: str, stored: dict, pages=("day1", "day2", "day3", "day3b")):
    records = _records()
    candidates = {r.story_id: FeedCandidate(r.story_id, 5.0, "ev1", r.first_published_at, r.first_published_at, 1, 1,
                                            ("en",), "h") for r in records}
    sources = {"day3": [SourceArticle("Reuters", "https://www.reuters.com/day3", "en", "Aftershocks", T,
                                      outlet="reuters.com")]}
    timelines = {"ev1": [(r.story_id, r.first_published_at) for r in records]}
    views = story_views(T.date(), lang, records, candidates, sources,
                        {"day3": StoredBriefing("disasters", "extractive", stored, {"a1": "reuters.com"})},
                        timelines, set(pages))
    view = next(v for v in views if v.story_id == "day3")
    view.updated_at = T
    return view


def _render(lang: str, view) -> tuple[str, str]:
    labels = labels_for(lang)
    meta = FeedMeta(lang, text_direction(lang), "newsdedup", "", "newsdedup", "https://news.example.org/",
                    f"tag:x.example,2026-11-03:feed/{lang}", T, labels)
    return render_story(meta, view, list(SITE_LANGS)), render_entry_content(meta, view)


OFFLINE = {"summary": {"text": "Aftershocks shook the valley.", "citations": ["a1"], "lang": "en"},
           "points": [{"text": "Two bridges remain closed.", "citations": ["a1"], "lang": "en"}], "quotes": []}


@pytest.mark.parametrize("lang", SITE_LANGS)
def test_offline_the_background_lists_the_events_earlier_stories_dated_and_linked(lang):
    view = _views(lang, OFFLINE)
    assert view.briefing.background_listed and view.briefing.watch == ()
    page, entry = _render(lang, view)
    doc = etree.fromstring(page.encode("utf-8"), HTML)
    items = doc.xpath("//ul[@class='background']/li")
    assert [li.xpath("./a/@href")[0] for li in items] == ["../story/day1.html", "../story/day2.html"]
    assert [li.xpath("./time/@datetime")[0] for li in items] == ["2026-11-01T09:00:00Z", "2026-11-02T09:00:00Z"]
    headlines = [li.xpath("string(./a)") for li in items]
    if lang == "ja":   # each earlier story's headline in the reader's language where it has one
        assert headlines == ["[ja] Quake strikes the Tolosa valley", "[ja] Death toll rises to 40"]
    elif lang == "en":
        assert headlines == ["Quake strikes the Tolosa valley", "Death toll rises to 40"]
    labels = labels_for(lang)
    assert labels["background"] in page and labels["background_note"] in page
    assert labels["what_to_watch"] not in doc.xpath("string(//section[@class='briefing'])")
    assert "https://news.example.org/" + lang + "/story/day1.html" in entry and labels["background"] in entry


def test_an_earlier_story_without_a_page_is_not_cited_and_none_left_means_no_background():
    view = _views("en", OFFLINE, pages=("day2", "day3"))
    assert [line.stories[0].story_id for line in view.briefing.background] == ["day2"]
    assert _views("en", OFFLINE, pages=("day3",)).briefing.background == ()


def test_a_models_background_is_shown_instead_of_the_list_with_its_sources_and_stories():
    stored = {**OFFLINE, "background": [
        {"text": "The quake killed 40 people.", "citations": ["a1"], "stories": ["day2"], "lang": "en"},
        {"text": "A line citing a story with no page.", "citations": [], "stories": ["elsewhere"], "lang": "en"}],
        "watch": [{"text": "Parliament votes on Friday.", "citations": ["a1"], "stories": [], "lang": "en"}]}
    view = _views("fr", stored)
    assert not view.briefing.background_listed
    page, entry = _render("fr", view)
    doc = etree.fromstring(page.encode("utf-8"), HTML)
    (line,) = doc.xpath("//ul[@class='background']/li")
    assert line.xpath("string(./bdi)") == "The quake killed 40 people." and line.xpath("./bdi/@lang") == ["en"]
    assert line.xpath("./a[@class='ref']/@href") == ["#src-1"]
    assert line.xpath("./a[@class='earlier']/@href") == ["../story/day2.html"]
    assert "2 novembre 2026" in line.xpath("string(./a[@class='earlier'])")
    (watch,) = doc.xpath("//ul[@class='watch']/li")
    assert watch.xpath("string(./bdi)") == "Parliament votes on Friday."
    assert labels_for("fr")["background_note"] not in page
    assert "https://news.example.org/fr/story/day2.html" in entry and "Parliament votes on Friday." in entry


@pytest.mark.skipif(not VNU_JAR.exists() or not java(),
                    reason="Nu Html Checker not installed (.ci/run: npm install --prefix tests/data/vnu vnu-jar)")
def test_story_pages_and_entries_with_a_background_pass_the_nu_html_checker(tmp_path):
    stored = {**OFFLINE, "watch": [{"text": "Parliament votes on Friday.", "citations": ["a1"], "lang": "en"}]}
    pages = []
    for lang in SITE_LANGS:
        page, entry = _render(lang, _views(lang, stored))
        pages.append(tmp_path / f"story-{lang}.html")
        pages[-1].write_text(page, encoding="utf-8")
        pages.append(tmp_path / f"entry-{lang}.html")
        pages[-1].write_text(f'<!DOCTYPE html><html lang="{lang}"><head><meta charset="utf-8"><title>x</title></head>'
                             f"<body>{entry}</body></html>", encoding="utf-8")
    assert html_errors(pages) == []
