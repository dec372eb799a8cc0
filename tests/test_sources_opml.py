"""OPML in and out (newsdedup_dagster/sources/opml.py): files shaped like Miniflux's and FreshRSS's
exports, hostile files (entity bombs, deep nesting, script and file addresses), property-based
tests of the reader, and the export checked against the rules Miniflux's and FreshRSS's importers
publish in their source, then read back by our own reader."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st
from opml_readers import FRESHRSS_EXPORT, MINIFLUX_EXPORT, conformance_problems, miniflux_subscriptions

from newsdedup_dagster.sources.opml import (
    MAX_DEPTH,
    ExportedFeed,
    OpmlRefused,
    feed_url_problem,
    read_opml,
    write_opml,
)


def test_miniflux_export_is_read_with_categories_titles_and_sites():
    document = read_opml(MINIFLUX_EXPORT)
    assert document.title == "Miniflux"
    assert [(f.title, f.category) for f in document.feeds] == [
        ("BBC News - World", "World"), ("Le Monde.fr - International", "World"), ("NHK", "All")]
    assert document.feeds[0].site_url == "https://www.bbc.co.uk/news/world"
    assert document.feeds[0].line == 9
    assert document.refused == ()


def test_freshrss_export_is_read_with_its_own_attributes_ignored():
    document = read_opml(FRESHRSS_EXPORT)
    assert [f.feed_url for f in document.feeds] == [
        "https://www.tagesschau.de/xml/rss2/", "https://feeds.elpais.com/mrss-s/pages/ep/site/elpais.com/portada"]
    assert [f.title for f in document.feeds] == ["tagesschau.de", "El País"]
    assert {f.category for f in document.feeds} == {"Uncategorized"}


def test_nested_categories_become_one_path_and_language_is_normalised():
    data = b"""<opml version="1.0"><head/><body>
      <outline text="News"><outline title="Europe"><outline text="ignored"/>
        <outline text="RTP" xmlURL="https://www.rtp.pt/noticias/rss" language="pt-PT"/></outline></outline>
    </body></opml>"""
    [feed] = read_opml(data).feeds
    assert (feed.category, feed.language, feed.feed_url) == ("News/Europe", "pt", "https://www.rtp.pt/noticias/rss")


@pytest.mark.parametrize("address, reason", [
    ("javascript:alert(document.cookie)", "'javascript:' address refused"),
    ("file:///etc/passwd", "'file:' address refused"),
    ("data:text/xml,<rss/>", "'data:' address refused"),
    ("feed.example/rss", "without a scheme"),
    ("https:///rss", "has no host"),
    ("https://a.example/r ss", "contains spaces"),
])
def test_an_unusable_address_refuses_its_entry_only_with_its_line(address, reason):
    data = f"""<opml version="2.0"><head/><body>
<outline text="good" xmlUrl="https://good.example/rss"/>
<outline text="bad" xmlUrl="{address.replace('&', '&amp;').replace('<', '&lt;')}"/>
</body></opml>""".encode()
    document = read_opml(data)
    assert [f.feed_url for f in document.feeds] == ["https://good.example/rss"]
    [refusal] = document.refused
    assert refusal.line == 3 and reason in refusal.reason and "\n" not in refusal.reason


def test_an_unknown_language_refuses_its_entry():
    data = b'<opml version="2.0"><head/><body><outline text="x" xmlUrl="https://x.example/" language="klingon"/></body></opml>'
    document = read_opml(data)
    assert document.feeds == () and "not a language code" in document.refused[0].reason


BILLION_LAUGHS = b"""<?xml version="1.0"?>
<!DOCTYPE opml [
  <!ENTITY a "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa">
  <!ENTITY b "&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;">
  <!ENTITY c "&b;&b;&b;&b;&b;&b;&b;&b;&b;&b;&b;&b;&b;&b;&b;&b;">
  <!ENTITY d "&c;&c;&c;&c;&c;&c;&c;&c;&c;&c;&c;&c;&c;&c;&c;&c;">
  <!ENTITY e "&d;&d;&d;&d;&d;&d;&d;&d;&d;&d;&d;&d;&d;&d;&d;&d;">
]>
<opml version="2.0"><head><title>&e;</title></head><body><outline text="&e;" xmlUrl="https://x.example/"/></body></opml>"""

EXTERNAL_ENTITY = b"""<?xml version="1.0"?>
<!DOCTYPE opml [<!ENTITY secret SYSTEM "file:///etc/passwd">]>
<opml version="2.0"><head/><body><outline text="&secret;" xmlUrl="https://x.example/"/></body></opml>"""


@pytest.mark.parametrize("data, reason", [
    (BILLION_LAUGHS, "DTD"),
    (EXTERNAL_ENTITY, "DTD"),
    (b'<opml version="2.0"><head/><body>' + b'<outline text="f">' * 10_000 + b"</outline>" * 10_000
     + b"</body></opml>", f"nested more than {MAX_DEPTH} levels"),
    (b"<html><head><title>A page</title></head></html>", "not OPML"),
    (b'<opml version="2.0"><head/><body><outline text="x" xmlUrl="https://x.example/"></body></opml>',
     "not well-formed"),
    (b'<opml version="2.0"><head/><body></body></opml>', "no <outline>"),
    (b"", "empty"),
    (b'<?xml version="1.0" encoding="x-klingon"?><opml/>', "XML"),
])
def test_a_hostile_or_broken_file_is_refused_whole_in_one_line(data, reason):
    with pytest.raises(OpmlRefused) as refused:
        read_opml(data)
    assert reason in str(refused.value) and "\n" not in str(refused.value)


def test_a_file_over_the_size_cap_is_refused_before_parsing():
    data = b'<opml version="2.0"><head/><body>' + b'<outline text="x" xmlUrl="https://x.example/"/>' * 1000 \
        + b"</body></opml>"
    with pytest.raises(OpmlRefused, match="larger than 1000 bytes"):
        read_opml(data, max_bytes=1000)


# ------------------------------------------------------------------ properties

@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.binary(max_size=2000))
def test_any_bytes_give_feeds_or_a_one_line_refusal(data):
    try:
        document = read_opml(data)
    except OpmlRefused as exc:
        assert "\n" not in str(exc)
        return
    for feed in document.feeds:
        assert feed_url_problem(feed.feed_url) is None


_text = st.text(st.characters(blacklist_categories=("Cs", "Cc")), min_size=1, max_size=40).filter(str.strip)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(_text, _text, st.sampled_from(["http", "https", "javascript", "file", "ftp"])),
                max_size=12),
       st.integers(min_value=0, max_value=60))
def test_markup_in_names_and_any_nesting_never_escapes_the_reader(entries, depth):
    """Names with markup characters, addresses of any scheme, folders of any depth: every entry is
    read or refused by itself, or the whole file is refused for its depth, never anything else."""
    from xml.sax.saxutils import quoteattr

    outlines = "".join(f"<outline text={quoteattr(name)} xmlUrl={quoteattr(f'{scheme}://h.example/{path}')}/>"
                       for name, path, scheme in entries) or '<outline text="empty"/>'
    nested = '<outline text="f">' * depth + outlines + "</outline>" * depth
    data = f'<opml version="2.0"><head/><body>{nested}</body></opml>'.encode()
    try:
        document = read_opml(data)
    except OpmlRefused as exc:
        assert depth + 3 > MAX_DEPTH and "nested" in str(exc)
        return
    assert depth + 3 <= MAX_DEPTH
    assert len(document.feeds) + len(document.refused) == len(entries)
    assert all(f.feed_url.startswith(("http://", "https://")) for f in document.feeds)


_feed = st.builds(
    ExportedFeed,
    source_id=st.from_regex(r"[a-z0-9][a-z0-9-]{0,20}[a-z0-9]", fullmatch=True),
    name=_text,
    feed_url=st.from_regex(r"https?://[a-z]{1,10}\.example/[a-z0-9/]{0,20}(\?a=[0-9]&b=<>)?", fullmatch=True),
    language=st.sampled_from(["en", "fr", "ja", "ar"]),
    country=st.sampled_from(["GB", "FR", "JP", "EG"]),
    category=st.one_of(st.none(), _text.filter(lambda t: t == " ".join(t.split()))),
    enabled=st.booleans(),
)


@settings(max_examples=150, deadline=None)
@given(st.lists(_feed, max_size=15, unique_by=lambda f: f.source_id))
def test_export_then_import_gives_back_every_field(feeds):
    data = write_opml(feeds, title="round trip", created=datetime(2026, 12, 6, tzinfo=UTC))
    assert not conformance_problems(data)
    document = read_opml(data)
    assert document.refused == ()
    assert [(f.source_id, f.title, f.feed_url, f.language, f.country, f.category or None, f.enabled is not False)
            for f in document.feeds] == [
        (f.source_id, " ".join(f.name.split()), f.feed_url, f.language, f.country, f.category, f.enabled)
        for f in _grouped(feeds)]


def _grouped(feeds):
    """The export's order: uncategorised feeds in place, each category's feeds at its first place."""
    order: list = []
    groups: dict = {}
    for feed in feeds:
        if feed.category is None:
            order.append([feed])
        elif feed.category in groups:
            groups[feed.category].append(feed)
        else:
            groups[feed.category] = [feed]
            order.append(groups[feed.category])
    return [feed for group in order for feed in group]


# ------------------------------------------------------------------ other readers' rules


def test_export_meets_freshrss_and_miniflux_rules_and_keeps_categories():
    feeds = [ExportedFeed("bbc-world-en", "BBC News - World", "https://feeds.bbci.co.uk/news/world/rss.xml", "en",
                          "GB", "https://bbc.co.uk/", "News/World"),
             ExportedFeed("lemonde-fr", "Le Monde — À la une", "https://www.lemonde.fr/rss/une.xml?a=1&b=2", "fr", "FR"),
             ExportedFeed("nhk-ja", "NHK ニュース", "https://www3.nhk.or.jp/rss/news/cat0.xml", "ja", "JP",
                          category="News/World")]
    data = write_opml(feeds, title="newsdedup", created=datetime(2026, 12, 6, 3, 0, tzinfo=UTC))
    assert conformance_problems(data) == []
    assert miniflux_subscriptions(data) == [
        ("BBC News - World", "https://feeds.bbci.co.uk/news/world/rss.xml", "News/World"),
        ("NHK ニュース", "https://www3.nhk.or.jp/rss/news/cat0.xml", "News/World"),
        ("Le Monde — À la une", "https://www.lemonde.fr/rss/une.xml?a=1&b=2", "")]
    assert conformance_problems(write_opml([], title="none", created=datetime(2026, 12, 6, tzinfo=UTC))) == []


def test_the_checks_catch_what_the_readers_refuse():
    """The conformance check is itself checked: files the readers refuse are refused by it."""
    assert conformance_problems(b'<opml version="3.0"><head/><body><outline text="x"/></body></opml>')
    assert conformance_problems(b'<opml version="2.0"><head/><body><outline title="x"/></body></opml>')
    assert conformance_problems(b'<opml version="2.0"><head/><body><outline text="x" type="rss" '
                                b'xmlUrl="javascript:x"/></body></opml>')
    assert conformance_problems(b'<opml version="2.0"><head><foo/></head><body><outline text="x"/></body></opml>')
    assert conformance_problems(b'<opml version="2.0"><head/><body/></opml>')
    assert not conformance_problems(FRESHRSS_EXPORT)
