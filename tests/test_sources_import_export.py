"""`newsdedup sources import` and `sources export` on real files: an OPML export merged into a
hand-written sources file with its comments and hand-set fields kept, duplicates and refused
entries named by line, nothing written when the whole file is refused, and a round trip."""

from __future__ import annotations

from pathlib import Path

import pytest
from opml_readers import FRESHRSS_EXPORT, MINIFLUX_EXPORT, conformance_problems, miniflux_subscriptions

from newsdedup_dagster import cli
from newsdedup_dagster.config import STARTER_SOURCES
from newsdedup_dagster.shared.sources import load_sources

HAND_WRITTEN = """\
# Our feeds. Ask the desk before removing one.
sources:
  # The BBC, kept on by hand.
  - id: bbc-world
    name: BBC World (ours)       # renamed on purpose
    feed_url: https://feeds.bbci.co.uk/news/world/rss.xml
    language: en
    country: GB
    outlet: bbc.co.uk
    fetch_article: false
"""


@pytest.fixture()
def sources_file(tmp_path) -> Path:
    path = tmp_path / "sources.yaml"
    path.write_text(HAND_WRITTEN, encoding="utf-8")
    return path


def run(*args: str) -> int:
    return cli.main(["sources", *args])


def test_import_of_a_miniflux_export_keeps_comments_and_hand_set_fields(sources_file, tmp_path, capsys):
    opml = tmp_path / "miniflux.opml"
    opml.write_bytes(MINIFLUX_EXPORT)
    assert run("import", str(opml), "--sources", str(sources_file), "--language", "en") == 0
    out = capsys.readouterr().out
    text = sources_file.read_text(encoding="utf-8")
    assert text.startswith(HAND_WRITTEN)   # every line a person wrote, as written
    # The BBC is already there: reported, not added.
    assert "miniflux.opml: duplicate, not added: line 9: https://feeds.bbci.co.uk/news/world/rss.xml is already " \
           "source 'bbc-world'" in out
    sources = {s.id: s for s in load_sources(sources_file)}
    assert sources["bbc-world"].name == "BBC World (ours)" and sources["bbc-world"].fetch_article is False
    lemonde = sources["le-monde-fr-international-en"]
    # --language fills in what the outline does not say; the country comes from the domain.
    assert (lemonde.language, lemonde.country, lemonde.category) == ("en", "FR", "World")
    nhk = sources["nhk-en"]
    assert (nhk.country, nhk.category, nhk.feed_url) == ("JP", "All", "https://www3.nhk.or.jp/rss/news/cat0.xml")
    assert "3 feeds in" in out and "added 2, 1 duplicates, 0 refused" in out


def test_import_names_each_refused_entry_by_line_and_imports_the_rest(sources_file, tmp_path, capsys):
    opml = tmp_path / "mixed.opml"
    opml.write_text("""<?xml version="1.0" encoding="UTF-8"?>
<opml version="2.0" xmlns:newsdedup="urn:newsdedup:opml">
  <head><title>mixed</title></head>
  <body>
    <outline text="Script" xmlUrl="javascript:alert(1)" language="en"/>
    <outline text="Local" xmlUrl="file:///etc/passwd" language="en"/>
    <outline text="Tagesschau" xmlUrl="https://www.tagesschau.de/xml/rss2/" language="de" newsdedup:id="tagesschau"/>
    <outline text="Tagesschau again" xmlUrl="https://www.tagesschau.de/xml/atom/" language="de" newsdedup:id="tagesschau"/>
    <outline text="Same feed" xmlUrl="http://WWW.tagesschau.de/xml/rss2/?utm_source=x" language="de"/>
    <outline text="Taken id" xmlUrl="https://example.com/other.xml" language="en" newsdedup:id="bbc-world" newsdedup:country="US"/>
    <outline text="No country" xmlUrl="https://example.com/feed.xml" language="en"/>
    <outline text="No language" xmlUrl="https://www.corriere.it/rss/homepage.xml"/>
  </body>
</opml>
""", encoding="utf-8")
    assert run("import", str(opml), "--sources", str(sources_file)) == 1
    lines = capsys.readouterr().out.replace(str(opml), "mixed.opml").splitlines()
    assert "mixed.opml:5: refused: 'javascript:' address refused: only http and https feeds are read" in lines
    assert "mixed.opml:6: refused: 'file:' address refused: only http and https feeds are read" in lines
    assert "mixed.opml:8: refused: duplicate id 'tagesschau' (first on line 7)" in lines
    assert "mixed.opml: duplicate, not added: line 9: http://WWW.tagesschau.de/xml/rss2/?utm_source=x is already " \
           "listed on line 7 of this file" in lines
    assert "mixed.opml:10: refused: id 'bbc-world' is already used by another feed in the sources file" in lines
    assert any(line.startswith("mixed.opml:11: refused: no country") for line in lines)
    assert any(line.startswith("mixed.opml:12: refused: no language") for line in lines)
    assert [s.id for s in load_sources(sources_file)] == ["bbc-world", "tagesschau"]


@pytest.mark.parametrize("name, data, reason", [
    ("bomb.opml", b'<?xml version="1.0"?><!DOCTYPE opml [<!ENTITY a "aaaa"><!ENTITY b "&a;&a;&a;&a;">]>'
                  b'<opml version="2.0"><head/><body><outline text="&b;" xmlUrl="https://x.example/"/></body></opml>',
     "a DTD (<!DOCTYPE ...>) is not allowed"),
    ("deep.opml", b'<opml version="2.0"><head/><body>' + b'<outline text="f">' * 10_000
     + b'<outline text="x" xmlUrl="https://x.example/" language="en"/>' + b"</outline>" * 10_000 + b"</body></opml>",
     "nested more than"),
    ("page.opml", b"<html><body>not a list</body></html>", "not OPML"),
])
def test_a_refused_file_writes_nothing(sources_file, tmp_path, capsys, name, data, reason):
    opml = tmp_path / name
    opml.write_bytes(data)
    before = sources_file.read_bytes()
    assert run("import", str(opml), "--sources", str(sources_file), "--country", "GB") == 1
    out = capsys.readouterr().out.strip()
    assert out.startswith(f"{opml}: refused, nothing imported: ") and reason in out and "\n" not in out
    assert sources_file.read_bytes() == before


def test_a_50_mb_file_is_refused_without_reading_it_whole(sources_file, tmp_path, capsys):
    opml = tmp_path / "huge.opml"
    with opml.open("wb") as out:
        out.write(b'<opml version="2.0"><head/><body>')
        line = b'<outline text="x" xmlUrl="https://x.example/feed" language="en"/>\n'
        out.write(line * (50 * 1024 * 1024 // len(line)))
        out.write(b"</body></opml>")
    before = sources_file.read_bytes()
    assert run("import", str(opml), "--sources", str(sources_file)) == 1
    assert f"refused, nothing imported: file is larger than 5242880 bytes ({opml.stat().st_size} bytes)" \
        in capsys.readouterr().out
    assert sources_file.read_bytes() == before


def test_dry_run_says_what_it_would_add_and_writes_nothing(sources_file, tmp_path, capsys):
    opml = tmp_path / "freshrss.opml"
    opml.write_bytes(FRESHRSS_EXPORT)
    before = sources_file.read_bytes()
    assert run("import", str(opml), "--sources", str(sources_file), "--dry-run", "--language", "de",
               "--country", "ES") == 0
    out = capsys.readouterr().out
    # The .de domain says Germany; the flag gives elpais.com, whose domain says nothing, its country.
    assert "would add tagesschau-de: https://www.tagesschau.de/xml/rss2/ (de, DE, Uncategorized)" in out
    assert "would add el-pais-de: https://feeds.elpais.com/mrss-s/pages/ep/site/elpais.com/portada (de, ES" in out
    assert "would add 2" in out
    assert sources_file.read_bytes() == before


def test_the_bundled_starter_file_is_never_written(tmp_path, capsys):
    opml = tmp_path / "freshrss.opml"
    opml.write_bytes(FRESHRSS_EXPORT)
    before = STARTER_SOURCES.read_bytes()
    assert run("import", str(opml), "--sources", str(STARTER_SOURCES), "--language", "de") == 2
    assert "starter file bundled with the package" in capsys.readouterr().err
    assert STARTER_SOURCES.read_bytes() == before


def test_export_reads_back_through_the_importer_and_the_readers_rules(tmp_path, capsys):
    """The starter file (243 feeds) out as OPML, then into an empty sources file: the same feeds,
    languages and countries; the file meets FreshRSS's strict rules and Miniflux reads every feed."""
    exported = tmp_path / "starter.opml"
    assert run("export", "--sources", str(STARTER_SOURCES), "-o", str(exported), "--include-disabled") == 0
    data = exported.read_bytes()
    assert conformance_problems(data) == []
    starter = load_sources(STARTER_SOURCES)
    assert [url for _title, url, _category in miniflux_subscriptions(data)] == [s.feed_url for s in starter]
    target = tmp_path / "copy.yaml"
    target.write_text("sources:\n  - {id: placeholder, name: P, feed_url: 'https://placeholder.example/rss', "
                      "language: en, country: GB}\n", encoding="utf-8")
    assert run("import", str(exported), "--sources", str(target)) == 0
    copied = {s.id: s for s in load_sources(target)}
    for source in starter:
        twin = copied[source.id]
        assert (twin.name, twin.feed_url, twin.language, twin.country, twin.enabled) == \
               (source.name, source.feed_url, source.language, source.country, source.enabled)
    capsys.readouterr()
    # Exporting the copy again gives the same subscriptions.
    assert run("export", "--sources", str(target), "--include-disabled") == 0
    again = capsys.readouterr().out.encode()
    assert miniflux_subscriptions(again)[1:] == miniflux_subscriptions(data)
