"""An event's narrative as a reader sees it: the offline facts composed into lines of the reader's
language, each run marked with the language it is written in."""

from __future__ import annotations

import string
from dataclasses import dataclass
from datetime import UTC, datetime

from babel.lists import format_list

from newsdedup_dagster.shared.presentation.labels import (
    count,
    date_time,
    labels_for,
    language_name,
    locale_of,
    long_date,
)
from newsdedup_dagster.shared.text.cleaning import clean_visible_line

# The key of the stored extractive narrative under which its facts are kept (beside the sections).
FACTS = "facts"


@dataclass(frozen=True)
class Run:
    """A stretch of a narrative line. kind "phrase": the product's own words, in the reader's
    language; "date": a date or time written the reader's way, `at` its instant (ISO 8601);
    "data": a story's own headline or summary, or a model's line, in language `lang` (None: not
    known). A page isolates every data run in a language other than its own."""

    text: str
    kind: str = "phrase"
    lang: str | None = None
    at: str | None = None


def plain(runs) -> str:
    """A line's runs as plain text."""
    return "".join(run.text for run in runs)


def _compose(phrase: str, **fields) -> list[Run]:
    """A phrase's runs: its own words as phrase runs, each `{field}` as the run, runs or words given."""
    runs: list[Run] = []
    for literal, name, _spec, _conversion in string.Formatter().parse(phrase):
        if literal:
            runs.append(Run(literal))
        if name is not None:
            value = fields[name]
            runs.extend(value if isinstance(value, list) else [value if isinstance(value, Run) else Run(value)])
    return runs


def narrative_lines(facts: dict, lang: str) -> dict[str, tuple[Run, ...]]:
    """The four sections of an extractive narrative (`offline_facts`) in language `lang`: the
    phrases of PHRASES, dates, counts and language names the language's way (Babel), and the
    stories' headlines and summaries as they are, each a data run in its own language."""
    words = {**PHRASES["en"], **PHRASES.get(lang.split("-")[0], {})}
    loc = locale_of(lang)

    def moment(value: str) -> datetime:
        return datetime.fromisoformat(value).astimezone(UTC)

    def day(fact: dict) -> Run:
        at = moment(fact["at"])
        return Run(long_date(lang, at.date()), "date", at=at.isoformat())

    def when(fact: dict) -> Run:
        at = moment(fact["at"])
        return Run(date_time(lang, at), "date", at=at.isoformat())

    def text(fact: dict, key: str = "headline") -> list[Run]:
        value = clean_visible_line(fact.get(key))
        return [Run(value, "data", fact.get("lang") or None)] if value else []

    def story(fact: dict) -> list[Run]:
        """Headline and summary: one run, both being in the story's language."""
        joined = " ".join(r.text for r in text(fact) + text(fact, "summary"))
        return [Run(joined, "data", fact.get("lang") or None)] if joined else []

    names = [language_name(code, lang) for code in facts["languages"]]
    languages = format_list(names, locale=loc) if names else words["unknown_languages"]
    counts = _compose(words["counts"], stories=count(lang, labels_for(lang)["story_count"], facts["stories"]),
                      sources=count(lang, words["source_count"], facts["sources"]), languages=languages)
    background = [*_compose(words["first_reported"], date=day(facts["first"]), story=story(facts["first"])),
                  Run(" "), *counts]
    developed: list[Run] = []
    if facts["earlier"]:
        developed += [Run(count(lang, words["earlier"], facts["earlier"])), Run(" ")]
    for n, fact in enumerate(facts["timeline"]):
        developed += [*([Run(" ")] if n else []), *_compose(words["entry"], when=when(fact), story=text(fact))]
    watch = [*_compose(words["latest"], date=day(facts["latest"]), story=text(facts["latest"])), Run(" "),
             *_compose(words["stays_open"], hours=count(lang, words["hour_count"], facts["quiet_hours"]))]
    return {"what_happened": tuple(story(facts["top"])), "background": tuple(background),
            "how_it_developed": tuple(developed), "what_to_watch": tuple(watch)}


# The extractive narrative's own words, in every narrative language (shared/models/settings.py
# NARRATIVE_LANGS; `tests/test_phrases_every_language.py` keeps them complete). `{date}` and
# `{when}` are a date and a date with its time written the language's way (Babel), `{story}` a
# story's headline (and summary) as it was reported, `{stories}` the digest's story count; a dict
# is a counting phrase, a form per CLDR plural category (`digest.labels.count`). A language
# missing here falls back to English.
PHRASES: dict[str, dict] = {
    "en": {"first_reported": "First reported {date}: {story}", "counts": "{stories}, {sources}, languages: {languages}.",
           "source_count": {"one": "{n} source", "other": "{n} sources"}, "unknown_languages": "unknown",
           "earlier": {"one": "({n} earlier story)", "other": "({n} earlier stories)"}, "entry": "{when}: {story}",
           "latest": "Latest ({date}): {story}",
           "stays_open": "The event stays open until there has been no new story for {hours}.",
           "hour_count": {"one": "{n} hour", "other": "{n} hours"}},
    "zh": {"first_reported": "首次报道于{date}：{story}", "counts": "{stories}，{sources}，语言：{languages}。",
           "source_count": {"other": "{n}个来源"}, "unknown_languages": "未知",
           "earlier": {"other": "（此前另有{n}篇报道）"}, "entry": "{when}：{story}", "latest": "最新（{date}）：{story}",
           "stays_open": "若连续{hours}没有新报道，该事件即告结束。", "hour_count": {"other": "{n}小时"}},
    "ja": {"first_reported": "初報（{date}）：{story}", "counts": "{stories}、{sources}、言語：{languages}。",
           "source_count": {"other": "情報源{n}件"}, "unknown_languages": "不明",
           "earlier": {"other": "（それ以前の記事{n}件）"}, "entry": "{when}：{story}", "latest": "最新（{date}）：{story}",
           "stays_open": "新しい記事のないまま{hours}が経過すると、この出来事は終了します。",
           "hour_count": {"other": "{n}時間"}},
    "ko": {"first_reported": "첫 보도({date}): {story}", "counts": "{stories}, {sources}, 언어: {languages}.",
           "source_count": {"other": "출처 {n}곳"}, "unknown_languages": "알 수 없음",
           "earlier": {"other": "(이전 기사 {n}건)"}, "entry": "{when}: {story}", "latest": "최신({date}): {story}",
           "stays_open": "새 기사 없이 {hours}이 지나면 이 사건은 종료됩니다.", "hour_count": {"other": "{n}시간"}},
    "fr": {"first_reported": "Premier article le {date} : {story}", "counts": "{stories}, {sources}, langues : {languages}.",
           "source_count": {"one": "{n} source", "many": "{n} de sources", "other": "{n} sources"},
           "unknown_languages": "inconnues",
           "earlier": {"one": "({n} article antérieur)", "many": "({n} d'articles antérieurs)",
                       "other": "({n} articles antérieurs)"},
           "entry": "{when} : {story}", "latest": "Dernier article ({date}) : {story}",
           "stays_open": "L'événement reste ouvert tant qu'il ne s'est pas écoulé {hours} sans nouvel article.",
           "hour_count": {"one": "{n} heure", "many": "{n} d'heures", "other": "{n} heures"}},
    "de": {"first_reported": "Zuerst gemeldet am {date}: {story}", "counts": "{stories}, {sources}, Sprachen: {languages}.",
           "source_count": {"one": "{n} Quelle", "other": "{n} Quellen"}, "unknown_languages": "unbekannt",
           "earlier": {"one": "({n} frühere Meldung)", "other": "({n} frühere Meldungen)"}, "entry": "{when}: {story}",
           "latest": "Zuletzt ({date}): {story}",
           "stays_open": "Das Ereignis bleibt offen, bis es {hours} lang keine neue Meldung gibt.",
           "hour_count": {"one": "{n} Stunde", "other": "{n} Stunden"}},
    "es": {"first_reported": "Primera noticia el {date}: {story}", "counts": "{stories}, {sources}, idiomas: {languages}.",
           "source_count": {"one": "{n} fuente", "many": "{n} de fuentes", "other": "{n} fuentes"},
           "unknown_languages": "desconocidos",
           "earlier": {"one": "({n} noticia anterior)", "many": "({n} de noticias anteriores)",
                       "other": "({n} noticias anteriores)"},
           "entry": "{when}: {story}", "latest": "Lo último ({date}): {story}",
           "stays_open": "El acontecimiento sigue abierto mientras no transcurra un plazo de {hours} sin noticias nuevas.",
           "hour_count": {"one": "{n} hora", "many": "{n} de horas", "other": "{n} horas"}},
    "pt": {"first_reported": "Primeira notícia em {date}: {story}", "counts": "{stories}, {sources}, idiomas: {languages}.",
           "source_count": {"one": "{n} fonte", "many": "{n} de fontes", "other": "{n} fontes"},
           "unknown_languages": "desconhecidos",
           "earlier": {"one": "({n} notícia anterior)", "many": "({n} de notícias anteriores)",
                       "other": "({n} notícias anteriores)"},
           "entry": "{when}: {story}", "latest": "Mais recente ({date}): {story}",
           "stays_open": "O acontecimento fica aberto até completar um período de {hours} sem notícias novas.",
           "hour_count": {"one": "{n} hora", "many": "{n} de horas", "other": "{n} horas"}},
    "it": {"first_reported": "Prima notizia il {date}: {story}", "counts": "{stories}, {sources}, lingue: {languages}.",
           "source_count": {"one": "{n} fonte", "many": "{n} di fonti", "other": "{n} fonti"},
           "unknown_languages": "sconosciute",
           "earlier": {"one": "({n} notizia precedente)", "many": "({n} di notizie precedenti)",
                       "other": "({n} notizie precedenti)"},
           "entry": "{when}: {story}", "latest": "Ultima notizia ({date}): {story}",
           "stays_open": "L'evento resta aperto finché non trascorre un periodo di {hours} senza nuove notizie.",
           "hour_count": {"one": "{n} ora", "many": "{n} di ore", "other": "{n} ore"}},
    "ru": {"first_reported": "Первое сообщение — {date}: {story}", "counts": "{stories}, {sources}, языки: {languages}.",
           "source_count": {"one": "{n} источник", "few": "{n} источника", "many": "{n} источников",
                            "other": "{n} источника"},
           "unknown_languages": "неизвестны",
           "earlier": {"one": "({n} более ранний сюжет)", "few": "({n} более ранних сюжета)",
                       "many": "({n} более ранних сюжетов)", "other": "({n} более ранних сюжета)"},
           "entry": "{when}: {story}", "latest": "Последний сюжет ({date}): {story}",
           "stays_open": "Событие остаётся открытым, пока не пройдёт {hours} без новых сюжетов.",
           "hour_count": {"one": "{n} час", "few": "{n} часа", "many": "{n} часов", "other": "{n} часа"}},
    "ar": {"first_reported": "أول خبر في {date}: {story}", "counts": "{stories}، {sources}، اللغات: {languages}.",
           "source_count": {"zero": "لا مصادر", "one": "مصدر واحد", "two": "مصدران", "few": "{n} مصادر",
                            "many": "{n} مصدرًا", "other": "{n} مصدر"},
           "unknown_languages": "غير معروفة",
           "earlier": {"zero": "(لا أخبار سابقة)", "one": "(خبر سابق واحد)", "two": "(خبران سابقان)",
                       "few": "({n} أخبار سابقة)", "many": "({n} خبرًا سابقًا)", "other": "({n} خبر سابق)"},
           "entry": "{when}: {story}", "latest": "آخر خبر ({date}): {story}",
           "stays_open": "يبقى الحدث مفتوحًا حتى تمر {hours} دون خبر جديد.",
           "hour_count": {"zero": "{n} ساعة", "one": "ساعة واحدة", "two": "ساعتان", "few": "{n} ساعات",
                          "many": "{n} ساعة", "other": "{n} ساعة"}},
    "hi": {"first_reported": "पहली खबर {date} को: {story}", "counts": "{stories}, {sources}, भाषाएँ: {languages}।",
           "source_count": {"one": "{n} स्रोत", "other": "{n} स्रोत"}, "unknown_languages": "अज्ञात",
           "earlier": {"one": "({n} पिछली खबर)", "other": "({n} पिछली खबरें)"}, "entry": "{when}: {story}",
           "latest": "ताज़ा खबर ({date}): {story}",
           "stays_open": "घटना तब तक खुली रहती है जब तक {hours} तक कोई नई खबर न आए।",
           "hour_count": {"one": "{n} घंटे", "other": "{n} घंटे"}},
    "id": {"first_reported": "Pertama kali diberitakan {date}: {story}", "counts": "{stories}, {sources}, bahasa: {languages}.",
           "source_count": {"other": "{n} sumber"}, "unknown_languages": "tidak diketahui",
           "earlier": {"other": "({n} berita sebelumnya)"}, "entry": "{when}: {story}", "latest": "Terbaru ({date}): {story}",
           "stays_open": "Peristiwa ini tetap terbuka sampai {hours} berlalu tanpa berita baru.",
           "hour_count": {"other": "{n} jam"}},
    "vi": {"first_reported": "Tin đầu tiên ngày {date}: {story}", "counts": "{stories}, {sources}, ngôn ngữ: {languages}.",
           "source_count": {"one": "{n} nguồn", "other": "{n} nguồn"}, "unknown_languages": "không rõ",
           "earlier": {"one": "({n} tin trước đó)", "other": "({n} tin trước đó)"}, "entry": "{when}: {story}",
           "latest": "Mới nhất ({date}): {story}",
           "stays_open": "Sự kiện vẫn mở cho đến khi {hours} trôi qua mà không có tin mới.",
           "hour_count": {"one": "{n} giờ", "other": "{n} giờ"}},
    "th": {"first_reported": "รายงานครั้งแรกเมื่อ {date}: {story}", "counts": "{stories} จาก {sources} ภาษา: {languages}",
           "source_count": {"other": "{n} แหล่งข่าว"}, "unknown_languages": "ไม่ทราบ",
           "earlier": {"other": "(ข่าวก่อนหน้าอีก {n} ข่าว)"}, "entry": "{when}: {story}", "latest": "ล่าสุด ({date}): {story}",
           "stays_open": "เหตุการณ์นี้จะยังเปิดอยู่จนกว่าจะผ่านไป {hours} โดยไม่มีข่าวใหม่",
           "hour_count": {"other": "{n} ชั่วโมง"}},
    "tr": {"first_reported": "İlk kez {date} tarihinde bildirildi: {story}", "counts": "{stories}, {sources}, diller: {languages}.",
           "source_count": {"one": "{n} kaynak", "other": "{n} kaynak"}, "unknown_languages": "bilinmiyor",
           "earlier": {"one": "(önceki {n} haber)", "other": "(önceki {n} haber)"}, "entry": "{when}: {story}",
           "latest": "Son haber ({date}): {story}",
           "stays_open": "Yeni haber gelmeden {hours} geçene kadar olay açık kalır.",
           "hour_count": {"one": "{n} saat", "other": "{n} saat"}},
}
