"""`newsdedup doctor` against real local parts (embedded PostgreSQL, the OpenAI-compatible test
server, aiosmtpd), with one thing broken at a time."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from fake_openai import FakeOpenAI
from helpers import calibration_environment, free_port
from smtp_server import SmtpServer
from test_platform import EARLIER_INSTANCE_FILE

REPO = Path(__file__).resolve().parents[1]

# Each test runs the `newsdedup doctor` command in a process of its own (10-40 s each).
pytestmark = pytest.mark.slow


def _doctor(env_overrides: dict[str, str | None], *args: str) -> tuple[int, dict[str, dict]]:
    env = dict(os.environ)
    for key, value in env_overrides.items():
        if value is None:
            env.pop(key, None)
        else:
            env[key] = value
    proc = subprocess.run([sys.executable, "-m", "newsdedup_dagster.cli", "doctor", "--json", *args],
                          capture_output=True, text=True, env=env, cwd=REPO, timeout=300)
    findings = json.loads(proc.stdout)
    return proc.returncode, {f["check"]: f for f in findings}


@pytest.fixture(scope="module")
def servers():
    with FakeOpenAI() as llm, SmtpServer() as smtp:
        yield llm, smtp


@pytest.fixture()
def healthy_env(clean_db, servers, tmp_path):
    """Every part up, on an empty application database (another test's vectors would be a finding)."""
    llm, smtp = servers
    dagster_home = tmp_path / "dagster"
    dagster_home.mkdir()
    (dagster_home / "dagster.yaml").write_text("telemetry:\n  enabled: false\n")
    return {
        "NEWSDEDUP_DATABASE_URL": clean_db,
        "DAGSTER_HOME": str(dagster_home),
        "NEWSDEDUP_LLM_BASE_URL": llm.base_url,
        "NEWSDEDUP_LLM_API_KEY": "test-key",
        "NEWSDEDUP_SMTP_HOST": smtp.host,
        "NEWSDEDUP_SMTP_PORT": str(smtp.port),
        "NEWSDEDUP_SMTP_SECURITY": "none",
        "NEWSDEDUP_EMBEDDING_PROVIDER": "use",  # the fast offline model; e5 is checked the same way
    }


def test_all_parts_healthy(healthy_env, servers):
    llm, _smtp = servers
    code, found = _doctor(healthy_env, "--live")
    failures = {k: v for k, v in found.items() if v["status"] == "FAIL"}
    assert code == 0, failures
    for check in ("database", "pgvector", "migrations", "dagster instance", "sources", "llm",
                  "llm scoring model", "embeddings", "smtp", "disk"):
        assert found[check]["status"] == "OK", found[check]
    assert "answered a 1-token call" in found["llm scoring model"]["detail"]
    assert any(r.body.get("max_tokens") == 1 for r in llm.requests)
    # No daemon runs in this test: the finding says so without failing the whole check.
    assert found["dagster daemon"]["status"] == "WARN"


def test_database_unreachable_fails_with_fix(healthy_env):
    env = {**healthy_env, "NEWSDEDUP_DATABASE_URL": f"postgresql://nobody:secret-pw@127.0.0.1:{free_port()}/x"}
    code, found = _doctor(env)
    assert code == 1
    assert found["database"]["status"] == "FAIL"
    assert "secret-pw" not in json.dumps(found)
    assert "NEWSDEDUP_DATABASE_URL" in found["database"]["fix"]


def test_llm_endpoint_down_and_unknown_model(healthy_env, servers):
    code, found = _doctor({**healthy_env, "NEWSDEDUP_LLM_BASE_URL": f"http://127.0.0.1:{free_port()}/v1"})
    assert code == 1 and found["llm"]["status"] == "FAIL"
    code, found = _doctor({**healthy_env, "NEWSDEDUP_SCORING_MODEL": "no-such-model"})
    assert found["llm scoring model"]["status"] == "WARN"
    assert "NEWSDEDUP_SCORING_MODEL" in found["llm scoring model"]["fix"]


def test_smtp_down_fails(healthy_env):
    code, found = _doctor({**healthy_env, "NEWSDEDUP_SMTP_PORT": str(free_port())})
    assert code == 1 and found["smtp"]["status"] == "FAIL"
    assert "NEWSDEDUP_SMTP_HOST" in found["smtp"]["fix"]


def test_broken_sources_file_fails(healthy_env, tmp_path):
    bad = tmp_path / "sources.yaml"
    bad.write_text("sources:\n  - id: x\n    feed_url: not a url\n")
    code, found = _doctor({**healthy_env, "NEWSDEDUP_SOURCES": str(bad)})
    assert code == 1 and found["sources"]["status"] == "FAIL"


def test_dagster_storage_unreachable_fails(healthy_env, tmp_path):
    home = tmp_path / "broken-dagster"
    home.mkdir()
    (home / "dagster.yaml").write_text(
        f"storage:\n  postgres:\n    postgres_url: postgresql+psycopg2://x:y@127.0.0.1:{free_port()}/dagster\n")
    code, found = _doctor({**healthy_env, "DAGSTER_HOME": str(home)})
    assert code == 1 and found["dagster instance"]["status"] == "FAIL"


def test_offline_defaults_warn_but_pass(healthy_env):
    code, found = _doctor({**healthy_env, "NEWSDEDUP_LLM_BASE_URL": None, "NEWSDEDUP_SMTP_HOST": None})
    assert found["llm"]["status"] == "WARN" and found["smtp"]["status"] == "WARN"
    assert code == 0


def test_dagster_instance_is_checked_as_dagsters_own_commands_see_it(healthy_env, tmp_path, database_url):
    """Doctor adds nothing to the environment: a variable the instance file reads and nobody set
    fails here as it fails in dagster-webserver; an unset DAGSTER_HOME is a warning with the fix."""
    from newsdedup_dagster import instance

    home = tmp_path / "env-dagster"
    home.mkdir()
    (home / "dagster.yaml").write_text("storage:\n  postgres:\n    postgres_url: {env: SOME_STORAGE_URL}\n")
    code, found = _doctor({**healthy_env, "DAGSTER_HOME": str(home), "SOME_STORAGE_URL": None})
    assert code == 1 and found["dagster instance"]["status"] == "FAIL"
    assert "SOME_STORAGE_URL" in found["dagster instance"]["detail"]

    # The file an earlier version wrote (its URL in a variable only newsdedup's processes set).
    (home / "dagster.yaml").write_text(EARLIER_INSTANCE_FILE)
    code, found = _doctor({**healthy_env, "DAGSTER_HOME": str(home)})
    assert code == 1 and "--write-instance" in found["dagster instance"]["fix"]

    # newsdedup's own file, with DAGSTER_HOME unset: the default home is used, and named in the fix.
    newsdedup_home = tmp_path / "newsdedup-home"
    instance.write_dagster_yaml(newsdedup_home / "dagster")
    code, found = _doctor({**healthy_env, "DAGSTER_HOME": None, "NEWSDEDUP_HOME": str(newsdedup_home)})
    assert code == 0, found
    assert found["dagster instance"]["status"] == "OK"
    assert found["dagster run coordinator"]["status"] == "OK"
    assert found["dagster home"]["status"] == "WARN"
    assert f"DAGSTER_HOME={newsdedup_home / 'dagster'}" in found["dagster home"]["fix"]


def test_an_instance_file_without_the_validating_coordinator_is_a_warning(healthy_env, tmp_path):
    """The operator's file (healthy_env's, no run_coordinator) passes with a warning that says what
    to add; an unchanged file from the previous version is to be rewritten."""
    import yaml

    from newsdedup_dagster import instance

    code, found = _doctor(healthy_env)
    assert code == 0, found
    warning = found["dagster run coordinator"]
    assert warning["status"] == "WARN" and "QueuedRunCoordinator" in warning["detail"]
    assert "newsdedup_dagster.run_coordinator" in warning["fix"] and "ValidatingRunCoordinator" in warning["fix"]

    home = tmp_path / "previous-dagster"
    home.mkdir()
    previous = {k: v for k, v in instance.default_instance_document().items() if k != "run_coordinator"}
    (home / "dagster.yaml").write_text(yaml.safe_dump(previous, sort_keys=False))
    code, found = _doctor({**healthy_env, "DAGSTER_HOME": str(home)})
    assert code == 0 and found["dagster instance"]["status"] == "OK", found
    assert found["dagster run coordinator"]["status"] == "WARN"
    assert "--write-instance" in found["dagster run coordinator"]["fix"]


def test_no_key_or_password_an_endpoint_echoes_reaches_the_output(healthy_env, tmp_path):
    """A provider that answers 401 quoting the Authorization header it was sent (an LLM endpoint, an
    embedding endpoint whose base URL carries a password) and a database URL with `?password=`:
    doctor says what failed and prints none of them, as text or as JSON."""
    from test_redaction import KeyEchoServer

    llm_key, embedding_key, url_password, db_password = "proj-R4nd0mLLMk3y", "emb-R4nd0mEMBk3y", "url-pw-Zx81", "db-pw-Qm47"
    with KeyEchoServer() as llm, KeyEchoServer() as embeddings:
        env = {**healthy_env, "NEWSDEDUP_LLM_BASE_URL": llm.base_url, "NEWSDEDUP_LLM_API_KEY": llm_key,
               "NEWSDEDUP_EMBEDDING_PROVIDER": "openai", "NEWSDEDUP_EMBEDDING_MODEL": "echo-embed",
               "NEWSDEDUP_EMBEDDING_DIMENSIONS": "4", "NEWSDEDUP_EMBEDDING_API_KEY": embedding_key,
               **calibration_environment(tmp_path, embeddings={"max_attempts": 1}),
               "NEWSDEDUP_EMBEDDING_BASE_URL": embeddings.base_url.replace("http://", f"http://embed:{url_password}@"),
               "NEWSDEDUP_DATABASE_URL": f"postgresql://nobody@127.0.0.1:{free_port()}/x?password={db_password}"}
        outputs = []
        for args in (("--json",), ()):
            proc = subprocess.run([sys.executable, "-m", "newsdedup_dagster.cli", "doctor", *args],
                                  capture_output=True, text=True, env={**os.environ, **env}, cwd=REPO, timeout=300)
            assert proc.returncode == 1
            outputs.append(proc.stdout + proc.stderr)
        assert any(llm_key in seen for seen in llm.seen)              # the key was sent and echoed back
    found = {f["check"]: f for f in proc_json(outputs[0])}
    assert found["llm"]["status"] == "FAIL" and "401" in found["llm"]["detail"]
    assert "Invalid key Bearer ***" in found["llm"]["detail"]
    assert found["embeddings"]["status"] == "FAIL" and "401" in found["embeddings"]["detail"]
    assert found["database"]["status"] == "FAIL"
    for text in outputs:
        for secret in (llm_key, embedding_key, url_password, db_password):
            assert secret not in text, (secret, text)


def proc_json(stdout_and_stderr: str) -> list[dict]:
    """The JSON list doctor --json prints (stdout comes first in the captured text)."""
    return json.JSONDecoder().raw_decode(stdout_and_stderr.lstrip())[0]


@pytest.mark.parametrize("version, status", [((3, 11, 7), "WARN"), ((3, 11, 15), "OK"), ((3, 12, 3), "WARN"),
                                             ((3, 12, 13), "OK"), ((3, 13, 0), "WARN"), ((3, 13, 12), "OK")])
def test_a_python_below_the_supported_patch_level_is_a_warning(version, status):
    from newsdedup_dagster.commands.doctor import PYTHON_MIN_PATCH, check_python

    (finding,) = check_python(version)
    assert finding.status == status and finding.check == "python"
    if status == "WARN":
        minimum = f"{version[0]}.{version[1]}.{PYTHON_MIN_PATCH[version[:2]]}"
        assert minimum in finding.detail and minimum in finding.fix
