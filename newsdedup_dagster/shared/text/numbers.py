"""Numbers with units that tell two look-alike events apart, in any language (pure, no DB).

  magnitudes  an earthquake's magnitude as the press writes it: "M6.1", "Mw 6.1", "magnitude
              6.1", "6.1-magnitude", "6.1 quake", "magnitud 6,1", "magnitude de 6,1", "Stärke 6,1",
              "магнитудой 6,1", "мощностью 6,1", "マグニチュード6.1", "6.1級" / "6.1级", "규모 6.1",
              "بقوة 6.1". Read as one decimal (6,1 = 6.1). The seismic intensity of Japan and Korea
              (震度5強, 진도 5강) is another scale and is never read as a magnitude.
  scores      a match result "2-1", "3:2", "2–0", "5―2", "102比95", "3대1", "102 à 95", order-free. A clock
              time ("20:30", "8:28": minutes of two digits after an hour <= 24) is not a result, nor a
              number inside a date, an id or a word ("2026-11-02", "COVID-19", "48-hour").
  intensities the seismic intensity of the Japanese and Korean scales, "震度5強" / "진도 5강" / "shindo
              5+": read so that it is shown, never compared with a magnitude (another scale: one
              quake has one magnitude and many intensities, one per town). It vetoes nothing.

Text is NFKC-normalised first (full-width digits and signs: "Ｍ６．１", "３－１"); Unicode decimal
digits of any script are read (int() and float() read them). Death tolls are not read: a toll
rises as one story develops ("3 dead", then "12 dead"), so two tolls do not tell events apart.
"""

from __future__ import annotations

import re
import unicodedata

_NUM = r"(\d{1,2}[.,]\d)"
_MAGNITUDE = [re.compile(p, re.IGNORECASE) for p in (
    r"(?<![A-Za-zА-Яа-я])[MМ][wWlLsSbB]?\s?" + _NUM + r"(?![\d.,]*\d)",
    r"magnitud\w*[\s-]*(?:(?:of|de|di|von|is|was|est|es|estimated at|estimée à|estimada en|preliminary)\s+){0,3}" + _NUM,
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
_SCORE_WORDS = re.compile(r"(?<!\d)(\d{1,3})\s*(?:比|대|à|a|to|zu|против)\s*(\d{1,3})(?!\d)")
# words that say a text reports a result (Latin and Cyrillic ones whole words: "bat" is not "combat")
_SCORE_WORD_CONTEXT = re.compile(r"(?:比|승리|이겼|꺾|눌렀|제압|격파|\b(?:score|scored|won|beat|victory|win|victoire|"
                                 r"gagné|s'impose|l'emporte|bat|battu|vence|venció|gewinnt|siegt|счетом|счётом)\b)",
                                 re.IGNORECASE)
# 震度5強, 震度 6弱, 진도 5강, shindo 5+, "seismic intensity of 5 upper": (scale, value as written, + / -)
_INTENSITY = [re.compile(p, re.IGNORECASE) for p in (
    r"震度\s*([1-7])\s*([強弱])?",
    r"진도\s*([1-7])\s*([강약])?",
    r"shindo\s*([1-7])\s*([+-]|upper|lower)?",
    r"(?:seismic|JMA) intensity (?:of )?([1-7])\s*(upper|lower|[+-])?",
)]
_INTENSITY_SIGN = {"強": "+", "강": "+", "upper": "+", "+": "+", "弱": "-", "약": "-", "lower": "-", "-": "-"}
# magnitudes outside this range are not earthquakes' (a lane "M4.0", a chip "M2.5" is rarer still)
_LOWEST, _HIGHEST = 1.0, 9.9


def _normalised(text: str | None) -> str:
    return unicodedata.normalize("NFKC", text or "")


def magnitudes_in(text: str) -> set[float]:
    """Earthquake magnitudes, one decimal each (6,1 and ６．１ are 6.1), within 1.0-9.9."""
    out = set()
    text = _normalised(text)
    for pattern in _MAGNITUDE:
        for match in pattern.finditer(text):
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


def intensities_in(text: str) -> set[str]:
    """Seismic intensities as "5+", "6-", "4" (the Japanese and Korean scales): shown, never compared."""
    out = set()
    text = _normalised(text)
    for pattern in _INTENSITY:
        for match in pattern.finditer(text):
            sign = match.group(2)
            out.add(str(int(match.group(1))) + (_INTENSITY_SIGN.get(sign.lower(), "") if sign else ""))
    return out


def scores_in(text: str) -> set[tuple[int, int]]:
    """Match results as (lower, higher) pairs."""
    out = set()
    text = _normalised(text)
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
