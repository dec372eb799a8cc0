"""Which text of an item is embedded.

Choice: the headline (whitespace-normalised, at most MAX_CHARS characters) by default;
`NEWSDEDUP_EMBEDDING_TEXT=title_summary` adds the first SUMMARY_CHARS characters of the summary.
Why: headlines state the event in every language and every feed has one; feed summaries range
from empty to boilerplate to the whole article. Measured with the USE default embedder, plain
UnionFind, on the same 11,109 Google News items (best item_threshold of each):
  title only      gnews_titles.jsonl           F1 0.647 NMI 0.793 (0.65)
  title + snippet gnews_titles_snippets.jsonl  F1 0.721 NMI 0.846 (0.70); 0.643 at 0.65
  (NEWSDEDUP_EMBEDDING_TEXT=title_summary newsdedup eval --data ../shared/data/gnews_titles_snippets.jsonl
   --sweep item_threshold=0.65:0.8:0.05)
So a clean snippet helps (+0.07 F1) but moves the best threshold; it stays opt-in until it is
calibrated on real feed summaries (which are noisier than Google News snippets). USE multilingual
v3 is a sentence encoder: long inputs dilute it, hence the truncation.
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
