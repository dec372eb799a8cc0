"""Checks on the bundled sample day and the starter sources list (no database, no network).

The sample day (newsdedup_dagster/sample_data/) is rendered by bench/make_sample_feeds.py
from articles.yaml; these tests pin the properties the demo and the clustering tests rely on.
"""

from __future__ import annotations

import collections
import datetime as dt
import importlib.util
import json
import re
from pathlib import Path
from urllib.parse import urlparse

import feedparser
import pytest
import yaml

REPO_ROOT = Path(__file__).resolve().parent.parent
SAMPLE_DIR = REPO_ROOT / "newsdedup_dagster" / "sample_data"
STARTER_PATH = REPO_ROOT / "newsdedup_dagster" / "sources" / "starter_sources.yaml"
GENERATOR_PATH = REPO_ROOT / "bench" / "make_sample_feeds.py"

FEEDPARSER_VERSION = {"rss2": "rss20", "atom": "atom10", "rdf": "rss10"}
SOURCE_KEYS = {"id", "name", "feed_url", "language", "country", "syndicator", "enabled", "replay_file"}
REQUIRED_KEYS = {"id", "name", "feed_url", "language", "country"}
STARTER_LANGUAGES = {"en", "zh", "ja", "ko", "fr", "de", "es", "pt", "it", "ru",
                     "ar", "hi", "id", "vi", "th", "tr", "nl"}
AGGREGATOR_HOSTS = ("news.google.com", "news.naver.com", "v.daum.net", "yahoo.com", "yahoo.co.jp", "msn.com")
DAY = dt.date(2026, 11, 2)


# --------------------------------------------------------------------------- fixtures

@pytest.fixture(scope="module")
def articles() -> dict:
    return yaml.safe_load((SAMPLE_DIR / "articles.yaml").read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def sample_sources() -> list[dict]:
    return yaml.safe_load((SAMPLE_DIR / "sources.yaml").read_text(encoding="utf-8"))["sources"]


@pytest.fixture(scope="module")
def gold() -> list[dict]:
    lines = (SAMPLE_DIR / "gold.jsonl").read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines if line.strip()]


@pytest.fixture(scope="module")
def parsed_feeds(articles) -> dict[str, feedparser.FeedParserDict]:
    return {s["id"]: feedparser.parse((SAMPLE_DIR / "feeds" / f"{s['id']}.xml").read_bytes())
            for s in articles["sources"]}


@pytest.fixture(scope="module")
def starter() -> list[dict]:
    return yaml.safe_load(STARTER_PATH.read_text(encoding="utf-8"))["sources"]


def load_generator():
    spec = importlib.util.spec_from_file_location("make_sample_feeds", GENERATOR_PATH)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def validate_sources_file(rows: list[dict]) -> list[str]:
    """Problems with a list of source mappings in the sources-file format (empty = valid)."""
    problems = []
    ids, urls = collections.Counter(), collections.Counter()
    for row in rows:
        label = row.get("id", "<no id>")
        missing = REQUIRED_KEYS - row.keys()
        extra = row.keys() - SOURCE_KEYS
        if missing:
            problems.append(f"{label}: missing {sorted(missing)}")
        if extra:
            problems.append(f"{label}: unknown keys {sorted(extra)}")
        if not re.fullmatch(r"[a-z0-9]+(-[a-z0-9]+)*", str(row.get("id", ""))):
            problems.append(f"{label}: id is not a slug")
        if urlparse(str(row.get("feed_url", ""))).scheme not in ("http", "https"):
            problems.append(f"{label}: feed_url is not http(s)")
        if not re.fullmatch(r"[a-z]{2}", str(row.get("language", ""))):
            problems.append(f"{label}: language is not ISO 639-1")
        if not re.fullmatch(r"[A-Z]{2}", str(row.get("country", ""))):
            problems.append(f"{label}: country is not ISO 3166-1 alpha-2")
        for flag in ("syndicator", "enabled"):
            if flag in row and not isinstance(row[flag], bool):
                problems.append(f"{label}: {flag} is not a bool")
        ids[row.get("id")] += 1
        urls[row.get("feed_url")] += 1
    problems += [f"duplicate id {k}" for k, n in ids.items() if n > 1]
    problems += [f"duplicate feed_url {k}" for k, n in urls.items() if n > 1]
    return problems


# --------------------------------------------------------------------------- generator

def test_rendered_files_match_source_of_truth():
    """feeds/, sources.yaml and gold.jsonl are exactly what the generator renders from articles.yaml."""
    generator = load_generator()
    files = generator.render_all(SAMPLE_DIR / "articles.yaml")
    for rel, data in files.items():
        assert (SAMPLE_DIR / rel).read_bytes() == data, f"{rel} is stale: run bench/make_sample_feeds.py"
    on_disk = {f"feeds/{p.name}" for p in (SAMPLE_DIR / "feeds").glob("*.xml")}
    assert on_disk == {rel for rel in files if rel.startswith("feeds/")}


def test_google_news_token_encodes_original_url():
    generator = load_generator()
    url = generator.google_news_article_url("https://www.reuters.com/world/x-2026-11-02/")
    assert url.startswith("https://news.google.com/rss/articles/CBMi") and url.endswith("?oc=5")


# --------------------------------------------------------------------------- feeds

def test_every_feed_parses_cleanly_in_its_declared_format(articles, parsed_feeds):
    for src in articles["sources"]:
        feed = parsed_feeds[src["id"]]
        assert not feed.bozo, f"{src['id']}: {feed.get('bozo_exception')}"
        assert feed.version == FEEDPARSER_VERSION[src["format"]], src["id"]
        assert feed.entries, src["id"]


def test_feed_formats_and_encodings(articles, parsed_feeds):
    formats = collections.Counter(s["format"] for s in articles["sources"])
    assert formats["rss2"] >= 10 and formats["atom"] >= 2 and formats["rdf"] >= 1
    for src in articles["sources"]:
        declared = src.get("encoding", "UTF-8")
        head = (SAMPLE_DIR / "feeds" / f"{src['id']}.xml").read_bytes()[:60].decode("ascii")
        assert f'encoding="{declared}"' in head
        assert parsed_feeds[src["id"]].encoding.lower() == declared.lower()
    assert any(s.get("encoding", "UTF-8").upper() != "UTF-8" for s in articles["sources"])


def test_feed_items_and_gold_match_one_to_one(articles, parsed_feeds, gold):
    from_feeds = {}
    for sid, feed in parsed_feeds.items():
        for entry in feed.entries:
            key = (sid, entry.link)
            assert key not in from_feeds, f"duplicate link within {sid}"
            from_feeds[key] = entry
    from_gold = {(r["source"], r["url"]): r for r in gold}
    assert len(from_gold) == len(gold)
    assert set(from_feeds) == set(from_gold)
    for key, entry in from_feeds.items():
        record = from_gold[key]
        assert entry.title == record["title"]
        assert entry.id == record["guid"]
        published = entry.get("published_parsed") or entry.get("updated_parsed")
        assert dt.datetime(*published[:6]).strftime("%Y-%m-%dT%H:%M:%SZ") == record["published_at"]


def test_items_spread_over_the_day(gold):
    hours = collections.Counter(r["published_at"][11:13] for r in gold)
    assert all(r["published_at"].startswith(DAY.isoformat()) for r in gold)
    assert len(hours) == 24, "every hourly partition of the day has items"


# --------------------------------------------------------------------------- gold labels

def test_size_and_coverage(gold, articles):
    assert 200 <= len(gold) <= 320
    assert 14 <= len({r["source"] for r in gold}) <= 20
    assert len({r["story"] for r in gold}) >= 30
    langs = {r["lang"] for r in gold}
    assert len(langs) >= 6 and {"en", "ja", "fr", "zh", "ko", "de"} <= langs
    source_lang = {s["id"]: s["language"] for s in articles["sources"]}
    assert all(r["lang"] == source_lang[r["source"]] for r in gold)


def test_major_stories_are_multilingual(gold):
    langs = collections.defaultdict(set)
    for r in gold:
        langs[r["story"]].add(r["lang"])
    assert sum(1 for s in langs.values() if len(s) >= 3) >= 12


SCRIPT = {"en": "latin", "fr": "latin", "de": "latin", "es": "latin", "ru": "cyrillic",
          "ja": "japanese", "zh": "han", "ko": "hangul"}


def latin_tokens(title: str) -> set[str]:
    """Tokens a lexical matcher could share across scripts (ASCII letters/digits)."""
    return set(re.findall(r"[a-z0-9]+", title.lower()))


def test_translations_share_no_tokens_across_scripts(gold):
    # the 3mins.news write-up's example (docs/ARCHITECTURE.md#sources): BBC / NHK / Le Monde /
    # Xinhua headlines have nothing lexical in common
    four_outlets = [r for r in gold if r["story"] == "eu-ai-act-deal"
                    and r["source"] in ("bbc-en", "nhk-ja", "lemonde-fr", "xinhua-zh")]
    for a in four_outlets:
        for b in four_outlets:
            if SCRIPT[a["lang"]] != SCRIPT[b["lang"]]:
                assert not latin_tokens(a["title"]) & latin_tokens(b["title"]), (a["title"], b["title"])
    # and at least 12 multilingual stories contain a cross-script pair with zero shared tokens
    by_story = collections.defaultdict(list)
    for r in gold:
        by_story[r["story"]].append(r)
    token_free = 0
    for records in by_story.values():
        if len({r["lang"] for r in records}) < 3:
            continue
        if any(SCRIPT[a["lang"]] != SCRIPT[b["lang"]] and not latin_tokens(a["title"]) & latin_tokens(b["title"])
               for a in records for b in records):
            token_free += 1
    assert token_free >= 12


def test_noise_share(gold):
    per_story = collections.Counter(r["story"] for r in gold)
    singles = sum(1 for n in per_story.values() if n == 1)
    assert 0.15 <= singles / len(gold) <= 0.20


def test_eu_ai_event(gold):
    deal = [r for r in gold if r["story"] == "eu-ai-act-deal"]
    assert len({r["lang"] for r in deal}) >= 4
    four_outlets = {r["source"]: r for r in deal if r["source"] in ("bbc-en", "nhk-ja", "lemonde-fr", "xinhua-zh")}
    assert len(four_outlets) == 4, "BBC, NHK, Le Monde and Xinhua all report the deal"
    times = sorted(dt.datetime.fromisoformat(r["published_at"].replace("Z", "+00:00")) for r in four_outlets.values())
    assert times[-1] - times[0] <= dt.timedelta(hours=4)
    thread = {r["story"] for r in gold if r["event"] == "eu-ai-regulation"}
    assert thread == {"eu-ai-act-deal", "eu-ai-act-committee-vote"}
    first_vote = min(r["published_at"] for r in gold if r["story"] == "eu-ai-act-committee-vote")
    assert first_vote > max(r["published_at"] for r in deal)


def test_two_earthquakes_are_two_stories(gold):
    quakes = [r for r in gold if r["story"].startswith("quake-")]
    stories = {r["story"] for r in quakes}
    assert len(stories) == 2
    first, second = sorted(stories, key=lambda s: min(r["published_at"] for r in quakes if r["story"] == s))
    t_first = max(r["published_at"] for r in quakes if r["story"] == first)
    t_second = min(r["published_at"] for r in quakes if r["story"] == second)
    assert t_first < "2026-11-02T03:00:00Z" < "2026-11-02T23:00:00Z" < t_second
    assert all(r["event"] is None for r in quakes)


def test_korean_syndication_case(gold, sample_sources):
    by_title = {r["title"]: r for r in gold}
    original = by_title["진천군, 온디바이스 AI 기반 스마트 돌봄 구축 본격 착수"]
    copy = by_title["진천군 온디바이스 AI기반 스마트돌봄 본격화"]
    assert copy["story"] == original["story"] and copy["dup_of"] == original["url"]
    assert urlparse(copy["url"]).hostname.endswith("news.naver.com")
    syndicators = {s["id"] for s in sample_sources if s["syndicator"]}
    assert copy["source"] in syndicators and original["source"] not in syndicators
    advant = by_title["어드밴트, 온디바이스 AI 서비스 실증·확산 사업 참여"]
    mzen = by_title["엠젠솔루션, 온디바이스 AI 서비스 실증·확산 사업 참여"]
    assert advant["story"] != mzen["story"], "same programme, different companies: different stories"
    assert advant["event"] == mzen["event"] == original["event"]


def test_syndicated_copies_share_their_originals_story(gold):
    by_url = collections.defaultdict(list)
    for r in gold:
        by_url[r["url"]].append(r)
    copies = [r for r in gold if r["dup_of"]]
    assert len(copies) >= 20
    for r in copies:
        originals = [o for o in by_url[r["dup_of"]] if not o["dup_of"]]
        assert len(originals) == 1, r["url"]
        assert originals[0]["story"] == r["story"] and originals[0]["source"] != r["source"]


def test_url_variants_present(gold):
    urls = [r["url"] for r in gold]
    shared = [u for u, n in collections.Counter(urls).items() if n > 1]
    assert len(shared) >= 2, "the same article URL appears in two sources"
    assert sum("news.google.com/rss/articles/CBMi" in u for u in urls) >= 10
    assert any("utm_source=" in u for u in urls)
    assert any("amp.theguardian.com" in u or u.endswith(".amp") for u in urls)
    assert any(r["title"].endswith(" - Reuters") for r in gold)


def test_events_are_multi_story_threads(gold):
    stories_per_event = collections.defaultdict(set)
    for r in gold:
        if r["event"]:
            stories_per_event[r["event"]].add(r["story"])
    assert len(stories_per_event) >= 3
    assert all(len(stories) >= 2 for stories in stories_per_event.values())
    story_event = collections.defaultdict(set)
    for r in gold:
        story_event[r["story"]].add(r["event"])
    assert all(len(events) == 1 for events in story_event.values()), "one event label per story"


# --------------------------------------------------------------------------- sources files

def test_sample_sources_file(sample_sources, articles):
    assert validate_sources_file(sample_sources) == []
    assert [s["id"] for s in sample_sources] == [s["id"] for s in articles["sources"]]
    for s in sample_sources:
        assert (SAMPLE_DIR / s["replay_file"]).is_file()
        host = urlparse(s["feed_url"]).hostname
        assert s["syndicator"] == any(host.endswith(h) for h in AGGREGATOR_HOSTS), s["id"]


def test_starter_sources(starter):
    assert validate_sources_file(starter) == []
    assert len(starter) >= 180
    per_lang = collections.Counter(s["language"] for s in starter)
    assert set(per_lang) == STARTER_LANGUAGES
    assert min(per_lang.values()) >= 6
    for s in starter:
        host = urlparse(s["feed_url"]).hostname
        if any(host.endswith(h) for h in AGGREGATOR_HOSTS):
            assert s["syndicator"] is True, s["id"]


def test_format_documented_in_both_sources_files():
    for path in (STARTER_PATH, SAMPLE_DIR / "sources.yaml"):
        header = path.read_text(encoding="utf-8").split("\nsources:", 1)[0]
        for key in ("id", "name", "feed_url", "language", "country", "syndicator", "enabled", "replay_file"):
            assert re.search(rf"#\s+(- )?{key}:", header), f"{path.name}: {key} not documented"
