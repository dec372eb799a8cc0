"""Database URLs and identifiers as messages show them: no passwords, no network."""

from __future__ import annotations

import re
from urllib.parse import parse_qs, unquote, unquote_plus, urlsplit, urlunsplit

# libpq's connection parameters that hold a secret (a URL's query or a key=value string may carry them).
SECRET_PARAMETERS = ("password", "sslpassword")
# key = value in a libpq connection string: the value bare, or single-quoted with \' and \\ escapes.
_CONNINFO_SECRET = re.compile(r"(\b(?:password|sslpassword)\s*=\s*)('(?:[^'\\]|\\.)*'?|\S*)",
                              re.IGNORECASE | re.DOTALL)
_QUOTED_VALUE = re.compile(r"'((?:[^'\\]|\\.)*)'?", re.DOTALL)


def is_url(dsn: str) -> bool:
    """A URL (`postgresql://...`) rather than a libpq key=value string (`host=... dbname=...`)."""
    return "://" in dsn


def redact_url(url: str) -> str:
    """The URL or key=value connection string without its passwords: the userinfo's, and
    `password` / `sslpassword` in the query or the string (never print a password)."""
    if not is_url(url):
        return _CONNINFO_SECRET.sub(lambda m: m.group(1) + "***", url)
    try:
        parts = urlsplit(url)
    except ValueError:
        return "<unparseable database URL>"
    netloc = parts.netloc
    if "@" in netloc:
        userinfo, hostinfo = netloc.rsplit("@", 1)
        user = userinfo.split(":", 1)[0]
        netloc = f"{user}:***@{hostinfo}" if ":" in userinfo else f"{user}@{hostinfo}"
    query = "&".join(f"{item.split('=', 1)[0]}=***" if _secret_parameter(item) else item
                     for item in parts.query.split("&")) if parts.query else ""
    return urlunsplit((parts.scheme, netloc, parts.path, query, ""))


def _secret_parameter(item: str) -> bool:
    # libpq percent-decodes parameter names too: `pass%77ord=` is a password.
    return "=" in item and unquote_plus(item.split("=", 1)[0]).strip().lower() in SECRET_PARAMETERS


def url_passwords(url: str | None) -> tuple[str, ...]:
    """Every password a URL or connection string carries, as written and decoded (what a message
    quoting the URL must not show)."""
    if not url:
        return ()
    found: list[str] = []
    if not is_url(url):
        for match in _CONNINFO_SECRET.finditer(url):
            value = match.group(2)
            quoted = _QUOTED_VALUE.fullmatch(value)
            found += [value, re.sub(r"\\(.)", r"\1", quoted.group(1), flags=re.DOTALL) if quoted else value]
    else:
        try:
            parts = urlsplit(url)
        except ValueError:
            return ()
        userinfo = parts.netloc.rsplit("@", 1)[0] if "@" in parts.netloc else ""
        if ":" in userinfo:
            raw = userinfo.split(":", 1)[1]
            found += [raw, unquote(raw)]
        for item in parts.query.split("&"):
            if _secret_parameter(item):
                raw = item.split("=", 1)[1]
                found += [raw, unquote_plus(raw)]
    return tuple(dict.fromkeys(v for v in found if v))


def describe_url(url: str) -> str:
    """'host/db' for messages: the socket dir or host, and the database."""
    parts = urlsplit(url)
    host = parts.hostname or parse_qs(parts.query).get("host", ["local socket"])[0]
    port = f":{parts.port}" if parts.port else ""
    db = parts.path.lstrip("/") or "(default db)"
    return f"{host}{port}/{db}"


def with_database(url: str, dbname: str) -> str:
    parts = urlsplit(url)
    return urlunsplit((parts.scheme, parts.netloc, "/" + dbname, parts.query, parts.fragment))


def sqlalchemy_psycopg2_url(url: str) -> str:
    """dagster-postgres needs psycopg2: SQLAlchemy 2.1 maps plain postgresql:// to psycopg3,
    and dagster-postgres then fails (`NOTIFY run_events, $1`)."""
    scheme, rest = url.split("://", 1)
    return "postgresql+psycopg2://" + rest if scheme in ("postgresql", "postgres") else url


_SQL_RESERVED = frozenset("all analyse analyze and any array as asc user group order table select default "
                          "current_user session_user to from where grant create".split())


def sql_identifier(name: str) -> str:
    """An identifier as an administrator would type it: bare when it can be, quoted otherwise."""
    if re.fullmatch(r"[a-z_][a-z0-9_$]*", name) and name not in _SQL_RESERVED:
        return name
    return '"' + name.replace('"', '""') + '"'


def server_and_role(url: str) -> tuple:
    parts = urlsplit(url)
    query = parse_qs(parts.query)
    return (parts.hostname or query.get("host", [""])[0], parts.port or 5432,
            parts.username or query.get("user", [""])[0])
