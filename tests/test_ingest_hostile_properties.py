"""Property-based tests over the parse path (hypothesis): random bytes, truncated and mutated
feeds, hostile snippets spliced into real ones. parse_feed never raises, returns within a
time bound, and what it returns is storable (no NUL, surrogates or control characters;
bounded lengths)."""

from __future__ import annotations

import re
import time
from datetime import UTC, datetime
from pathlib import Path

from hypothesis import HealthCheck, given, settings, strategies as st

from newsdedup_dagster.shared.text.sanitise import clean_text, sanitise_document
from newsdedup_dagster.stages.ingest.feed_parse import parse_feed
from newsdedup_dagster.stages.ingest.parse_types import ParseConfig

FETCHED = datetime(2026, 11, 2, 12, tzinfo=UTC)
CONFIG = ParseConfig(max_entries=50, time_budget=5.0)
SAMPLE_FEEDS = sorted((Path(__file__).resolve().parent.parent / "newsdedup_dagster" / "sample_data" / "feeds").glob("*"))
REAL = [path.read_bytes()[:6000] for path in SAMPLE_FEEDS[:6]]
UNSAFE = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff]")
HOSTILE = [b"&#x110000;", b"&#99999999999;", b"&#xD800;", b"&#0;", b"\x00", b"\x1b", b"<!--", b"<![CDATA[",
           b"<!DOCTYPE rss [<!ENTITY a \"aaaa\"><!ENTITY b \"&a;&a;&a;&a;\">]>", b"&b;", b"<script>", b"]]>",
           b"<item>", b"</item>", b"<entry>", b"<link>http://[::1</link>", b"\xff\xfe", b"\xef\xbb\xbf", b"&amp;#x0;",
           b"<title>", b"</title>", b"<a href='", b"https://x.example/" + b"a" * 3000]
SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def check(body: bytes) -> None:
    started = time.process_time()  # CPU time: other workers on a shared machine do not count
    parsed = parse_feed(body, source_id="prop", fetched_at=FETCHED, config=CONFIG)
    assert time.process_time() - started < 10.0
    assert len(parsed.items) <= CONFIG.max_entries
    for item in parsed.items:
        for value in (item.title, item.summary, item.content, item.url, item.canonical_url, item.guid, item.author):
            if value is not None:
                assert not UNSAFE.search(value), value[:80]
        assert item.title and len(item.title) <= CONFIG.max_title_chars
        assert len(item.canonical_url) <= CONFIG.max_url_chars and (item.url is None or len(item.url) <= 2048)
        assert item.guid is None or len(item.guid) <= CONFIG.max_guid_chars
    if parsed.error:
        assert "\n" not in parsed.error and not UNSAFE.search(parsed.error)


@SETTINGS
@given(st.binary(max_size=4000))
def test_random_bytes(body):
    check(body)


@SETTINGS
@given(st.sampled_from(REAL), st.integers(min_value=0, max_value=6000))
def test_truncated_real_feeds(feed, cut):
    check(feed[:cut])


@SETTINGS
@given(st.sampled_from(REAL), st.lists(st.tuples(st.integers(0, 6000), st.sampled_from(HOSTILE) | st.binary(max_size=8),
                                                  st.integers(0, 4)), min_size=1, max_size=8))
def test_mutated_real_feeds(feed, mutations):
    body = bytearray(feed)
    for position, insert, delete in mutations:
        position = min(position, len(body))
        body[position:position + delete] = insert
    check(bytes(body))


@SETTINGS
@given(st.lists(st.sampled_from(["<!--", "<a ", "<script>", "&lt;", "-->", "<b>", "x", " ", "&#x110000;",
                                  "</script>", "<", ">", "\x00", "\ud800"]), max_size=1000))
def test_clean_text_is_bounded_and_clean(tokens):
    value = "".join(tokens)
    started = time.process_time()
    text = clean_text(value * 20, 500, max_field_chars=20_000)
    assert time.process_time() - started < 2.0
    assert len(text) <= 500 and not UNSAFE.search(text) and "<script>" not in text


@SETTINGS
@given(st.text(max_size=2000))
def test_sanitised_documents_hold_only_xml_characters(text):
    cleaned, repairs = sanitise_document(text)
    assert not re.search("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]", cleaned)
    assert "<!ENTITY" not in cleaned.upper() and all(count > 0 for count in repairs.values())
