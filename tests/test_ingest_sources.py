"""Sources YAML loading and validation."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from newsdedup_dagster.shared.sources import Source, SourcesConfigError, load_sources, parse_sources_yaml

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


# ------------------------------------------------------------------ hostile sources files
def _alias_bomb(depth: int, width: int, where: str) -> str:
    """`depth` levels of anchors, each a list of `width` aliases of the one before (9^depth leaves
    once expanded), placed where an entry, a value or a key of an entry would be."""
    lines = ["x0: &a0 [" + ", ".join(["lol"] * width) + "]"]
    for level in range(1, depth + 1):
        lines.append(f"x{level}: &a{level} [" + ", ".join([f"*a{level - 1}"] * width) + "]")
    top = f"*a{depth}"
    entry = {"entry": f"  - {top}", "value": f"  - {{id: a, name: {top}, feed_url: 'https://a.example/', "
                                              "language: en, country: GB}",
             "key": f"  - {{? {top} : x, id: a}}", "merge": f"  - {{<<: {top}, id: a}}"}[where]
    return "\n".join(lines) + "\nsources:\n" + entry + "\n"


@pytest.mark.parametrize("where", ["entry", "value", "key", "merge"])
def test_nested_aliases_are_refused_with_their_line_only(where):
    """The 300-byte file of the report (anchors nested 9 wide) and a deeper one: refused at the
    first alias, in a message of one short line, without expanding anything."""
    for depth in (4, 8):
        text = _alias_bomb(depth, 9, where)
        assert len(text) < 1_000
        problems = errors_of(text)
        assert problems == ["feeds.yaml:2: YAML aliases (*name) are not allowed in the sources file; "
                            "write each value out"]


def test_misplaced_lists_and_mappings_name_their_kind_not_their_content():
    big = "[" + ", ".join(f"item-{i}" for i in range(20_000)) + "]"
    problems = errors_of("sources:\n"
                         f"  - {big}\n"
                         f"  - {{id: a, name: {big}, feed_url: 'https://a.example/', language: en, country: GB}}\n"
                         f"  - {{? {big} : x, id: b, name: b, feed_url: 'https://b.example/', language: en,"
                         " country: GB}\n"
                         f"  - {{id: c, name: '{'n' * 50_000}', feed_url: 'https://c.example/{'p' * 50_000}',"
                         " language: en, country: GB, enabled: " + "y" * 10_000 + "}\n")
    for expected in ("feeds.yaml:2: sources[0]: entry must be a mapping of keys, got a list",
                     "feeds.yaml:3: sources[1] (id 'a'): field 'name': must be a single value, got a list",
                     "feeds.yaml:4: sources[2] (id 'b'): a key must be a name, got a list"):
        assert expected in problems
    assert any(p.startswith("feeds.yaml:5: sources[3] (id 'c'): field 'enabled': must be true or false, got 'yyy")
               for p in problems)
    assert all(len(problem) < 300 for problem in problems)


def test_nesting_deeper_than_a_sources_file_needs_is_refused():
    for text in ("sources:\n  - " + "[" * 100_000 + "]" * 100_000 + "\n",
                 "sources:\n  - " + "{a: " * 5_000 + "1" + "}" * 5_000 + "\n"):
        problems = errors_of(text)
        assert problems == ["feeds.yaml:2: nested more than 16 levels deep"]


YAML_PIECES = ["&a ", "*a", "&b [1, 2]", "*b", "[", "]", "{", "}", "? ", ": ", ", ", "- ", "\n  ", "\n    ",
               "id: x", "name: n", "feed_url: 'https://a.example/'", "language: en", "country: GB",
               "allow_private: true", "<<: *a", "!!python/object:os.system", "'" + "q" * 300 + "'", "sources:"]


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.sampled_from(YAML_PIECES), max_size=40))
def test_any_sources_text_loads_or_fails_with_short_problems(pieces):
    """Whatever a sources file mixes (anchors, aliases, merge keys, tags, deep brackets, long
    values), loading returns sources or raises SourcesConfigError whose every problem is one short
    line; nothing else escapes and no alias is ever expanded."""
    text = "sources:\n  - " + "".join(pieces)
    try:
        parse_sources_yaml(text, origin="feeds.yaml")
    except SourcesConfigError as exc:
        assert exc.problems and all(len(p) < 400 and "\n" not in p for p in exc.problems), exc.problems


def test_allow_private_is_one_sources_statement():
    sources = parse_sources_yaml("""\
sources:
  - {id: intranet, name: I, feed_url: "http://feeds.corp.example/rss", language: en, country: GB,
     allow_private: true}
  - {id: newswire, name: P, feed_url: "https://www.reuters.com/rss", language: en, country: GB}
""")
    assert [(s.id, s.allow_private) for s in sources] == [("intranet", True), ("newswire", False)]
    problems = errors_of("sources:\n  - {id: a, name: A, feed_url: 'https://a.example/', language: en, country: GB,"
                         " allow_private: 'yes'}\n")
    assert problems == ["feeds.yaml:2: sources[0] (id 'a'): field 'allow_private': must be true or false, got 'yes'"]


@pytest.mark.parametrize(("networks", "status"), [("127.0.0.0/8", "OK"), ("", "WARN")])
def test_doctor_shows_which_sources_may_reach_private_networks(tmp_path, monkeypatch, networks, status):
    from newsdedup_dagster.commands.doctor import check_sources

    path = tmp_path / "sources.yaml"
    path.write_text("sources:\n"
                    "  - {id: intranet, name: I, feed_url: 'http://feeds.corp.example/rss', language: en, country: GB,"
                    " allow_private: true}\n"
                    "  - {id: newswire, name: P, feed_url: 'https://www.reuters.com/rss', language: en, country: GB}\n",
                    encoding="utf-8")
    monkeypatch.setenv("NEWSDEDUP_SOURCES", str(path))
    monkeypatch.setenv("NEWSDEDUP_FETCH_ALLOW_PRIVATE", networks)
    found = {finding.check: finding for finding in check_sources()}
    assert found["sources"].status == "OK"
    private = found["private networks"]
    assert private.status == status and private.detail.startswith("intranet ")
    assert "newswire" not in private.detail
    path.write_text(_alias_bomb(8, 9, "value"), encoding="utf-8")
    [broken] = check_sources()
    assert broken.status == "FAIL" and broken.detail == f"{path}:2: YAML aliases (*name) are not allowed in the " \
                                                          "sources file; write each value out"
