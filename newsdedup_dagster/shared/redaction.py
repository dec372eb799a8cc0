"""The one redaction of secrets in text that may reach a log, the Dagster event log, an alert mail or
a terminal: error messages of the model and embedding clients, `newsdedup doctor`'s findings.

A provider's error body may quote what it was sent (``401 - Invalid key Bearer sk-...``), a base URL
may carry ``user:password@`` and a URL's query a key. `redact` replaces

- every configured secret (an API key, a password: `secrets_of` collects the fields a settings class
  declares ``secret=True``), also as JSON/Python-escaped and percent-encoded text;
- ``Bearer <token>`` / ``Basic <base64>`` and ``sk-...`` shaped keys, configured or not;
- the password of any ``scheme://user:password@host`` URL (a userinfo without one: all of it);
- the value of a key-like query parameter (``?api_key=``, ``&token=``, ``password=``...).

This module imports no stage and no Dagster: every client imports it.
"""

from __future__ import annotations

import dataclasses
import json
import logging
import re
from collections.abc import Iterable
from urllib.parse import quote, quote_plus

__all__ = ["REDACTED", "redact", "secrets_of", "RedactingFilter", "CLIENT_LOGGERS", "add_log_redaction",
           "remove_log_redaction"]

REDACTED = "***"
# A configured secret shorter than this is not searched for: it would blank out ordinary words.
MIN_SECRET_CHARS = 4

_TOKEN = r"[^\s'\"\\,;)}\]]+"
_SHAPES = re.compile(
    rf"(?P<scheme>Bearer\s+){_TOKEN}"                          # Authorization header values
    r"|(?P<basic>\bBasic\s+)[A-Za-z0-9+/=]{8,}"
    r"|\bsk-[A-Za-z0-9_\-]{6,}"                               # OpenAI-style keys
    r"|(?P<url>[A-Za-z][A-Za-z0-9+.\-]*://)(?P<userinfo>[^\s/?#'\"]*)@"   # a URL's userinfo (to its last @)
    r"|(?P<param>[?&;](?:api[-_]?key|apikey|key|access[-_]?token|token|secret|password|passwd|pwd|sslpassword"
    r"|sig|signature)=)[^&#\s'\"]*",                          # a key-like query parameter's value
    re.IGNORECASE,
)


def _replace_shape(match: re.Match) -> str:
    for prefix in ("scheme", "basic"):
        if match.group(prefix):
            return match.group(prefix) + REDACTED
    if match.group("url"):
        # user:password keeps the user; a userinfo without a password may itself be a token.
        user, colon, _password = match.group("userinfo").partition(":")
        return match.group("url") + (f"{user}:" if colon else "") + REDACTED + "@"
    if match.group("param"):
        return match.group("param") + REDACTED
    return REDACTED


def _forms(secret: str) -> list[str]:
    """The secret as an error text may quote it: raw, JSON/repr-escaped, percent-encoded."""
    forms = {secret, json.dumps(secret)[1:-1], json.dumps(secret, ensure_ascii=False)[1:-1],
             # repr() quotes with ' or ", escaping the other, depending on the whole string it is in
             repr(secret)[1:-1], repr(secret + "'\"")[1:-4], quote(secret, safe=""), quote(secret), quote_plus(secret)}
    # Longest first: a longer form may contain a shorter one.
    return sorted((f for f in forms if len(f) >= MIN_SECRET_CHARS), key=len, reverse=True)


def _without(text: str, secrets: tuple[str, ...]) -> str:
    for secret in secrets:
        for form in _forms(secret):
            # Until none is left: a replacement next to a secret containing "*" could rebuild it.
            while form in text:
                text = text.replace(form, REDACTED)
    return text


def redact(text: str, secrets: Iterable[str | None] = ()) -> str:
    """`text` with every configured secret and every secret-shaped value replaced by ``***``."""
    known = tuple(s for s in secrets if s and len(s) >= MIN_SECRET_CHARS)
    # Secrets again after the shapes: a shape's "***" could complete a secret that contains one.
    return _without(_SHAPES.sub(_replace_shape, _without(str(text), known)), known)


def secrets_of(*settings: object) -> tuple[str, ...]:
    """The values of every field the given settings dataclasses declare secret (``setting(secret=True)``
    keeps them out of the repr), that are set."""
    found: list[str] = []
    for obj in settings:
        if obj is None or not dataclasses.is_dataclass(obj):
            continue
        for f in dataclasses.fields(obj):
            value = getattr(obj, f.name, None)
            if not f.repr and isinstance(value, str) and value:
                found.append(value)
    return tuple(dict.fromkeys(found))


class RedactingFilter(logging.Filter):
    """Rewrites a log record's message through `redact` before any handler sees it."""

    def __init__(self, secrets: Iterable[str | None] = ()):
        super().__init__()
        self.secrets = tuple(s for s in secrets if s)

    def filter(self, record: logging.LogRecord) -> bool:
        try:
            message = record.getMessage()
        except Exception:  # a broken format string is not this filter's to raise
            return True
        cleaned = redact(message, self.secrets)
        if cleaned != message:
            record.msg, record.args = cleaned, None
        if record.exc_info and record.exc_info[1] is not None:
            # A formatted traceback would print the exception's own (unredacted) message.
            record.exc_text = redact(logging.Formatter().formatException(record.exc_info), self.secrets)
            record.exc_info = None
        return True


# The loggers of the openai client stack. openai 3.x logs through a vendored httpx ("httpx2");
# filters apply per logger (not to its children), so children are listed.
CLIENT_LOGGERS = ("openai", "openai._base_client", "httpx", "httpcore", "httpcore.http11", "httpcore.connection",
                  "httpx2", "httpcore2", "httpcore2.http11", "httpcore2.connection")


def add_log_redaction(secrets: Iterable[str | None], loggers: Iterable[str] = CLIENT_LOGGERS) -> RedactingFilter:
    """A redacting filter for `secrets` on each named logger; `remove_log_redaction` takes it off."""
    redacting = RedactingFilter(secrets)
    for name in loggers:
        logging.getLogger(name).addFilter(redacting)
    return redacting


def remove_log_redaction(redacting: logging.Filter, loggers: Iterable[str] = CLIENT_LOGGERS) -> None:
    for name in loggers:
        logging.getLogger(name).removeFilter(redacting)
