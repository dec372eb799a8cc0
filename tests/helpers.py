"""Small helpers several test modules share."""

from __future__ import annotations

import itertools
import json
import os
import shutil
import socket
import tomllib
from pathlib import Path

_files = itertools.count()

DOCS_SCREENSHOTS = Path(__file__).resolve().parents[1] / "docs" / "screenshots"
UPDATE_SCREENSHOTS = "NEWSDEDUP_UPDATE_SCREENSHOTS"


def keep_screenshots(shots: Path, kept: dict[str, str]) -> list[Path]:
    """With NEWSDEDUP_UPDATE_SCREENSHOTS=1 (`make screenshots`), copy the browser test's screenshots
    named in `kept` ({file in `shots`: its name in docs/screenshots/}) to docs/screenshots/, where the
    README and the docs show them; otherwise they stay in the test's tmp directory. Returns the copies."""
    if os.environ.get(UPDATE_SCREENSHOTS) != "1":
        return []
    copies = []
    for name, kept_as in kept.items():
        copies.append(Path(shutil.copyfile(shots / name, DOCS_SCREENSHOTS / kept_as)))
    return copies


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on now: for a server the test starts, or for a
    "server down" test."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def calibration_environment(directory, **sections) -> dict[str, str]:
    """A calibration file in `directory` with `sections` ({"clustering": {"knn_k": 12}, ...}) over
    the one the environment names now, and the variable that names it: the calibrated constants a
    deployment changes (docs/CALIBRATION.md#the-calibration-file)."""
    tables: dict[str, dict] = {}
    current = os.environ.get("NEWSDEDUP_CALIBRATION_FILE")
    if current:
        tables = tomllib.loads(Path(current).read_text(encoding="utf-8"))
    for section, values in sections.items():
        tables.setdefault(section, {}).update(values)
    # JSON writes the strings, numbers, booleans and lists of strings TOML reads the same way
    text = "".join(f"[{section}]\n" + "".join(f"{key} = {json.dumps(value)}\n" for key, value in values.items())
                   for section, values in tables.items())
    Path(directory).mkdir(parents=True, exist_ok=True)
    path = Path(directory) / f"calibration-{os.getpid()}-{next(_files)}.toml"
    path.write_text(text, encoding="utf-8")
    return {"NEWSDEDUP_CALIBRATION_FILE": str(path)}


def calibrate(monkeypatch, directory, **sections) -> Path:
    """`calibration_environment` set with `monkeypatch` for this test; the file's path."""
    name, value = next(iter(calibration_environment(directory, **sections).items()))
    monkeypatch.setenv(name, value)
    return Path(value)


def mailer_environment(port: int, outbox, **settings) -> dict[str, str]:
    """The environment a `mailer` reads for a test SMTP server on `port` (plain SMTP, no TLS) and
    the outbox directory `outbox`, with `settings` added: variables by name (NEWSDEDUP_SMTP_USER=...)
    and the calibration file's [smtp] keys (timeout_s=5, ...) in a file beside the outbox, as a
    deployment gives them."""
    variables = {name: str(value) for name, value in settings.items() if name.startswith("NEWSDEDUP_")}
    smtp = {key: value for key, value in settings.items() if not key.startswith("NEWSDEDUP_")}
    # No wait before the in-run retry pass: the test's server is up again at once.
    return {"NEWSDEDUP_SMTP_PORT": str(port), "NEWSDEDUP_SMTP_SECURITY": "none", "NEWSDEDUP_OUTBOX": str(outbox),
            **variables, **calibration_environment(Path(outbox).parent, smtp={"retry_delay_s": 0, **smtp})}


def smtp_mailer(monkeypatch, host: str, port: int, outbox, **settings):
    """The `mailer` resource for the test SMTP server at `host`:`port`, configured as a deployment
    configures it: the server's address on the resource (its `EnvVar` field), the rest through
    `mailer_environment` (set with `monkeypatch` for this test)."""
    from newsdedup_dagster.resources import MailerResource

    for name, value in mailer_environment(port, outbox, **settings).items():
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
