"""Small helpers several test modules share."""

from __future__ import annotations

import socket


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on now: for a server the test starts, or for a
    "server down" test."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def mailer_environment(port: int, outbox, **variables) -> dict[str, str]:
    """The environment a `mailer` reads for a test SMTP server on `port` (plain SMTP, no TLS) and
    the outbox directory `outbox`, with `variables` (NEWSDEDUP_SMTP_TIMEOUT=5, ...) added: the
    settings a deployment gives by environment variable."""
    # No wait before the in-run retry pass: the test's server is up again at once.
    return {"NEWSDEDUP_SMTP_PORT": str(port), "NEWSDEDUP_SMTP_SECURITY": "none", "NEWSDEDUP_OUTBOX": str(outbox),
            "NEWSDEDUP_SMTP_RETRY_DELAY": "0", **{name: str(value) for name, value in variables.items()}}


def smtp_mailer(monkeypatch, host: str, port: int, outbox, **variables):
    """The `mailer` resource for the test SMTP server at `host`:`port`, configured as a deployment
    configures it: the server's address on the resource (its `EnvVar` field), the rest through
    `mailer_environment` (set with `monkeypatch` for this test)."""
    from newsdedup_dagster.resources import MailerResource

    for name, value in mailer_environment(port, outbox, **variables).items():
        monkeypatch.setenv(name, value)
    return MailerResource(host=host)


def materialize_digest(database_url: str, mailer, partition_key: str, *, llm=None, **kwargs):
    """One day of the `digest` asset materialised in process, as its run would: the application
    database at `database_url`, the given `MailerResource`, and `llm` (default: the environment's
    `LLMResource`) for the languages. Other keywords go to `dagster.materialize`."""
    from dagster import materialize

    from newsdedup_dagster.assets.digest import digest
    from newsdedup_dagster.resources import LLMResource, PostgresResource

    resources = {"postgres": PostgresResource(database_url=database_url), "mailer": mailer, "llm": llm or LLMResource()}
    return materialize([digest], partition_key=partition_key, resources=resources, **kwargs)


def stop_process_group(proc) -> None:
    """SIGTERM to a child started with `start_new_session=True` and every process it started,
    then SIGKILL to what is left after 60 s: nothing the test started outlives it."""
    import os
    import signal
    import subprocess

    try:  # the group, even when its leader has exited: its children may not have
        os.killpg(proc.pid, signal.SIGTERM)
    except ProcessLookupError:  # the whole group has exited: reap the leader
        proc.wait(10)
        return
    try:
        proc.wait(60)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(10)
