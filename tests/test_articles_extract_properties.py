"""Properties of the article page cleaner and extractor on hostile input: it never raises, never
keeps invisible or direction-changing characters, keeps what it extracts within its bounds, and
refuses what is not HTML whatever the header says."""

from __future__ import annotations

import re
import unicodedata

from hypothesis import HealthCheck, given, settings, strategies as st

from newsdedup_dagster.stages.articles.extract import (
    ExtractLimits,
    extract_page,
    html_refusal,
    word_count,
)

SETTINGS = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
REASONS = {None, "not_html", "paywall", "too_large", "extraction_empty", "extraction_failed"}
TAGS = ["<p>", "</p>", "<div>", "</div>", "<script>", "</script>", "<style>", "<!--", "-->", "<article>", "<nav>",
        "&amp;", "&#x202e;", "\u200b", "\u202e", "\x00", "<br>", "<h1>", "</h1>", "<meta charset='koi8-r'>",
        "<html lang='de'>", "isAccessibleForFree: false", "\ufeff", "<a href='javascript:alert(1)'>x</a>"]
WORDS = ["market", "vote", "минister", "議会", "élection", "storm", "said", "the", "a", "on", "Tuesday", "."]
INVISIBLE = re.compile("[\u200b-\u200f\u202a-\u202e\u2066-\u2069\ufeff\x00-\x08\x0b\x0c\x0e-\x1f]")

markup = st.lists(st.sampled_from(TAGS) | st.sampled_from(WORDS).map(lambda w: w + " ") | st.text(max_size=5),
                  max_size=400).map("".join)
content_types = st.sampled_from([None, "", "text/html", "text/html; charset=utf-8", "text/html; charset=bogus",
                                 "application/octet-stream", "text/plain", "application/pdf", "image/png",
                                 "application/xhtml+xml; charset=windows-1252"])
encodings = st.sampled_from(["utf-8", "utf-16", "cp1252", "koi8-r", "gb18030", "shift_jis"])


def _encoded(text: str, encoding: str) -> bytes:
    return text.encode(encoding, errors="replace")


@SETTINGS
@given(markup, encodings, content_types)
def test_extraction_never_raises_and_keeps_only_visible_bounded_text(text, encoding, content_type):
    limits = ExtractLimits(min_words=3, max_text_chars=500)
    result = extract_page(_encoded("<html><body>" + text, encoding), content_type, "https://a.example/x",
                          limits=limits)
    assert result.reason in REASONS
    if result.reason is None:
        assert result.text and result.word_count >= limits.min_words
        assert len(result.text) <= limits.max_text_chars + 1
        assert not INVISIBLE.search(result.text)
        assert unicodedata.is_normalized("NFC", result.text)
        assert "<script" not in result.text.lower()
        assert result.lead and len(result.lead) <= 1_000
    else:
        assert result.text is None


@SETTINGS
@given(st.binary(max_size=3000), content_types)
def test_any_bytes_are_refused_or_extracted_never_raised(body, content_type):
    assert extract_page(body, content_type, "https://a.example/x").reason in REASONS


@SETTINGS
@given(st.sampled_from([b"%PDF-1.4", b"\x89PNG\r\n", b"GIF89a", b"\xff\xd8\xff\xe0", b"PK\x03\x04", b"\x1f\x8b\x08"]),
       st.binary(max_size=200), content_types)
def test_binary_signatures_are_never_html(signature, rest, content_type):
    assert html_refusal(content_type, signature + rest) is not None


@SETTINGS
@given(st.sampled_from(["<!DOCTYPE html>", "<html>", "  \n<HTML lang=en>", "<head>", "<!-- x -->", "<p>"]),
       st.text(max_size=200), st.sampled_from([None, "", "application/octet-stream", "text/plain", "text/html"]))
def test_html_is_recognised_by_header_or_by_sniffing(start, rest, content_type):
    assert html_refusal(content_type, (start + rest).encode("utf-8")) is None


@given(st.lists(st.sampled_from(["word", "mot", "議", "会", "วัน", " ", "\n", "—", "42"]), max_size=200).map("".join))
def test_word_count_counts_han_characters_and_spaced_words(text):
    count = word_count(text)
    assert count >= 0
    assert count == word_count(text + " ") and word_count(text + " extra") == count + 1


@SETTINGS
@given(st.binary(max_size=2000) | st.lists(st.sampled_from(
    ["User-agent: *\n", "User-agent: newsdedup\n", "Disallow: /\n", "Disallow: /a\n", "Allow: /a/b\n",
     "Crawl-delay: 1e400\n", "Crawl-delay: -5\n", "Crawl-delay: nan\n", "Disallow: /*$\n", "\x00", "#x\n",
     "Sitemap: ::\n"]), max_size=40).map(lambda parts: "".join(parts).encode()),
       st.sampled_from(["/", "/a", "/a/b", "/%E2%82%AC", "/x?y=1", "/" + "a" * 3000]))
def test_any_robots_txt_gives_a_verdict_and_a_bounded_delay(body, path):
    from datetime import UTC, datetime, timedelta

    from newsdedup_dagster.stages.articles.robots import MAX_CRAWL_DELAY, entry_from_fetch

    entry = entry_from_fetch("https://a.example:443", http_status=200, body=body, error=None,
                             now=datetime(2026, 11, 2, tzinfo=UTC), ttl=timedelta(hours=24))
    assert entry.allows("https://a.example" + path) in (True, False)
    delay = entry.crawl_delay()
    assert delay is None or 0.0 <= delay <= MAX_CRAWL_DELAY
