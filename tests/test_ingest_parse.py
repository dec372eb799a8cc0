"""Parsing malformed and unusual feeds, served over a real HTTP server, plus pure unit tests."""

from __future__ import annotations

import time
from datetime import UTC, datetime, timedelta

import pytest
from feedserver import (
    FIXED_FETCH_TIME,
    rss,
    rss_entries,
    run_scenario,
)

from newsdedup_dagster.shared.http.fetch import FetchRequest
from newsdedup_dagster.shared.text.encoding import decode_feed_bytes
from newsdedup_dagster.shared.text.sanitise import clean_text
from newsdedup_dagster.stages.ingest.feed_parse import parse_feed
from newsdedup_dagster.stages.ingest.parse_types import ParseConfig


def serve(feed_server, path, body, content_type="application/rss+xml; charset=utf-8", **kwargs):
    feed_server.add(path, body, content_type=content_type, **kwargs)
    return FetchRequest(path.strip("/").split(".")[0], feed_server.url(path), allow_private=True)


# ------------------------------------------------------------------ malformed documents


def test_invalid_xml_keeps_what_parses(feed_server):
    body = (b'<?xml version="1.0" encoding="utf-8"?><rss version="2.0"><channel><title>Broken</title>'
            b"<item><title>First story</title><link>https://ex.com/1</link></item>"
            b"<item><title>Second story &amp; more</title><link>https://ex.com/2</link></item>"
            b"<item><title>Third <b>unclosed</title><link>https://ex.com/3</link></item>"
            b"<item><title>Fourth & bare ampersand</title><link>https://ex.com/4</link>")
    result, parsed = run_scenario(feed_server, serve(feed_server, "/broken.xml", body))
    assert result.status == "ok"
    assert parsed.error is None
    assert parsed.bozo_error  # the parser's complaint is recorded
    titles = [item.title for item in parsed.items]
    assert titles[:2] == ["First story", "Second story & more"]
    assert len(titles) >= 3


def test_html_page_instead_of_feed(feed_server):
    body = b"<!DOCTYPE html><html><head><title>Welcome</title></head><body><h1>Our news</h1></body></html>"
    result, parsed = run_scenario(feed_server, serve(feed_server, "/page.html", body, content_type="text/html; charset=utf-8"))
    assert result.status == "ok"
    assert parsed.items == ()
    assert parsed.error == "not a feed: got an HTML page (text/html)"


def test_empty_feed_and_empty_body(feed_server):
    empty_feed = rss([])
    _, parsed = run_scenario(feed_server, serve(feed_server, "/empty.xml", empty_feed))
    assert parsed.items == () and parsed.error is None and parsed.feed_format == "rss20"
    _, parsed_body = run_scenario(feed_server, serve(feed_server, "/nothing.xml", b""))
    assert parsed_body.items == () and parsed_body.error == "empty body: nothing to parse"


# ------------------------------------------------------------------ encodings

SAMPLES = {
    "shift_jis": ("ja", "東京で大きな地震が発生し、政府は緊急会議を開いた"),
    "euc-kr": ("ko", "서울에서 대통령이 새로운 경제 정책을 발표했다"),
    "gb2312": ("zh", "北京时间今天上午，国务院召开常务会议，研究部署经济工作"),
    "windows-1252": ("fr", "Café Müller – « Élections » à Zürich : la réforme des retraites"),
}


@pytest.mark.parametrize("encoding", list(SAMPLES))
@pytest.mark.parametrize("declaration", ["xml-decl", "http-only", "undeclared", "declared-utf8", "http-latin1"])
def test_wrong_or_missing_encoding_declarations(feed_server, encoding, declaration):
    language, text = SAMPLES[encoding]
    item = {"title": text, "link": "https://ex.com/a/1", "guid": "https://ex.com/a/1",
            "description": text + " (suite)", "pubDate": "Mon, 02 Nov 2026 10:00:00 +0000"}
    content_type = "application/rss+xml"
    if declaration == "xml-decl":
        body = rss([item], encoding=encoding, language=None)
    elif declaration == "http-only":
        body = rss([item], encoding=encoding, declare_encoding=False, language=None)
        content_type += f"; charset={encoding}"
    elif declaration == "undeclared":
        body = rss([item], encoding=encoding, declare_encoding=False, language=None)
    elif declaration == "declared-utf8":  # the commonest lie: UTF-8 claimed, legacy bytes sent
        body = rss([item], encoding=encoding, language=None).replace(encoding.encode(), b"utf-8", 1)
        content_type += "; charset=utf-8"
    else:  # a server default charset that contradicts the document
        body = rss([item], encoding=encoding, declare_encoding=False, language=None)
        content_type += "; charset=iso-8859-1"
    result, parsed = run_scenario(feed_server, serve(feed_server, f"/enc-{encoding}-{declaration}.xml", body, content_type),
                                  source_language=language)
    assert result.status == "ok"
    assert [i.title for i in parsed.items] == [text], (parsed.encoding, parsed.encoding_note)
    assert parsed.items[0].summary == text + " (suite)"
    assert parsed.items[0].language == language


def test_utf8_with_bom_and_wrong_header():
    text = "Ελληνικά νέα σήμερα"
    body = "\ufeff".encode() + rss([{"title": text, "link": "https://ex.com/g"}], language=None)
    decoded, codec, note = decode_feed_bytes(body, "text/xml; charset=windows-1252")
    assert codec == "utf-8" and text in decoded and note == "byte-order mark"


def test_valid_utf8_beats_a_wrong_legacy_declaration():
    body = rss([{"title": "Zürich café", "link": "https://ex.com/z"}])
    _, codec, note = decode_feed_bytes(body.replace(b"utf-8", b"iso-8859-1", 1))
    assert codec == "utf-8" and "valid UTF-8" in note


# ------------------------------------------------------------------ entries


def test_entries_without_link_title_or_date(feed_server):
    body = rss([
        {"title": "Has everything", "link": "https://ex.com/full", "guid": "g-full",
         "pubDate": "Mon, 02 Nov 2026 09:00:00 +0000"},
        {"title": "Guid is a URL", "guid": "https://ex.com/from-guid"},
        {"title": "Opaque guid, no link", "raw": None} if False else
        {"raw": '<item><title>Opaque guid, no link</title><guid isPermaLink="false">tag:ex.com,2026:42</guid></item>'},
        {"raw": "<item><title>Nothing but a title</title></item>"},
        {"raw": "<item><description>Only a description: the minister resigned after the vote on "
                "Tuesday evening, ending a week of speculation in the capital.</description>"
                "<link>https://ex.com/no-title</link></item>"},
        {"raw": "<item><guid isPermaLink='false'>bare</guid></item>"},
        {"title": "Bad date", "link": "https://ex.com/bad-date", "pubDate": "sometime last week"},
        {"title": "Updated only", "link": "https://ex.com/upd",
         "raw": "<item><title>Updated only</title><link>https://ex.com/upd</link>"
                "<atom:updated xmlns:atom='http://www.w3.org/2005/Atom'>2026-11-02T08:30:00Z</atom:updated></item>"},
        {"title": "From the future", "link": "https://ex.com/future", "pubDate": "Mon, 02 Nov 2026 18:00:00 +0000"},
        {"title": "From the past", "link": "https://ex.com/past", "pubDate": "Sat, 01 Jan 1994 00:00:00 +0000"},
        {"title": "Too old by max_age", "link": "https://ex.com/old", "pubDate": "Mon, 02 Nov 2020 10:00:00 +0000"},
    ])
    _, parsed = run_scenario(feed_server, serve(feed_server, "/partial.xml", body))
    items = {item.title: item for item in parsed.items}
    assert items["Has everything"].published_at == datetime(2026, 11, 2, 9, tzinfo=UTC)
    assert items["Has everything"].date_flag is None and items["Has everything"].date_origin == "published"
    assert items["Guid is a URL"].url == "https://ex.com/from-guid"
    opaque = items["Opaque guid, no link"]
    assert opaque.url is None and opaque.canonical_url.startswith("urn:newsdedup:partial:")
    title_only = items["Nothing but a title"]
    assert title_only.url is None and title_only.canonical_url.startswith("urn:newsdedup:partial:")
    assert title_only.published_at == FIXED_FETCH_TIME and title_only.date_flag == "missing"
    synthetic = [item for item in parsed.items if item.title_origin == "summary"]
    assert len(synthetic) == 1 and synthetic[0].title.startswith("Only a description: the minister resigned")
    assert synthetic[0].title.endswith("…") and len(synthetic[0].title) <= 101
    assert items["Bad date"].date_flag == "unparseable"
    assert items["Updated only"].date_origin == "updated"
    assert items["Updated only"].published_at == datetime(2026, 11, 2, 8, 30, tzinfo=UTC)
    assert items["From the future"].date_flag == "future_clamped"
    assert items["From the future"].published_at == FIXED_FETCH_TIME
    assert items["From the past"].date_flag == "too_old_clamped"
    assert items["Too old by max_age"].date_flag == "too_old_clamped"
    assert [s.reason for s in parsed.skipped] == ["no_title"]  # the entry with only a guid
    assert all(item.published_at.tzinfo == UTC for item in parsed.items)


def test_duplicate_guids_keep_one(feed_server):
    body = rss([
        {"title": "Original", "link": "https://ex.com/1", "guid": "same"},
        {"title": "Repeat with other link", "link": "https://ex.com/1-again", "guid": "same"},
        {"title": "Different guid, same article", "link": "https://ex.com/1?utm_source=x", "guid": "other"},
        {"title": "Second", "link": "https://ex.com/2", "guid": "two"},
    ])
    _, parsed = run_scenario(feed_server, serve(feed_server, "/dups.xml", body))
    assert [item.title for item in parsed.items] == ["Original", "Second"]
    assert [s.reason for s in parsed.skipped] == ["duplicate_guid", "duplicate_url"]
    assert parsed.skipped_counts == {"duplicate_guid": 1, "duplicate_url": 1}


def test_relative_links_in_atom(feed_server):
    body = b"""<?xml version="1.0" encoding="utf-8"?>
<feed xmlns="http://www.w3.org/2005/Atom" xml:lang="de">
  <title>Relative</title>
  <entry><id>tag:1</id><title>Root relative</title><link href="/politik/1"/><updated>2026-11-02T08:00:00Z</updated></entry>
  <entry><id>tag:2</id><title>Path relative</title><link href="artikel/2"/><updated>2026-11-02T08:00:00Z</updated></entry>
  <entry xml:base="https://cdn.example.de/sport/"><id>tag:3</id><title>With xml:base</title><link href="3.html"/>
    <updated>2026-11-02T08:00:00Z</updated></entry>
  <entry><id>tag:4</id><title>Alternate among many</title><link rel="enclosure" href="/media/4.mp3"/>
    <link rel="alternate" type="text/html" href="/politik/4"/><updated>2026-11-02T08:00:00Z</updated></entry>
</feed>"""
    feed_server.add("/news/feed.atom", body, content_type="application/atom+xml")
    _, parsed = run_scenario(feed_server, FetchRequest("atom", feed_server.url("/news/feed.atom"), allow_private=True))
    base = feed_server.base_url
    assert [item.url for item in parsed.items] == [
        f"{base}/politik/1", f"{base}/news/artikel/2", "https://cdn.example.de/sport/3.html", f"{base}/politik/4"]
    assert all(item.language == "de" for item in parsed.items)


def test_relative_links_resolve_against_final_url_after_redirect(feed_server):
    feed_server.add("/moved/feed.xml", rss([{"title": "Rel", "link": "story/9"}], link=""))
    feed_server.redirect("/old.xml", "/moved/feed.xml", status=301)
    _, parsed = run_scenario(feed_server, FetchRequest("moved", feed_server.url("/old.xml"), allow_private=True))
    assert parsed.items[0].url == feed_server.url("/moved/story/9")


def test_script_and_entities_in_titles(feed_server):
    body = rss([
        {"title": "AT&amp;amp;T &lt;b&gt;wins&lt;/b&gt; &amp;#39;big&amp;#39; &lt;script&gt;alert(1)&lt;/script&gt;deal",
         "link": "https://ex.com/t1",
         "description": "&lt;p&gt;Caf&amp;eacute;&amp;nbsp;news&lt;/p&gt;&lt;style&gt;p{color:red}&lt;/style&gt;"
                        "&lt;script&gt;document.write('x')&lt;/script&gt;&lt;br/&gt;line two"},
        {"title": "<![CDATA[Markets <em>rally</em> &amp; bonds fall]]>", "link": "https://ex.com/t2"},
        {"title": "Tabs\t and\n newlines   collapse", "link": "https://ex.com/t3"},
    ])
    _, parsed = run_scenario(feed_server, serve(feed_server, "/script.xml", body))
    titles = [item.title for item in parsed.items]
    assert titles == ["AT&T wins 'big' deal", "Markets rally & bonds fall", "Tabs and newlines collapse"]
    assert parsed.items[0].summary == "Café news line two"


def test_10000_entries_in_one_feed(feed_server):
    entries = rss_entries(10_000, prefix="bulk")
    body = rss(entries)
    request = serve(feed_server, "/bulk.xml", body)
    started = time.monotonic()
    result, parsed = run_scenario(feed_server, request, parse_config=ParseConfig(max_entries=10_000, time_budget=120))
    elapsed = time.monotonic() - started
    assert result.status == "ok" and len(result.body) > 2_000_000
    assert len(parsed.items) == 10_000 and len({item.item_id for item in parsed.items}) == 10_000
    assert parsed.items[-1].canonical_url == "https://news.example.com/bulk/9999"
    assert elapsed < 180  # a guard against a hang, not a speed figure (that is bench/ingest.py)


# ------------------------------------------------------------------ pure unit tests


def test_clean_text():
    assert clean_text("<p>Hello&nbsp;<b>world</b></p><script>alert(1)</script><style>.x{}</style>") == "Hello world"
    assert clean_text("a < b and c > d") == "a < b and c > d"
    assert clean_text("&lt;i&gt;double&lt;/i&gt; escaped") == "double escaped"
    assert clean_text("zero\u200bwidth\u00adsoft") == "zerowidthsoft"
    assert clean_text("e\u0301") == "\u00e9"  # NFC
    assert clean_text("x" * 50, max_chars=10) == "x" * 9 + "…"
    assert clean_text(None) == ""


def test_language_chain():
    body = b"""<?xml version="1.0"?><feed xmlns="http://www.w3.org/2005/Atom" xml:lang="en">
<title>t</title>
<entry xml:lang="fr"><id>1</id><title>Le gouvernement annonce une r\xc3\xa9forme</title><link href="https://ex.com/1"/></entry>
<entry><id>2</id><title>The government announces a reform</title><link href="https://ex.com/2"/></entry>
</feed>"""
    parsed = parse_feed(body, source_id="s", fetched_at=FIXED_FETCH_TIME, source_language="de")
    assert [(i.language, i.language_origin) for i in parsed.items] == [("fr", "entry"), ("en", "feed")]
    no_feed_language = rss([{"title": "Die Regierung kündigt eine Reform an", "link": "https://ex.com/3"}],
                           language=None)
    by_source = parse_feed(no_feed_language, source_id="s", fetched_at=FIXED_FETCH_TIME, source_language="de")
    assert (by_source.items[0].language, by_source.items[0].language_origin) == ("de", "source")
    detected = parse_feed(no_feed_language, source_id="s", fetched_at=FIXED_FETCH_TIME)
    assert (detected.items[0].language, detected.items[0].language_origin) == ("de", "detected")


def test_visible_before_selects_what_the_feed_showed_then():
    body = rss([
        {"title": "Early", "link": "https://ex.com/e", "pubDate": "Mon, 02 Nov 2026 09:10:00 +0000"},
        {"title": "In hour", "link": "https://ex.com/i", "pubDate": "Mon, 02 Nov 2026 10:59:59 +0000"},
        {"title": "Next hour", "link": "https://ex.com/n", "pubDate": "Mon, 02 Nov 2026 11:00:00 +0000"},
        {"title": "Undated", "link": "https://ex.com/u"},
    ])
    end = datetime(2026, 11, 2, 11, tzinfo=UTC)
    parsed = parse_feed(body, source_id="s", fetched_at=end - timedelta(seconds=1), visible_before=end)
    assert [i.title for i in parsed.items] == ["Early", "In hour", "Undated"]
    assert parsed.items[2].published_at == end - timedelta(seconds=1)
    assert [s.reason for s in parsed.skipped] == ["after_window"]


def test_max_age_is_configurable():
    body = rss([{"title": "Ten days old", "link": "https://ex.com/o", "pubDate": "Fri, 23 Oct 2026 12:00:00 +0000"}])
    default = parse_feed(body, source_id="s", fetched_at=FIXED_FETCH_TIME)
    strict = parse_feed(body, source_id="s", fetched_at=FIXED_FETCH_TIME, config=ParseConfig(max_age=timedelta(days=7)))
    assert default.items[0].date_flag is None
    assert strict.items[0].date_flag == "too_old_clamped"


def test_naive_fetch_time_rejected():
    with pytest.raises(ValueError):
        parse_feed(rss([]), source_id="s", fetched_at=datetime(2026, 1, 1))


def test_path_like_body_is_not_opened_as_a_file():
    parsed = parse_feed(b"/etc/hostname", source_id="s", fetched_at=FIXED_FETCH_TIME)
    assert parsed.items == () and parsed.error is not None
