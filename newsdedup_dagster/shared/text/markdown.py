"""Feed and model text written into Markdown for the Dagster UI (asset metadata), shown as the text it is.

The UI renders metadata Markdown (CommonMark with GitHub's tables) with live links and images, so a
headline ``![](https://tracker.example/t.png) [Read more](https://phish.example)`` put in as it is
would load an image and show a link. Every Markdown text or table built from feed or model text
(headlines, summaries, titles, source names, fetch errors) passes through here:

- `escape_markdown`: whitespace, line breaks included, collapsed to single spaces (a line break
  would end a table row or start a block), then every ASCII punctuation character backslash-escaped,
  except ``<`` and ``>``, written ``&lt;`` and ``&gt;`` (so the Markdown source holds no tag at all).
  CommonMark makes any escaped ASCII punctuation a literal character, so no link, image, emphasis,
  code span, raw HTML, autolink, entity reference or table cell border can start inside the text,
  and GitHub's bare-URL autolinks cannot match ``https\\:`` or ``www\\.``. Rendered, the text reads
  exactly as it was.
- `markdown_cell`: one table cell, cut to a length before escaping (a cut never splits an escape).

This module imports nothing of the package: any stage may use it.
"""

from __future__ import annotations

import re
import string

__all__ = ["escape_markdown", "markdown_cell"]

_ASCII_PUNCTUATION = re.compile("[" + re.escape(string.punctuation) + "]")
_ENTITIES = {"<": "&lt;", ">": "&gt;"}


def escape_markdown(text: str | None) -> str:
    """``text`` on one line, every ASCII punctuation character escaped (see the module docstring)."""
    line = " ".join(str(text or "").split())
    return _ASCII_PUNCTUATION.sub(lambda m: _ENTITIES.get(m.group(), "\\" + m.group()), line)


def markdown_cell(text: str | None, limit: int = 90) -> str:
    """One table cell: the text on one line, at most ``limit`` characters (… when cut), escaped."""
    line = " ".join(str(text or "").split())
    if len(line) > limit:
        line = line[: max(0, limit - 1)] + "…"
    return escape_markdown(line)
