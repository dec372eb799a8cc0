"""Publishing an hour in a worker process while a ranged run goes on (publish/background.py),
against the real database: the worker reads the database as the run left it when the hour was
handed over, not as the run changes it afterwards, and writes the bytes publishing the hour in
place writes; a worker that dies is replaced by publishing the hour in the run's process at the
same snapshot, and the next hour gets a new worker."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from datetime import UTC, datetime
from pathlib import Path

from test_events_fixtures import add_story
from test_publish_asset import H, _seed

from newsdedup_dagster import config as app_config, db
from newsdedup_dagster.partitions import hour_start
from newsdedup_dagster.publish.background import BackgroundPublisher
from newsdedup_dagster.publish.build import publish_hour

LANGS = ("en", "fr")
NOW = datetime(2026, 11, 3, tzinfo=UTC)


def _files(folder) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def _in_place(conn, folder, monkeypatch):
    monkeypatch.setenv("NEWSDEDUP_PUBLISH_DIR", str(folder))
    return publish_hour(conn, hour_start(H), app_config.publish_settings(), LANGS, now=NOW)


def _held_back(clean_db, conn, folder, monkeypatch, publisher):
    """Hand the hour over while the publishing lock of `folder` is held elsewhere (the worker waits
    for it before reading), change the database, then let the worker go on."""
    monkeypatch.setenv("NEWSDEDUP_PUBLISH_DIR", str(folder))
    settings = app_config.publish_settings()
    with db.connection(clean_db) as other:
        other.execute(db.load_sql("publish_lock"), {"output_dir": str(settings.output_dir)})
        other.commit()
        pending = publisher.submit(hour_start(H), settings, LANGS, NOW, False)
        # The run goes on with the next hour: a new story and a story grown, committed.
        add_story(conn, "s9", "late", 10.2, titles={"en": "A late story"}, significance=9.0)
        conn.execute("UPDATE story_scores SET significance = 1.0 WHERE story_id = 's1'")
        conn.commit()
        other.execute(db.load_sql("publish_unlock"), {"output_dir": str(settings.output_dir)})
        other.commit()
    return pending.result()


def test_the_worker_publishes_the_hour_as_it_was_handed_over(clean_db, conn, tmp_path, monkeypatch):
    _seed(conn)
    reference = _in_place(conn, tmp_path / "in-place", monkeypatch)
    assert set(reference.feed_stories) == {"s1", "s2"}
    publisher = BackgroundPublisher(clean_db)
    try:
        result, seconds = _held_back(clean_db, conn, tmp_path / "background", monkeypatch, publisher)
    finally:
        publisher.close()
    assert seconds > 0
    # (the entries the in-place run stored are shared: the worker finds them unchanged)
    assert (result.candidates, result.feed_stories, result.index_stories) == \
        (reference.candidates, reference.feed_stories, reference.index_stories)
    assert _files(tmp_path / "background") == _files(tmp_path / "in-place")
    # Published in place now, the hour shows what the run wrote after the hand-over.
    assert "s9" in _in_place(conn, tmp_path / "now", monkeypatch).feed_stories


def test_a_worker_that_dies_is_replaced_by_the_run_at_the_same_snapshot(clean_db, conn, tmp_path, monkeypatch):
    _seed(conn)
    reference = _in_place(conn, tmp_path / "in-place", monkeypatch)
    publisher = BackgroundPublisher(clean_db)
    try:
        # The worker (a new process: it reads this when it starts) kills itself before publishing.
        monkeypatch.setenv("NEWSDEDUP_TEST_CRASH_AT", "story_feeds.background_worker")
        result, _ = _held_back(clean_db, conn, tmp_path / "background", monkeypatch, publisher)
        assert result.feed_stories == reference.feed_stories
        assert _files(tmp_path / "background") == _files(tmp_path / "in-place")
        # The next hour goes to a new worker.
        monkeypatch.delenv("NEWSDEDUP_TEST_CRASH_AT")
        again, _ = publisher.submit(hour_start(H), app_config.publish_settings(), LANGS, NOW, True).result()
        assert "s9" in again.feed_stories
    finally:
        publisher.close()


def test_the_worker_ends_when_the_run_is_killed(tmp_path):
    """A run killed with SIGKILL never closes its worker: the worker notices and ends."""
    script = ("import os, signal\nfrom newsdedup_dagster.publish.background import BackgroundPublisher\n"
              "print(BackgroundPublisher('unused').worker().process.pid, flush=True)\n"
              "os.kill(os.getpid(), signal.SIGKILL)\n")
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60, cwd=tmp_path,
                          env={**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1])})
    assert done.returncode == -signal.SIGKILL, done.stderr
    worker = int(done.stdout.split()[-1])
    deadline = time.monotonic() + 20
    while Path(f"/proc/{worker}").exists() and time.monotonic() < deadline:
        time.sleep(0.2)
    assert not Path(f"/proc/{worker}").exists() or "Z" in Path(f"/proc/{worker}/stat").read_text().split()[2]


def test_a_script_without_a_main_guard_is_not_run_again_by_the_worker(tmp_path):
    """The worker is a program of its own, not a multiprocessing child (which would import the run's
    main script again and, unguarded, run it again); it answers with the error of a failed hour."""
    marker = tmp_path / "runs.txt"
    script = (f"open({str(marker)!r}, 'a').write('ran\\n')\n"
              "from newsdedup_dagster.publish.background import BackgroundPublisher, WorkerError\n"
              "worker = BackgroundPublisher('unused').worker()\n"
              "worker.send(('postgresql://nobody@/none?host=/nonexistent', None, None, (), None, False, 'x'))\n"
              "try:\n    worker.receive()\nexcept WorkerError as exc:\n    print('answered:', exc)\n"
              "worker.close()\n")
    (tmp_path / "run.py").write_text(script)   # a file: a child would import it again by its path
    done = subprocess.run([sys.executable, "run.py"], capture_output=True, text=True, timeout=60, cwd=tmp_path,
                          env={**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1])})
    assert done.returncode == 0, done.stderr
    assert "answered: DatabaseError" in done.stdout, done.stdout
    assert marker.read_text() == "ran\n"
