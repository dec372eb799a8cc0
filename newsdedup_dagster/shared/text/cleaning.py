"""Model output and feed text kept to text (pure).

Everything a model writes (scores' headlines and summaries, translations, event narratives) passes
through `clean_model_output` in the client before it is validated, cached or stored. Every
human-visible text a feed supplies (titles, summaries, content, authors, feed titles) is cleaned
by the same rules at ingest (`shared/text/sanitise.py: clean_text`), and every line the site, the feeds and
the digest show passes `clean_visible_line`, so rows stored before a rule existed are cleaned too:

- NUL and the other C0/C1 control characters are removed (PostgreSQL text cannot hold NUL, and
  escape sequences have no place in a digest); TAB, LF and CR become plain whitespace (LF; the
  validators collapse whitespace anyway), as do the Unicode line/paragraph separators.
- Invisible format characters (Unicode category Cf) are removed: the bidirectional embeddings,
  overrides and isolates U+202A-U+202E and U+2066-U+2069 (which can make a headline display in a
  different order from the one stored), the bidi marks, zero-width spaces, word joiners, the BOM,
  and the tag characters U+E0000-U+E007F (invisible text). ZERO WIDTH NON-JOINER and ZERO WIDTH
  JOINER stay: Persian and Indic scripts and emoji sequences need them.
- Lone surrogates and the noncharacters U+FFFE/U+FFFF (and their plane equivalents) are removed:
  they cannot be stored as UTF-8.

The cleaner is a per-character map (so ``clean(a + b) == clean(a) + clean(b)``), idempotent, and
keeps every letter, digit, mark, punctuation, symbol and space character in order. It does not
touch URLs: model text is stored and rendered as plain text (the digest's Jinja2 templates
autoescape it and build links only from feeds' article URLs, never from model text).
"""

from __future__ import annotations

import html
import re
import unicodedata
from typing import Any

KEPT_FORMAT = frozenset("\u200c\u200d")          # ZWNJ, ZWJ
AS_NEWLINE = frozenset("\t\n\r\u2028\u2029\x85")  # whitespace-like controls and separators
BIDI_CONTROLS = frozenset("\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069\u200e\u200f\u061c")


def _is_noncharacter(cp: int) -> bool:
    return (cp & 0xFFFE) == 0xFFFE or 0xFDD0 <= cp <= 0xFDEF


def clean_char(ch: str) -> str:
    """'' (drop), '\\n' (whitespace-like control) or the character itself."""
    if ch in AS_NEWLINE:
        return "\n"
    if ch in KEPT_FORMAT:
        return ch
    category = unicodedata.category(ch)
    if category in ("Cc", "Cf", "Cs") or ch in BIDI_CONTROLS or _is_noncharacter(ord(ch)):
        return ""
    return ch


def clean_model_text(text: str) -> str:
    """The text without control, invisible-format, bidi-override or unstorable characters."""
    if text.isprintable():
        return text  # the common case: isprintable() is False for every Cc, Cf, Cs, Cn, Zl, Zp character
    return "".join(clean_char(ch) for ch in text)


def clean_visible_line(text: str | None) -> str:
    """One line of shown text: `clean_model_text`, then whitespace (line breaks included) collapsed."""
    return " ".join(clean_model_text(text or "").split())


def clean_model_output(value: Any) -> Any:
    """Apply `clean_model_text` to every string (keys too) in a parsed JSON value.

    Iterative, with an explicit stack: a value nested deeper than Python's recursion limit (a
    hostile reply, a stored answer) is cleaned like any other, never raising RecursionError. A
    container met twice (shared or cyclic, which JSON cannot express) is cleaned once."""
    if not isinstance(value, (dict, list)):
        return clean_model_text(value) if isinstance(value, str) else value
    copies: dict[int, Any] = {}
    root = _empty_like(value)
    copies[id(value)] = root
    stack: list[tuple[Any, Any]] = [(value, root)]
    while stack:
        source, target = stack.pop()
        pairs = source.items() if isinstance(source, dict) else enumerate(source)
        for key, child in pairs:
            if isinstance(child, (dict, list)):
                copy = copies.get(id(child))
                if copy is None:
                    copy = copies[id(child)] = _empty_like(child)
                    stack.append((child, copy))
            else:
                copy = clean_model_text(child) if isinstance(child, str) else child
            if isinstance(target, dict):
                target[clean_model_text(key) if isinstance(key, str) else key] = copy
            else:
                target.append(copy)
    return root


def _empty_like(value: dict | list) -> dict | list:
    return {} if isinstance(value, dict) else []


_TAG = re.compile(r"<[^>]+>")


def clean_text(text: str | None) -> str:
    """Feed summaries carry HTML; collapse it to plain text."""
    if not text:
        return ""
    return " ".join(html.unescape(_TAG.sub(" ", text)).split())
