"""Sources YAML loading and validation."""

from __future__ import annotations

from pathlib import Path

import pytest

from newsdedup_dagster.ingest.sources import Source, SourcesConfigError, load_sources, parse_sources_yaml

GOOD = """\
sources:
  - id: bbc-world
    name: BBC News - World
    feed_url: https://feeds.bbci.co.uk/news/world/rss.xml
    language: en
    country: GB
  - id: nhk
    name: NHK
    feed_url: https://www3.nhk.or.jp/rss/news/cat0.xml
    language: JA
    country: jp
    syndicator: false
    enabled: false
    replay_file: replay/nhk.xml
  - id: google-news-ko
    name: Google News Korea
    feed_url: https://news.google.com/rss?hl=ko&gl=KR
    language: ko
    country: KR
    syndicator: true
"""


def test_load_valid_file(tmp_path: Path):
    path = tmp_path / "feeds.yaml"
    path.write_text(GOOD, encoding="utf-8")
    sources = load_sources(path)
    assert [s.id for s in sources] == ["bbc-world", "nhk", "google-news-ko"]
    assert sources[0] == Source(id="bbc-world", name="BBC News - World",
                                feed_url="https://feeds.bbci.co.uk/news/world/rss.xml", language="en", country="GB")
    nhk = sources[1]
    assert (nhk.language, nhk.country, nhk.enabled, nhk.syndicator) == ("ja", "JP", False, False)
    assert nhk.replay_file == (tmp_path / "replay" / "nhk.xml").resolve()
    assert sources[2].syndicator is True and sources[2].enabled is True


def errors_of(text: str) -> list[str]:
    with pytest.raises(SourcesConfigError) as info:
        parse_sources_yaml(text, origin="feeds.yaml")
    return info.value.problems


def test_every_problem_is_reported_with_line_entry_and_field():
    text = """\
sources:
  - id: Bad Id
    name: x
    feed_url: ftp://example.com/feed
    language: english
    country: UK
  - id: ok-one
    name: ok
    feed_url: https://example.com/feed
    language: en
    country: US
    enabled: "yes please"
  - id: ok-one
    name: dup
    feed_url: HTTPS://EXAMPLE.com/feed
    language: en
    country: US
    feedurl: https://typo.example.com/
  - name: no id
    feed_url: https://example.org/rss
    language: fr
    country: FR
"""
    problems = errors_of(text)
    assert "feeds.yaml:2: sources[0] (id 'Bad Id'): field 'id': 'Bad Id' is not a slug" in problems[0]
    assert any(p.startswith("feeds.yaml:4: sources[0]") and "field 'feed_url'" in p and "http://" in p for p in problems)
    assert any(p.startswith("feeds.yaml:5: sources[0]") and "'english' is not an ISO 639-1 code" in p for p in problems)
    assert any(p.startswith("feeds.yaml:6: sources[0]") and "'UK' is not an ISO 3166-1 alpha-2 code" in p
               for p in problems)
    assert any(p.startswith("feeds.yaml:12: sources[1] (id 'ok-one'): field 'enabled': must be true or false")
               for p in problems)
    assert any(p.startswith("feeds.yaml:13: sources[2] (id 'ok-one'): field 'id': duplicate id 'ok-one' "
                            "(first used by sources[1])") for p in problems)
    assert any(p.startswith("feeds.yaml:15: sources[2]") and "duplicate feed_url" in p for p in problems)
    assert any(p.startswith("feeds.yaml:18: sources[2]") and "unknown key 'feedurl' (did you mean 'feed_url'?)" in p
               for p in problems)
    assert any(p.startswith("feeds.yaml:19: sources[3]: field 'id': is required") for p in problems)
    assert len(problems) == 9
    message = str(SourcesConfigError(problems))
    assert message.startswith("invalid sources configuration:")


@pytest.mark.parametrize(("text", "fragment"), [
    ("", "file is empty"),
    ("feeds: []", "unknown top-level key 'feeds'"),
    ("sources:", "'sources:' is empty"),
    ("sources: {a: 1}", "'sources:' must be a list"),
    ("sources:\n  - just-a-string", "entry must be a mapping"),
    ("sources: [\n", "not valid YAML"),
    ("sources:\n  - id: a\n    id: b\n    name: n\n    feed_url: https://a.com/\n    language: en\n    country: US",
     "given twice"),
    ("sources:\n  - id: a\n    name: [1, 2]\n    feed_url: https://a.com/\n    language: en\n    country: US",
     "must be a single value"),
    ("sources:\n  - id: a\n    name: n\n    feed_url: https://a.com/\n    language: en-US\n    country: US",
     "no region suffix"),
    ("sources:\n  - id: a\n    name: n\n    feed_url: https:///nohost\n    language: en\n    country: US",
     "no host"),
])
def test_structural_errors(text, fragment):
    problems = errors_of(text)
    assert any(fragment in p for p in problems), problems


def test_empty_list_is_allowed():
    assert parse_sources_yaml("sources: []") == []


def test_unreadable_file(tmp_path):
    with pytest.raises(SourcesConfigError, match="cannot read file"):
        load_sources(tmp_path / "missing.yaml")


def test_bundled_source_files_load_if_present():
    # Starter sources: when present they must pass validation.
    package = Path(__file__).resolve().parent.parent / "newsdedup_dagster"
    for path in (package / "sources" / "starter_sources.yaml", package / "sample_data" / "sources.yaml"):
        if path.exists():
            assert load_sources(path), path


def test_outlet_names_the_publisher_of_a_feed():
    sources = parse_sources_yaml("""\
sources:
  - {id: bbc, name: BBC, feed_url: "https://feeds.bbci.co.uk/news/rss.xml", language: en, country: GB,
     outlet: WWW.BBC.co.uk}
  - {id: reuters, name: Reuters, feed_url: "https://www.reuters.com/arc/outboundfeeds/world/", language: en,
     country: GB}
""")
    assert [(s.outlet, s.own_outlet) for s in sources] == [("bbc.co.uk", "bbc.co.uk"), (None, "reuters.com")]
    problems = errors_of("""\
sources:
  - {id: x, name: X, feed_url: "https://x.example/", language: en, country: GB, outlet: "https://x.example/"}
  - {id: y, name: Y, feed_url: "https://y.example/", language: en, country: GB, outlet: "a..b"}
""")
    assert len(problems) == 2 and all("is not a host name" in p for p in problems)
