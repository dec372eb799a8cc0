"""Numbers with units that tell two look-alike events apart, in any language (pure, no DB).

  magnitudes  an earthquake's magnitude as the press writes it: "M6.1", "Mw 6.1", "magnitude
              6.1", "6.1-magnitude", "6.1 quake", "magnitud 6,1", "magnitude de 6,1", "Stärke 6,1",
              "магнитудой 6,1", "мощностью 6,1", "マグニチュード6.1", "6.1級" / "6.1级", "규모 6.1",
              "بقوة 6.1". Read as one decimal (6,1 = 6.1). The seismic intensity of Japan and Korea
              (震度5強, 진도 5강) is another scale and is never read as a magnitude.
  scores      a match result "2-1", "3:2", "2–0", "5―2", "102比95", "102 à 95", order-free. A clock time
              ("20:30", "8:28": minutes of two digits after an hour <= 24) is not a result, nor a
              number inside a date, an id or a word ("2026-11-02", "COVID-19", "48-hour").

Unicode decimal digits of any script are read (int() and float() read them).
"""

from __future__ import annotations

import re

_NUM = r"(\d{1,2}[.,]\d)"
_MAGNITUDE = [re.compile(p, re.IGNORECASE) for p in (
    r"(?<![A-Za-z])M[wWlLsSbB]?\s?" + _NUM + r"(?![\d.,]*\d)",
    r"magnitud\w*\s*(?:(?:of|de|di|von|is|was|est|es|estimated at|estimée à|estimada en|preliminary)\s+){0,3}" + _NUM,
    _NUM + r"\s?-?\s?(?:magnitude|magnitud|quake|earthquake|tremor)",
    r"Stärke\s+(?:von\s+)?" + _NUM,
    r"(?:магнитуд\w*|мощностью|силой)\s+(?:около\s+)?" + _NUM,
    r"マグニチュード(?:は|が)?\s*" + _NUM,
    _NUM + r"\s*[级級]",
    r"규모\s*" + _NUM,
    r"بقوة\s*" + _NUM,
    _NUM + r"\s+(?:on|auf) (?:the|der) Richter",
)]
# x-y results: not inside a longer number, date, id or word (ASCII letters and digits around)
_SCORE = re.compile(r"(?<![0-9A-Za-z.,:/\-–―—])(\d{1,3})\s?([-:–―—])\s?(\d{1,3})(?![0-9A-Za-z]|[.,:/\-–―—]\d)")
_SCORE_WORDS = re.compile(r"(?<!\d)(\d{1,3})\s*(?:比|à|a|to|zu|против)\s*(\d{1,3})(?!\d)")
_SCORE_WORD_CONTEXT = re.compile(r"(?:比|score|scored|won|beat|victory|win|victoire|gagné|vence|venció|"
                                 r"gewinnt|siegt|счетом|счётом|со счетом)", re.IGNORECASE)
# magnitudes outside this range are not earthquakes' (a lane "M4.0", a chip "M2.5" is rarer still)
_LOWEST, _HIGHEST = 1.0, 9.9


def magnitudes_in(text: str) -> set[float]:
    out = set()
    for pattern in _MAGNITUDE:
        for match in pattern.finditer(text or ""):
            value = float(match.group(1).replace(",", ".").translate(_DIGITS))
            if _LOWEST <= value <= _HIGHEST:
                out.add(round(value, 1))
    return out


class _AsciiDigits(dict):
    """str.translate table: any script's decimal digit -> its ASCII digit."""
    def __missing__(self, code: int):
        ch = chr(code)
        if ch.isdecimal():
            return str(int(ch))
        raise LookupError(code)


_DIGITS = _AsciiDigits()


def _clock(a: str, sep: str, b: str) -> bool:
    return sep == ":" and len(b) == 2 and int(a) <= 24


def scores_in(text: str) -> set[tuple[int, int]]:
    out = set()
    text = text or ""
    for match in _SCORE.finditer(text):
        a, sep, b = match.group(1), match.group(2), match.group(3)
        if _clock(a, sep, b):
            continue
        x, y = int(a), int(b)
        out.add((min(x, y), max(x, y)))
    if _SCORE_WORD_CONTEXT.search(text):
        for match in _SCORE_WORDS.finditer(text):
            x, y = int(match.group(1)), int(match.group(2))
            if x != y:
                out.add((min(x, y), max(x, y)))
    return out
