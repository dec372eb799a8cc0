"""The offline category of a story: the category whose terms its articles name most (headlines
count twice), the sport check of the clustering stage for sports, else "world". Used when no model
answers and to check nothing: a model's category is kept when it is in the taxonomy.

`story_category` is the one category a story is filed under everywhere (its card, its page, its
feed entries, the category pages, the readers' editions): its briefing's, else this offline one
from the story's own headline and summary, so that a story is never without one nor given two.

Terms in scripts without spaces (Han, kana, Hangul) match anywhere in the text; the others match
as whole words, case-folded, "*" ending a stem that takes any ending."""

from __future__ import annotations

import functools
import re
from collections import Counter
from collections.abc import Iterable

from newsdedup_dagster.shared.presentation.taxonomy import CATEGORIES, FALLBACK
from newsdedup_dagster.shared.text.sports import sports_in

TERMS: dict[str, tuple[str, ...]] = {
    "politics": (
        "election*", "parliament*", "minister*", "president*", "government*", "senate", "congress*", "vote*",
        "coalition", "opposition", "lawmaker*", "prime minister", "Wahl*", "Regierung*", "Bundestag", "Kanzler*",
        "élection*", "gouvernement*", "ministre*", "député*", "elección*", "gobierno*", "parlamento*", "eleição*",
        "governo*", "выбор*", "правительств*", "министр*", "парламент*", "президент*", "選挙", "首相", "国会",
        "内閣", "政権", "选举", "总统", "议会", "政府", "총리", "국회", "대통령", "선거", "정부",
    ),
    "business": (
        "econom*", "market*", "stock*", "shares", "inflation", "interest rate*", "rates", "central bank", "Bank of", "company",
        "profit*", "earnings", "merger*", "GDP", "trade", "tariff*", "Wirtschaft*", "Börse*", "Aktie*", "Zins*",
        "Unternehmen", "économi*", "bourse", "entreprise*", "economía", "empresa*", "mercado*", "экономик*",
        "рынок", "банк*", "акци*", "компани*", "経済", "株価", "日銀", "企業", "円安", "经济", "股市", "央行",
        "企业", "경제", "증시", "기업", "금리", "환율",
    ),
    "technology": (
        "technolog*", "software", "artificial intelligence", "AI", "chip*", "semiconductor*", "smartphone*",
        "app", "cyber*", "internet", "Technologie*", "künstliche Intelligenz", "technologie*",
        "intelligence artificielle", "tecnología*", "inteligencia artificial", "технолог*", "искусственн*",
        "人工知能", "半導体", "技術", "人工智能", "芯片", "科技", "인공지능", "반도체", "기술",
    ),
    "science": (
        "scientist*", "research*", "study", "space", "NASA", "telescope", "rocket", "satellite*", "astronom*",
        "Forscher*", "Wissenschaft*", "Raumfahrt", "chercheur*", "scientifique*", "spatial*", "científic*",
        "investigador*", "учён*", "учен*", "космос*", "ракет*", "研究", "宇宙", "探査", "科学家", "航天", "卫星",
        "연구", "우주", "과학",
    ),
    "health": (
        "health", "hospital*", "disease*", "vaccine*", "virus*", "outbreak*", "patient*", "doctor*", "WHO",
        "Gesundheit*", "Krankenhaus*", "Impf*", "santé", "hôpital*", "vaccin*", "salud", "hospital*", "vacuna*",
        "здоровь*", "больниц*", "вакцин*", "病院", "感染", "ワクチン", "医療", "医院", "疫苗", "卫生", "병원",
        "백신", "감염", "보건",
    ),
    "environment": (
        "climate", "emission*", "carbon", "environment*", "pollution", "heatwave", "drought", "wildlife",
        "Klima*", "Umwelt*", "climat*", "environnement*", "clima", "medio ambiente", "климат*", "экологи*",
        "気候", "環境", "温暖化", "气候", "环境", "排放", "기후", "환경", "탄소",
    ),
    "culture": (
        "film*", "movie*", "music*", "album", "festival*", "museum*", "exhibition", "novel*", "award*",
        "concert*", "Kultur*", "Ausstellung*", "culture*", "musée*", "cultura*", "museo*", "культур*",
        "фильм*", "музей*", "映画", "音楽", "文化", "电影", "音乐", "영화", "음악", "문화",
    ),
    "crime": (
        "police", "arrest*", "court*", "trial", "murder*", "charged", "sentenced", "prosecutor*", "fraud",
        "Polizei*", "Gericht*", "Festnahme*", "police", "tribunal*", "procès", "policía", "juicio*",
        "полици*", "суд*", "арест*", "警察", "逮捕", "裁判", "警方", "法院", "경찰", "체포", "재판", "검찰",
    ),
    "disasters": (
        "earthquake*", "quake", "flood*", "storm*", "hurricane*", "typhoon*", "wildfire*", "eruption",
        "tsunami", "landslide*", "evacuat*", "magnitude", "震度", "진도", "Erdbeben*", "Hochwasser", "Unwetter*", "Sturm*",
        "séisme*", "tremblement de terre", "inondation*", "tempête*", "terremoto*", "inundación*", "sismo*",
        "землетрясени*", "наводнени*", "шторм*", "地震", "津波", "台風", "豪雨", "噴火", "避難", "台风", "洪水",
        "暴雨", "지진", "태풍", "홍수", "산불", "폭우",
    ),
    "conflict": (
        "war", "troops", "military", "missile*", "airstrike*", "ceasefire", "army", "invasion", "Krieg*",
        "Armee*", "Militär*", "guerre*", "armée*", "militaire*", "guerra*", "ejército", "войн*", "арми*",
        "военн*", "ракетн*", "戦争", "軍事", "ミサイル", "战争", "军队", "导弹", "전쟁", "미사일", "군사",
    ),
    "society": (
        "strike*", "protest*", "union*", "migrant*", "refugee*", "housing", "pension*", "Streik*", "Protest*",
        "Gewerkschaft*", "grève*", "manifestation*", "huelga*", "protesta*", "забастовк*", "протест*",
        "ストライキ", "デモ", "年金", "罢工", "抗议", "파업", "시위", "연금",
    ),
    "education": (
        "school*", "universit*", "student*", "teacher*", "exam*", "Schule*", "Universität*", "école*",
        "université*", "escuela*", "universidad*", "школ*", "университет*", "学校", "大学", "教育", "学生",
        "학교", "대학", "교육",
    ),
    "travel": (
        "airline*", "flight*", "airport*", "railway*", "train*", "metro", "subway", "tourism", "tourist*",
        "Flughafen*", "Bahn", "Zug*", "aéroport*", "métro", "aeropuerto*", "metro", "аэропорт*", "метро",
        "поезд*", "空港", "鉄道", "新幹線", "地下鉄", "机场", "地铁", "铁路", "공항", "지하철", "철도",
    ),
}
_SPACELESS = re.compile(r"[\u3040-\u30ff\u3400-\u9fff\uac00-\ud7af]")


@functools.lru_cache(maxsize=1)
def _matchers() -> dict[str, tuple[re.Pattern[str] | None, tuple[str, ...]]]:
    out = {}
    for category, terms in TERMS.items():
        spaceless = tuple(t for t in terms if _SPACELESS.search(t))
        worded = [t for t in terms if not _SPACELESS.search(t)]
        parts = [re.escape(t[:-1]) + r"\w*" if t.endswith("*") else re.escape(t) for t in worded]
        # AI / WHO are upper-case acronyms: matched as written, everything else case-folded
        acronyms = [p for t, p in zip(worded, parts) if t.isupper()]
        words = [p for t, p in zip(worded, parts) if not t.isupper()]
        pattern = None
        if words or acronyms:
            alternatives = ([f"(?i:{'|'.join(words)})"] if words else []) + acronyms
            pattern = re.compile(r"(?<!\w)(?:" + "|".join(alternatives) + r")(?!\w)")
        out[category] = (pattern, spaceless)
    return out


def term_hits(text: str) -> Counter:
    """Per category: how many of its terms `text` names (each occurrence counts)."""
    hits: Counter = Counter()
    if not text:
        return hits
    for category, (pattern, spaceless) in _matchers().items():
        count = len(pattern.findall(text)) if pattern else 0
        count += sum(text.count(term) for term in spaceless)
        if count:
            hits[category] = count
    if sports_in(text):
        hits["sports"] += 2
    return hits


def offline_category(headlines: Iterable[str], texts: Iterable[str] = ()) -> str:
    """The story's category from its articles' headlines (weight 2) and texts (weight 1)."""
    score: Counter = Counter()
    for headline in headlines:
        for category, count in term_hits(headline or "").items():
            score[category] += 2 * count
    for text in texts:
        score.update(term_hits(text or ""))
    if not score:
        return FALLBACK
    order = {category: i for i, category in enumerate(CATEGORIES)}
    return max(score, key=lambda c: (score[c], -order[c]))


def story_category(briefed: str | None, headlines: Iterable[str | None], texts: Iterable[str | None] = ()) -> str:
    """The story's one category: its briefing's (`briefed`) when the taxonomy has it, else the
    offline category of its `headlines` and `texts` (a story not briefed yet)."""
    if briefed in CATEGORIES:
        return briefed
    return offline_category([h for h in headlines if h], [t for t in texts if t])
