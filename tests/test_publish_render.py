"""Pure parts of the publish stage: feed builders on hostile text (property-based), stamps,
selection, atomic writes, settings."""

from __future__ import annotations

import json
import os
import xml.etree.ElementTree as ET
from datetime import UTC, datetime, timedelta
from html.parser import HTMLParser
from urllib.parse import urlsplit, urlunsplit

import feedparser
import pytest
from helpers import calibrate
from hypothesis import HealthCheck, example, given, settings, strategies as st

from newsdedup_dagster import config
from newsdedup_dagster.shared.presentation.labels import labels_for
from newsdedup_dagster.shared.presentation.stories import SourceLink, StoryRecord, clean_line
from newsdedup_dagster.shared.presentation.write import atomic_write
from newsdedup_dagster.stages.publish.model import (
    FeedCandidate,
    SourceArticle,
    decide_stamp,
    fingerprint,
    safe_name,
    story_views,
    valid_lang_tag,
)
from newsdedup_dagster.stages.publish.render import (
    ATOM_NS,
    FeedMeta,
    build_atom,
    build_json_feed,
    render_index,
    render_story,
    xml_text,
)
from newsdedup_dagster.stages.publish.select import select_day, select_feed

T = datetime(2026, 11, 2, 11, 0, tzinfo=UTC)
ANY_TEXT = st.text(alphabet=st.characters(blacklist_categories=()), max_size=80)


def _record(headline="Headline", summary="Summary.", sources=None, lang="en") -> StoryRecord:
    r = StoryRecord("s1", 6.0, headline, summary, lang, headline, lang, T - timedelta(hours=2))
    r.sources.extend(sources or [SourceLink("Outlet", "https://outlet.example/a?x=1&y=2", "en")])
    r.source_total = len(r.sources)
    return r


def _candidate(sid="s1", sig=6.0, first_h=-2.0, latest_h=-1.0, sources=1, articles=1) -> FeedCandidate:
    return FeedCandidate(sid, sig, None, T + timedelta(hours=first_h), T + timedelta(hours=latest_h), articles,
                         sources, ("en",), "h-" + sid)


def _meta(lang="en") -> FeedMeta:
    return FeedMeta(lang, "ltr", "Feed <title> & co", "sub", "site", "https://news.example.org/", "tag:x,2026:feed/en",
                    T, labels_for(lang))


def _view(record: StoryRecord, lang="en"):
    view = story_views(T.date(), lang, [record], {"s1": _candidate()})[0]
    view.entry_id, view.published_at, view.updated_at = "tag:x,2026-11-02:story/s1/en", T, T
    return view


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(headline=ANY_TEXT, summary=ANY_TEXT, source=ANY_TEXT, url=ANY_TEXT)
def test_any_text_gives_a_valid_atom_feed_and_json_feed(headline, summary, source, url):
    record = _record(headline or "x", summary, [SourceLink(source, url, "en"),
                                                SourceLink(source, "https://ok.example/" + url, "xx-!!")])
    view = _view(record)
    atom = build_atom(_meta(), [view])
    parsed = feedparser.parse(atom)
    assert not parsed.bozo, parsed.get("bozo_exception")
    assert len(parsed.entries) == 1
    entry = parsed.entries[0]
    assert entry.id == view.entry_id
    # Exact text through a plain XML parser (feedparser "repairs" text that looks like mojibake,
    # e.g. "Â¡" -> "¡", so it is not the reference for the text itself).
    title = ET.fromstring(atom).find(f"{{{ATOM_NS}}}entry/{{{ATOM_NS}}}title").text or ""
    assert title == xml_text(clean_line(headline or "x"))
    for link in entry.links:
        assert link.href.startswith(("https://", "http://"))
    data = json.loads(build_json_feed(_meta(), [view]))
    assert data["items"][0]["title"] == view.headline
    assert all(s["url"].startswith(("https://", "http://")) for s in data["items"][0]["_newsdedup"]["sources"])


def test_unsafe_links_are_dropped_and_markup_escaped():
    record = _record('<script>alert(1)</script>', 'a "quote" & <b>', [
        SourceLink("<i>Evil</i>", "javascript:alert(1)", "en"),
        SourceLink("Data", "data:text/html,<script>", "en"),
        SourceLink("Relative", "/local/path", "en"),
        SourceLink("Good", "https://good.example/x", "en")])
    view = _view(record)
    assert [s.url for s in view.sources] == ["", "", "", "https://good.example/x"]
    atom = build_atom(_meta(), [view]).decode()
    assert "javascript:" not in atom and "data:text" not in atom and "<script>" not in atom
    page = render_story(_meta(), view, ["fr"])
    assert "&lt;script&gt;" in page and "&lt;i&gt;Evil&lt;/i&gt;" in page and "<i>Evil" not in page
    assert 'href="javascript' not in page and 'href="data:' not in page and 'href="/local' not in page
    assert "Feed &lt;title&gt; &amp; co" in page
    index = render_index(_meta(), T.date(), [view])
    assert "&lt;script&gt;" in index and "<script>" not in index


def test_untranslated_entry_says_so_and_carries_its_language():
    record = _record("Séisme sur la côte", "Résumé.", lang="fr")
    view = story_views(T.date(), "en", [record], {"s1": _candidate()})[0]
    assert view.is_original and view.headline_lang == "fr"
    view.entry_id, view.published_at, view.updated_at = "tag:x,2026:s1", T, T
    entry = feedparser.parse(build_atom(_meta(), [view])).entries[0]
    assert entry.title_detail.language == "fr"
    assert "headline in French, no translation yet" in entry.content[0].value
    translated = _record("Earthquake", "Summary.", lang="fr")
    translated.translations["en"] = ("Quake on the coast", "English summary.")
    view = story_views(T.date(), "en", [translated], {"s1": _candidate()})[0]
    assert not view.is_original and view.headline == "Quake on the coast" and view.headline_lang == "en"


def test_stamps_new_unchanged_updated_never_backwards():
    new = decide_stamp(None, "fp1", T, "news.example.org", "s1", "en")
    assert new.status == "new" and new.entry_id == "tag:news.example.org,2026-11-02:story/s1/en"
    assert new.published_at == new.updated_at == T
    stored = (new.entry_id, new.published_at, new.updated_at, "fp1")
    later = T + timedelta(hours=1)
    same = decide_stamp(stored, "fp1", later, "other.example", "s1", "en")
    assert same.status == "unchanged" and same.updated_at == T and same.entry_id == new.entry_id
    grown = decide_stamp(stored, "fp2", later, "other.example", "s1", "en")
    assert grown.status == "updated" and grown.updated_at == later and grown.published_at == T
    assert grown.entry_id == new.entry_id  # the id is never re-minted
    # A change seen by an earlier hour's rerun still moves `updated` forward.
    rerun = decide_stamp((new.entry_id, T, later, "fp2"), "fp3", T, "x", "s1", "en")
    assert rerun.updated_at > later


def test_fingerprint_follows_articles_score_and_text():
    view = _view(_record())
    base = fingerprint(view, "a")
    assert fingerprint(view, "a") == base and fingerprint(view, "b") != base
    view.significance = 7.0
    assert fingerprint(view, "a") != base


def test_selection_window_and_day():
    cands = [_candidate("recent-low", 3.0, -2, -1), _candidate("recent-high", 8.0, -3, -2),
             _candidate("old", 9.0, -10, -9), _candidate("future", 9.5, 1, 2),
             _candidate("tie-more-sources", 3.0, -2, -1, sources=3)]
    hour = T - timedelta(hours=1)  # the hour 10:00-11:00
    feed = [c.story_id for c in select_feed(cands, T, window_hours=6, max_stories=10)]
    assert feed == ["recent-high", "tie-more-sources", "recent-low"]
    assert [c.story_id for c in select_feed(cands, T, window_hours=6, max_stories=2)] == ["recent-high", "tie-more-sources"]
    assert [c.story_id for c in select_feed(cands, T, 0, 1)] == ["old"]  # top N with no time window
    assert [c.story_id for c in select_feed(cands, T, 6, 10, min_significance=5)] == ["recent-high"]
    assert [c.story_id for c in select_day(cands, hour, 10)] == ["old", "recent-high", "tie-more-sources", "recent-low"]


def test_atomic_write_replaces_whole_files_and_skips_identical(tmp_path, monkeypatch):
    path = tmp_path / "en" / "atom.xml"
    assert atomic_write(path, "one") is True and path.read_text() == "one"
    assert atomic_write(tmp_path / "odd.json", "a\ud800b") is True  # lone surrogate: replaced, not fatal
    assert oct(path.stat().st_mode & 0o777) == "0o644"
    mtime = path.stat().st_mtime_ns
    assert atomic_write(path, "one") is False and path.stat().st_mtime_ns == mtime

    def fail(src, dst):
        raise OSError("disk full")

    monkeypatch.setattr(os, "replace", fail)
    with pytest.raises(OSError):
        atomic_write(path, "two")
    assert path.read_text() == "one"
    assert [p.name for p in path.parent.iterdir()] == ["atom.xml"]  # no temporary file left behind


def test_names_and_language_tags():
    assert safe_name("ab12-cd_3") == "ab12-cd_3"
    assert safe_name("../etc/passwd").startswith("x") and "/" not in safe_name("../etc/passwd")
    assert valid_lang_tag("pt-BR") == "pt-BR" and valid_lang_tag("und") is None and valid_lang_tag('"><') is None


def test_publish_settings(monkeypatch, tmp_path):
    monkeypatch.setenv("NEWSDEDUP_PUBLISH_BASE_URL", "https://news.example.org/sub")
    monkeypatch.setenv("NEWSDEDUP_PUBLISH_DIR", str(tmp_path / "out"))
    monkeypatch.setenv("NEWSDEDUP_PUBLISH_LANGS", "en, ja")
    s = config.publish_settings()
    assert s.base_url == "https://news.example.org/sub/" and s.output_dir == tmp_path / "out"
    assert s.feed_langs(config.llm_settings()) == ("en", "ja")
    monkeypatch.setenv("NEWSDEDUP_PUBLISH_BASE_URL", "javascript:alert(1)")
    with pytest.raises(ValueError, match="BASE_URL"):
        config.publish_settings()
    monkeypatch.delenv("NEWSDEDUP_PUBLISH_BASE_URL")
    calibrate(monkeypatch, tmp_path, publish={"window_hours": 0, "max_stories": 0})
    with pytest.raises(ValueError, match="not both"):
        config.publish_settings()


class _Tags(HTMLParser):
    def __init__(self):
        super().__init__()
        self.tags: set[str] = set()
        self.attrs: list[tuple[str, str | None]] = []
        self.text: list[str] = []

    def handle_starttag(self, tag, attrs):
        self.tags.add(tag)
        self.attrs.extend(attrs)

    def handle_data(self, data):
        self.text.append(data)


PAGE_TAGS = {"html", "head", "meta", "title", "link", "style", "body", "header", "nav", "ul", "li", "a", "main",
             "article", "h1", "h2", "p", "span", "time", "div", "footer", "strong", "bdi"}


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(headline=ANY_TEXT, summary=ANY_TEXT, source=ANY_TEXT)
def test_any_text_stays_text_on_the_pages(headline, summary, source):
    articles = {"s1": [SourceArticle(source, "https://ok.example/a", "en", headline, T)]}
    view = story_views(T.date(), "en", [_record(headline or "x", summary)], {"s1": _candidate()}, articles)[0]
    view.entry_id, view.published_at, view.updated_at = "tag:x,2026:s1", T, T
    story_page = render_story(_meta(), view, ["fr"])
    for page in (story_page, render_index(_meta(), T.date(), [view])):
        parser = _Tags()
        parser.feed(page)
        parser.close()
        assert parser.tags <= PAGE_TAGS, parser.tags - PAGE_TAGS   # no element came from the data
        assert not any(name.startswith("on") for name, _ in parser.attrs)
        assert view.headline in "".join(parser.text)
        if page is story_page:  # the article's own headline, listed with its source, is text too
            assert view.sources[0].title in "".join(parser.text)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(path=ANY_TEXT, query=ANY_TEXT, fragment=ANY_TEXT)
@example(path="?", query="", fragment="").via("a path that ends in an empty query")
@example(path="a#", query="", fragment="").via("a path that ends in an empty fragment")
def test_any_link_becomes_a_uri_the_validators_accept(path, query, fragment):
    from feed_validators import uri_problem

    from newsdedup_dagster.stages.publish.model import publisher_host, uri_text

    # (An empty query or fragment, "?" or "#" alone, is dropped: the same resource.)
    url = f"https://news.example.org/{path}" + (f"?{query}" if query else "") + (f"#{fragment}" if fragment else "")
    encoded = uri_text(url)
    assert uri_problem(encoded) is None, encoded
    assert uri_text(encoded) == encoded                       # encoding twice changes nothing
    assert publisher_host(encoded) == "news.example.org"
    # A valid ASCII URI stays as it was (non-ASCII IRI characters are mapped to UTF-8 escapes,
    # RFC 3987 section 3.1).
    # (The path may itself end in "?" or "#": that empty part is dropped too.)
    parts = urlsplit(url)
    empty_part = ("?" in url.split("#", 1)[0] and not parts.query) or ("#" in url and not parts.fragment)
    if uri_problem(url) is None and "%" not in url and url.isascii():
        assert encoded == (urlunsplit(parts) if empty_part else url)


def test_publisher_host_and_outlet_name():
    from newsdedup_dagster.stages.publish.model import outlet_name, publisher_host

    assert publisher_host("https://WWW.Reuters.com/world/x") == "reuters.com"
    assert publisher_host("https://amp.theguardian.com/a") == "theguardian.com"
    assert publisher_host("javascript:alert(1)") is None and publisher_host("") is None
    google = publisher_host("https://news.google.com/rss?hl=en")
    assert outlet_name("Google News (English)", True, "reuters.com", google) == "reuters.com"
    # An aggregator's own link (an opaque redirect) stays the aggregator's.
    assert outlet_name("Google News (English)", True, "news.google.com", google) == "Google News (English)"
    assert outlet_name("Reuters", False, "reuters.com", "reuters.com") == "Reuters"
    # items.outlet is a registrable domain: an undecodable Google link is attributed to google.com,
    # which is the aggregator's own domain, not another outlet.
    assert outlet_name("Google News (English)", True, "google.com", google) == "Google News (English)"
    assert outlet_name("Google News (English)", True, "source:gnews-en", google) == "Google News (English)"
