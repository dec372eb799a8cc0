"""The `digest` asset (daily partition) against the real database and a real SMTP server."""

from __future__ import annotations

import pytest
from helpers import materialize_digest, smtp_mailer
from smtp_server import SmtpServer
from test_events_fixtures import add_story

from newsdedup_dagster.assets.digest import MailerResource, send_decision
from newsdedup_dagster.resources import LLMResource
from newsdedup_dagster.stages.digest.build import digest_html_path

KEY = "2026-11-02"


@pytest.fixture(autouse=True)
def old_days_may_be_mailed(monkeypatch):
    """The fixtures' day is fixed, and soon older than deployment.digest_send_max_age_days: this
    deployment mails it (the age bound has its own tests in test_digest_past_days.py)."""
    monkeypatch.setenv("NEWSDEDUP_DIGEST_ALLOW_OLD_SEND", "true")


def _run(url, mailer, **kwargs):
    return materialize_digest(url, mailer, KEY, **kwargs)


def _seed(conn):
    add_story(conn, "s1", "t1", 8.0, titles={"en": '"><img src=x onerror=alert(1)> Market rally'},
              headline='"><img src=x onerror=alert(1)> Market rally', significance=7.0)
    add_story(conn, "s2", "t2", 10.0, titles={"fr": "Grève nationale"}, pivot_lang="fr", significance=5.0)
    for addr, lang in [("a@example.com", "en"), ("b@example.com", "fr")]:
        conn.execute("INSERT INTO subscribers (email, lang, subscribed_at) VALUES (%s, %s, '2026-11-01Z')", (addr, lang))
    conn.commit()


def test_send_decision_rules():
    assert send_decision(True, False, False) == (True, None)
    assert send_decision(True, True, False)[0] is False
    assert send_decision(True, True, True) == (True, None)
    assert send_decision(False, False, True)[0] is False


def test_digest_asset_sends_once_and_reports(clean_db, conn, tmp_path, monkeypatch):
    monkeypatch.setenv("NEWSDEDUP_DIGEST_LANGS", "en,fr,ja")
    _seed(conn)
    with SmtpServer() as server:
        mailer = smtp_mailer(monkeypatch, server.host, server.port, tmp_path)
        r1 = _run(clean_db, mailer)
        assert r1.success
        md = r1.asset_materializations_for_node("digest")[-1].metadata
        assert md["sent"].value == 2 and md["failed"].value == 0 and md["outbox"].value == 0
        assert md["stories"].value == 2 and md["languages"].value == "en, fr, ja"
        preview = md["preview"].value
        assert "Market rally" in preview and "<img" not in preview
        assert md["delivery"].value.startswith("smtp://127.0.0.1")
        assert len(server.messages) == 2
        # re-materialising the partition: rendered again, nothing sent twice
        r2 = _run(clean_db, mailer)
        md2 = r2.asset_materializations_for_node("digest")[-1].metadata
        assert md2["sent"].value == 2 and md2["this_run"].value["attempted"] == 0
        assert len(server.messages) == 2
    html = digest_html_path(__import__("datetime").date(2026, 11, 2), "fr", tmp_path).read_text()
    assert "Grève nationale" in html and "&lt;img" in html


def test_backfill_renders_but_does_not_send_unless_allowed(clean_db, conn, tmp_path, monkeypatch):
    monkeypatch.setenv("NEWSDEDUP_DIGEST_LANGS", "en")
    _seed(conn)
    with SmtpServer() as server:
        mailer = smtp_mailer(monkeypatch, server.host, server.port, tmp_path)
        r = _run(clean_db, mailer, tags={"dagster/backfill": "bf1"})
        md = r.asset_materializations_for_node("digest")[-1].metadata
        assert md["backfill"].value is True and md["sent"].value == 0
        assert "backfill run" in md["delivery"].value
        assert server.messages == []
        assert conn.execute("SELECT count(*) FROM deliveries").fetchone()[0] == 0
        assert conn.execute("SELECT count(*) FROM digests").fetchone()[0] == 2  # en + fr (subscriber)
        conn.commit()
        r = _run(clean_db, mailer, tags={"dagster/backfill": "bf1"},
                 run_config={"ops": {"digest": {"config": {"allow_backfill_send": True}}}})
        assert r.asset_materializations_for_node("digest")[-1].metadata["sent"].value == 2
        assert len(server.messages) == 2


def test_no_smtp_means_outbox_delivery_only_when_intended(clean_db, conn, tmp_path, monkeypatch):
    monkeypatch.setenv("NEWSDEDUP_OUTBOX", str(tmp_path))
    monkeypatch.setenv("NEWSDEDUP_DIGEST_LANGS", "en")
    _seed(conn)
    # a worker without NEWSDEDUP_SMTP_HOST must not quietly turn readers' mail into files
    refused = _run(clean_db, MailerResource(), raise_on_error=False)
    assert not refused.success
    failure = [e for e in refused.all_events if e.is_step_failure][0]
    assert "NEWSDEDUP_OUTBOX_ONLY" in failure.step_failure_data.error.message
    assert conn.execute("SELECT count(*) FROM deliveries").fetchone()[0] == 0
    conn.commit()
    monkeypatch.setenv("NEWSDEDUP_OUTBOX_ONLY", "true")
    r = _run(clean_db, MailerResource())
    md = r.asset_materializations_for_node("digest")[-1].metadata
    assert md["outbox"].value == 2 and md["sent"].value == 0
    assert md["delivery"].value.startswith("outbox files (no NEWSDEDUP_SMTP_HOST configured, NEWSDEDUP_OUTBOX_ONLY set")
    assert len(list((tmp_path / "mail" / KEY).glob("*.eml"))) == 2
    path = digest_html_path(__import__("datetime").date(2026, 11, 2), "en", tmp_path)
    assert path == tmp_path / "digests" / KEY / f"digest-{KEY}-en.html" and path.exists()


def test_llm_resource_languages_reach_the_digest(clean_db, conn, tmp_path, monkeypatch):
    """The digest takes the pivot and translation languages from the llm resource's settings, the
    same object the LLM stages use, so the languages configured for those stages are the digest's too."""
    monkeypatch.setenv("NEWSDEDUP_OUTBOX", str(tmp_path))
    monkeypatch.setenv("NEWSDEDUP_PIVOT_LANG", "ja")
    monkeypatch.setenv("NEWSDEDUP_TRANSLATION_LANGS", "ko")
    _seed(conn)
    r = _run(clean_db, MailerResource(), llm=LLMResource(), run_config={"ops": {"digest": {"config": {"send": False}}}})
    md = r.asset_materializations_for_node("digest")[-1].metadata
    # configured (pivot + translations) first, then the subscribers' languages
    assert md["languages"].value == "ja, ko, en, fr"
