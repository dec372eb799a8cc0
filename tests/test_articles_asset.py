"""article_texts[H] materialised through Dagster against the embedded PostgreSQL, its pages served
on 127.0.0.1: text kept compressed with the page's own metadata, the item untouched, excluded
outlets and duplicates never fetched, a failed page retried in a later hour and never twice in one,
replayed hours read recorded pages and a disabled stage fetches nothing; the sample day through the hourly job."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from dagster import materialize
from feedserver import FeedServer, Response
from helpers import calibrate
from test_articles_fetch import ENGLISH, FRENCH, HTML, page

from newsdedup_dagster.assets.hourly import hourly_chain
from newsdedup_dagster.resources import PostgresResource, deployment_resources
from newsdedup_dagster.shared.db.stored_text import article_text
from newsdedup_dagster.stages.articles.store import replay_page_name

H0 = datetime(2026, 11, 2, 5, tzinfo=UTC)
H1 = H0 + timedelta(hours=1)

SOURCES = """sources:
  - {{id: daily, name: The Daily, feed_url: "{base}/feed.xml", language: en, country: GB, allow_private: true}}
  - {{id: blocked, name: Blocked, feed_url: "https://blocked.example/feed", language: en, country: GB,
      fetch_article: false}}
  - {{id: public, name: Public only, feed_url: "https://public.example/feed", language: en, country: GB}}
"""


def _key(hour: datetime) -> str:
    return hour.strftime("%Y-%m-%d-%H:%M")


@pytest.fixture()
def site():
    with FeedServer() as server:
        server.add("/robots.txt", b"User-agent: *\nAllow: /\n", headers={"Content-Type": "text/plain"})
        server.add("/good", page(ENGLISH).encode(), headers=HTML)
        server.add("/french", page(FRENCH, lang="fr", title="Le budget").encode(), headers=HTML)
        server.add("/blocked-outlet", page(ENGLISH).encode(), headers=HTML)
        server.add("/dup", page(ENGLISH).encode(), headers=HTML)
        server.add("/public-only", page(ENGLISH).encode(), headers=HTML)
        yield server


@pytest.fixture()
def deployment(monkeypatch, tmp_path, site):
    sources = tmp_path / "sources.yaml"
    sources.write_text(SOURCES.format(base=site.base_url))
    for name, value in {"NEWSDEDUP_SOURCES": sources, "NEWSDEDUP_FETCH_ALLOW_PRIVATE": "127.0.0.0/8",
                        "NEWSDEDUP_ARTICLES_HOST_DELAY": "0",
                        "NEWSDEDUP_CONTACT_URL": "https://ops.example.org/newsdedup"}.items():
        monkeypatch.setenv(name, str(value))
    calibrate(monkeypatch, tmp_path, articles={"page_timeout": 3})


def _seed(conn, site, hour, items, mode="live"):
    for sid, url in (("daily", site.url("/feed.xml")), ("blocked", "https://blocked.example/feed"),
                     ("public", "https://public.example/feed")):
        conn.execute("INSERT INTO sources (id, name, feed_url, language) VALUES (%s, %s, %s, 'en') "
                     "ON CONFLICT DO NOTHING", (sid, sid, url))
    conn.execute("INSERT INTO feed_fetches (source_id, partition_hour, mode, url, status) VALUES "
                 "('daily', %s, %s, %s, 'ok')", (hour, mode, site.url("/feed.xml")))
    for item_id, url, source, outlet in items:
        conn.execute("INSERT INTO items (id, canonical_url, url, title, lang, published_at, partition_hour, source_id,"
                     " outlet) VALUES (%s, %s, %s, %s, 'en', %s, %s, %s, %s)",
                     (item_id, url, url, f"headline {item_id}", hour + timedelta(minutes=5), hour, source, outlet))
        conn.execute("INSERT INTO item_sources (item_id, source_id, url, partition_hour) VALUES (%s, %s, %s, %s)",
                     (item_id, source, url, hour))
    conn.commit()


def _materialize(url, hour):
    # The hourly op with article_texts alone selected, as "Materialize" on the asset runs it.
    result = materialize([hourly_chain], selection=["article_texts"], partition_key=_key(hour),
                         resources={**deployment_resources(), "postgres": PostgresResource(database_url=url)})
    assert result.success
    return result.asset_materializations_for_node("hourly_chain")[0].metadata


def _rows(conn):
    return {r[0]: r[1:] for r in conn.execute(
        "SELECT item_id, status, reason, attempts, language, word_count, byline, canonical_url, text_gzip, "
        "published_at, fetched_hour, html_gzip FROM article_texts")}


def test_an_hour_of_article_texts(conn, clean_db, site, deployment):
    site.route("/flaky", lambda request: Response(status=503, body=b"busy") if site.count("/flaky") == 1
               else Response(body=page(ENGLISH).encode(), headers=HTML))
    _seed(conn, site, H0, [
        ("good", site.url("/good"), "daily", None),
        ("french", site.url("/french"), "daily", None),
        ("flaky", site.url("/flaky"), "daily", None),
        ("via-blocked", site.url("/blocked-outlet"), "daily", "blocked.example"),   # the excluded outlet's article
        ("dup", site.url("/dup"), "daily", None),
        ("public-only", site.url("/public-only"), "public", None),                  # no allow_private: loopback refused
        ("linkless", "urn:newsdedup:abc", "daily", None),
    ])
    conn.execute("INSERT INTO item_duplicates (item_id, canonical_item_id, rule, partition_hour) "
                 "VALUES ('dup', 'good', 'exact', %s)", (H0,))
    conn.commit()
    items_before = conn.execute("SELECT id, url, canonical_url, outlet, lang, title FROM items ORDER BY id").fetchall()

    meta = _materialize(clean_db, H0)
    rows = _rows(conn)
    assert set(rows) == {"good", "french", "flaky", "public-only"}
    good = rows["good"]
    assert good[:2] == ("ok", None) and good[2] == 1 and good[3] == "en" and good[4] > 40
    assert good[5:7] == ("Jane Reporter", "https://daily.example/a/1")
    text = article_text(good[7])
    assert "approved the new budget" in text and "cookies" not in text
    assert good[8] == datetime(2026, 11, 2, 4, 30, tzinfo=UTC) and good[9] == H0 and good[10] is None
    assert rows["french"][0] == "ok" and rows["french"][3] == "fr"
    assert rows["flaky"][:3] == ("failed", "http_error_retryable", 1)
    assert rows["public-only"][:2] == ("failed", "refused_address")  # its feed may not reach loopback
    assert site.count("/blocked-outlet") == site.count("/dup") == site.count("/public-only") == 0
    # A page never changes its item (the canonical link, the page's language stay in article_texts).
    assert conn.execute("SELECT id, url, canonical_url, outlet, lang, title FROM items ORDER BY id").fetchall() == items_before
    assert meta["extracted"].value == 2 and meta["failed"].value == 2
    assert {r.headers["user-agent"] for r in site.requests} == {
        f"newsdedup/{_version()} (+https://ops.example.org/newsdedup)"}
    assert site.count("/robots.txt") == 1

    # The same hour again: nothing is fetched twice in one hour, the rows stay.
    _materialize(clean_db, H0)
    assert site.count("/flaky") == 1 and site.count("/good") == 1 and _rows(conn) == rows

    # The next hour retries the failed page once (robots.txt from the cache), and keeps the rest.
    _seed(conn, site, H1, [])
    _materialize(clean_db, H1)
    after = _rows(conn)
    assert after["flaky"][:3] == ("ok", None, 2) and after["flaky"][9] == H1
    assert after["good"] == rows["good"] and site.count("/good") == 1
    assert site.count("/flaky") == 2 and site.count("/robots.txt") == 1


def test_replayed_hours_read_recorded_pages_and_a_disabled_stage_fetches_nothing(conn, clean_db, site, deployment,
                                                                                  monkeypatch, tmp_path):
    recorded = tmp_path / "pages"
    recorded.mkdir()
    (recorded / replay_page_name(site.url("/good"))).write_text(page(FRENCH, lang="fr"), encoding="utf-8")
    monkeypatch.setenv("NEWSDEDUP_ARTICLES_REPLAY_DIR", str(recorded))
    _seed(conn, site, H0, [("good", site.url("/good"), "daily", None),
                           ("unrecorded", site.url("/french"), "daily", None)], mode="replay")
    meta = _materialize(clean_db, H0)
    rows = _rows(conn)
    assert site.requests == [] and set(rows) == {"good"} and meta["replayed"].value is True
    assert rows["good"][0] == "ok" and rows["good"][3] == "fr" and "conseil municipal" in article_text(rows["good"][7])
    monkeypatch.setenv("NEWSDEDUP_ARTICLES_REPLAY_DIR", str(tmp_path / "missing"))
    _seed(conn, site, H0 + timedelta(hours=2), [("later", site.url("/good") + "?later", "daily", None)], mode="replay")
    meta = _materialize(clean_db, H0 + timedelta(hours=2))
    assert "replayed" in meta["skipped"].value and site.requests == [] and "later" not in _rows(conn)
    _seed(conn, site, H1, [("good2", site.url("/good") + "?copy=2", "daily", None)])
    monkeypatch.setenv("NEWSDEDUP_ARTICLES", "false")
    meta = _materialize(clean_db, H1)
    assert "disabled" in meta["skipped"].value and site.requests == [] and "good2" not in _rows(conn)


def test_the_hourly_cap_takes_the_most_covered_items_first(conn, clean_db, site, deployment, monkeypatch):
    monkeypatch.setenv("NEWSDEDUP_ARTICLES_PER_HOUR", "1")
    _seed(conn, site, H0, [("good", site.url("/good"), "daily", None), ("french", site.url("/french"), "daily", None)])
    conn.execute("INSERT INTO item_sources (item_id, source_id, url, partition_hour) VALUES ('french', 'public', %s, %s)",
                 (site.url("/french"), H0))
    conn.commit()
    _materialize(clean_db, H0)
    assert set(_rows(conn)) == {"french"} and site.count("/good") == 0


def _version() -> str:
    from newsdedup_dagster.shared.http.fetch import USER_AGENT

    return USER_AGENT.split(" ", 1)[0].split("/", 1)[1]


@pytest.mark.slow
def test_the_sample_day_replayed_through_the_hourly_job_extracts_its_recorded_pages(clean_db, monkeypatch):
    from newsdedup_dagster.definitions import HOURLY_JOB_NAME, defs
    from newsdedup_dagster.instance import QUIET_RUN_CONFIG, get_instance
    from newsdedup_dagster.shared import db

    monkeypatch.setenv("NEWSDEDUP_FETCH_MODE", "replay")
    job = defs.resolve_job_def(HOURLY_JOB_NAME)
    assert job.execute_in_process(partition_key="2026-11-02-06:00", instance=get_instance(),
                                  run_config=QUIET_RUN_CONFIG).success
    with db.connection(clean_db) as conn:
        canonical = conn.execute("SELECT count(*) FROM items i WHERE partition_hour = '2026-11-02 06:00+00' AND "
                                 "NOT EXISTS (SELECT 1 FROM item_duplicates d WHERE d.item_id = i.id)").fetchone()[0]
        rows = dict(conn.execute("SELECT status, count(*) FROM article_texts GROUP BY 1").fetchall())
        languages = {r[0] for r in conn.execute("SELECT DISTINCT language FROM article_texts WHERE status = 'ok'")}
    assert canonical > 5 and rows.get("ok", 0) >= 0.8 * canonical, (canonical, rows)
    assert len(languages) >= 3


def test_a_failing_page_is_tried_once_an_hour_up_to_the_attempt_cap(conn, clean_db, site, deployment, monkeypatch,
                                                                     tmp_path):
    calibrate(monkeypatch, tmp_path, articles={"max_attempts": 2})
    site.route("/down", lambda request: Response(status=503, body=b"busy"))
    _seed(conn, site, H0, [("down", site.url("/down"), "daily", None)])
    for n in range(4):
        hour = H0 + timedelta(hours=n)
        if n:
            _seed(conn, site, hour, [])
        _materialize(clean_db, hour)
        _materialize(clean_db, hour)                    # the same hour twice: never a second request
    status, reason, attempts = _rows(conn)["down"][:3]
    assert (status, reason, attempts) == ("failed", "http_error_retryable", 2)
    assert site.count("/down") == 2


def test_the_newest_hour_goes_first_and_the_page_is_kept_only_when_asked(conn, clean_db, site, deployment,
                                                                         monkeypatch):
    monkeypatch.setenv("NEWSDEDUP_ARTICLES_PER_HOUR", "1")
    monkeypatch.setenv("NEWSDEDUP_ARTICLES_KEEP_HTML", "true")
    _seed(conn, site, H0, [("older", site.url("/good"), "daily", None)])
    _seed(conn, site, H1, [("newer", site.url("/french"), "daily", None)])
    _materialize(clean_db, H1)
    rows = _rows(conn)
    assert set(rows) == {"newer"} and site.count("/good") == 0
    kept = article_text(rows["newer"][10])              # html_gzip: the page as it was served
    assert kept.startswith("<!doctype html>") and "Le budget" in kept
