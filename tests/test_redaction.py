"""The one redaction (newsdedup_dagster/shared/redaction.py): a provider on 127.0.0.1 that answers with the
`Authorization` header it was sent (as a real one did) reaches neither the embedder's error nor its
retry log, nor the failure alert of a real Dagster run; hypothesis properties: a configured secret,
a bearer token or a URL's password embedded anywhere in any text never survives, and a database
URL or key=value connection string never shows its password."""

from __future__ import annotations

import json
import logging
import os
import subprocess
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import quote

import pytest
from dagster import asset
from hypothesis import assume, given, settings, strategies as st
from test_dagster_alerts import alert_for
from test_import_graph import import_graph

from newsdedup_dagster.assets.hourly import StageFailed
from newsdedup_dagster.shared.db.urls import redact_url, url_passwords
from newsdedup_dagster.shared.models import client as llm_client
from newsdedup_dagster.shared.models.client import LLMClient, LLMConfigError, MemoryRecorder
from newsdedup_dagster.shared.models.settings import BackoffPolicy, LLMSettings
from newsdedup_dagster.shared.redaction import MIN_SECRET_CHARS, redact, secrets_of
from newsdedup_dagster.stages.embeddings.providers import EmbeddingError, OpenAIEmbedder
from newsdedup_dagster.stages.embeddings.settings import EmbeddingSettings

EMBEDDING_KEY = "emb-5bX9qLw2ZrT7yKc4"
LLM_KEY = "proj-Vn3kR8sQ1wXe6uJd"


class KeyEchoServer:
    """An OpenAI-compatible endpoint that refuses every request (GET /models, POST /embeddings,
    POST /chat/completions) and quotes the `Authorization` header back in its error body.
    ``statuses``: the answers in turn (401 once they run out)."""

    def __init__(self, statuses: tuple[int, ...] = ()):
        self.statuses = list(statuses)
        self.seen: list[str] = []
        self._lock = threading.Lock()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._server.daemon_threads = True

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}/v1"

    def __enter__(self) -> KeyEchoServer:
        threading.Thread(target=self._server.serve_forever, daemon=True).start()
        return self

    def __exit__(self, *exc) -> None:
        self._server.shutdown()
        self._server.server_close()

    def _handler(self):
        echo = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args) -> None:
                pass

            def _refuse(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                if length:
                    self.rfile.read(length)
                sent = self.headers.get("Authorization", "")
                with echo._lock:
                    echo.seen.append(sent)
                    status = echo.statuses.pop(0) if echo.statuses else 401
                body = json.dumps({"error": {"message": f"Invalid key {sent}", "type": "invalid_request_error",
                                             "code": "invalid_api_key"}}).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            do_GET = do_POST = _refuse  # noqa: N815

        return Handler


def _embedder(server: KeyEchoServer, **kw) -> OpenAIEmbedder:
    base = dict(provider="openai", model="echo-embed", dimensions=4, api_key=EMBEDDING_KEY, timeout_s=5,
                base_url=server.base_url, batch_size=4, max_attempts=3, concurrency=1, backoff_base_s=0.01,
                backoff_max_s=0.02)
    base.update(kw)
    return OpenAIEmbedder(EmbeddingSettings(**base), sleep=lambda s: None)


# ------------------------------------------------------------------ the embedder, for real
@pytest.mark.slow
def test_an_embedding_error_never_carries_the_key_it_quotes(caplog):
    with KeyEchoServer(statuses=(503, 503)) as server, caplog.at_level(logging.DEBUG):
        embedder = _embedder(server)
        with pytest.raises(EmbeddingError) as raised:
            embedder.embed(["a headline"])
    assert server.seen == [f"Bearer {EMBEDDING_KEY}"] * 3          # the key was sent, and echoed three times
    error = raised.value
    assert error.status == 401 and "401" in str(error) and "Invalid key Bearer ***" in str(error)
    assert EMBEDDING_KEY not in str(error)
    # Nothing else of the provider's exception rides along into a stored traceback.
    assert error.__cause__ is None and error.__suppress_context__
    retries = [r for r in caplog.records if "retrying" in r.getMessage()]
    assert len(retries) == 2 and all("503" in r.getMessage() for r in retries)
    assert EMBEDDING_KEY not in caplog.text


@pytest.mark.slow
def test_a_base_url_with_a_password_never_shows_it():
    with KeyEchoServer() as server:
        with_userinfo = server.base_url.replace("http://", "http://embed-user:url-pw-7Hq2@")
        embedder = _embedder(server, base_url=with_userinfo, api_key=None)
        with pytest.raises(EmbeddingError) as raised:
            embedder.embed(["a headline"])
    # httpx sends the userinfo as Basic credentials; the provider quotes them back.
    assert server.seen and server.seen[0].startswith("Basic ")
    assert server.seen[0].split()[1] not in str(raised.value) and "url-pw-7Hq2" not in str(raised.value)


@pytest.mark.slow
def test_an_llm_error_and_every_recorded_attempt_never_carry_the_key(caplog):
    with KeyEchoServer(statuses=(503,)) as server, caplog.at_level(logging.DEBUG):
        settings = LLMSettings(base_url=server.base_url, api_key=LLM_KEY, timeout_s=5, max_attempts=3)
        with LLMClient(settings, MemoryRecorder(), backoff=BackoffPolicy(base_s=0.01, max_s=0.02)) as client:
            with pytest.raises(LLMConfigError) as raised:
                client.complete_json("score", "deepseek-chat", "Reply with JSON.", "{}", lambda data: data)
            records = client.recorder.records
    assert server.seen == [f"Bearer {LLM_KEY}"] * 2                  # a 503 (retried), then the 401
    assert [r.status for r in records] == ["error", "error"] and all("Invalid key Bearer ***" in r.error for r in records)
    assert "401" in str(raised.value) and LLM_KEY not in str(raised.value)
    assert LLM_KEY not in caplog.text and not any(LLM_KEY in r.error for r in records)


# The failing step of a real run, and the alert the sensor writes from the event log.
ECHO = {}


@asset
def embeds_through_the_provider():
    embedder = _embedder(ECHO["server"], max_attempts=1)
    try:
        embedder.embed(["a headline"])
    except Exception as exc:   # as the hourly chain wraps a stage's error (assets/hourly.py)
        raise StageFailed(f"item_embeddings[2026-11-02-07:00]: {type(exc).__name__}: {exc}") from exc


@asset
def quotes_a_configured_key():
    # Some other path that leaks the configured key verbatim: the alert still shows none of it.
    raise RuntimeError(f"provider said: invalid key {EMBEDDING_KEY} for https://ops:db-pw-3kd9@db.example/x")


@pytest.mark.slow
def test_the_failure_alert_of_a_real_run_shows_no_key(tmp_path, monkeypatch):
    with KeyEchoServer() as server:
        ECHO["server"] = server
        body = alert_for(monkeypatch, tmp_path, embeds_through_the_provider)
    assert server.seen == [f"Bearer {EMBEDDING_KEY}"]
    assert "step:      embeds_through_the_provider" in body and "item_embeddings[2026-11-02-07:00]" in body
    assert "EmbeddingError" in body and "401" in body
    assert EMBEDDING_KEY not in body


@pytest.mark.slow
def test_the_alert_redacts_the_configured_keys_whatever_raised(tmp_path, monkeypatch):
    monkeypatch.setenv("NEWSDEDUP_EMBEDDING_API_KEY", EMBEDDING_KEY)
    body = alert_for(monkeypatch, tmp_path, quotes_a_configured_key)
    assert "provider said: invalid key ***" in body
    assert EMBEDDING_KEY not in body and "db-pw-3kd9" not in body and "ops:***@db.example" in body


# ------------------------------------------------------------------ one redaction, one place
def test_the_redaction_is_ground_floor_and_the_clients_share_it():
    graph = import_graph()
    assert graph["newsdedup_dagster.shared.redaction"] == set()            # no stage, no settings, no Dagster
    assert llm_client.redact is redact                               # re-exported for existing callers
    for module in ("newsdedup_dagster.shared.models.client", "newsdedup_dagster.stages.embeddings.providers",
                   "newsdedup_dagster.alerts", "newsdedup_dagster.commands.doctor"):
        assert "newsdedup_dagster.shared.redaction" in graph[module], module


def test_secrets_of_reads_the_fields_declared_secret():
    settings = EmbeddingSettings(provider="openai", model="m", api_key="emb-key-1234")
    assert secrets_of(settings, None, EmbeddingSettings()) == ("emb-key-1234",)


# ------------------------------------------------------------------ properties
SECRET = st.text(min_size=MIN_SECRET_CHARS, max_size=40).filter(lambda s: s.strip())
TOKEN = st.text(alphabet="ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~+/=", min_size=8,
                max_size=60)
URL_PASSWORD = st.text(alphabet="ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~!$&()*+,;=%:@",
                       min_size=6, max_size=30)


@settings(max_examples=400, deadline=None)
@given(before=st.text(max_size=80), secret=SECRET, after=st.text(max_size=80))
def test_a_configured_secret_never_survives(before, secret, after):
    text = before + secret + after
    for shown in (text, json.dumps({"message": text}), repr({"error": {"message": text}}),
                  "https://api.example/v1?x=" + quote(text, safe="")):
        out = redact(shown, (secret,))
        assert secret not in out
        for escaped in (json.dumps(secret)[1:-1], repr(secret)[1:-1], repr(secret + "'\"")[1:-4]):
            assert escaped not in out


@settings(max_examples=300, deadline=None)
@given(before=st.text(max_size=60), token=TOKEN, after=st.text(max_size=60))
def test_a_bearer_token_never_survives(before, token, after):
    assume(token not in before + after)
    out = redact(f"{before}Authorization: Bearer {token}\n{after}")
    assert token not in out


@settings(max_examples=300, deadline=None)
@given(before=st.text(max_size=60), user=st.from_regex(r"[a-z]{1,12}", fullmatch=True), password=URL_PASSWORD,
       host=st.from_regex(r"[a-z]{1,10}\.example(:[0-9]{2,5})?", fullmatch=True), after=st.text(max_size=60))
def test_a_url_password_never_survives(before, user, password, host, after):
    # A password that is also a piece of the text around it (the URL's own path included: "embedd")
    # cannot be told apart from that text.
    around = (f"{before} https://{user}:@{host}/v1/embeddings {after}", f"{before}https://{user}:@{host}/v1/embeddings{after}")
    assume(not any(password in text for text in around))
    url = f"https://{user}:{password}@{host}/v1/embeddings"
    assert password not in redact(f"{before} {url} {after}")
    assert password not in redact(f"{before}{url}{after}")


DB_PASSWORD = st.text(alphabet=st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00"),
                      min_size=6, max_size=30)


@settings(max_examples=300, deadline=None)
@given(password=DB_PASSWORD, form=st.sampled_from(["userinfo", "query", "query-encoded-name", "conninfo",
                                                   "conninfo-bare"]))
def test_a_database_url_never_shows_its_password(password, form):
    if form == "userinfo":
        url = f"postgresql://app:{quote(password, safe='')}@db.example:5432/news?sslmode=require"
    elif form == "query":
        url = f"postgresql://app@db.example/news?sslmode=require&password={quote(password, safe='')}"
    elif form == "query-encoded-name":
        url = f"postgresql://app@db.example/news?pass%77ord={quote(password, safe='')}&sslmode=require"
    elif form == "conninfo":
        quoted = password.replace("\\", "\\\\").replace("'", "\\'")
        url = f"host=db.example user=app password = '{quoted}' dbname=news"
    else:
        assume(not any(ch.isspace() for ch in password) and not password.startswith("'"))
        url = f"host=db.example user=app password={password} dbname=news"
    shown = redact_url(url)
    for secret in (password, quote(password, safe="")):
        assume(secret not in "postgresql://app@db.example:5432/news?sslmode=require host= user= dbname=")
        assert secret not in shown, (url, shown)
    assert "***" in shown and "db.example" in shown
    assert password in url_passwords(url)                          # what doctor adds to the secrets


def test_redact_url_keeps_what_an_operator_needs():
    assert redact_url("postgresql://u:pw@h:5432/d?sslmode=require") == "postgresql://u:***@h:5432/d?sslmode=require"
    assert redact_url("postgresql://u@h/d?password=s3cret&sslmode=disable") == \
        "postgresql://u@h/d?password=***&sslmode=disable"
    assert redact_url("host=h port=5432 user=u password='a b' dbname=d") == "host=h port=5432 user=u password=*** dbname=d"
    assert redact_url("host=h dbname=d") == "host=h dbname=d"


@pytest.mark.parametrize("url", [
    "postgresql://app:Hunter2-db-secret@db.example:5432/news?sslmode=require",
    "postgresql://app@db.example/news?sslmode=require&password=Hunter2-db-secret",
    "host=db.example user=app password='Hunter2-db-secret' dbname=news",
])
def test_the_db_url_command_prints_no_password(url, tmp_path):
    """`newsdedup db url` as an operator runs it: the configured URL, its password replaced."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("NEWSDEDUP_")}
    env.update({"NEWSDEDUP_DATABASE_URL": url, "NEWSDEDUP_HOME": str(tmp_path)})
    proc = subprocess.run([sys.executable, "-m", "newsdedup_dagster.cli", "db", "url"], env=env,
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert "Hunter2-db-secret" not in proc.stdout + proc.stderr
    assert "db.example" in proc.stdout and "***" in proc.stdout
