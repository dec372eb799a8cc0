"""Reader addresses and mail headers (stages/digest/send.py). valid_email takes only RFC 5322's plain
addr-spec, whole: no trailing newline, control character, `:` or anything else a To header would
have to quote; build_message refuses CR, LF and NUL in every header value and names the header;
and delivery, against a real SMTP server on 127.0.0.1 and the real database, fails only the reader
whose stored address is hostile, never the others."""

from __future__ import annotations

import email
import email.policy
import unicodedata
from datetime import UTC, date, datetime
from email.utils import parseaddr

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st
from smtp_server import SmtpServer
from test_events_fixtures import add_story

from newsdedup_dagster.stages.digest.build import render_day
from newsdedup_dagster.stages.digest.send import UnsafeHeaderError, build_message, deliver_day, valid_email
from newsdedup_dagster.stages.digest.settings import SmtpSettings

DAY = date(2026, 11, 2)
SETTINGS = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])

# RFC 5322 dot-atom (atext) local parts at host names: what valid_email must take.
ATEXT = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789!#$%&'*+/=?^_`{|}~-"
ATOMS = st.text(alphabet=ATEXT, min_size=1, max_size=12)
LABELS = st.from_regex(r"[A-Za-z0-9](?:[A-Za-z0-9-]{0,10}[A-Za-z0-9])?", fullmatch=True)
PLAIN = st.builds(lambda local, labels: f"{'.'.join(local)}@{'.'.join(labels)}",
                  st.lists(ATOMS, min_size=1, max_size=3), st.lists(LABELS, min_size=2, max_size=4))
# What no plain address holds: controls, whitespace, the specials RFC 5322 quotes, a second @.
FORBIDDEN = st.one_of(st.characters(categories=["Cc", "Zs", "Zl", "Zp"]), st.sampled_from(list(':<>()[]\\,;"@')))


def _insert(address: str, char: str, where: int) -> str:
    where %= len(address) + 1
    return address[:where] + char + address[where:]


ANYTHING = st.one_of(st.text(), PLAIN, st.builds(_insert, PLAIN, FORBIDDEN, st.integers(0, 80)),
                     st.builds(lambda a, tail: a + tail, PLAIN, st.sampled_from(["\n", "\r\n", "\x00", ":", " ", ":25"])))


@SETTINGS
@given(ANYTHING)
def test_an_accepted_address_is_plain_and_parses_back_unchanged(address):
    if not valid_email(address):
        return
    assert not any(unicodedata.category(c) == "Cc" for c in address)
    assert not address[-1].isspace() and ":" not in address
    assert parseaddr(address) == ("", address)


@SETTINGS
@given(PLAIN)
def test_every_plain_address_is_accepted_and_goes_into_to_unchanged(address):
    assert valid_email(address)
    assert parseaddr(address) == ("", address)
    msg = build_message("News digest", "<p>x</p>", "x", address, "Digest <digest@news.example>", "<id@news.example>", "en")
    parsed = email.message_from_bytes(bytes(msg), policy=email.policy.default)
    assert parsed["To"] == address and [h for h in parsed.keys() if h.lower() in ("bcc", "cc")] == []


@SETTINGS
@given(PLAIN, FORBIDDEN, st.integers(0, 80))
def test_a_plain_address_with_any_forbidden_character_is_refused(address, char, where):
    assert not valid_email(_insert(address, char, where))


@pytest.mark.parametrize("address", [
    "a@example.com\n", "a@example.com\r\n", "a\x00@example.com", "a@example.com:", "a:b@example.com",
    "a@example.com:25", "Name <a@example.com>", "a@example.com, b@example.com", "a@b", "a..b@example.com",
    ".a@example.com", "a.@example.com", "a@-example.com", "a@example-.com", "a@example..com", " a@example.com",
    '"a b"@example.com', "a@[127.0.0.1]", "josé@example.com", "a@exämple.com", "a\u2028@example.com",
    "x" * 65 + "@example.com", "a@" + "b" * 250 + ".com", "", None,
])
def test_refused_addresses(address):
    assert not valid_email(address)


@pytest.mark.parametrize("address", [
    "a.b+c@example.co.uk", "o'brien@example.ie", "x@localhost", "Reader@Example.COM", "{tag}|x@xn--bcher-kva.example",
    "x" * 64 + "@example.com",
])
def test_accepted_addresses(address):
    assert valid_email(address)


GOOD = {"subject": "News digest", "html": "<p>x</p>", "text": "x", "to_addr": "a@example.com",
        "from_addr": "Digest <digest@news.example>", "message_id": "<id@news.example>", "lang": "en",
        "unsubscribe": "https://news.example/unsubscribe?token=" + "ab" * 16}


@pytest.mark.parametrize(("field", "header"), [
    ("to_addr", "To"), ("from_addr", "From"), ("message_id", "Message-ID"), ("lang", "Content-Language"),
    ("unsubscribe", "List-Unsubscribe"),
])
@pytest.mark.parametrize("breaker", ["\r\nBcc: spy@example.com", "\nBcc: spy@example.com", "\rX: y", "\x00", "\n"])
def test_build_message_refuses_line_breaks_and_nul_in_every_header(field, header, breaker):
    value = GOOD[field] + breaker
    with pytest.raises(ValueError, match=f"^{header} header refused") as refused:
        build_message(**{**GOOD, field: value})
    assert isinstance(refused.value, UnsafeHeaderError) and refused.value.header == header
    assert "spy@" not in str(refused.value) and value not in str(refused.value)   # the value is not repeated


def test_the_subject_keeps_one_line_and_refuses_nul():
    msg = build_message(**{**GOOD, "subject": "News\r\ndigest"})
    assert msg["Subject"] == "News digest"
    with pytest.raises(UnsafeHeaderError, match="^Subject header refused"):
        build_message(**{**GOOD, "subject": "News\x00digest"})


def test_a_to_that_is_not_one_plain_address_is_refused():
    for to_addr in ("a@example.com, spy@example.com", "Spy <spy@example.com>", "a@example.com:"):
        with pytest.raises(UnsafeHeaderError, match="^To header refused: not a plain e-mail address$"):
            build_message(**{**GOOD, "to_addr": to_addr})


# Stored addresses as a hostile reader record holds them (the database takes any text but NUL).
HOSTILE = ["spy-host@example.com\r\nBcc: spy@example.com", "trailing@example.com\n", "colon@example.com:"]
READERS = ["first@example.com", *HOSTILE, "last@example.com"]


@pytest.fixture()
def day_with_readers(conn):
    add_story(conn, "s1", "topic-1", 8.0, titles={"en": "Election results"}, headline="Election results",
              significance=8.0)
    for address in READERS:
        conn.execute("INSERT INTO subscribers (email, lang, subscribed_at) VALUES (%s, 'en', %s)",
                     (address, datetime(2026, 11, 2, 6, tzinfo=UTC)))
    conn.commit()
    return conn


def _outcomes(conn) -> dict[str, tuple]:
    rows = conn.execute("SELECT email, status, permanent, error FROM deliveries").fetchall()
    conn.commit()
    return {row[0]: row[1:] for row in rows}


def _check_hostile_readers_failed_alone(conn, report):
    outcomes = _outcomes(conn)
    for address in HOSTILE:
        status, permanent, error = outcomes[address]
        assert (status, permanent) == ("failed", True) and error.startswith("To header refused")
        assert address.strip() not in error
    assert report.permanent_failures == len(HOSTILE) and report.retryable == 0
    assert len(report.errors) == len(HOSTILE) and all("example.com" not in e for e in report.errors)


def test_a_hostile_reader_address_fails_that_reader_alone_over_smtp(day_with_readers, tmp_path):
    conn = day_with_readers
    result = render_day(conn, DAY, ["en"], outbox_dir=tmp_path)
    with SmtpServer() as server:
        smtp = SmtpSettings(host=server.host, port=server.port, security="none", retry_delay_s=0,
                            from_addr="Digest <digest@news.example>", batch_size=2)
        report = deliver_day(conn, DAY, result.by_digest_id(), smtp, tmp_path)
        assert sorted(m.rcpt_tos[0] for m in server.messages) == ["first@example.com", "last@example.com"]
        assert all(b"spy@" not in m.raw and m.message["Bcc"] is None for m in server.messages)
        assert report.sent == 2
        _check_hostile_readers_failed_alone(conn, report)
        # A permanent failure: the next run of the day tries nobody again.
        again = deliver_day(conn, DAY, result.by_digest_id(), smtp, tmp_path)
        assert again.attempted == 0 and len(server.messages) == 2


def test_a_hostile_reader_address_fails_that_reader_alone_in_the_outbox(day_with_readers, tmp_path):
    conn = day_with_readers
    result = render_day(conn, DAY, ["en"], outbox_dir=tmp_path)
    report = deliver_day(conn, DAY, result.by_digest_id(), SmtpSettings(outbox_only=True), tmp_path)
    assert report.outbox == 2
    files = sorted((tmp_path / "mail" / DAY.isoformat()).glob("*.eml"))
    written = [email.message_from_bytes(p.read_bytes(), policy=email.policy.default)["To"] for p in files]
    assert sorted(written) == ["first@example.com", "last@example.com"]
    _check_hostile_readers_failed_alone(conn, report)


def _dated_in(message, lang: str) -> None:
    assert message["Content-Language"] == lang
    assert message["Date"] is not None and message["Date"].datetime.tzinfo is not None


def test_every_message_carries_its_language_and_date_over_smtp_and_in_the_outbox(conn, tmp_path):
    add_story(conn, "s1", "topic-1", 8.0, titles={"en": "Election results", "ja": "選挙結果"},
              headline="Election results", significance=8.0)
    for address, lang in (("en@example.com", "en"), ("ja@example.com", "ja")):
        conn.execute("INSERT INTO subscribers (email, lang, subscribed_at) VALUES (%s, %s, %s)",
                     (address, lang, datetime(2026, 11, 2, 6, tzinfo=UTC)))
    conn.commit()
    result = render_day(conn, DAY, ["en", "ja"], outbox_dir=tmp_path)
    with SmtpServer() as server:
        smtp = SmtpSettings(host=server.host, port=server.port, security="none", retry_delay_s=0,
                            from_addr="Digest <digest@news.example>")
        assert deliver_day(conn, DAY, result.by_digest_id(), smtp, tmp_path).sent == 2
        for m in server.messages:
            _dated_in(m.message, m.rcpt_tos[0].split("@")[0])
    conn.execute("DELETE FROM deliveries")
    conn.commit()
    outbox = tmp_path / "outbox-run"
    assert deliver_day(conn, DAY, result.by_digest_id(), SmtpSettings(outbox_only=True), outbox).outbox == 2
    files = sorted((outbox / "mail" / DAY.isoformat()).glob("*.eml"))
    assert len(files) == 2
    for path in files:
        message = email.message_from_bytes(path.read_bytes(), policy=email.policy.default)
        _dated_in(message, message["To"].split("@")[0])
