"""Database URLs and identifiers as messages show them: no passwords, no network."""

from __future__ import annotations

import re
from urllib.parse import parse_qs, urlsplit, urlunsplit


def redact_url(url: str) -> str:
    """The URL without its password (never print a password)."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return "<unparseable database URL>"
    netloc = parts.netloc
    if "@" in netloc:
        userinfo, hostinfo = netloc.rsplit("@", 1)
        user = userinfo.split(":", 1)[0]
        netloc = f"{user}:***@{hostinfo}" if ":" in userinfo else f"{user}@{hostinfo}"
    return urlunsplit((parts.scheme, netloc, parts.path, parts.query, ""))


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
