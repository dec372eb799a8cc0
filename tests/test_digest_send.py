"""Delivery against a real SMTP server on 127.0.0.1 (aiosmtpd): multipart structure, UTF-8
subjects, no double send on rerun, a failing recipient not blocking the others, outbox mode."""

from __future__ import annotations

import email
import email.policy
from datetime import UTC, date, datetime

import pytest
from smtp_server import SmtpServer
from test_events_fixtures import add_story

from newsdedup_dagster.stages.digest.build import render_day
from newsdedup_dagster.stages.digest.send import (
    OutboxRefused,
    build_message,
    deliver_day,
    message_id_for,
    valid_email,
)
from newsdedup_dagster.stages.digest.settings import SmtpSettings

DAY = date(2026, 11, 2)


def subscribe(conn, email_addr, lang="en", at=datetime(2026, 11, 2, 6, tzinfo=UTC)):
    """A reader subscribed `at` (default: during DAY, so DAY's digest is theirs)."""
    conn.execute("INSERT INTO subscribers (email, lang, subscribed_at) VALUES (%s, %s, %s)", (email_addr, lang, at))
    conn.commit()


def smtp_for(server, **kw) -> SmtpSettings:
    return SmtpSettings(host=server.host, port=server.port, security="none", from_addr="Digest <digest@news.example>",
                        retry_delay_s=0, **kw)


@pytest.fixture()
def day_with_stories(conn):
    add_story(conn, "s1", "topic-1", 8.0, titles={"en": "Election <b>results</b>", "ja": "選挙結果"},
              headline="Election results", significance=8.0,
              translations={"ja": ("選挙の結果", "要約"), "ar": ("نتائج الانتخابات", "ملخص")})
    add_story(conn, "s2", "topic-2", 9.0, titles={"de": "Sturm an der Küste"}, pivot_lang="de", significance=6.0)
    return conn


def test_smtp_delivery_multipart_utf8_and_no_double_send(day_with_stories, tmp_path):
    conn = day_with_stories
    for addr, lang in [("a@example.com", "en"), ("b@example.com", "ja"), ("c@example.com", "ar"), ("d@example.com", "xx")]:
        subscribe(conn, addr, lang)
    result = render_day(conn, DAY, ["en", "ja", "ar"], outbox_dir=tmp_path)
    with SmtpServer() as server:
        report = deliver_day(conn, DAY, result.by_digest_id(), smtp_for(server, batch_size=2), tmp_path)
        assert (report.sent, report.failed, report.outbox) == (4, 0, 0)
        assert sorted(m.rcpt_tos[0] for m in server.messages) == ["a@example.com", "b@example.com", "c@example.com", "d@example.com"]
        by_rcpt = {m.rcpt_tos[0]: m for m in server.messages}
        ja = by_rcpt["b@example.com"]
        # subject is non-ASCII: RFC 2047 encoded on the wire, decoded back to the Japanese text
        assert b"=?utf-8?" in ja.raw.split(b"\r\n\r\n")[0].lower()
        assert ja.message["Subject"] == "ニュースダイジェスト 2026年11月2日"   # the date written the Japanese way
        assert ja.message.get_content_type() == "multipart/alternative"
        parts = [p.get_content_type() for p in ja.message.iter_parts()]
        assert parts == ["text/plain", "text/html"]
        assert all(p.get_content_charset() == "utf-8" for p in ja.message.iter_parts())
        html = ja.message.get_body(("html",)).get_content()
        assert "選挙の結果" in html and '<html lang="ja"' in html
        assert "選挙の結果" in ja.message.get_body(("plain",)).get_content()
        assert by_rcpt["c@example.com"].message["Subject"].startswith("موجز الأخبار")
        # unknown language -> the pivot-language digest
        assert by_rcpt["d@example.com"].message["Subject"] == "News digest November 2, 2026"
        assert ja.message["Message-ID"].startswith("<newsdedup.digest.2026-11-02.")

        # rerun (retried partition): nothing is sent twice
        result2 = render_day(conn, DAY, ["en", "ja", "ar"], outbox_dir=tmp_path)
        report2 = deliver_day(conn, DAY, result2.by_digest_id(), smtp_for(server), tmp_path)
        assert report2.attempted == 0 and report2.sent == 0
        assert len(server.messages) == 4
        assert report2.totals == {"sent": 4}
        # a new subscriber later in the day gets exactly one mail on the next run
        subscribe(conn, "late@example.com", "en")
        report3 = deliver_day(conn, DAY, result2.by_digest_id(), smtp_for(server), tmp_path)
        assert report3.sent == 1 and len(server.messages) == 5


def test_failing_recipient_does_not_block_others_and_is_retried(day_with_stories, tmp_path):
    conn = day_with_stories
    for addr in ["ok1@example.com", "gone@example.com", "busy@example.com", "ok2@example.com"]:
        subscribe(conn, addr)
    result = render_day(conn, DAY, ["en"], outbox_dir=tmp_path)
    refuse = {"gone@example.com": "550 5.1.1 no such user", "busy@example.com": "451 4.3.0 try again later"}
    with SmtpServer(refuse=refuse, refuse_times=2) as server:
        report = deliver_day(conn, DAY, result.by_digest_id(), smtp_for(server, max_attempts=3), tmp_path)
        delivered = sorted(m.rcpt_tos[0] for m in server.messages)
        assert delivered == ["ok1@example.com", "ok2@example.com"]
        # 550 is permanent (not retried); 451 was retried once in the run and refused again
        assert report.permanent_failures == 1 and report.failed == 2
        rows = {r[0]: r[1:] for r in conn.execute("SELECT email, status, attempts, permanent FROM deliveries")}
        conn.commit()
        assert rows["gone@example.com"] == ("failed", 1, True)
        assert rows["busy@example.com"] == ("failed", 2, False)
        assert rows["ok1@example.com"] == ("sent", 1, False)
        # next run: the transient failure is retried and now accepted; the permanent one is not retried
        report2 = deliver_day(conn, DAY, result.by_digest_id(), smtp_for(server, max_attempts=3), tmp_path)
        assert report2.attempted == 1 and report2.sent == 1
        assert server.refused.count("gone@example.com") == 1
        assert sorted(m.rcpt_tos[0] for m in server.messages) == ["busy@example.com", "ok1@example.com", "ok2@example.com"]
        error = conn.execute("SELECT error FROM deliveries WHERE email = 'gone@example.com'").fetchone()[0]
        conn.commit()
        assert "550" in error


def test_unreachable_server_records_transient_failures(day_with_stories, tmp_path):
    conn = day_with_stories
    subscribe(conn, "a@example.com")
    result = render_day(conn, DAY, ["en"], outbox_dir=tmp_path)
    with SmtpServer() as server:
        port = server.port
    dead = SmtpSettings(host="127.0.0.1", port=port, security="none", retry_delay_s=0, max_attempts=2, timeout_s=2)
    report = deliver_day(conn, DAY, result.by_digest_id(), dead, tmp_path)
    assert report.sent == 0 and report.failed == 1 and "cannot connect" in report.errors[0]
    # nobody was reached: no attempt is used up, and the delivery stays to do (the asset fails the run)
    assert report.retryable == 1
    assert conn.execute("SELECT status, attempts FROM deliveries").fetchone() == ("failed", 0)
    conn.commit()


def test_outbox_delivery_without_smtp_only_when_intended(day_with_stories, tmp_path):
    conn = day_with_stories
    subscribe(conn, "a@example.com", "ja")
    result = render_day(conn, DAY, ["en", "ja"], outbox_dir=tmp_path)
    with pytest.raises(OutboxRefused, match="1 active subscribers"):
        deliver_day(conn, DAY, result.by_digest_id(), SmtpSettings(), tmp_path)
    assert conn.execute("SELECT count(*) FROM deliveries").fetchone()[0] == 0   # nothing recorded as delivered
    conn.commit()
    report = deliver_day(conn, DAY, result.by_digest_id(), SmtpSettings(outbox_only=True), tmp_path)
    assert report.outbox == 1 and report.mode.startswith("outbox files")
    path = conn.execute("SELECT outbox_path FROM deliveries").fetchone()[0]
    conn.commit()
    msg = email.message_from_bytes(open(path, "rb").read(), policy=email.policy.default)
    assert msg["To"] == "a@example.com" and msg.get_content_type() == "multipart/alternative"
    again = deliver_day(conn, DAY, result.by_digest_id(), SmtpSettings(outbox_only=True), tmp_path)
    assert again.attempted == 0 and again.retryable == 0


def test_message_helpers():
    msg = build_message("Sujet\r\nBcc: evil@example.com", "<p>x</p>", "x", "a@example.com", "N <n@x.example>", "<id@x>", "fr")
    assert msg["Subject"] == "Sujet Bcc: evil@example.com" and msg["Bcc"] is None
    assert message_id_for(DAY, 3, 9, "N <n@news.example>") == "<newsdedup.digest.2026-11-02.3.9@news.example>"
    assert valid_email("a.b+c@example.co.uk") and not valid_email("a@b") and not valid_email("<a@b.c>")
    settings = SmtpSettings(host="h", user="u", password="s3cret-value")
    assert "s3cret-value" not in repr(settings) and "s3cret-value" not in settings.describe()
