"""The sport a headline or lead names, in any language (pure, no DB).

Match reports of one evening look alike to an embedding whatever the sport: "A beat B" in
Korean volleyball and in Scottish football sit closer to each other than to anything else of
the hour. Teams' names rarely survive translation in a way a transliteration can match (대한항공
is Korean Air), but the sport does: every language names it, or names its league.

`sports_in(text)` gives the set of sports a text names. A term that several sports use
("football", "hockey", "Premiership", "Champions League") stands for all of them, so that an
ambiguous reading can only keep a pair together: two texts conflict only when both name a
sport and the sets share none (anchors.py, kind "sports").

Terms in scripts without spaces (Han, kana, Hangul) match anywhere in the text (프로배구 holds
배구); the others match as whole words, case-folded.
"""

from __future__ import annotations

import functools
import re

# sport -> its names and its leagues' names, in the languages of the feeds we carry. A term listed
# under several sports is ambiguous and stands for all of them; "*" ends a stem that takes any
# ending (футбола, Fußballspiel, footballer). Terms that occur inside unrelated words are left out
# (バレー is in シリコンバレー, 中超 in 其中超过).
TERMS: dict[str, tuple[str, ...]] = {
    "association football": (
        "football*", "soccer", "Premier League", "Premiership", "La Liga", "LaLiga", "Ligue 1", "Serie A",
        "Eredivisie", "Bundesliga", "Champions League", "Europa League", "FIFA", "UEFA", "fútbol", "futbol",
        "futebol", "Fußball*", "Fussball*", "calcio", "voetbal", "piłka nożna", "футбол*", "サッカー", "Jリーグ",
        "축구", "K리그", "足球", "男足", "女足", "كرة القدم", "फुटबॉल", "फ़ुटबॉल",
    ),
    "american football": ("football*", "NFL", "Super Bowl", "미식축구", "アメフト", "美式足球"),
    "rugby": ("rugby", "Premiership", "Top 14", "Six Nations", "регби", "ラグビー", "럭비", "橄榄球", "欖球"),
    "volleyball": (
        "volleyball*", "voleibol", "vôlei", "voley", "pallavolo", "volley-ball", "Champions League", "волейбол*",
        "バレーボール", "배구", "排球", "男排", "女排", "الكرة الطائرة",
    ),
    "basketball": (
        "basketball*", "baloncesto", "basquete", "pallacanestro", "NBA", "WNBA", "EuroLeague", "Bundesliga",
        "Champions League", "баскетбол*", "バスケットボール", "バスケ", "Bリーグ", "농구", "篮球", "籃球", "男篮", "女篮", "كرة السلة",
    ),
    "ice hockey": (
        "hockey", "ice hockey", "Eishockey*", "NHL", "KHL", "хокке*", "КХЛ", "НХЛ", "アイスホッケー", "아이스하키", "冰球",
        "Champions League",
    ),
    "field hockey": ("hockey", "हॉकी"),
    "baseball": (
        "baseball*", "béisbol", "beisebol", "MLB", "World Series", "Japan Series", "бейсбол*", "野球", "日本シリーズ",
        "야구", "한국시리즈", "棒球",
    ),
    "cricket": ("cricket", "Test match", "IPL", "крикет*", "クリケット", "크리켓", "板球", "क्रिकेट"),
    "tennis": ("tennis*", "tenis", "Wimbledon", "ATP", "WTA", "теннис*", "テニス", "테니스", "网球", "網球", "टेनिस"),
    "handball": ("handball*", "balonmano", "pallamano", "гандбол*", "ハンドボール", "핸드볼", "手球", "Bundesliga",
                 "Champions League"),
    "golf": ("golf", "PGA", "гольф*", "ゴルフ", "골프", "高尔夫"),
    "motor racing": ("Formula 1", "Formula One", "F1", "Grand Prix", "MotoGP", "NASCAR", "Формул* 1",
                     "Формул*-1"),
}

_UNSPACED = re.compile(r"[\u3040-\u30ff\u3400-\u9fff\uac00-\ud7af]")


@functools.cache
def _patterns() -> tuple[tuple[tuple[str, frozenset[str]], ...], re.Pattern[str], dict[str, frozenset[str]]]:
    """Unspaced terms with their sports; one pattern of the others (longest first); for each of
    those, its sports, keyed by the pattern's group name."""
    sports_of: dict[str, set[str]] = {}
    for sport, terms in TERMS.items():
        for term in terms:
            sports_of.setdefault(term.casefold(), set()).add(sport)
    unspaced = tuple((t, frozenset(s)) for t, s in sports_of.items() if _UNSPACED.search(t))
    spaced = sorted((t for t in sports_of if not _UNSPACED.search(t)), key=len, reverse=True)
    groups: dict[str, frozenset[str]] = {}
    alternatives = []
    for i, term in enumerate(spaced):
        body = r"\w*".join(re.escape(part) for part in term.split("*"))
        alternatives.append(f"(?P<t{i}>{body})")
        groups[f"t{i}"] = frozenset(sports_of[term])
    pattern = re.compile(r"(?<!\w)(?:" + "|".join(alternatives) + r")(?!\w)")
    return unspaced, pattern, groups


def sports_in(text: str | None) -> frozenset[str]:
    """The sports a text names: the union over the terms it holds, each term standing for every
    sport that uses it. Empty when it names none."""
    if not text:
        return frozenset()
    unspaced, pattern, groups = _patterns()
    folded = text.casefold()
    out: set[str] = set()
    if _UNSPACED.search(folded):
        for term, sports in unspaced:
            if term in folded:
                out |= sports
    for match in pattern.finditer(folded):
        out |= groups[match.lastgroup]
    return frozenset(out)


def sports_conflict(a: frozenset[str], b: frozenset[str]) -> bool:
    """Both name a sport and no sport is shared."""
    return bool(a) and bool(b) and not (a & b)
