"""Unsubscribe: every digest the real SMTP server receives carries its reader's link, in the footer
(HTML and text) and as List-Unsubscribe, with RFC 8058's List-Unsubscribe-Post when the link is
https (NEWSDEDUP_UNSUBSCRIBE_URL) and a mailto: the sender otherwise. The link's token, given to
`newsdedup subscribers unsubscribe --token`, removes exactly that reader; it is random, not derived
from the address."""

from __future__ import annotations

import hashlib
import re
from datetime import UTC, datetime
from html.parser import HTMLParser
from urllib.parse import parse_qs, urlsplit

import pytest
from feed_validators import VNU_JAR, html_errors, java
from helpers import materialize_digest, smtp_mailer
from smtp_server import SmtpServer
from test_events_fixtures import add_story

from newsdedup_dagster.cli import main

KEY = "2026-11-02"
READERS = {"ana@example.com": "en", "ben@example.com": "fr", "chloe@example.com": "ja"}
BASE = "https://news.example.org/unsubscribe?list=daily"
SENDER = "digest@news.example.org"


@pytest.fixture(autouse=True)
def deployment(monkeypatch):
    monkeypatch.setenv("NEWSDEDUP_DIGEST_ALLOW_OLD_SEND", "true")   # the fixtures' day is fixed in the past
    monkeypatch.setenv("NEWSDEDUP_DIGEST_LANGS", "en,fr,ja")
    monkeypatch.setenv("NEWSDEDUP_SMTP_FROM", f"News digest <{SENDER}>")


class _Links(HTMLParser):
    def __init__(self):
        super().__init__()
        self.links: list[tuple[str, str]] = []   # (href, text)
        self._href: str | None = None

    def handle_starttag(self, tag, attrs):
        if tag == "a":
            self._href = dict(attrs).get("href")
            self.links.append((self._href or "", ""))

    def handle_data(self, data):
        if self._href is not None:
            href, text = self.links[-1]
            self.links[-1] = (href, text + data)

    def handle_endtag(self, tag):
        if tag == "a":
            self._href = None


def _seed(conn) -> dict[str, int]:
    add_story(conn, "s1", "t1", 8.0, titles={"en": "Market rally"}, headline="Market rally", significance=7.0)
    ids = {}
    for addr, lang in READERS.items():
        ids[addr] = conn.execute("INSERT INTO subscribers (email, lang, subscribed_at) VALUES (%s, %s, %s) RETURNING id",
                                 (addr, lang, datetime(2026, 11, 1, tzinfo=UTC))).fetchone()[0]
    conn.commit()
    return ids


def _tokens(conn) -> dict[str, str]:
    rows = conn.execute("SELECT email, unsubscribe_token FROM subscribers").fetchall()
    conn.commit()
    return dict(rows)


def _active(conn) -> dict[str, bool]:
    rows = conn.execute("SELECT email, active FROM subscribers").fetchall()
    conn.commit()
    return dict(rows)


def _footer_link(message) -> tuple[str, str]:
    """(href, text) of the HTML part's unsubscribe link: the last link of the mail."""
    parser = _Links()
    parser.feed(message.get_body(("html",)).get_content())
    return parser.links[-1]


def _deliver(clean_db, monkeypatch, tmp_path, server):
    result = materialize_digest(clean_db, smtp_mailer(monkeypatch, server.host, server.port, tmp_path), KEY)
    assert result.success
    return {m.rcpt_tos[0]: m for m in server.messages}


def test_each_reader_gets_a_one_click_link_whose_token_removes_exactly_that_reader(clean_db, conn, tmp_path,
                                                                                   monkeypatch, capsys):
    monkeypatch.setenv("NEWSDEDUP_UNSUBSCRIBE_URL", BASE)
    ids = _seed(conn)
    tokens = _tokens(conn)
    with SmtpServer() as server:
        received = _deliver(clean_db, monkeypatch, tmp_path, server)
    assert sorted(received) == sorted(READERS)
    for addr, mail in received.items():
        link = f"{BASE}&token={tokens[addr]}"
        # RFC 8058: one https URI, and the one-click POST body; written on one line, not RFC 2047-encoded.
        assert mail.message["List-Unsubscribe"] == f"<{link}>"
        assert mail.message["List-Unsubscribe-Post"] == "List-Unsubscribe=One-Click"
        assert f"\r\nList-Unsubscribe: <{link}>\r\n".encode() in mail.raw
        href, text = _footer_link(mail.message)
        assert href == link and text.strip()
        assert parse_qs(urlsplit(href).query) == {"list": ["daily"], "token": [tokens[addr]]}
        assert mail.message.get_body(("plain",)).get_content().rstrip().endswith(f"<{link}>")
    assert _footer_link(received["ben@example.com"].message)[1] == "Se désabonner"   # the reader's language

    # The link of Ben's mail, followed: the endpoint runs the command with its token.
    token = parse_qs(urlsplit(received["ben@example.com"].message["List-Unsubscribe"][1:-1]).query)["token"][0]
    capsys.readouterr()
    assert main(["subscribers", "unsubscribe", "--token", token]) == 0
    out = capsys.readouterr().out
    assert out.strip() == f"unsubscribed subscriber {ids['ben@example.com']}"   # by id: no address in the answer
    assert _active(conn) == {"ana@example.com": True, "ben@example.com": False, "chloe@example.com": True}
    # A one-click POST may arrive twice: the second is a success that changes nothing.
    assert main(["subscribers", "unsubscribe", "--token", token]) == 0
    assert "already unsubscribed" in capsys.readouterr().out
    assert _active(conn)["ana@example.com"] and _active(conn)["chloe@example.com"]
    # A token nobody has, and values that are no token at all (the link is the reader's to edit).
    assert main(["subscribers", "unsubscribe", "--token", "0" * 64]) == 1
    for hostile in ["' OR true --", "../../etc/passwd", tokens["ana@example.com"][:16], "", "%", "a" * 5000]:
        assert main(["subscribers", "unsubscribe", "--token", hostile]) == 2
    assert _active(conn) == {"ana@example.com": True, "ben@example.com": False, "chloe@example.com": True}
    err = capsys.readouterr().err
    assert "@" not in err


def test_tokens_are_random_not_derived_from_the_address(clean_db, conn, capsys):
    _seed(conn)
    tokens = _tokens(conn)
    assert len(set(tokens.values())) == len(READERS)
    for addr, token in tokens.items():
        assert re.fullmatch(r"[0-9a-f]{64}", token)
        local = addr.split("@")[0]
        assert local not in token
        derived = {h(v.encode()).hexdigest() for h in (hashlib.md5, hashlib.sha1, hashlib.sha256)
                   for v in (addr, addr.lower(), addr.upper())}
        assert not any(token in d or d in token for d in derived)
    # The same address subscribing again after leaving gets a new token (the old links stop working);
    # a language change of a current reader keeps it.
    assert main(["subscribers", "add", "ana@example.com", "--lang", "de"]) == 0
    assert _tokens(conn)["ana@example.com"] == tokens["ana@example.com"]
    assert main(["subscribers", "remove", "ana@example.com"]) == 0
    assert main(["subscribers", "add", "ana@example.com", "--lang", "en"]) == 0
    renewed = _tokens(conn)["ana@example.com"]
    assert renewed != tokens["ana@example.com"] and re.fullmatch(r"[0-9a-f]{64}", renewed)
    capsys.readouterr()
    assert main(["subscribers", "unsubscribe", "--token", tokens["ana@example.com"]]) == 1
    assert _active(conn)["ana@example.com"]


def test_without_an_unsubscribe_url_the_link_is_a_mailto_the_sender(clean_db, conn, tmp_path, monkeypatch, capsys):
    _seed(conn)
    tokens = _tokens(conn)
    with SmtpServer() as server:
        received = _deliver(clean_db, monkeypatch, tmp_path, server)
    for addr, mail in received.items():
        link = f"mailto:{SENDER}?subject=unsubscribe%20{tokens[addr]}"
        assert mail.message["List-Unsubscribe"] == f"<{link}>"
        assert mail.message["List-Unsubscribe-Post"] is None   # one-click needs an https URI (RFC 8058)
        assert _footer_link(mail.message)[0] == link
    # The operator reading those mails runs the command with the subject's token.
    subject = parse_qs(urlsplit(received["chloe@example.com"].message["List-Unsubscribe"][1:-1]).query)["subject"][0]
    assert main(["subscribers", "unsubscribe", "--token", subject.split()[-1]]) == 0
    assert [a for a, active in _active(conn).items() if not active] == ["chloe@example.com"]


@pytest.mark.parametrize("url", ["http://news.example.org/unsubscribe", "https://news.example.org/u#x",
                                 "https://user:secret@news.example.org/u", "https://news.example.org/u>, <https://evil.example",
                                 "https://news.example.org/u\r\nBcc: x@evil.example", "mailto:a@example.org"])
def test_an_unusable_unsubscribe_url_fails_the_run_before_any_mail(clean_db, conn, tmp_path, monkeypatch, url):
    monkeypatch.setenv("NEWSDEDUP_UNSUBSCRIBE_URL", url)
    _seed(conn)
    with SmtpServer() as server:
        result = materialize_digest(clean_db, smtp_mailer(monkeypatch, server.host, server.port, tmp_path), KEY,
                                    raise_on_error=False)
        assert not result.success and server.messages == []
    failure = next(e for e in result.all_events if e.is_step_failure).step_failure_data.error.to_string()
    assert "NEWSDEDUP_UNSUBSCRIBE_URL: expected an https URL" in failure and "secret" not in failure
    assert conn.execute("SELECT count(*) FROM deliveries").fetchone()[0] == 0
    conn.commit()


@pytest.mark.skipif(not VNU_JAR.exists() or not java(),
                    reason="Nu Html Checker not installed (.ci/run: npm install --prefix tests/data/vnu vnu-jar)")
def test_the_mailed_html_with_its_link_passes_the_nu_html_checker(clean_db, conn, tmp_path, monkeypatch):
    monkeypatch.setenv("NEWSDEDUP_UNSUBSCRIBE_URL", BASE)
    _seed(conn)
    with SmtpServer() as server:
        received = _deliver(clean_db, monkeypatch, tmp_path, server)
    pages = []
    for addr, mail in received.items():
        page = tmp_path / f"{addr.split('@')[0]}.html"
        page.write_text(mail.message.get_body(("html",)).get_content(), encoding="utf-8")
        pages.append(page)
    pages += sorted((tmp_path / "digests" / KEY).glob("*.html"))   # the stored copies, with the empty slot
    assert html_errors(pages) == []
