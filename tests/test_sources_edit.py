"""Entries appended to the sources file (newsdedup_dagster/sources/edit.py): whatever their names,
addresses and folders hold, the file a person wrote stays as written above them and the loader the
pipeline uses reads every value back as given."""

from __future__ import annotations

from hypothesis import given, settings, strategies as st

from newsdedup_dagster.config import STARTER_SOURCES
from newsdedup_dagster.shared.sources import parse_sources_yaml
from newsdedup_dagster.sources.edit import NewSource, append_sources, country_from_host, feed_url_key, propose_id

BLOCK_STYLE = """\
# comment at the top
sources:
- id: first       # a note
  name: "First: the one"
  feed_url: https://first.example/rss
  language: en
  country: GB
"""

_text = st.text(st.characters(blacklist_categories=("Cs", "Cc", "Zl", "Zp"), blacklist_characters="\ufeff\x85"),
                min_size=1, max_size=40).map(lambda t: " ".join(t.split())).filter(bool)
_entry = st.builds(
    NewSource,
    id=st.from_regex(r"[a-z0-9][a-z0-9-]{0,20}[a-z0-9]", fullmatch=True).filter(lambda i: i != "first"),
    name=_text,
    feed_url=st.from_regex(r"https?://[a-z]{1,10}\.example/[a-z0-9/:#?=&%-]{0,30}", fullmatch=True),
    language=st.sampled_from(["en", "fr", "ja"]),
    country=st.sampled_from(["GB", "FR", "JP"]),
    category=st.one_of(st.none(), _text),
    enabled=st.booleans(),
)


# The starter file is 380 lines: each example reads and writes it whole (~0.4 s).
@settings(max_examples=40, deadline=None)
@given(st.sampled_from(["starter", "block"]), st.lists(_entry, min_size=1, max_size=5, unique_by=lambda e: e.id))
def test_appended_entries_read_back_as_given_and_the_file_above_them_is_untouched(style, entries):
    entries = [e for e in entries if not e.id.startswith("x")]   # no clash with the starter's ids
    original = STARTER_SOURCES.read_text(encoding="utf-8") if style == "starter" else BLOCK_STYLE
    urls = {feed_url_key(e.feed_url) for e in entries}
    if len(urls) < len(entries) or not entries:
        return
    text = append_sources(original, entries)
    assert text.startswith(original.rstrip("\n"))
    loaded = {s.id: s for s in parse_sources_yaml(text)}
    for entry in entries:
        source = loaded[entry.id]
        assert (source.name, source.feed_url, source.language, source.country, source.category, source.enabled) == \
               (entry.name, entry.feed_url, entry.language, entry.country, entry.category, entry.enabled)


def test_feed_address_identity_and_proposals():
    assert feed_url_key("HTTP://Feeds.BBCI.co.uk:80/news/rss.xml?utm_source=x#top") == \
        feed_url_key("https://feeds.bbci.co.uk/news/rss.xml")
    assert feed_url_key("https://a.example/rss?page=1") != feed_url_key("https://a.example/rss?page=2")
    assert [country_from_host(h) for h in ("feeds.bbci.co.uk", "www.lemonde.fr", "x.io", "nytimes.com", "abc.net.au")] \
        == ["GB", "FR", None, None, "AU"]
    assert propose_id("Le Monde — International", "https://www.lemonde.fr/rss", "fr",
                      {"le-monde-international-fr"}) == "le-monde-international-fr-2"
    assert propose_id("ニュース", "https://www3.nhk.or.jp/rss/news/cat0.xml", "ja", set()) == "nhk-ja"
