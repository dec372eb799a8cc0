"""Offline language identification of an item's text (py3langid)."""

from __future__ import annotations

from newsdedup_dagster.shared.sources import normalise_language

_langid_identifier = None


def detect_language(text: str) -> str | None:
    """Offline language guess (py3langid), ISO 639-1 or None."""
    global _langid_identifier
    if not text:
        return None
    if _langid_identifier is None:
        import py3langid  # deferred: loading its model takes ~0.2 s, paid only by processes that parse

        _langid_identifier = py3langid
    code, _score = _langid_identifier.classify(text)
    return normalise_language(code)
