"""Which text of an item is embedded.

Choice: the headline alone (whitespace-normalised, at most MAX_CHARS characters).
Why: stories are "the same event", and headlines state the event; feed summaries
are inconsistent across sources (empty, boilerplate, a teaser, or the whole
article) and pull two reports of one event apart. Measured on
../shared/data/gnews_titles.jsonl vs gnews_titles_snippets.jsonl (same items,
title vs title + snippet) with `newsdedup eval` -- see the evaluation figures in
the README: title-only is the default; `NEWSDEDUP_EMBEDDING_TEXT=title_summary`
switches to headline + the first SUMMARY_CHARS characters of the summary.
USE multilingual v3 is a sentence encoder (trained on sentence pairs): long
inputs dilute it, hence the truncation.
"""

from __future__ import annotations

import hashlib
import re

MAX_CHARS = 300
SUMMARY_CHARS = 200
TEXT_MODES = ("title", "title_summary")

_WS = re.compile(r"\s+")


def _clean(text: str | None) -> str:
    return _WS.sub(" ", text or "").strip()


def embedding_text(title: str | None, summary: str | None = None, mode: str = "title") -> str:
    """The string handed to the embedder for one item."""
    if mode not in TEXT_MODES:
        raise ValueError(f"embedding text mode {mode!r}: expected one of {TEXT_MODES}")
    head = _clean(title)
    if mode == "title_summary":
        body = _clean(summary)[:SUMMARY_CHARS]
        if body and body.lower() != head.lower() and not head.lower().startswith(body.lower()):
            head = f"{head}. {body}" if head else body
    return head[:MAX_CHARS]


def text_hash(text: str) -> str:
    """Cache key part: sha256 of the exact embedded text."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()
