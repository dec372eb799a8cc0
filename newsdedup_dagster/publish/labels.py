"""Interface strings of the published site and feeds, per language. Shared words (sources,
event, narrative sections, "original headline") come from the digest's labels; these are the
site's own. Unknown languages fall back to English. Values are plain text (templates escape)."""

from __future__ import annotations

from ..digest.labels import labels_for as digest_labels_for
from ..digest.labels import text_direction

__all__ = ["labels_for", "text_direction"]

SITE_LABELS: dict[str, dict[str, str]] = {
    "en": {
        "feed_title": "{site}: top stories ({lang})", "feed_subtitle": "Deduplicated stories from many outlets, one entry per story",
        "today": "Stories of {date}", "significance": "Significance {value}/10", "languages": "Languages",
        "source_count": "Sources: {n}", "article_count": "Articles: {n}", "all_sources": "All sources",
        "event_page": "Event", "event_stories": "Stories in this event", "first_seen": "First reported",
        "last_update": "Last update", "other_langs": "In other languages", "subscribe": "Subscribe",
        "home": "All languages", "read_more": "Story page", "updated_at": "Updated {stamp}",
        "no_stories": "No stories yet.",
    },
    "fr": {
        "feed_title": "{site} : les sujets du moment ({lang})", "feed_subtitle": "Sujets dédupliqués de nombreux médias, une entrée par sujet",
        "today": "Sujets du {date}", "significance": "Importance {value}/10", "languages": "Langues",
        "source_count": "Sources : {n}", "article_count": "Articles : {n}", "all_sources": "Toutes les sources",
        "event_page": "Événement", "event_stories": "Sujets de cet événement", "first_seen": "Premier article",
        "last_update": "Dernière mise à jour", "other_langs": "Dans d'autres langues", "subscribe": "S'abonner",
        "home": "Toutes les langues", "read_more": "Page du sujet", "updated_at": "Mis à jour {stamp}",
        "no_stories": "Aucun sujet pour l'instant.",
    },
    "de": {
        "feed_title": "{site}: Top-Meldungen ({lang})", "feed_subtitle": "Deduplizierte Meldungen vieler Medien, ein Eintrag pro Meldung",
        "today": "Meldungen vom {date}", "significance": "Bedeutung {value}/10", "languages": "Sprachen",
        "source_count": "Quellen: {n}", "article_count": "Artikel: {n}", "all_sources": "Alle Quellen",
        "event_page": "Ereignis", "event_stories": "Meldungen zu diesem Ereignis", "first_seen": "Zuerst gemeldet",
        "last_update": "Letzte Aktualisierung", "other_langs": "In anderen Sprachen", "subscribe": "Abonnieren",
        "home": "Alle Sprachen", "read_more": "Meldungsseite", "updated_at": "Aktualisiert {stamp}",
        "no_stories": "Noch keine Meldungen.",
    },
    "es": {
        "feed_title": "{site}: noticias destacadas ({lang})", "feed_subtitle": "Noticias deduplicadas de muchos medios, una entrada por noticia",
        "today": "Noticias del {date}", "significance": "Relevancia {value}/10", "languages": "Idiomas",
        "source_count": "Fuentes: {n}", "article_count": "Artículos: {n}", "all_sources": "Todas las fuentes",
        "event_page": "Acontecimiento", "event_stories": "Noticias de este acontecimiento", "first_seen": "Primera noticia",
        "last_update": "Última actualización", "other_langs": "En otros idiomas", "subscribe": "Suscribirse",
        "home": "Todos los idiomas", "read_more": "Página de la noticia", "updated_at": "Actualizado {stamp}",
        "no_stories": "Aún no hay noticias.",
    },
    "zh": {
        "feed_title": "{site}：要闻（{lang}）", "feed_subtitle": "来自众多媒体的去重新闻，每条新闻一个条目",
        "today": "{date} 的新闻", "significance": "重要性 {value}/10", "languages": "语言",
        "source_count": "{n} 个来源", "article_count": "{n} 篇文章", "all_sources": "全部来源",
        "event_page": "事件", "event_stories": "该事件的报道", "first_seen": "首次报道",
        "last_update": "最后更新", "other_langs": "其他语言", "subscribe": "订阅",
        "home": "所有语言", "read_more": "新闻页面", "updated_at": "更新于 {stamp}", "no_stories": "暂无新闻。",
    },
    "ja": {
        "feed_title": "{site}: 主要ニュース（{lang}）", "feed_subtitle": "多数の媒体から重複を除いたニュース、1件につき1エントリ",
        "today": "{date} のニュース", "significance": "重要度 {value}/10", "languages": "言語",
        "source_count": "{n} 件の情報源", "article_count": "{n} 件の記事", "all_sources": "すべての情報源",
        "event_page": "出来事", "event_stories": "この出来事のニュース", "first_seen": "最初の報道",
        "last_update": "最終更新", "other_langs": "他の言語", "subscribe": "購読",
        "home": "すべての言語", "read_more": "ニュースのページ", "updated_at": "{stamp} 更新", "no_stories": "まだニュースはありません。",
    },
}


def labels_for(lang: str) -> dict[str, str]:
    """Digest labels + site labels for `lang` (English for whatever is missing)."""
    return {**digest_labels_for(lang), **SITE_LABELS["en"], **SITE_LABELS.get(lang, {})}
