"""`newsdedup subscribers ...` and `newsdedup digest --date ... --open` through the real CLI."""

from __future__ import annotations

from pathlib import Path

from test_events_fixtures import add_story

from newsdedup_dagster.cli import main


def test_subscribers_add_remove_list(clean_db, capsys):
    assert main(["subscribers", "add", "Reader@Example.COM", "--lang", "ja"]) == 0
    assert "added Reader@example.com (lang ja" in capsys.readouterr().out
    assert main(["subscribers", "add", "Reader@example.com", "--lang", "fr"]) == 0
    assert "updated" in capsys.readouterr().out
    assert main(["subscribers", "add", "not-an-email"]) == 2
    assert main(["subscribers", "add", "x@example.com", "--lang", "<b>"]) == 2
    capsys.readouterr()
    assert main(["subscribers", "list"]) == 0
    out = capsys.readouterr().out
    assert "Reader@example.com" in out and " fr " in out
    assert main(["subscribers", "remove", "Reader@example.com"]) == 0
    assert main(["subscribers", "remove", "Reader@example.com"]) == 1
    capsys.readouterr()
    main(["subscribers", "list"])
    assert "no subscribers" in capsys.readouterr().out
    main(["subscribers", "list", "--all"])
    assert "Reader@example.com" in capsys.readouterr().out


def test_digest_command_renders_and_prints_path(clean_db, conn, capsys, tmp_path, monkeypatch):
    monkeypatch.setenv("NEWSDEDUP_OUTBOX", str(tmp_path))
    add_story(conn, "s1", "t1", 8.0, titles={"en": "Summit <ends>"}, headline="Summit <ends>")
    assert main(["digest", "--date", "2026-11-02", "--lang", "en", "--lang", "de", "--open"]) == 0
    out = capsys.readouterr().out.strip().splitlines()
    path = Path(out[-1])
    assert path == tmp_path / "digests" / "2026-11-02" / "digest-2026-11-02-en.html"
    assert "Summit &lt;ends&gt;" in path.read_text()
    assert (tmp_path / "digests" / "2026-11-02" / "digest-2026-11-02-de.txt").exists()
    assert main(["digest", "--date", "02/11/2026"]) == 2
