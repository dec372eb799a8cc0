"""NEWSDEDUP_SMTP_SECURITY=none sends the SMTP login in clear: refused when a user or password is
configured and the host is not loopback (the settings do not load, so neither the digest, nor
`doctor`, nor an alert logs in); to a loopback relay the login goes through, against the real SMTP
server."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from helpers import materialize_digest, smtp_mailer
from smtp_server import SmtpServer
from test_events_fixtures import add_story

from newsdedup_dagster import config
from newsdedup_dagster.commands.doctor import FAIL, check_smtp
from newsdedup_dagster.stages.digest.settings import SmtpSettings, is_loopback_host

PASSWORD = "pw-not-in-any-message"
REMOTE = ["smtp.example.org", "192.0.2.25", "10.0.0.5", "localhost.example.org", "mail.localhost", "127.0.0.1.nip.io",
          "2001:db8::25", "0.0.0.0"]
LOOPBACK = ["localhost", "LOCALHOST.", "127.0.0.1", "127.8.9.10", "::1", "[::1]"]


@pytest.mark.parametrize("host", REMOTE)
def test_plain_smtp_with_a_login_to_another_host_is_refused(host):
    assert not is_loopback_host(host)
    for login in ({"user": "digest", "password": PASSWORD}, {"user": "digest"}, {"password": PASSWORD}):
        with pytest.raises(ValueError, match="NEWSDEDUP_SMTP_SECURITY=none") as refused:
            SmtpSettings(host=host, security="none", **login)
        assert PASSWORD not in str(refused.value) and "starttls or ssl" in str(refused.value)
    # Encrypted, or without a login, any host is fine.
    SmtpSettings(host=host, security="starttls", user="digest", password=PASSWORD)
    SmtpSettings(host=host, security="ssl", user="digest", password=PASSWORD)
    SmtpSettings(host=host, security="none")


@pytest.mark.parametrize("host", LOOPBACK)
def test_plain_smtp_with_a_login_to_a_loopback_host_is_accepted(host):
    assert is_loopback_host(host)
    SmtpSettings(host=host, security="none", user="digest", password=PASSWORD)


def test_the_deployment_settings_are_refused_where_they_load(monkeypatch):
    for name, value in {"NEWSDEDUP_SMTP_HOST": "smtp.example.org", "NEWSDEDUP_SMTP_SECURITY": "none",
                        "NEWSDEDUP_SMTP_USER": "digest", "NEWSDEDUP_SMTP_PASSWORD": PASSWORD}.items():
        monkeypatch.setenv(name, value)
    with pytest.raises(ValueError, match="NEWSDEDUP_SMTP_SECURITY=none"):
        config.mail_settings()
    [finding] = check_smtp()   # `newsdedup doctor` names the setting instead of logging in
    assert finding.status == FAIL and "NEWSDEDUP_SMTP_SECURITY=none" in finding.detail
    assert PASSWORD not in finding.detail + finding.fix


def _seed(conn) -> None:
    add_story(conn, "s1", "t1", 8.0, titles={"en": "Market rally"}, headline="Market rally", significance=7.0)
    conn.execute("INSERT INTO subscribers (email, lang, subscribed_at) VALUES ('a@example.com', 'en', %s)",
                 (datetime(2026, 11, 1, tzinfo=UTC),))
    conn.commit()


def test_the_digest_refuses_a_clear_login_to_a_remote_host_and_logs_in_to_a_loopback_one(
        clean_db, conn, tmp_path, monkeypatch):
    monkeypatch.setenv("NEWSDEDUP_DIGEST_ALLOW_OLD_SEND", "true")   # the fixtures' day is fixed in the past
    monkeypatch.setenv("NEWSDEDUP_DIGEST_LANGS", "en")
    _seed(conn)
    with SmtpServer(logins={"digest": PASSWORD}) as server:
        login = {"NEWSDEDUP_SMTP_USER": "digest", "NEWSDEDUP_SMTP_PASSWORD": PASSWORD}
        # The mailer resource names a remote relay: the run fails before any delivery, not retried.
        remote = materialize_digest(clean_db, smtp_mailer(monkeypatch, "smtp.example.org", server.port, tmp_path, **login),
                                    "2026-11-02", raise_on_error=False)
        assert not remote.success
        failure = next(e for e in remote.all_events if e.is_step_failure).step_failure_data
        assert "NEWSDEDUP_SMTP_SECURITY=none" in failure.error.message and PASSWORD not in failure.error.to_string()
        assert not any(e.event_type_value == "STEP_UP_FOR_RETRY" for e in remote.all_events)
        assert conn.execute("SELECT count(*) FROM deliveries").fetchone()[0] == 0
        conn.commit()
        # The same settings with the loopback server: it logs in and delivers.
        local = materialize_digest(clean_db, smtp_mailer(monkeypatch, server.host, server.port, tmp_path, **login),
                                   "2026-11-02")
        assert local.success
        assert server.logins_seen == [("digest", PASSWORD)]
        assert [m.rcpt_tos for m in server.messages] == [["a@example.com"]]
