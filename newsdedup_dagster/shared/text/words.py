"""Word keys shared by the anchor check (anchors.py) and the gazetteer (places.py)."""

from __future__ import annotations

import re
import unicodedata

# A clause or sentence boundary: the word after it is capitalised for grammar, not because it is a name.
BOUNDARY = re.compile(r"(?:[.!?:;…。！？\"“”«»„\(\)\[\]]|\s[-–—|]\s|^)\s*$")


def fold(word: str) -> str:
    """Case- and accent-insensitive key: NFKD, combining marks dropped, casefolded."""
    decomposed = unicodedata.normalize("NFKD", word)
    return "".join(ch for ch in decomposed if not unicodedata.combining(ch)).casefold().replace("’", "'")
