"""Progress for long commands: periodic plain lines off a terminal, nothing when disabled, and
never on stdout (so `--json` stays parseable)."""

from __future__ import annotations

import io

from newsdedup_dagster.shared import progress as progress_module
from newsdedup_dagster.shared.progress import PlainProgress, progress, progress_bar


def test_plain_lines_off_a_terminal(monkeypatch, capsys):
    monkeypatch.setattr(progress_module, "PLAIN_INTERVAL_S", 0.0)
    stream = io.StringIO()
    items = list(progress(range(5), "embedding", stream=stream))
    assert items == [0, 1, 2, 3, 4]
    lines = stream.getvalue().splitlines()
    assert lines[-1].startswith("embedding: 5/5")
    assert capsys.readouterr().out == ""


def test_plain_progress_rate_limits_lines():
    stream = io.StringIO()
    bar = PlainProgress("pairs", 1000, stream, interval_s=3600)
    for _ in range(1000):
        bar.update(1)
    assert stream.getvalue() == ""  # within the interval: silent
    bar.close()
    assert stream.getvalue().strip().startswith("pairs: 1000/1000")


def test_disabled_prints_nothing():
    stream = io.StringIO()
    with progress_bar("x", 3, stream=stream, enabled=False) as bar:
        bar.update(3)
    assert stream.getvalue() == ""


def test_default_stream_is_stderr(monkeypatch, capsys):
    monkeypatch.setattr(progress_module, "PLAIN_INTERVAL_S", 0.0)
    list(progress([1, 2], "partitions"))
    captured = capsys.readouterr()
    assert captured.out == "" and "partitions: 2/2" in captured.err
