"""Updates as updates (pure). A day's digest holds the stories that broke that day; for a reader
whose previous edition (the same language and edition, the day before) carried a story that has
gained articles since, the story comes back after the new ones, marked with what is new ("Since
yesterday: new articles: 3 · new outlets: Le Monde, BBC · new stories in the event: 1"); one that
gained nothing is left out. A new story of an event the previous edition carried is marked as the
event's new development, not as news out of nowhere.

    view = mark_updates(view, updates, previous_events)
"""

from __future__ import annotations

from dataclasses import dataclass

from newsdedup_dagster.shared.presentation.stories import DigestView, clean_line

__all__ = ["StoryNews", "UPDATE_LABELS", "mark_updates", "since_line"]

UPDATE_LABELS: dict[str, dict[str, str]] = {
    "en": {"since": "Since yesterday: {what}", "new_articles": "new articles: {n}", "new_outlets": "new outlets: {names}",
           "new_event_stories": "new stories in the event: {n}", "separator": " · ", "name_separator": ", ",
           "event_development": "a new development in an event of your previous edition"},
    "fr": {"since": "Depuis hier : {what}", "new_articles": "nouveaux articles : {n}",
           "new_outlets": "nouveaux médias : {names}", "new_event_stories": "nouveaux sujets de l'événement : {n}",
           "separator": " · ", "name_separator": ", ",
           "event_development": "un nouvel épisode d'un événement de votre édition précédente"},
    "de": {"since": "Seit gestern: {what}", "new_articles": "neue Artikel: {n}", "new_outlets": "neue Medien: {names}",
           "new_event_stories": "neue Meldungen zum Ereignis: {n}", "separator": " · ", "name_separator": ", ",
           "event_development": "eine neue Entwicklung eines Ereignisses aus Ihrer letzten Ausgabe"},
    "es": {"since": "Desde ayer: {what}", "new_articles": "artículos nuevos: {n}", "new_outlets": "medios nuevos: {names}",
           "new_event_stories": "noticias nuevas del acontecimiento: {n}", "separator": " · ", "name_separator": ", ",
           "event_development": "una novedad de un acontecimiento de su edición anterior"},
    "pt": {"since": "Desde ontem: {what}", "new_articles": "novos artigos: {n}", "new_outlets": "novos veículos: {names}",
           "new_event_stories": "novas notícias do acontecimento: {n}", "separator": " · ", "name_separator": ", ",
           "event_development": "um novo desdobramento de um acontecimento da sua edição anterior"},
    "ru": {"since": "Со вчерашнего дня: {what}", "new_articles": "новых статей: {n}",
           "new_outlets": "новые источники: {names}", "new_event_stories": "новых сюжетов о событии: {n}",
           "separator": " · ", "name_separator": ", ",
           "event_development": "новое развитие события из вашего прошлого выпуска"},
    "ar": {"since": "منذ أمس: {what}", "new_articles": "مقالات جديدة: {n}", "new_outlets": "مصادر جديدة: {names}",
           "new_event_stories": "أخبار جديدة عن الحدث: {n}", "separator": " · ", "name_separator": "، ",
           "event_development": "تطور جديد في حدث من إصدارك السابق"},
    "hi": {"since": "कल से: {what}", "new_articles": "नए लेख: {n}", "new_outlets": "नए स्रोत: {names}",
           "new_event_stories": "घटना की नई खबरें: {n}", "separator": " · ", "name_separator": ", ",
           "event_development": "आपके पिछले संस्करण की एक घटना में नया मोड़"},
    "zh": {"since": "自昨日以来：{what}", "new_articles": "新文章：{n}", "new_outlets": "新媒体：{names}",
           "new_event_stories": "事件新进展：{n}", "separator": " · ", "name_separator": "、",
           "event_development": "您上一期中某一事件的新进展"},
    "ja": {"since": "昨日から：{what}", "new_articles": "新しい記事：{n}", "new_outlets": "新しい報道機関：{names}",
           "new_event_stories": "この出来事の新しいニュース：{n}", "separator": " · ", "name_separator": "、",
           "event_development": "前回の号で伝えた出来事の新しい展開"},
    "ko": {"since": "어제 이후: {what}", "new_articles": "새 기사: {n}", "new_outlets": "새 언론사: {names}",
           "new_event_stories": "사건의 새 소식: {n}", "separator": " · ", "name_separator": ", ",
           "event_development": "지난 호에 실린 사건의 새 전개"},
}
OUTLETS_NAMED = 3      # at most this many new outlets by name, then their number


@dataclass(frozen=True)
class StoryNews:
    """What a story gained since the reader's previous edition."""

    new_articles: int = 0
    new_outlets: tuple[str, ...] = ()
    new_event_stories: int = 0

    @property
    def anything(self) -> bool:
        return bool(self.new_articles or self.new_outlets or self.new_event_stories)


def since_line(news: StoryNews, lang: str) -> str:
    labels = {**UPDATE_LABELS["en"], **UPDATE_LABELS.get(lang.split("-")[0], {})}
    parts = []
    if news.new_articles:
        parts.append(labels["new_articles"].format(n=news.new_articles))
    if news.new_outlets:
        names = [clean_line(n) for n in news.new_outlets[:OUTLETS_NAMED]]
        more = len(news.new_outlets) - len(names)
        parts.append(labels["new_outlets"].format(names=labels["name_separator"].join(names) + (f" +{more}" if more else "")))
    if news.new_event_stories:
        parts.append(labels["new_event_stories"].format(n=news.new_event_stories))
    return labels["since"].format(what=labels["separator"].join(parts))


def mark_updates(view: DigestView, updates: DigestView | None, news: dict[str, StoryNews],
                 previous_events: set[str] | frozenset[str] = frozenset()) -> DigestView:
    """`view` (the day's new stories) followed by `updates` (the stories the previous edition carried,
    built the same way), each update marked with what it gained (`news`) or left out when nothing;
    a new story of an event in `previous_events` marked as that event's development. Ranks numbered
    again."""
    labels = {**UPDATE_LABELS["en"], **UPDATE_LABELS.get(view.lang.split("-")[0], {})}
    shown = {s.story_id for s in view.stories}
    for story in view.stories:
        if story.event is not None and story.event.event_id in previous_events:
            story.since = labels["since"].format(what=labels["event_development"])
    for story in (updates.stories if updates else []):
        gained = news.get(story.story_id, StoryNews())
        if story.story_id in shown or not gained.anything:
            continue
        story.since = since_line(gained, view.lang)
        view.stories.append(story)
    for rank, story in enumerate(view.stories, start=1):
        story.rank = rank
    return view
