"""A story's briefing in every published language: the story_translations stage translates its lines
(summary, key points, perspectives; never the verbatim quotes) into each published language other
than the briefing's own, two languages per call, each batch committed with the briefing's version
(material and lines); the story page and the digest show the translation of the current version in
the reader's language with the same citations. Real parts: the embedded PostgreSQL, the local
OpenAI-compatible server (tests/fake_openai.py), the Dagster assets, the site and digest writers."""

from __future__ import annotations

import json
from datetime import date, timedelta

import pytest
from fake_openai import Reply, default_responder
from lxml import etree
from test_briefings_stage import PAGE, _page
from test_llm_stages import HOUR, KEY, LANGS, add_story, grow_story, llm_env, online, run  # noqa: F401  (fixtures)

from newsdedup_dagster.config import PublishSettings
from newsdedup_dagster.resources import LLMResource
from newsdedup_dagster.shared.models.client import OutputInvalid
from newsdedup_dagster.shared.models.translation import (
    BRIEFING_TASK,
    briefing_fields,
    translated_briefing,
    validate_exact_translations,
)
from newsdedup_dagster.shared.presentation.stories import Selected, StoryBriefing, briefing_points, load_records
from newsdedup_dagster.stages.digest.build import render_day
from newsdedup_dagster.stages.llm.stages import OFFLINE_NOTE
from newsdedup_dagster.stages.publish.build import publish_hour

DAY = date(2026, 11, 2)
LATER = "2026-11-02-06:00"
QUOTE = "Every house on the hillside has been checked,"
# What is published: the article's own span of the quote, without the model's trailing comma.
SHOWN_QUOTE = QUOTE.rstrip(",")
HTML = etree.HTMLParser()


def _with_quote(req):
    """The fake model's briefing plus the page's quotation (verbatim, so it passes the checks)."""
    answer = default_responder(req)
    if isinstance(answer, dict) and "quotes" in answer:
        answer["quotes"] = [{"text": QUOTE, "speaker": "Marta Ruiz", "role": "the regional emergency chief",
                             "article_id": "a1"}]
    return answer


def briefing_requests(req) -> bool:
    return "target_languages" in req.user_text and '"point_1"' in req.user_text


def _story(conn):
    add_story(conn, "s1", 3, langs=("en",))
    _page(conn, "s1-i0")
    _page(conn, "s1-i1", PAGE.replace("at dawn on Tuesday", "early on Tuesday"))


def _briefing(conn, story_id="s1"):
    row = conn.execute("SELECT briefing, material, lang FROM story_briefings WHERE story_id = %s", (story_id,)).fetchone()
    conn.commit()
    return row


def _rows(conn, story_id="s1") -> dict[str, tuple]:
    rows = conn.execute("SELECT lang, status, material, lines, error FROM briefing_translations WHERE story_id = %s",
                        (story_id,)).fetchall()
    conn.commit()
    return {lang: rest for lang, *rest in rows}


def _records(conn):
    return load_records(conn, [Selected(1, "s1", None, None, 0.0)])


def _publish(conn, out, langs=("en", "fr", "de")):
    settings = PublishSettings(output_dir=out, base_url="https://news.example.org/")
    result = publish_hour(conn, HOUR, settings, list(langs), now=HOUR + timedelta(hours=2), force=True)
    assert result.skipped is None


def _page_briefing(out, lang, story_id="s1"):
    """(points as (text, lang attribute, refs), quotes as (text, lang attribute, refs)) of a story page."""
    page = etree.parse(str(out / lang / "story" / f"{story_id}.html"), HTML)
    section = page.find(".//section[@class='briefing']")

    def line(el):
        refs = tuple(a.text for a in el.iter("a") if a.get("class") == "ref")
        return " ".join((el.text or "").split()), el.get("lang"), refs

    points = [line(li) for li in section.iter("li")]
    quotes = [(" ".join(fig.find("blockquote/p").text.split()), fig.find("blockquote").get("lang"), line(fig)[2])
              for fig in section.iter("figure")]
    return points, quotes


def _page_summary(out, lang, story_id="s1"):
    """(text, lang attribute, refs) of a story page's briefing summary."""
    page = etree.parse(str(out / lang / "story" / f"{story_id}.html"), HTML)
    (summary,) = page.xpath("//section[@class='briefing']/p[@class='summary']")
    return (" ".join((summary.text or "").split()), summary.get("lang"),
            tuple(a.text for a in summary.iter("a") if a.get("class") == "ref"))


# ------------------------------------------------------------------ pure
STORED = {
    "category": "disasters",
    "summary": {"text": "The quake struck at dawn.", "citations": ["i1"], "lang": "en"},
    "points": [{"text": "Teams reached Tolosa.", "citations": ["i1", "i2"], "lang": "en"},
               {"text": "", "citations": ["i2"], "lang": "en"},
               {"text": "Two bridges are closed.", "citations": ["i2"], "lang": "en"}],
    "quotes": [{"text": QUOTE, "speaker": "Marta Ruiz", "role": None, "article_id": "i1", "lang": "en"}],
    "perspectives": [{"text": "Spanish outlets stress the rescue.", "citations": ["i2"], "country": "es",
                      "lang": "en"}],
    "players": ["Marta Ruiz"], "places": ["Tolosa"],
}


def test_fields_are_the_lines_to_read_never_the_quotes():
    fields = briefing_fields(STORED)
    # A line's place in its list names it: the empty second point shifts nothing.
    assert fields == {"summary": "The quake struck at dawn.", "point_1": "Teams reached Tolosa.",
                      "point_3": "Two bridges are closed.", "perspective_1": "Spanish outlets stress the rescue."}
    assert QUOTE not in json.dumps(fields)
    assert briefing_fields({"points": "not a list", "summary": None}) == {}


def test_background_and_watch_lines_are_translated_with_their_citations_kept():
    stored = {**STORED, "background": [{"text": "The valley was hit in 1931.", "citations": [], "stories": ["s0"],
                                        "lang": "en"}],
              "watch": [{"text": "Parliament votes on Friday.", "citations": ["i2"], "stories": [], "lang": "en"}]}
    fields = briefing_fields(stored)
    assert fields["background_1"] == "The valley was hit in 1931." and fields["watch_1"] == "Parliament votes on Friday."
    shown = translated_briefing(stored, {name: f"[ja] {text}" for name, text in fields.items()}, "ja")
    assert shown["background"] == [{"text": "[ja] The valley was hit in 1931.", "citations": [], "stories": ["s0"],
                                    "lang": "ja"}]
    assert shown["watch"][0]["citations"] == ["i2"] and shown["watch"][0]["lang"] == "ja"
    # A briefing stored before background existed has the same fields as before.
    assert briefing_fields(STORED) == {k: v for k, v in fields.items() if not k.startswith(("background", "watch"))}


def test_translated_lines_replace_the_texts_only():
    lines = {name: f"[fr] {text}" for name, text in briefing_fields(STORED).items()}
    shown = translated_briefing(STORED, lines, "fr")
    assert shown["summary"] == {"text": "[fr] The quake struck at dawn.", "citations": ["i1"], "lang": "fr"}
    assert [(p["text"], p["citations"], p["lang"]) for p in shown["points"]] == [
        ("[fr] Teams reached Tolosa.", ["i1", "i2"], "fr"), ("", ["i2"], "en"), ("[fr] Two bridges are closed.", ["i2"], "fr")]
    assert shown["perspectives"][0] == {**STORED["perspectives"][0], "text": "[fr] Spanish outlets stress the rescue.",
                                        "lang": "fr"}
    assert shown["quotes"] == STORED["quotes"] and shown["players"] == STORED["players"]
    assert STORED["points"][0]["text"] == "Teams reached Tolosa."           # the stored briefing is untouched
    # Lines of another version of the briefing (one more, one less, an empty one) are never used.
    for other in ({**lines, "point_4": "[fr] x"}, {k: v for k, v in lines.items() if k != "point_3"},
                  {**lines, "summary": ""}, None):
        assert translated_briefing(STORED, other, "fr") == STORED


def test_a_reply_with_a_line_more_or_less_is_invalid():
    fields = briefing_fields(STORED)
    good = {name: f"[de] {text}" for name, text in fields.items()}
    assert validate_exact_translations({"translations": {"de": good}}, fields, ["de"]) == {"de": good}
    for bad in ({**good, "point_2": "[de] invented"}, {k: v for k, v in good.items() if k != "point_1"},
                {**good, "summary": ["a", "list"]}):
        with pytest.raises(OutputInvalid):
            validate_exact_translations({"translations": {"de": bad}}, fields, ["de"])
    # Control and bidi characters go; the line is one line.
    cleaned = validate_exact_translations({"translations": {"de": {**good, "point_1": "Zeile\u202e\x00\n zwei"}}},
                                          fields, ["de"])
    assert cleaned["de"]["point_1"] == "Zeile zwei"


def test_the_digest_point_is_the_readers_translation():
    lines = {name: f"[ja] {text}" for name, text in briefing_fields(STORED).items()}
    stored = StoryBriefing("disasters", "model", STORED, {"i1": "Reuters", "i2": "BBC News"},
                           {"ja": translated_briefing(STORED, lines, "ja")})
    ja, en = briefing_points(stored, lang="ja"), briefing_points(stored, lang="en")
    assert [(p.text, p.lang) for p in ja] == [("[ja] Teams reached Tolosa.", "ja"), ("[ja] Two bridges are closed.", "ja")]
    assert [p.outlets for p in ja] == [p.outlets for p in en] == [("Reuters", "BBC News"), ("BBC News",)]
    assert [p.lang for p in en] == ["en", "en"]


# ------------------------------------------------------------------ through the stages
def test_briefed_then_translated_and_shown_in_each_language(conn, clean_db, fake, llm_env, online, tmp_path):  # noqa: F811
    _story(conn)
    fake.responder = _with_quote
    result = run(["story_scores", "story_translations"], clean_db, online())
    briefing, material, source_lang = _briefing(conn)
    assert source_lang == "en" and briefing["quotes"][0]["text"] == SHOWN_QUOTE
    fields = briefing_fields(briefing)
    assert "summary" in fields and "point_1" in fields
    # Every published language but the briefing's own, done, for this version of the briefing.
    rows = _rows(conn)
    assert set(rows) == set(LANGS)
    for lang, (status, row_material, lines, error) in rows.items():
        assert (status, row_material, error) == (0, material, None)
        assert lines == {name: f"[{lang}] {text}" for name, text in fields.items()}
    # 10 languages, 2 per call; the quote is never a line of its own (a point may report what was said).
    sent = [json.loads(r.user_text)["fields"] for r in fake.requests if briefing_requests(r)]
    assert len(sent) == 5 and all(sent_fields == fields for sent_fields in sent)
    assert set(fields) == {"summary", *(f"point_{n}" for n in range(1, len(briefing["points"]) + 1))}
    calls = conn.execute("SELECT count(*), sum(tokens_in), bool_and(cost_usd > 0), bool_and(story_id = 's1') "
                         "FROM llm_calls WHERE task = %s AND status = 'ok'", (BRIEFING_TASK,)).fetchone()
    assert calls == (5, 600, True, True)
    meta = {k: getattr(v, "value", v) for k, v in result["story_translations"].metadata.items()}
    assert (meta["briefing_batches"], meta["briefing_batches_ok"], meta["briefing_rows_translated"]) == (5, 5, 10)
    assert meta["briefing_translation_calls"] == 5 and meta["briefing_translation_status"] == {"done": 10}
    assert meta["batches_ok"] == 5                                    # the headlines' own batches, as before
    assert KEY not in json.dumps({k: str(v) for k, v in meta.items()})

    # The site: the translated points in French and German with the same citations; the quote as it was said.
    _publish(conn, tmp_path)
    en_points, en_quotes = _page_briefing(tmp_path, "en")
    assert en_points and all(lang is None and refs for _, lang, refs in en_points)
    for lang in ("fr", "de"):
        points, quotes = _page_briefing(tmp_path, lang)
        assert [(text, refs) for text, _, refs in points] == [(f"[{lang}] {text}", refs) for text, _, refs in en_points]
        assert all(attr is None for _, attr, _ in points)              # in the page's language: no lang mark
        assert [(text, refs) for text, _, refs in quotes] == [(text, refs) for text, _, refs in en_quotes]
        assert quotes[0][0] == SHOWN_QUOTE and quotes[0][1] == "en" and quotes[0][2]   # as said, marked, cited
    # The summary too, above the points: the reader's translation, the same numbered sources.
    en_summary = _page_summary(tmp_path, "en")
    assert en_summary[0] == briefing["summary"]["text"] and en_summary[1] is None and en_summary[2]
    for lang in ("fr", "de"):
        assert _page_summary(tmp_path, lang) == (f"[{lang}] {en_summary[0]}", None, en_summary[2])

    # The digest: the same lines in the reader's language, followed by the same outlets.
    digest = render_day(conn, DAY, ["en", "fr"], outbox_dir=tmp_path / "outbox")
    en_text, fr_text = digest.files["en"].rendered.text, digest.files["fr"].rendered.text
    first = briefing["points"][0]["text"]
    assert first in en_text and f"[fr] {first}" in fr_text and f"[fr] {first}" in digest.files["fr"].rendered.html
    assert f"[fr] {first}" not in en_text
    (record,) = _records(conn)
    fr_points, en_digest_points = briefing_points(record.briefing, lang="fr"), briefing_points(record.briefing, lang="en")
    assert fr_points and [p.outlets for p in fr_points] == [p.outlets for p in en_digest_points]
    assert [(p.text, p.lang) for p in fr_points] == [(f"[fr] {p.text}", "fr") for p in en_digest_points]


def test_a_new_briefing_invalidates_its_translations(conn, clean_db, fake, llm_env, online, tmp_path):  # noqa: F811
    _story(conn)
    run(["story_scores", "story_translations"], clean_db, online())
    _, old_material, _ = _briefing(conn)
    assert {row[0] for row in _rows(conn).values()} == {0}
    # A new article in the next hour: the story is briefed again (new material) ...
    grow_story(conn, "s1", 1, HOUR + timedelta(hours=1))
    _page(conn, "s1-i3", "Engineers reopened the northern bridge on Wednesday.\nThe southern bridge stays shut.")
    run(["story_scores"], clean_db, online(), partition=LATER)
    briefing, material, _ = _briefing(conn)
    assert material != old_material
    # ... and until its lines are translated, readers see them in the briefing's language, never the old ones.
    (record,) = _records(conn)
    assert record.briefing.translated == {}
    points = briefing_points(record.briefing, lang="fr")
    assert points and all(p.lang == "en" and not p.text.startswith("[fr]") for p in points)
    _publish(conn, tmp_path, ("en", "fr"))
    assert not any(text.startswith("[fr]") for text, _, _ in _page_briefing(tmp_path, "fr")[0])

    fake.reset()
    run(["story_translations"], clean_db, online(), partition=LATER)
    fields = briefing_fields(briefing)
    for lang, (status, row_material, lines, _) in _rows(conn).items():
        assert (status, row_material) == (0, material)
        assert lines == {name: f"[{lang}] {text}" for name, text in fields.items()}
    # One call per batch for the new version (a line that did not change may be a reused answer).
    calls = conn.execute("SELECT count(*) FROM llm_calls WHERE task = %s AND partition_hour = %s",
                         (BRIEFING_TASK, HOUR + timedelta(hours=1))).fetchone()[0]
    conn.commit()
    assert calls == 5
    _publish(conn, tmp_path, ("en", "fr"))
    assert [text for text, _, _ in _page_briefing(tmp_path, "fr")[0]] == [
        f"[fr] {text}" for text, _, _ in _page_briefing(tmp_path, "en")[0]]
    # Done rows of the current version are not asked for again.
    fake.reset()
    run(["story_translations"], clean_db, online(), partition=LATER)
    assert fake.count(briefing_requests) == 0


def _extra_line(req):
    payload = json.loads(req.user_text)
    return {"translations": {lang: {**{k: f"[{lang}] {v}" for k, v in payload["fields"].items()},
                                    "point_9": "an invented line"} for lang in payload["target_languages"]}}


def _missing_line(req):
    payload = json.loads(req.user_text)
    return {"translations": {lang: {k: f"[{lang}] {v}" for k, v in payload["fields"].items() if k != "point_1"}
                             for lang in payload["target_languages"]}}


@pytest.mark.parametrize("reply", [_extra_line, _missing_line, lambda req: '{"translations": ['])
def test_a_malformed_reply_fails_that_batch_only(conn, clean_db, fake, llm_env, online, tmp_path, reply):  # noqa: F811
    _story(conn)
    run(["story_scores"], clean_db, online())
    fake.push(Reply.json(reply), match=lambda r: briefing_requests(r) and '"de"' in r.user_text, times=100)
    result = run(["story_translations"], clean_db, online(max_attempts=2))
    rows = _rows(conn)
    assert tuple(rows.pop("de")[:2]) == tuple(rows.pop("es")[:2]) == (-1, _briefing(conn)[1])
    assert {row[0] for row in rows.values()} == {0}
    # The headline and summary translations are not touched by the briefing's failure.
    assert {s for (s,) in conn.execute("SELECT status FROM story_translations WHERE story_id = 's1'")} == {0}
    invalid = conn.execute("SELECT count(*) FROM llm_calls WHERE task = %s AND status = 'invalid'",
                           (BRIEFING_TASK,)).fetchone()[0]
    assert invalid == 2                                               # every paid attempt recorded
    conn.commit()
    meta = {k: getattr(v, "value", v) for k, v in result["story_translations"].metadata.items()}
    assert (meta["briefing_batches_ok"], meta["briefing_batches_failed_permanent"]) == (4, 1)
    # The German page keeps the lines in English (marked), the French one is translated.
    _publish(conn, tmp_path)
    assert all(attr == "en" and not text.startswith("[") for text, attr, _ in _page_briefing(tmp_path, "de")[0])
    assert all(text.startswith("[fr] ") for text, _, _ in _page_briefing(tmp_path, "fr")[0])
    # -1 is not retried.
    fake.reset()
    run(["story_translations"], clean_db, online())
    assert fake.count(briefing_requests) == 0


def test_offline_nothing_is_translated_until_an_endpoint_answers(conn, clean_db, fake, llm_env, online, monkeypatch,  # noqa: F811
                                                                 tmp_path):
    monkeypatch.delenv("NEWSDEDUP_LLM_BASE_URL", raising=False)
    monkeypatch.setenv("NEWSDEDUP_TRANSLATION_LANGS", ",".join(LANGS))
    _story(conn)
    result = run(["story_scores", "story_translations"], clean_db, LLMResource())
    assert fake.count() == 0
    rows = _rows(conn)
    assert set(rows) == set(LANGS)
    assert all((status, lines, error) == (2, None, OFFLINE_NOTE) for status, _, lines, error in rows.values())
    meta = {k: getattr(v, "value", v) for k, v in result["story_translations"].metadata.items()}
    assert meta["briefing_batches"] == 0 and meta["briefing_translation_status"] == {"skipped (offline)": 10}
    _publish(conn, tmp_path, ("en", "fr"))
    en_points = _page_briefing(tmp_path, "en")[0]
    assert en_points and _page_briefing(tmp_path, "fr")[0] == [(text, "en", refs) for text, _, refs in en_points]
    # An endpoint configured later: the skipped lines of a recent briefing are translated.
    run(["story_translations"], clean_db, online())
    assert fake.count(briefing_requests) == 5
    assert {row[0] for row in _rows(conn).values()} == {0}
