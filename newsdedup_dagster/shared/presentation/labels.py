"""Interface strings of the reader site, its archive and country pages, and the digest email: one
table per language (the 16 narrative languages; the site's own labels in SITE_LANGS), and the
locale helpers the digest and the site share: CLDR plural categories, numbers, dates
and language names through Babel (http://cldr.unicode.org/), text direction.

A label is plain text with `{name}` fields filled by the renderer, or, when it counts something,
a dict from CLDR plural category ("zero", "one", "two", "few", "many", "other") to such a text;
`count(lang, label, n)` picks the form CLDR's rule for `lang` gives `n` ("1 day" / "3 days",
Arabic "يوم واحد" / "يومان" / "3 أيام" / "11 يومًا"). Unknown languages fall back to English.
Values are plain text (the HTML templates escape them). `untranslated` is the note every text
shown in another language than the reader's carries, on the site and in the mail ("in English,
no translation yet"; `{lang}` is one language's name or a list of them, written by Babel)."""

from __future__ import annotations

from datetime import UTC, date, datetime
from functools import lru_cache

from babel import Locale, UnknownLocaleError
from babel.dates import format_date, format_skeleton
from babel.numbers import format_decimal

__all__ = ["LABELS", "KEYS", "PLURAL_KEYS", "RTL_LANGS", "SITE_LANGS", "labels_for", "text_direction", "locale_of", "plural_category",
           "count", "number", "decimal", "long_date", "date_time", "language_name", "own_name", "event_span"]

RTL_LANGS = frozenset({"ar", "fa", "he", "ur", "ckb"})

KEYS = ("subject", "title", "top_stories", "sources", "more_sources", "event", "event_span", "story_count",
        "day_count", "what_happened", "background", "how_it_developed", "what_to_watch", "original", "offline_note",
        "footer", "empty", "unsubscribe", "key_points", "briefing_note", "perspectives", "untranslated")
# Labels that count something: a form per CLDR plural category of the language.
PLURAL_KEYS = frozenset({"more_sources", "story_count", "day_count"})

LABELS: dict[str, dict] = {
    "en": {
        "subject": "News digest {date}", "title": "Daily news digest", "top_stories": "Top stories of {date}",
        "sources": "Sources", "more_sources": {"one": "and {n} more", "other": "and {n} more"},
        "event": "Part of an ongoing event", "event_span": "{stories} over {days}",
        "story_count": {"one": "{n} story", "other": "{n} stories"}, "day_count": {"one": "{n} day", "other": "{n} days"},
        "what_happened": "What happened", "background": "Background", "how_it_developed": "How it developed",
        "what_to_watch": "What to watch", "original": "headline in {lang}, no translation yet",
        "offline_note": "Automatic extractive summary (no language model configured)",
        "footer": "You receive this digest because you subscribed to newsdedup.", "empty": "No stories for this day.",
        "unsubscribe": "Unsubscribe", "key_points": "Key points", "briefing_note": "taken from the articles, no model",
        "perspectives": "Perspectives", "untranslated": "in {lang}, no translation yet", "feed_title": "{site}: top stories",
        "feed_subtitle": "Deduplicated stories from many outlets, one entry per story", "today": "Stories of {date}",
        "significance": "Significance {value}/10", "languages": "Languages",
        "source_count": {"one": "{n} source", "other": "{n} sources"},
        "article_count": {"one": "{n} article", "other": "{n} articles"}, "all_sources": "All sources", "event_page": "Event",
        "event_stories": "Stories in this event", "first_seen": "First reported", "last_update": "Last update",
        "other_langs": "In other languages", "subscribe": "Subscribe", "home": "All languages", "read_more": "Story page",
        "updated_at": "Updated {stamp}", "no_stories": "No stories yet.", "not_scored": "Significance: not scored",
        "briefing": "Briefing", "quotes": "Quotes", "category": "Category", "categories": "Categories",
        "all_stories": "All stories",
        "extractive_note": "Taken from the articles' own sentences and quotations (no model wrote them).",
        "players": "People and organisations", "places": "Places", "name_separator": ", ",
        "perspectives_note": "What one country's outlets stress and other countries' outlets leave out.",
        "background_note": "Earlier stories of this event, as first reported.", "archive": "Archive",
        "previous_day": "Previous day", "next_day": "Next day", "previous_month": "Previous month", "next_month": "Next month",
        "countries": "Countries",
    },
    "zh": {
        "subject": "新闻摘要 {date}", "title": "每日新闻摘要", "top_stories": "{date} 要闻", "sources": "来源",
        "more_sources": {"other": "及另外{n}个"}, "event": "持续事件的一部分", "event_span": "{days}内{stories}",
        "story_count": {"other": "{n}篇报道"}, "day_count": {"other": "{n}天"}, "what_happened": "发生了什么", "background": "背景",
        "how_it_developed": "事态发展", "what_to_watch": "后续关注", "original": "{lang}标题，暂无译文", "offline_note": "自动摘录摘要（未配置语言模型）",
        "footer": "您收到此摘要是因为您订阅了 newsdedup。", "empty": "当天没有新闻。", "unsubscribe": "退订", "key_points": "要点",
        "briefing_note": "摘自文章本身，非模型撰写", "perspectives": "不同视角", "untranslated": "{lang}原文，暂无译文", "feed_title": "{site}：要闻",
        "feed_subtitle": "来自众多媒体的去重新闻，每条新闻一个条目", "today": "{date}的新闻", "significance": "重要性 {value}/10", "languages": "语言",
        "source_count": {"other": "{n}个来源"}, "article_count": {"other": "{n}篇文章"}, "all_sources": "全部来源", "event_page": "事件",
        "event_stories": "该事件的报道", "first_seen": "首次报道", "last_update": "最后更新", "other_langs": "其他语言", "subscribe": "订阅",
        "home": "所有语言", "read_more": "新闻页面", "updated_at": "更新于 {stamp}", "no_stories": "暂无新闻。", "not_scored": "重要性：未评分",
        "briefing": "简报", "quotes": "引语", "category": "类别", "categories": "类别", "all_stories": "全部新闻",
        "extractive_note": "句子和引语均摘自文章本身（并非由模型撰写）。", "players": "人物与机构", "places": "地点", "name_separator": "、",
        "perspectives_note": "某一国家的媒体所强调、而其他国家媒体未提及的内容。", "background_note": "此事件此前的报道，按发布时的内容。", "archive": "往期存档",
        "previous_day": "前一天", "next_day": "后一天", "previous_month": "上个月", "next_month": "下个月", "countries": "国家和地区",
    },
    "ja": {
        "subject": "ニュースダイジェスト {date}", "title": "デイリーニュースダイジェスト", "top_stories": "{date} の主要ニュース", "sources": "情報源",
        "more_sources": {"other": "ほか{n}件"}, "event": "継続中の出来事の一部", "event_span": "{days}で{stories}",
        "story_count": {"other": "{n}件の記事"}, "day_count": {"other": "{n}日間"}, "what_happened": "何が起きたか", "background": "背景",
        "how_it_developed": "経緯", "what_to_watch": "今後の注目点", "original": "{lang}の見出し、翻訳はまだありません",
        "offline_note": "自動抽出による要約（言語モデル未設定）", "footer": "newsdedup に登録されているため、このダイジェストをお送りしています。", "empty": "この日のニュースはありません。",
        "unsubscribe": "配信停止", "key_points": "要点", "briefing_note": "記事そのものから抜粋（モデル不使用）", "perspectives": "報道の視点",
        "untranslated": "{lang}の原文、翻訳はまだありません", "feed_title": "{site}：主要ニュース", "feed_subtitle": "多数の媒体から重複を除いたニュース、1件につき1エントリ",
        "today": "{date}のニュース", "significance": "重要度 {value}/10", "languages": "言語", "source_count": {"other": "情報源{n}件"},
        "article_count": {"other": "記事{n}件"}, "all_sources": "すべての情報源", "event_page": "出来事", "event_stories": "この出来事のニュース",
        "first_seen": "最初の報道", "last_update": "最終更新", "other_langs": "他の言語", "subscribe": "購読", "home": "すべての言語",
        "read_more": "ニュースのページ", "updated_at": "{stamp} 更新", "no_stories": "まだニュースはありません。", "not_scored": "重要度：未評価",
        "briefing": "ブリーフィング", "quotes": "発言", "category": "カテゴリー", "categories": "カテゴリー", "all_stories": "すべてのニュース",
        "extractive_note": "記事そのものの文と引用から作成（モデルによる文章ではありません）。", "players": "人物・組織", "places": "場所", "name_separator": "、",
        "perspectives_note": "ある国の報道機関が強調し、他国の報道機関は伝えていない点。", "background_note": "この出来事に関する以前のニュース（公開時のまま）。", "archive": "アーカイブ",
        "previous_day": "前の日", "next_day": "次の日", "previous_month": "前の月", "next_month": "次の月", "countries": "国・地域",
    },
    "ko": {
        "subject": "뉴스 다이제스트 {date}", "title": "오늘의 뉴스 다이제스트", "top_stories": "{date} 주요 뉴스", "sources": "출처",
        "more_sources": {"other": "외 {n}곳"}, "event": "진행 중인 사건의 일부", "event_span": "{days} 동안 {stories}",
        "story_count": {"other": "기사 {n}건"}, "day_count": {"other": "{n}일"}, "what_happened": "무슨 일이 있었나", "background": "배경",
        "how_it_developed": "전개 과정", "what_to_watch": "주목할 점", "original": "{lang} 제목, 아직 번역 없음",
        "offline_note": "자동 발췌 요약(언어 모델 미설정)", "footer": "newsdedup을 구독하셨기 때문에 이 다이제스트를 받으셨습니다.", "empty": "이 날의 뉴스가 없습니다.",
        "unsubscribe": "구독 취소", "key_points": "핵심 내용", "briefing_note": "기사에서 발췌, 모델 미사용", "perspectives": "보도 관점",
        "untranslated": "{lang} 원문, 아직 번역되지 않음", "feed_title": "{site}: 주요 뉴스", "feed_subtitle": "여러 언론사의 뉴스를 중복 없이, 뉴스마다 항목 하나",
        "today": "{date} 뉴스", "significance": "중요도 {value}/10", "languages": "언어", "source_count": {"other": "출처 {n}곳"},
        "article_count": {"other": "기사 {n}건"}, "all_sources": "모든 출처", "event_page": "사건", "event_stories": "이 사건의 뉴스",
        "first_seen": "첫 보도", "last_update": "마지막 업데이트", "other_langs": "다른 언어로", "subscribe": "구독", "home": "모든 언어",
        "read_more": "뉴스 페이지", "updated_at": "{stamp} 업데이트", "no_stories": "아직 뉴스가 없습니다.", "not_scored": "중요도: 평가 없음",
        "briefing": "브리핑", "quotes": "인용", "category": "분류", "categories": "분류", "all_stories": "모든 뉴스",
        "extractive_note": "기사 자체의 문장과 인용으로 구성(모델이 작성하지 않음).", "players": "인물 및 기관", "places": "장소", "name_separator": ", ",
        "perspectives_note": "한 나라의 언론이 강조하고 다른 나라 언론은 다루지 않은 내용.", "background_note": "이 사건에 관한 이전 뉴스(게시된 그대로).",
        "archive": "지난 뉴스", "previous_day": "이전 날", "next_day": "다음 날", "previous_month": "이전 달", "next_month": "다음 달",
        "countries": "국가",
    },
    "fr": {
        "subject": "Revue de presse {date}", "title": "Revue de presse quotidienne", "top_stories": "L'essentiel du {date}",
        "sources": "Sources", "more_sources": {"one": "et {n} autre", "many": "et {n} d'autres", "other": "et {n} autres"},
        "event": "Fait partie d'un événement en cours", "event_span": "{stories} sur {days}",
        "story_count": {"one": "{n} article", "many": "{n} d'articles", "other": "{n} articles"},
        "day_count": {"one": "{n} jour", "many": "{n} de jours", "other": "{n} jours"}, "what_happened": "Ce qui s'est passé",
        "background": "Contexte", "how_it_developed": "Évolution", "what_to_watch": "À suivre",
        "original": "titre en {lang}, pas encore traduit",
        "offline_note": "Résumé extractif automatique (aucun modèle de langue configuré)",
        "footer": "Vous recevez cette revue car vous êtes abonné à newsdedup.", "empty": "Aucun article ce jour-là.",
        "unsubscribe": "Se désabonner", "key_points": "Points clés", "briefing_note": "repris des articles, sans modèle",
        "perspectives": "Points de vue", "untranslated": "en {lang}, pas encore traduit",
        "feed_title": "{site} : les sujets du moment",
        "feed_subtitle": "Sujets dédupliqués de nombreux médias, une entrée par sujet", "today": "Sujets du {date}",
        "significance": "Importance {value}/10", "languages": "Langues",
        "source_count": {"one": "{n} source", "many": "{n} de sources", "other": "{n} sources"},
        "article_count": {"one": "{n} article", "many": "{n} d'articles", "other": "{n} articles"},
        "all_sources": "Toutes les sources", "event_page": "Événement", "event_stories": "Sujets de cet événement",
        "first_seen": "Premier article", "last_update": "Dernière mise à jour", "other_langs": "Dans d'autres langues",
        "subscribe": "S'abonner", "home": "Toutes les langues", "read_more": "Page du sujet",
        "updated_at": "Mis à jour le {stamp}", "no_stories": "Aucun sujet pour l'instant.",
        "not_scored": "Importance : non évaluée", "briefing": "L'essentiel", "quotes": "Citations", "category": "Catégorie",
        "categories": "Catégories", "all_stories": "Tous les sujets",
        "extractive_note": "Phrases et citations reprises des articles eux-mêmes (aucun modèle ne les a écrites).",
        "players": "Personnes et organisations", "places": "Lieux", "name_separator": ", ",
        "perspectives_note": "Ce que les médias d'un pays mettent en avant et ceux des autres pays non.",
        "background_note": "Sujets antérieurs de cet événement, tels que publiés.", "archive": "Archives",
        "previous_day": "Jour précédent", "next_day": "Jour suivant", "previous_month": "Mois précédent",
        "next_month": "Mois suivant", "countries": "Pays",
    },
    "de": {
        "subject": "Nachrichtenüberblick {date}", "title": "Täglicher Nachrichtenüberblick",
        "top_stories": "Top-Meldungen vom {date}", "sources": "Quellen",
        "more_sources": {"one": "und {n} weitere", "other": "und {n} weitere"}, "event": "Teil eines laufenden Ereignisses",
        "event_span": "{stories} in {days}", "story_count": {"one": "{n} Meldung", "other": "{n} Meldungen"},
        "day_count": {"one": "{n} Tag", "other": "{n} Tagen"}, "what_happened": "Was geschah", "background": "Hintergrund",
        "how_it_developed": "Verlauf", "what_to_watch": "Worauf zu achten ist",
        "original": "Schlagzeile auf {lang}, noch nicht übersetzt",
        "offline_note": "Automatische extraktive Zusammenfassung (kein Sprachmodell konfiguriert)",
        "footer": "Sie erhalten diesen Überblick, weil Sie newsdedup abonniert haben.", "empty": "Keine Meldungen an diesem Tag.",
        "unsubscribe": "Abbestellen", "key_points": "Kernpunkte", "briefing_note": "aus den Artikeln übernommen, ohne Modell",
        "perspectives": "Sichtweisen", "untranslated": "auf {lang}, noch nicht übersetzt", "feed_title": "{site}: Top-Meldungen",
        "feed_subtitle": "Deduplizierte Meldungen vieler Medien, ein Eintrag pro Meldung", "today": "Meldungen vom {date}",
        "significance": "Bedeutung {value}/10", "languages": "Sprachen",
        "source_count": {"one": "{n} Quelle", "other": "{n} Quellen"},
        "article_count": {"one": "{n} Artikel", "other": "{n} Artikel"}, "all_sources": "Alle Quellen", "event_page": "Ereignis",
        "event_stories": "Meldungen zu diesem Ereignis", "first_seen": "Zuerst gemeldet", "last_update": "Letzte Aktualisierung",
        "other_langs": "In anderen Sprachen", "subscribe": "Abonnieren", "home": "Alle Sprachen", "read_more": "Meldungsseite",
        "updated_at": "Aktualisiert am {stamp}", "no_stories": "Noch keine Meldungen.", "not_scored": "Bedeutung: nicht bewertet",
        "briefing": "Überblick", "quotes": "Zitate", "category": "Kategorie", "categories": "Kategorien",
        "all_stories": "Alle Meldungen",
        "extractive_note": "Sätze und Zitate aus den Artikeln selbst (von keinem Modell geschrieben).",
        "players": "Personen und Organisationen", "places": "Orte", "name_separator": ", ",
        "perspectives_note": "Was die Medien eines Landes hervorheben und die der anderen Länder nicht.",
        "background_note": "Frühere Meldungen zu diesem Ereignis, wie veröffentlicht.", "archive": "Archiv",
        "previous_day": "Vorheriger Tag", "next_day": "Nächster Tag", "previous_month": "Vorheriger Monat",
        "next_month": "Nächster Monat", "countries": "Länder",
    },
    "es": {
        "subject": "Resumen de noticias {date}", "title": "Resumen diario de noticias",
        "top_stories": "Lo más destacado del {date}", "sources": "Fuentes",
        "more_sources": {"one": "y {n} más", "many": "y {n} más", "other": "y {n} más"},
        "event": "Parte de un acontecimiento en curso", "event_span": "{stories} en {days}",
        "story_count": {"one": "{n} noticia", "many": "{n} de noticias", "other": "{n} noticias"},
        "day_count": {"one": "{n} día", "many": "{n} de días", "other": "{n} días"}, "what_happened": "Qué pasó",
        "background": "Contexto", "how_it_developed": "Cómo evolucionó", "what_to_watch": "Qué vigilar",
        "original": "titular en {lang}, aún sin traducción",
        "offline_note": "Resumen extractivo automático (sin modelo de lenguaje configurado)",
        "footer": "Recibe este resumen porque está suscrito a newsdedup.", "empty": "No hay noticias para este día.",
        "unsubscribe": "Darse de baja", "key_points": "Puntos clave", "briefing_note": "tomados de los artículos, sin modelo",
        "perspectives": "Enfoques", "untranslated": "en {lang}, aún sin traducir", "feed_title": "{site}: noticias destacadas",
        "feed_subtitle": "Noticias deduplicadas de muchos medios, una entrada por noticia", "today": "Noticias del {date}",
        "significance": "Relevancia {value}/10", "languages": "Idiomas",
        "source_count": {"one": "{n} fuente", "many": "{n} de fuentes", "other": "{n} fuentes"},
        "article_count": {"one": "{n} artículo", "many": "{n} de artículos", "other": "{n} artículos"},
        "all_sources": "Todas las fuentes", "event_page": "Acontecimiento", "event_stories": "Noticias de este acontecimiento",
        "first_seen": "Primera noticia", "last_update": "Última actualización", "other_langs": "En otros idiomas",
        "subscribe": "Suscribirse", "home": "Todos los idiomas", "read_more": "Página de la noticia",
        "updated_at": "Actualizado el {stamp}", "no_stories": "Aún no hay noticias.", "not_scored": "Relevancia: sin puntuar",
        "briefing": "Resumen", "quotes": "Citas", "category": "Categoría", "categories": "Categorías",
        "all_stories": "Todas las noticias",
        "extractive_note": "Frases y citas tomadas de los propios artículos (ningún modelo las escribió).",
        "players": "Personas y organizaciones", "places": "Lugares", "name_separator": ", ",
        "perspectives_note": "Lo que destacan los medios de un país y no los de los demás.",
        "background_note": "Noticias anteriores de este acontecimiento, tal como se publicaron.", "archive": "Archivo",
        "previous_day": "Día anterior", "next_day": "Día siguiente", "previous_month": "Mes anterior",
        "next_month": "Mes siguiente", "countries": "Países",
    },
    "pt": {
        "subject": "Resumo de notícias {date}", "title": "Resumo diário de notícias", "top_stories": "Destaques de {date}",
        "sources": "Fontes", "more_sources": {"one": "e mais {n}", "many": "e mais {n}", "other": "e mais {n}"},
        "event": "Parte de um acontecimento em curso", "event_span": "{stories} em {days}",
        "story_count": {"one": "{n} notícia", "many": "{n} de notícias", "other": "{n} notícias"},
        "day_count": {"one": "{n} dia", "many": "{n} de dias", "other": "{n} dias"}, "what_happened": "O que aconteceu",
        "background": "Contexto", "how_it_developed": "Como evoluiu", "what_to_watch": "O que acompanhar",
        "original": "título em {lang}, ainda sem tradução",
        "offline_note": "Resumo extrativo automático (nenhum modelo de linguagem configurado)",
        "footer": "Você recebe este resumo porque assinou o newsdedup.", "empty": "Sem notícias neste dia.",
        "unsubscribe": "Cancelar a assinatura", "key_points": "Pontos principais",
        "briefing_note": "tirados dos artigos, sem modelo", "perspectives": "Perspectivas",
        "untranslated": "em {lang}, ainda sem tradução", "feed_title": "{site}: principais notícias",
        "feed_subtitle": "Notícias sem duplicados de muitos veículos, uma entrada por notícia", "today": "Notícias de {date}",
        "significance": "Relevância {value}/10", "languages": "Idiomas",
        "source_count": {"one": "{n} fonte", "many": "{n} de fontes", "other": "{n} fontes"},
        "article_count": {"one": "{n} artigo", "many": "{n} de artigos", "other": "{n} artigos"},
        "all_sources": "Todas as fontes", "event_page": "Acontecimento", "event_stories": "Notícias deste acontecimento",
        "first_seen": "Primeira notícia", "last_update": "Última atualização", "other_langs": "Em outros idiomas",
        "subscribe": "Assinar", "home": "Todos os idiomas", "read_more": "Página da notícia",
        "updated_at": "Atualizado em {stamp}", "no_stories": "Ainda não há notícias.", "not_scored": "Relevância: sem pontuação",
        "briefing": "Resumo", "quotes": "Citações", "category": "Categoria", "categories": "Categorias",
        "all_stories": "Todas as notícias",
        "extractive_note": "Frases e citações tiradas dos próprios artigos (nenhum modelo as escreveu).",
        "players": "Pessoas e organizações", "places": "Lugares", "name_separator": ", ",
        "perspectives_note": "O que os veículos de um país destacam e os dos outros países não.",
        "background_note": "Notícias anteriores deste acontecimento, tal como foram publicadas.", "archive": "Arquivo",
        "previous_day": "Dia anterior", "next_day": "Dia seguinte", "previous_month": "Mês anterior",
        "next_month": "Mês seguinte", "countries": "Países",
    },
    "it": {
        "subject": "Rassegna stampa {date}", "title": "Rassegna stampa quotidiana",
        "top_stories": "Le notizie principali del {date}", "sources": "Fonti",
        "more_sources": {"one": "e un'altra", "many": "e altre {n}", "other": "e altre {n}"},
        "event": "Parte di un evento in corso", "event_span": "{stories} in {days}",
        "story_count": {"one": "{n} notizia", "many": "{n} di notizie", "other": "{n} notizie"},
        "day_count": {"one": "{n} giorno", "many": "{n} di giorni", "other": "{n} giorni"}, "what_happened": "Cosa è successo",
        "background": "Contesto", "how_it_developed": "Come si è sviluppato", "what_to_watch": "Cosa seguire",
        "original": "titolo in {lang}, non ancora tradotto",
        "offline_note": "Riassunto estrattivo automatico (nessun modello linguistico configurato)",
        "footer": "Ricevi questa rassegna perché sei iscritto a newsdedup.", "empty": "Nessuna notizia per questo giorno.",
        "unsubscribe": "Annulla l'iscrizione", "key_points": "Punti chiave",
        "briefing_note": "tratti dagli articoli, senza modello", "perspectives": "Punti di vista",
        "untranslated": "in {lang}, non ancora tradotto",
    },
    "ru": {
        "subject": "Обзор новостей {date}", "title": "Ежедневный обзор новостей", "top_stories": "Главное за {date}",
        "sources": "Источники",
        "more_sources": {"one": "и ещё {n}", "few": "и ещё {n}", "many": "и ещё {n}", "other": "и ещё {n}"},
        "event": "Часть продолжающегося события", "event_span": "{stories} за {days}",
        "story_count": {"one": "{n} сюжет", "few": "{n} сюжета", "many": "{n} сюжетов", "other": "{n} сюжета"},
        "day_count": {"one": "{n} день", "few": "{n} дня", "many": "{n} дней", "other": "{n} дня"},
        "what_happened": "Что произошло", "background": "Предыстория", "how_it_developed": "Как развивались события",
        "what_to_watch": "За чем следить", "original": "заголовок на языке: {lang}, перевода пока нет",
        "offline_note": "Автоматическая выдержка (языковая модель не настроена)",
        "footer": "Вы получаете этот обзор, потому что подписались на newsdedup.", "empty": "За этот день новостей нет.",
        "unsubscribe": "Отписаться", "key_points": "Главное", "briefing_note": "взято из самих статей, без модели",
        "perspectives": "Разные акценты", "untranslated": "язык оригинала: {lang}, перевода пока нет",
        "feed_title": "{site}: главные новости", "feed_subtitle": "Новости многих изданий без повторов, одна запись на сюжет",
        "today": "Новости за {date}", "significance": "Значимость {value}/10", "languages": "Языки",
        "source_count": {"one": "{n} источник", "few": "{n} источника", "many": "{n} источников", "other": "{n} источника"},
        "article_count": {"one": "{n} статья", "few": "{n} статьи", "many": "{n} статей", "other": "{n} статьи"},
        "all_sources": "Все источники", "event_page": "Событие", "event_stories": "Сюжеты этого события",
        "first_seen": "Первое сообщение", "last_update": "Последнее обновление", "other_langs": "На других языках",
        "subscribe": "Подписаться", "home": "Все языки", "read_more": "Страница сюжета", "updated_at": "Обновлено {stamp}",
        "no_stories": "Новостей пока нет.", "not_scored": "Значимость: без оценки", "briefing": "Кратко", "quotes": "Цитаты",
        "category": "Рубрика", "categories": "Рубрики", "all_stories": "Все новости",
        "extractive_note": "Предложения и цитаты взяты из самих статей (их не писала модель).", "players": "Люди и организации",
        "places": "Места", "name_separator": ", ",
        "perspectives_note": "Что подчёркивают издания одной страны, но не издания других стран.",
        "background_note": "Более ранние сюжеты этого события в том виде, в каком они вышли.", "archive": "Архив",
        "previous_day": "Предыдущий день", "next_day": "Следующий день", "previous_month": "Предыдущий месяц",
        "next_month": "Следующий месяц", "countries": "Страны",
    },
    "ar": {
        "subject": "موجز الأخبار {date}", "title": "الموجز الإخباري اليومي", "top_stories": "أبرز أخبار {date}",
        "sources": "المصادر",
        "more_sources": {"zero": "ولا مصادر أخرى", "one": "ومصدر آخر", "two": "ومصدران آخران", "few": "و{n} مصادر أخرى", "many": "و{n} مصدرًا آخر", "other": "و{n} مصدر آخر"},
        "event": "جزء من حدث مستمر", "event_span": "{stories} خلال {days}",
        "story_count": {"zero": "لا أخبار", "one": "خبر واحد", "two": "خبران", "few": "{n} أخبار", "many": "{n} خبرًا", "other": "{n} خبر"},
        "day_count": {"zero": "أقل من يوم", "one": "يوم واحد", "two": "يومين", "few": "{n} أيام", "many": "{n} يومًا", "other": "{n} يوم"},
        "what_happened": "ماذا حدث", "background": "الخلفية", "how_it_developed": "كيف تطورت الأحداث",
        "what_to_watch": "ما يجب متابعته", "original": "العنوان باللغة {lang}، لا توجد ترجمة بعد",
        "offline_note": "ملخص استخراجي تلقائي (لم يُضبط نموذج لغوي)", "footer": "تتلقى هذا الموجز لأنك مشترك في newsdedup.",
        "empty": "لا توجد أخبار لهذا اليوم.", "unsubscribe": "إلغاء الاشتراك", "key_points": "النقاط الرئيسية",
        "briefing_note": "مأخوذة من المقالات نفسها، دون نموذج", "perspectives": "زوايا التناول",
        "untranslated": "باللغة {lang}، لم تُترجم بعد", "feed_title": "{site}: أهم الأخبار",
        "feed_subtitle": "أخبار من وسائل إعلام كثيرة دون تكرار، مدخل واحد لكل خبر", "today": "أخبار {date}",
        "significance": "الأهمية {value}/10", "languages": "اللغات",
        "source_count": {"zero": "لا مصادر", "one": "مصدر واحد", "two": "مصدران", "few": "{n} مصادر", "many": "{n} مصدرًا", "other": "{n} مصدر"},
        "article_count": {"zero": "لا مقالات", "one": "مقال واحد", "two": "مقالان", "few": "{n} مقالات", "many": "{n} مقالًا", "other": "{n} مقال"},
        "all_sources": "جميع المصادر", "event_page": "حدث", "event_stories": "أخبار هذا الحدث", "first_seen": "أول خبر",
        "last_update": "آخر تحديث", "other_langs": "بلغات أخرى", "subscribe": "اشترك", "home": "جميع اللغات",
        "read_more": "صفحة الخبر", "updated_at": "آخر تحديث {stamp}", "no_stories": "لا توجد أخبار بعد.",
        "not_scored": "الأهمية: غير مقيَّمة", "briefing": "موجز", "quotes": "اقتباسات", "category": "الفئة",
        "categories": "الفئات", "all_stories": "جميع الأخبار",
        "extractive_note": "جمل واقتباسات مأخوذة من المقالات نفسها (لم يكتبها أي نموذج).", "players": "أشخاص ومنظمات",
        "places": "أماكن", "name_separator": "، ",
        "perspectives_note": "ما تبرزه وسائل إعلام بلد واحد ولا تبرزه وسائل إعلام البلدان الأخرى.",
        "background_note": "أخبار سابقة عن هذا الحدث كما نُشرت.", "archive": "الأرشيف", "previous_day": "اليوم السابق",
        "next_day": "اليوم التالي", "previous_month": "الشهر السابق", "next_month": "الشهر التالي", "countries": "البلدان",
    },
    "hi": {
        "subject": "समाचार सार {date}", "title": "दैनिक समाचार सार", "top_stories": "{date} की प्रमुख खबरें", "sources": "स्रोत",
        "more_sources": {"one": "और {n} अन्य", "other": "और {n} अन्य"}, "event": "एक जारी घटना का हिस्सा",
        "event_span": "{days} में {stories}", "story_count": {"one": "{n} खबर", "other": "{n} खबरें"},
        "day_count": {"one": "{n} दिन", "other": "{n} दिनों"}, "what_happened": "क्या हुआ", "background": "पृष्ठभूमि",
        "how_it_developed": "घटनाक्रम", "what_to_watch": "आगे क्या देखें", "original": "{lang} में शीर्षक, अभी अनुवाद नहीं",
        "offline_note": "स्वचालित उद्धरण सारांश (कोई भाषा मॉडल कॉन्फ़िगर नहीं)",
        "footer": "आपको यह सार इसलिए मिला क्योंकि आपने newsdedup की सदस्यता ली है।", "empty": "इस दिन कोई खबर नहीं।",
        "unsubscribe": "सदस्यता रद्द करें", "key_points": "मुख्य बातें", "briefing_note": "लेखों से ही लिया गया, बिना मॉडल",
        "perspectives": "दृष्टिकोण", "untranslated": "{lang} में, अभी अनुवाद नहीं हुआ", "feed_title": "{site}: प्रमुख खबरें",
        "feed_subtitle": "अनेक समाचार माध्यमों की खबरें बिना दोहराव के, हर खबर की एक प्रविष्टि", "today": "{date} की खबरें",
        "significance": "महत्व {value}/10", "languages": "भाषाएँ", "source_count": {"one": "{n} स्रोत", "other": "{n} स्रोत"},
        "article_count": {"one": "{n} लेख", "other": "{n} लेख"}, "all_sources": "सभी स्रोत", "event_page": "घटना",
        "event_stories": "इस घटना की खबरें", "first_seen": "पहली खबर", "last_update": "अंतिम अपडेट",
        "other_langs": "अन्य भाषाओं में", "subscribe": "सदस्यता लें", "home": "सभी भाषाएँ", "read_more": "खबर का पेज",
        "updated_at": "{stamp} को अपडेट किया गया", "no_stories": "अभी कोई खबर नहीं।", "not_scored": "महत्व: आकलन नहीं हुआ",
        "briefing": "सार", "quotes": "उद्धरण", "category": "श्रेणी", "categories": "श्रेणियाँ", "all_stories": "सभी खबरें",
        "extractive_note": "वाक्य और उद्धरण लेखों से ही लिए गए हैं (किसी मॉडल ने नहीं लिखे)।", "players": "व्यक्ति और संगठन",
        "places": "स्थान", "name_separator": ", ",
        "perspectives_note": "किसी एक देश के समाचार माध्यम जिन बातों पर ज़ोर देते हैं, पर दूसरे देशों के माध्यम नहीं।",
        "background_note": "इस घटना की पिछली खबरें, जैसी प्रकाशित हुईं।", "archive": "पुरालेख", "previous_day": "पिछला दिन",
        "next_day": "अगला दिन", "previous_month": "पिछला महीना", "next_month": "अगला महीना", "countries": "देश",
    },
    "id": {
        "subject": "Ringkasan berita {date}", "title": "Ringkasan berita harian", "top_stories": "Berita utama {date}",
        "sources": "Sumber", "more_sources": {"other": "dan {n} lainnya"},
        "event": "Bagian dari peristiwa yang sedang berlangsung", "event_span": "{stories} dalam {days}",
        "story_count": {"other": "{n} berita"}, "day_count": {"other": "{n} hari"}, "what_happened": "Apa yang terjadi",
        "background": "Latar belakang", "how_it_developed": "Perkembangan", "what_to_watch": "Yang perlu dicermati",
        "original": "judul dalam bahasa {lang}, belum diterjemahkan",
        "offline_note": "Ringkasan ekstraktif otomatis (tidak ada model bahasa yang dikonfigurasi)",
        "footer": "Anda menerima ringkasan ini karena berlangganan newsdedup.", "empty": "Tidak ada berita hari ini.",
        "unsubscribe": "Berhenti berlangganan", "key_points": "Poin utama", "briefing_note": "diambil dari artikel, tanpa model",
        "perspectives": "Sudut pandang", "untranslated": "dalam bahasa {lang}, belum diterjemahkan",
    },
    "vi": {
        "subject": "Bản tin {date}", "title": "Bản tin hằng ngày", "top_stories": "Tin nổi bật ngày {date}", "sources": "Nguồn",
        "more_sources": {"one": "và {n} nguồn khác", "other": "và {n} nguồn khác"}, "event": "Thuộc một sự kiện đang diễn ra",
        "event_span": "{stories} trong {days}", "story_count": {"one": "{n} tin", "other": "{n} tin"},
        "day_count": {"one": "{n} ngày", "other": "{n} ngày"}, "what_happened": "Chuyện gì đã xảy ra", "background": "Bối cảnh",
        "how_it_developed": "Diễn biến", "what_to_watch": "Điều cần theo dõi",
        "original": "tiêu đề bằng {lang}, chưa có bản dịch",
        "offline_note": "Tóm tắt trích xuất tự động (chưa cấu hình mô hình ngôn ngữ)",
        "footer": "Bạn nhận bản tin này vì đã đăng ký newsdedup.", "empty": "Không có tin nào trong ngày.",
        "unsubscribe": "Hủy đăng ký", "key_points": "Điểm chính", "briefing_note": "trích từ các bài báo, không dùng mô hình",
        "perspectives": "Góc nhìn", "untranslated": "bằng {lang}, chưa được dịch",
    },
    "th": {
        "subject": "สรุปข่าว {date}", "title": "สรุปข่าวประจำวัน", "top_stories": "ข่าวเด่นวันที่ {date}", "sources": "แหล่งข่าว",
        "more_sources": {"other": "และอีก {n} แห่ง"}, "event": "ส่วนหนึ่งของเหตุการณ์ที่ยังดำเนินอยู่",
        "event_span": "{stories} ใน {days}", "story_count": {"other": "{n} ข่าว"}, "day_count": {"other": "{n} วัน"},
        "what_happened": "เกิดอะไรขึ้น", "background": "ภูมิหลัง", "how_it_developed": "ความคืบหน้า",
        "what_to_watch": "สิ่งที่ต้องติดตาม", "original": "หัวข้อภาษา{lang} ยังไม่มีคำแปล",
        "offline_note": "สรุปแบบคัดข้อความอัตโนมัติ (ไม่ได้ตั้งค่าโมเดลภาษา)",
        "footer": "คุณได้รับสรุปข่าวนี้เพราะสมัครรับ newsdedup", "empty": "ไม่มีข่าวในวันนี้",
        "unsubscribe": "ยกเลิกการรับสรุปข่าว", "key_points": "ประเด็นสำคัญ", "briefing_note": "นำมาจากบทความโดยตรง ไม่ใช้โมเดล",
        "perspectives": "มุมมอง", "untranslated": "ภาษา{lang} ยังไม่ได้แปล",
    },
    "tr": {
        "subject": "Haber özeti {date}", "title": "Günlük haber özeti", "top_stories": "{date} öne çıkan haberler",
        "sources": "Kaynaklar", "more_sources": {"one": "ve {n} kaynak daha", "other": "ve {n} kaynak daha"},
        "event": "Süren bir olayın parçası", "event_span": "{days} içinde {stories}",
        "story_count": {"one": "{n} haber", "other": "{n} haber"}, "day_count": {"one": "{n} gün", "other": "{n} gün"},
        "what_happened": "Ne oldu", "background": "Arka plan", "how_it_developed": "Nasıl gelişti",
        "what_to_watch": "Takip edilecekler", "original": "{lang} başlık, henüz çeviri yok",
        "offline_note": "Otomatik alıntı özeti (dil modeli yapılandırılmadı)",
        "footer": "newsdedup'a abone olduğunuz için bu özeti alıyorsunuz.", "empty": "Bu gün için haber yok.",
        "unsubscribe": "Abonelikten çık", "key_points": "Ana noktalar",
        "briefing_note": "makalelerin kendisinden alındı, model yok", "perspectives": "Bakış açıları",
        "untranslated": "{lang} metin, henüz çevrilmedi",
    },
}



# The languages with every label (the site's and the archive's too): the default published languages.
# The others have the digest's (KEYS) and fall back to English for the rest.
SITE_LANGS = ("en", "fr", "de", "es", "pt", "ru", "ar", "hi", "zh", "ja", "ko")


def labels_for(lang: str) -> dict:
    """Every label in `lang` (its base language's when the tag has a region), English for what it lacks."""
    own = LABELS.get(lang) or LABELS.get(lang.split("-")[0], {})
    return {**LABELS["en"], **own}


def text_direction(lang: str) -> str:
    return "rtl" if lang.split("-")[0] in RTL_LANGS else "ltr"


@lru_cache(maxsize=256)
def locale_of(lang: str | None) -> Locale:
    """The Babel locale of a language tag; English for tags CLDR does not know."""
    try:
        return Locale.parse((lang or "en").replace("-", "_"))
    except (UnknownLocaleError, ValueError, TypeError):
        return Locale.parse("en")


def plural_category(lang: str, n: int | float) -> str:
    return locale_of(lang).plural_form(n)


def number(lang: str, n: int | float) -> str:
    return format_decimal(n, locale=locale_of(lang))


def decimal(lang: str, value: float, pattern: str = "0.0") -> str:
    """A number with the language's decimal sign ("7.5", "7,5")."""
    return format_decimal(value, format=pattern, locale=locale_of(lang))


def count(lang: str, label: str | dict, n: int, **values) -> str:
    """The form of a counting label for `n` under CLDR's plural rule of `lang` ('other' when a
    label has no form for the category), `{n}` filled with the number in the language's digits."""
    if isinstance(label, dict):
        label = label.get(plural_category(lang, n)) or label["other"]
    return label.format(n=number(lang, n), **values)


def long_date(lang: str, day: date) -> str:
    return format_date(day, "long", locale=locale_of(lang))


def date_time(lang: str, moment: datetime) -> str:
    """Date and 24-hour time in UTC, written the language's way ("2 نوفمبر 2026 00:36 UTC")."""
    loc = locale_of(lang)
    utc = moment.astimezone(UTC)
    return f"{format_date(utc.date(), 'long', locale=loc)} {format_skeleton('Hm', utc, tzinfo=UTC, locale=loc)} UTC"


def language_name(code: str | None, in_lang: str) -> str:
    """The name of language `code` in language `in_lang` ("French", "الفرنسية"); the code itself
    when CLDR has no name for it."""
    if not code:
        return "?"
    base = code.split("-")[0].lower()
    return locale_of(in_lang).languages.get(base) or code


def own_name(code: str) -> str:
    """A language's name in itself, for a language switcher ("العربية", "日本語")."""
    return language_name(code, code)


def event_span(lang: str, labels: dict, stories: int, days: int) -> str:
    """"5 stories over 3 days", each count in its own plural form."""
    return labels["event_span"].format(stories=count(lang, labels["story_count"], stories),
                                       days=count(lang, labels["day_count"], days))
