"""How pages and their main text are stored (`article_texts`): gzip with a zero mtime, so the same
text is always the same bytes; written by the article stage, read by the briefing stage."""

from __future__ import annotations

import gzip


def compressed(data: bytes | None) -> bytes | None:
    """Bytes as stored in `article_texts.text_gzip` / `html_gzip` (None stays None)."""
    return gzip.compress(data, compresslevel=6, mtime=0) if data else None


def article_text(blob: bytes | None) -> str | None:
    """The stored main text (article_texts.text_gzip) as text."""
    return gzip.decompress(blob).decode("utf-8") if blob else None
