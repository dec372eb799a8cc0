"""Interface strings of the published site and feeds, per language. Shared words (sources,
event, narrative sections, "headline in ...", plural forms of stories and days) come from the
digest's labels; these are the site's own. Every published language by default (the pivot and
the ten translation languages) has all of them (`tests/test_publish_languages.py`); another
language falls back to English. Counting labels are dicts of CLDR plural forms
(`digest.labels.count`). Values are plain text (templates escape)."""

from __future__ import annotations

from ..digest.labels import labels_for as digest_labels_for, text_direction

__all__ = ["SITE_LABELS", "SITE_LANGS", "TOPICS", "labels_for", "text_direction"]

# The topics of `publish.topics` (a story outside every event is filed under one).
TOPICS = ("politics", "economy", "conflict", "disaster", "health", "science", "sport", "culture", "general")

SITE_LABELS: dict[str, dict] = {
    "en": {
        "feed_title": "{site}: top stories", "feed_subtitle": "Deduplicated stories from many outlets, one entry per story",
        "today": "Stories of {date}", "significance": "Significance {value}/10", "languages": "Languages",
        "source_count": {"one": "{n} source", "other": "{n} sources"},
        "article_count": {"one": "{n} article", "other": "{n} articles"}, "all_sources": "All sources",
        "event_page": "Event", "event_stories": "Stories in this event", "first_seen": "First reported",
        "last_update": "Last update", "other_langs": "In other languages", "subscribe": "Subscribe",
        "home": "All languages", "read_more": "Story page", "updated_at": "Updated {stamp}",
        "no_stories": "No stories yet.", "topic": "Topic",
        "topic_politics": "Politics", "topic_economy": "Economy", "topic_conflict": "Conflict",
        "topic_disaster": "Disasters", "topic_health": "Health", "topic_science": "Science and technology",
        "topic_sport": "Sport", "topic_culture": "Culture", "topic_general": "General news",
    },
    "fr": {
        "feed_title": "{site} : les sujets du moment", "feed_subtitle": "Sujets dédupliqués de nombreux médias, une entrée par sujet",
        "today": "Sujets du {date}", "significance": "Importance {value}/10", "languages": "Langues",
        "source_count": {"one": "{n} source", "many": "{n} de sources", "other": "{n} sources"},
        "article_count": {"one": "{n} article", "many": "{n} d'articles", "other": "{n} articles"},
        "all_sources": "Toutes les sources",
        "event_page": "Événement", "event_stories": "Sujets de cet événement", "first_seen": "Premier article",
        "last_update": "Dernière mise à jour", "other_langs": "Dans d'autres langues", "subscribe": "S'abonner",
        "home": "Toutes les langues", "read_more": "Page du sujet", "updated_at": "Mis à jour le {stamp}",
        "no_stories": "Aucun sujet pour l'instant.", "topic": "Thème",
        "topic_politics": "Politique", "topic_economy": "Économie", "topic_conflict": "Conflits",
        "topic_disaster": "Catastrophes", "topic_health": "Santé", "topic_science": "Sciences et technologies",
        "topic_sport": "Sport", "topic_culture": "Culture", "topic_general": "Actualité générale",
    },
    "de": {
        "feed_title": "{site}: Top-Meldungen", "feed_subtitle": "Deduplizierte Meldungen vieler Medien, ein Eintrag pro Meldung",
        "today": "Meldungen vom {date}", "significance": "Bedeutung {value}/10", "languages": "Sprachen",
        "source_count": {"one": "{n} Quelle", "other": "{n} Quellen"},
        "article_count": {"one": "{n} Artikel", "other": "{n} Artikel"}, "all_sources": "Alle Quellen",
        "event_page": "Ereignis", "event_stories": "Meldungen zu diesem Ereignis", "first_seen": "Zuerst gemeldet",
        "last_update": "Letzte Aktualisierung", "other_langs": "In anderen Sprachen", "subscribe": "Abonnieren",
        "home": "Alle Sprachen", "read_more": "Meldungsseite", "updated_at": "Aktualisiert am {stamp}",
        "no_stories": "Noch keine Meldungen.", "topic": "Thema",
        "topic_politics": "Politik", "topic_economy": "Wirtschaft", "topic_conflict": "Konflikte",
        "topic_disaster": "Katastrophen", "topic_health": "Gesundheit", "topic_science": "Wissenschaft und Technik",
        "topic_sport": "Sport", "topic_culture": "Kultur", "topic_general": "Allgemeines",
    },
    "es": {
        "feed_title": "{site}: noticias destacadas", "feed_subtitle": "Noticias deduplicadas de muchos medios, una entrada por noticia",
        "today": "Noticias del {date}", "significance": "Relevancia {value}/10", "languages": "Idiomas",
        "source_count": {"one": "{n} fuente", "many": "{n} de fuentes", "other": "{n} fuentes"},
        "article_count": {"one": "{n} artículo", "many": "{n} de artículos", "other": "{n} artículos"},
        "all_sources": "Todas las fuentes",
        "event_page": "Acontecimiento", "event_stories": "Noticias de este acontecimiento", "first_seen": "Primera noticia",
        "last_update": "Última actualización", "other_langs": "En otros idiomas", "subscribe": "Suscribirse",
        "home": "Todos los idiomas", "read_more": "Página de la noticia", "updated_at": "Actualizado el {stamp}",
        "no_stories": "Aún no hay noticias.", "topic": "Tema",
        "topic_politics": "Política", "topic_economy": "Economía", "topic_conflict": "Conflictos",
        "topic_disaster": "Catástrofes", "topic_health": "Salud", "topic_science": "Ciencia y tecnología",
        "topic_sport": "Deportes", "topic_culture": "Cultura", "topic_general": "Actualidad",
    },
    "pt": {
        "feed_title": "{site}: principais notícias", "feed_subtitle": "Notícias sem duplicados de muitos veículos, uma entrada por notícia",
        "today": "Notícias de {date}", "significance": "Relevância {value}/10", "languages": "Idiomas",
        "source_count": {"one": "{n} fonte", "many": "{n} de fontes", "other": "{n} fontes"},
        "article_count": {"one": "{n} artigo", "many": "{n} de artigos", "other": "{n} artigos"},
        "all_sources": "Todas as fontes",
        "event_page": "Acontecimento", "event_stories": "Notícias deste acontecimento", "first_seen": "Primeira notícia",
        "last_update": "Última atualização", "other_langs": "Em outros idiomas", "subscribe": "Assinar",
        "home": "Todos os idiomas", "read_more": "Página da notícia", "updated_at": "Atualizado em {stamp}",
        "no_stories": "Ainda não há notícias.", "topic": "Tema",
        "topic_politics": "Política", "topic_economy": "Economia", "topic_conflict": "Conflitos",
        "topic_disaster": "Desastres", "topic_health": "Saúde", "topic_science": "Ciência e tecnologia",
        "topic_sport": "Esportes", "topic_culture": "Cultura", "topic_general": "Geral",
    },
    "ru": {
        "feed_title": "{site}: главные новости", "feed_subtitle": "Новости многих изданий без повторов, одна запись на сюжет",
        "today": "Новости за {date}", "significance": "Значимость {value}/10", "languages": "Языки",
        "source_count": {"one": "{n} источник", "few": "{n} источника", "many": "{n} источников", "other": "{n} источника"},
        "article_count": {"one": "{n} статья", "few": "{n} статьи", "many": "{n} статей", "other": "{n} статьи"},
        "all_sources": "Все источники",
        "event_page": "Событие", "event_stories": "Сюжеты этого события", "first_seen": "Первое сообщение",
        "last_update": "Последнее обновление", "other_langs": "На других языках", "subscribe": "Подписаться",
        "home": "Все языки", "read_more": "Страница сюжета", "updated_at": "Обновлено {stamp}",
        "no_stories": "Новостей пока нет.", "topic": "Рубрика",
        "topic_politics": "Политика", "topic_economy": "Экономика", "topic_conflict": "Конфликты",
        "topic_disaster": "Катастрофы", "topic_health": "Здоровье", "topic_science": "Наука и технологии",
        "topic_sport": "Спорт", "topic_culture": "Культура", "topic_general": "Общие новости",
    },
    "ar": {
        "feed_title": "{site}: أهم الأخبار", "feed_subtitle": "أخبار من وسائل إعلام كثيرة دون تكرار، مدخل واحد لكل خبر",
        "today": "أخبار {date}", "significance": "الأهمية {value}/10", "languages": "اللغات",
        "source_count": {"zero": "لا مصادر", "one": "مصدر واحد", "two": "مصدران", "few": "{n} مصادر",
                         "many": "{n} مصدرًا", "other": "{n} مصدر"},
        "article_count": {"zero": "لا مقالات", "one": "مقال واحد", "two": "مقالان", "few": "{n} مقالات",
                          "many": "{n} مقالًا", "other": "{n} مقال"},
        "all_sources": "جميع المصادر",
        "event_page": "حدث", "event_stories": "أخبار هذا الحدث", "first_seen": "أول خبر",
        "last_update": "آخر تحديث", "other_langs": "بلغات أخرى", "subscribe": "اشترك",
        "home": "جميع اللغات", "read_more": "صفحة الخبر", "updated_at": "آخر تحديث {stamp}",
        "no_stories": "لا توجد أخبار بعد.", "topic": "الموضوع",
        "topic_politics": "سياسة", "topic_economy": "اقتصاد", "topic_conflict": "نزاعات",
        "topic_disaster": "كوارث", "topic_health": "صحة", "topic_science": "علوم وتكنولوجيا",
        "topic_sport": "رياضة", "topic_culture": "ثقافة", "topic_general": "أخبار عامة",
    },
    "hi": {
        "feed_title": "{site}: प्रमुख खबरें", "feed_subtitle": "अनेक समाचार माध्यमों की खबरें बिना दोहराव के, हर खबर की एक प्रविष्टि",
        "today": "{date} की खबरें", "significance": "महत्व {value}/10", "languages": "भाषाएँ",
        "source_count": {"one": "{n} स्रोत", "other": "{n} स्रोत"},
        "article_count": {"one": "{n} लेख", "other": "{n} लेख"}, "all_sources": "सभी स्रोत",
        "event_page": "घटना", "event_stories": "इस घटना की खबरें", "first_seen": "पहली खबर",
        "last_update": "अंतिम अपडेट", "other_langs": "अन्य भाषाओं में", "subscribe": "सदस्यता लें",
        "home": "सभी भाषाएँ", "read_more": "खबर का पेज", "updated_at": "{stamp} को अपडेट किया गया",
        "no_stories": "अभी कोई खबर नहीं।", "topic": "विषय",
        "topic_politics": "राजनीति", "topic_economy": "अर्थव्यवस्था", "topic_conflict": "संघर्ष",
        "topic_disaster": "आपदाएँ", "topic_health": "स्वास्थ्य", "topic_science": "विज्ञान और प्रौद्योगिकी",
        "topic_sport": "खेल", "topic_culture": "संस्कृति", "topic_general": "सामान्य समाचार",
    },
    "zh": {
        "feed_title": "{site}：要闻", "feed_subtitle": "来自众多媒体的去重新闻，每条新闻一个条目",
        "today": "{date}的新闻", "significance": "重要性 {value}/10", "languages": "语言",
        "source_count": {"other": "{n}个来源"}, "article_count": {"other": "{n}篇文章"}, "all_sources": "全部来源",
        "event_page": "事件", "event_stories": "该事件的报道", "first_seen": "首次报道",
        "last_update": "最后更新", "other_langs": "其他语言", "subscribe": "订阅",
        "home": "所有语言", "read_more": "新闻页面", "updated_at": "更新于 {stamp}", "no_stories": "暂无新闻。",
        "topic": "主题", "topic_politics": "政治", "topic_economy": "经济", "topic_conflict": "冲突",
        "topic_disaster": "灾害", "topic_health": "健康", "topic_science": "科技", "topic_sport": "体育",
        "topic_culture": "文化", "topic_general": "综合新闻",
    },
    "ja": {
        "feed_title": "{site}：主要ニュース", "feed_subtitle": "多数の媒体から重複を除いたニュース、1件につき1エントリ",
        "today": "{date}のニュース", "significance": "重要度 {value}/10", "languages": "言語",
        "source_count": {"other": "情報源{n}件"}, "article_count": {"other": "記事{n}件"}, "all_sources": "すべての情報源",
        "event_page": "出来事", "event_stories": "この出来事のニュース", "first_seen": "最初の報道",
        "last_update": "最終更新", "other_langs": "他の言語", "subscribe": "購読",
        "home": "すべての言語", "read_more": "ニュースのページ", "updated_at": "{stamp} 更新", "no_stories": "まだニュースはありません。",
        "topic": "分野", "topic_politics": "政治", "topic_economy": "経済", "topic_conflict": "紛争",
        "topic_disaster": "災害", "topic_health": "健康", "topic_science": "科学・技術", "topic_sport": "スポーツ",
        "topic_culture": "文化", "topic_general": "総合",
    },
    "ko": {
        "feed_title": "{site}: 주요 뉴스", "feed_subtitle": "여러 언론사의 뉴스를 중복 없이, 뉴스마다 항목 하나",
        "today": "{date} 뉴스", "significance": "중요도 {value}/10", "languages": "언어",
        "source_count": {"other": "출처 {n}곳"}, "article_count": {"other": "기사 {n}건"}, "all_sources": "모든 출처",
        "event_page": "사건", "event_stories": "이 사건의 뉴스", "first_seen": "첫 보도",
        "last_update": "마지막 업데이트", "other_langs": "다른 언어로", "subscribe": "구독",
        "home": "모든 언어", "read_more": "뉴스 페이지", "updated_at": "{stamp} 업데이트", "no_stories": "아직 뉴스가 없습니다.",
        "topic": "분야", "topic_politics": "정치", "topic_economy": "경제", "topic_conflict": "분쟁",
        "topic_disaster": "재난", "topic_health": "건강", "topic_science": "과학·기술", "topic_sport": "스포츠",
        "topic_culture": "문화", "topic_general": "종합",
    },
}

# The languages with every site label: the default published languages.
SITE_LANGS = tuple(SITE_LABELS)


def labels_for(lang: str) -> dict:
    """Digest labels + site labels for `lang` (English for whatever is missing)."""
    return {**digest_labels_for(lang), **SITE_LABELS["en"], **SITE_LABELS.get(lang.split("-")[0], {})}
