"""Interface strings of the digest email, per language (the 16 narrative languages), and the
locale helpers the digest and the published site share: CLDR plural categories, numbers, dates
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

__all__ = ["LABELS", "KEYS", "PLURAL_KEYS", "RTL_LANGS", "labels_for", "text_direction", "locale_of", "plural_category",
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
        "story_count": {"one": "{n} story", "other": "{n} stories"},
        "day_count": {"one": "{n} day", "other": "{n} days"},
        "what_happened": "What happened", "background": "Background",
        "how_it_developed": "How it developed", "what_to_watch": "What to watch",
        "original": "headline in {lang}, no translation yet",
        "offline_note": "Automatic extractive summary (no language model configured)",
        "footer": "You receive this digest because you subscribed to newsdedup.",
        "empty": "No stories for this day.", "unsubscribe": "Unsubscribe",
        "key_points": "Key points", "briefing_note": "taken from the articles, no model",
        "perspectives": "Perspectives",
        "untranslated": "in {lang}, no translation yet",
    },
    "zh": {
        "subject": "新闻摘要 {date}", "title": "每日新闻摘要", "top_stories": "{date} 要闻", "sources": "来源",
        "more_sources": {"other": "及另外{n}个"}, "event": "持续事件的一部分", "event_span": "{days}内{stories}",
        "story_count": {"other": "{n}篇报道"}, "day_count": {"other": "{n}天"},
        "what_happened": "发生了什么", "background": "背景", "how_it_developed": "事态发展", "what_to_watch": "后续关注",
        "original": "{lang}标题，暂无译文", "offline_note": "自动摘录摘要（未配置语言模型）",
        "footer": "您收到此摘要是因为您订阅了 newsdedup。", "empty": "当天没有新闻。", "unsubscribe": "退订",
        "key_points": "要点", "briefing_note": "摘自文章本身，非模型撰写",
        "perspectives": "不同视角",
        "untranslated": "{lang}原文，暂无译文",
    },
    "ja": {
        "subject": "ニュースダイジェスト {date}", "title": "デイリーニュースダイジェスト", "top_stories": "{date} の主要ニュース",
        "sources": "情報源", "more_sources": {"other": "ほか{n}件"}, "event": "継続中の出来事の一部",
        "event_span": "{days}で{stories}", "story_count": {"other": "{n}件の記事"}, "day_count": {"other": "{n}日間"},
        "what_happened": "何が起きたか", "background": "背景",
        "how_it_developed": "経緯", "what_to_watch": "今後の注目点", "original": "{lang}の見出し、翻訳はまだありません",
        "offline_note": "自動抽出による要約（言語モデル未設定）", "footer": "newsdedup に登録されているため、このダイジェストをお送りしています。",
        "empty": "この日のニュースはありません。", "unsubscribe": "配信停止",
        "key_points": "要点", "briefing_note": "記事そのものから抜粋（モデル不使用）",
        "perspectives": "報道の視点",
        "untranslated": "{lang}の原文、翻訳はまだありません",
    },
    "ko": {
        "subject": "뉴스 다이제스트 {date}", "title": "오늘의 뉴스 다이제스트", "top_stories": "{date} 주요 뉴스",
        "sources": "출처", "more_sources": {"other": "외 {n}곳"}, "event": "진행 중인 사건의 일부",
        "event_span": "{days} 동안 {stories}", "story_count": {"other": "기사 {n}건"}, "day_count": {"other": "{n}일"},
        "what_happened": "무슨 일이 있었나", "background": "배경", "how_it_developed": "전개 과정", "what_to_watch": "주목할 점",
        "original": "{lang} 제목, 아직 번역 없음", "offline_note": "자동 발췌 요약(언어 모델 미설정)",
        "footer": "newsdedup을 구독하셨기 때문에 이 다이제스트를 받으셨습니다.", "empty": "이 날의 뉴스가 없습니다.", "unsubscribe": "구독 취소",
        "key_points": "핵심 내용", "briefing_note": "기사에서 발췌, 모델 미사용",
        "perspectives": "보도 관점",
        "untranslated": "{lang} 원문, 아직 번역되지 않음",
    },
    "fr": {
        "subject": "Revue de presse {date}", "title": "Revue de presse quotidienne", "top_stories": "L'essentiel du {date}",
        "sources": "Sources",
        "more_sources": {"one": "et {n} autre", "many": "et {n} d'autres", "other": "et {n} autres"},
        "event": "Fait partie d'un événement en cours", "event_span": "{stories} sur {days}",
        "story_count": {"one": "{n} article", "many": "{n} d'articles", "other": "{n} articles"},
        "day_count": {"one": "{n} jour", "many": "{n} de jours", "other": "{n} jours"},
        "what_happened": "Ce qui s'est passé", "background": "Contexte",
        "how_it_developed": "Évolution", "what_to_watch": "À suivre",
        "original": "titre en {lang}, pas encore traduit",
        "offline_note": "Résumé extractif automatique (aucun modèle de langue configuré)",
        "footer": "Vous recevez cette revue car vous êtes abonné à newsdedup.", "empty": "Aucun article ce jour-là.", "unsubscribe": "Se désabonner",
        "key_points": "Points clés", "briefing_note": "repris des articles, sans modèle",
        "perspectives": "Points de vue",
        "untranslated": "en {lang}, pas encore traduit",
    },
    "de": {
        "subject": "Nachrichtenüberblick {date}", "title": "Täglicher Nachrichtenüberblick", "top_stories": "Top-Meldungen vom {date}",
        "sources": "Quellen", "more_sources": {"one": "und {n} weitere", "other": "und {n} weitere"},
        "event": "Teil eines laufenden Ereignisses", "event_span": "{stories} in {days}",
        "story_count": {"one": "{n} Meldung", "other": "{n} Meldungen"},
        "day_count": {"one": "{n} Tag", "other": "{n} Tagen"},
        "what_happened": "Was geschah", "background": "Hintergrund",
        "how_it_developed": "Verlauf", "what_to_watch": "Worauf zu achten ist",
        "original": "Schlagzeile auf {lang}, noch nicht übersetzt",
        "offline_note": "Automatische extraktive Zusammenfassung (kein Sprachmodell konfiguriert)",
        "footer": "Sie erhalten diesen Überblick, weil Sie newsdedup abonniert haben.", "empty": "Keine Meldungen an diesem Tag.", "unsubscribe": "Abbestellen",
        "key_points": "Kernpunkte", "briefing_note": "aus den Artikeln übernommen, ohne Modell",
        "perspectives": "Sichtweisen",
        "untranslated": "auf {lang}, noch nicht übersetzt",
    },
    "es": {
        "subject": "Resumen de noticias {date}", "title": "Resumen diario de noticias", "top_stories": "Lo más destacado del {date}",
        "sources": "Fuentes", "more_sources": {"one": "y {n} más", "many": "y {n} más", "other": "y {n} más"},
        "event": "Parte de un acontecimiento en curso", "event_span": "{stories} en {days}",
        "story_count": {"one": "{n} noticia", "many": "{n} de noticias", "other": "{n} noticias"},
        "day_count": {"one": "{n} día", "many": "{n} de días", "other": "{n} días"},
        "what_happened": "Qué pasó", "background": "Contexto",
        "how_it_developed": "Cómo evolucionó", "what_to_watch": "Qué vigilar",
        "original": "titular en {lang}, aún sin traducción",
        "offline_note": "Resumen extractivo automático (sin modelo de lenguaje configurado)",
        "footer": "Recibe este resumen porque está suscrito a newsdedup.", "empty": "No hay noticias para este día.", "unsubscribe": "Darse de baja",
        "key_points": "Puntos clave", "briefing_note": "tomados de los artículos, sin modelo",
        "perspectives": "Enfoques",
        "untranslated": "en {lang}, aún sin traducir",
    },
    "pt": {
        "subject": "Resumo de notícias {date}", "title": "Resumo diário de notícias", "top_stories": "Destaques de {date}",
        "sources": "Fontes", "more_sources": {"one": "e mais {n}", "many": "e mais {n}", "other": "e mais {n}"},
        "event": "Parte de um acontecimento em curso", "event_span": "{stories} em {days}",
        "story_count": {"one": "{n} notícia", "many": "{n} de notícias", "other": "{n} notícias"},
        "day_count": {"one": "{n} dia", "many": "{n} de dias", "other": "{n} dias"},
        "what_happened": "O que aconteceu", "background": "Contexto",
        "how_it_developed": "Como evoluiu", "what_to_watch": "O que acompanhar",
        "original": "título em {lang}, ainda sem tradução",
        "offline_note": "Resumo extrativo automático (nenhum modelo de linguagem configurado)",
        "footer": "Você recebe este resumo porque assinou o newsdedup.", "empty": "Sem notícias neste dia.", "unsubscribe": "Cancelar a assinatura",
        "key_points": "Pontos principais", "briefing_note": "tirados dos artigos, sem modelo",
        "perspectives": "Perspectivas",
        "untranslated": "em {lang}, ainda sem tradução",
    },
    "it": {
        "subject": "Rassegna stampa {date}", "title": "Rassegna stampa quotidiana", "top_stories": "Le notizie principali del {date}",
        "sources": "Fonti", "more_sources": {"one": "e un'altra", "many": "e altre {n}", "other": "e altre {n}"},
        "event": "Parte di un evento in corso", "event_span": "{stories} in {days}",
        "story_count": {"one": "{n} notizia", "many": "{n} di notizie", "other": "{n} notizie"},
        "day_count": {"one": "{n} giorno", "many": "{n} di giorni", "other": "{n} giorni"},
        "what_happened": "Cosa è successo", "background": "Contesto",
        "how_it_developed": "Come si è sviluppato", "what_to_watch": "Cosa seguire",
        "original": "titolo in {lang}, non ancora tradotto",
        "offline_note": "Riassunto estrattivo automatico (nessun modello linguistico configurato)",
        "footer": "Ricevi questa rassegna perché sei iscritto a newsdedup.", "empty": "Nessuna notizia per questo giorno.", "unsubscribe": "Annulla l'iscrizione",
        "key_points": "Punti chiave", "briefing_note": "tratti dagli articoli, senza modello",
        "perspectives": "Punti di vista",
        "untranslated": "in {lang}, non ancora tradotto",
    },
    "ru": {
        "subject": "Обзор новостей {date}", "title": "Ежедневный обзор новостей", "top_stories": "Главное за {date}",
        "sources": "Источники",
        "more_sources": {"one": "и ещё {n}", "few": "и ещё {n}", "many": "и ещё {n}", "other": "и ещё {n}"},
        "event": "Часть продолжающегося события", "event_span": "{stories} за {days}",
        "story_count": {"one": "{n} сюжет", "few": "{n} сюжета", "many": "{n} сюжетов", "other": "{n} сюжета"},
        "day_count": {"one": "{n} день", "few": "{n} дня", "many": "{n} дней", "other": "{n} дня"},
        "what_happened": "Что произошло", "background": "Предыстория",
        "how_it_developed": "Как развивались события", "what_to_watch": "За чем следить",
        "original": "заголовок на языке: {lang}, перевода пока нет",
        "offline_note": "Автоматическая выдержка (языковая модель не настроена)",
        "footer": "Вы получаете этот обзор, потому что подписались на newsdedup.", "empty": "За этот день новостей нет.", "unsubscribe": "Отписаться",
        "key_points": "Главное", "briefing_note": "взято из самих статей, без модели",
        "perspectives": "Разные акценты",
        "untranslated": "язык оригинала: {lang}, перевода пока нет",
    },
    "ar": {
        "subject": "موجز الأخبار {date}", "title": "الموجز الإخباري اليومي", "top_stories": "أبرز أخبار {date}",
        "sources": "المصادر",
        "more_sources": {"zero": "ولا مصادر أخرى", "one": "ومصدر آخر", "two": "ومصدران آخران",
                         "few": "و{n} مصادر أخرى", "many": "و{n} مصدرًا آخر", "other": "و{n} مصدر آخر"},
        "event": "جزء من حدث مستمر", "event_span": "{stories} خلال {days}",
        "story_count": {"zero": "لا أخبار", "one": "خبر واحد", "two": "خبران", "few": "{n} أخبار",
                        "many": "{n} خبرًا", "other": "{n} خبر"},
        "day_count": {"zero": "أقل من يوم", "one": "يوم واحد", "two": "يومين", "few": "{n} أيام",
                      "many": "{n} يومًا", "other": "{n} يوم"},
        "what_happened": "ماذا حدث", "background": "الخلفية",
        "how_it_developed": "كيف تطورت الأحداث", "what_to_watch": "ما يجب متابعته",
        "original": "العنوان باللغة {lang}، لا توجد ترجمة بعد",
        "offline_note": "ملخص استخراجي تلقائي (لم يُضبط نموذج لغوي)",
        "footer": "تتلقى هذا الموجز لأنك مشترك في newsdedup.", "empty": "لا توجد أخبار لهذا اليوم.", "unsubscribe": "إلغاء الاشتراك",
        "key_points": "النقاط الرئيسية", "briefing_note": "مأخوذة من المقالات نفسها، دون نموذج",
        "perspectives": "زوايا التناول",
        "untranslated": "باللغة {lang}، لم تُترجم بعد",
    },
    "hi": {
        "subject": "समाचार सार {date}", "title": "दैनिक समाचार सार", "top_stories": "{date} की प्रमुख खबरें",
        "sources": "स्रोत", "more_sources": {"one": "और {n} अन्य", "other": "और {n} अन्य"},
        "event": "एक जारी घटना का हिस्सा", "event_span": "{days} में {stories}",
        "story_count": {"one": "{n} खबर", "other": "{n} खबरें"}, "day_count": {"one": "{n} दिन", "other": "{n} दिनों"},
        "what_happened": "क्या हुआ", "background": "पृष्ठभूमि",
        "how_it_developed": "घटनाक्रम", "what_to_watch": "आगे क्या देखें",
        "original": "{lang} में शीर्षक, अभी अनुवाद नहीं", "offline_note": "स्वचालित उद्धरण सारांश (कोई भाषा मॉडल कॉन्फ़िगर नहीं)",
        "footer": "आपको यह सार इसलिए मिला क्योंकि आपने newsdedup की सदस्यता ली है।", "empty": "इस दिन कोई खबर नहीं।", "unsubscribe": "सदस्यता रद्द करें",
        "key_points": "मुख्य बातें", "briefing_note": "लेखों से ही लिया गया, बिना मॉडल",
        "perspectives": "दृष्टिकोण",
        "untranslated": "{lang} में, अभी अनुवाद नहीं हुआ",
    },
    "id": {
        "subject": "Ringkasan berita {date}", "title": "Ringkasan berita harian", "top_stories": "Berita utama {date}",
        "sources": "Sumber", "more_sources": {"other": "dan {n} lainnya"},
        "event": "Bagian dari peristiwa yang sedang berlangsung", "event_span": "{stories} dalam {days}",
        "story_count": {"other": "{n} berita"}, "day_count": {"other": "{n} hari"},
        "what_happened": "Apa yang terjadi", "background": "Latar belakang",
        "how_it_developed": "Perkembangan", "what_to_watch": "Yang perlu dicermati",
        "original": "judul dalam bahasa {lang}, belum diterjemahkan",
        "offline_note": "Ringkasan ekstraktif otomatis (tidak ada model bahasa yang dikonfigurasi)",
        "footer": "Anda menerima ringkasan ini karena berlangganan newsdedup.", "empty": "Tidak ada berita hari ini.", "unsubscribe": "Berhenti berlangganan",
        "key_points": "Poin utama", "briefing_note": "diambil dari artikel, tanpa model",
        "perspectives": "Sudut pandang",
        "untranslated": "dalam bahasa {lang}, belum diterjemahkan",
    },
    "vi": {
        "subject": "Bản tin {date}", "title": "Bản tin hằng ngày", "top_stories": "Tin nổi bật ngày {date}",
        "sources": "Nguồn", "more_sources": {"one": "và {n} nguồn khác", "other": "và {n} nguồn khác"},
        "event": "Thuộc một sự kiện đang diễn ra", "event_span": "{stories} trong {days}",
        "story_count": {"one": "{n} tin", "other": "{n} tin"},
        "day_count": {"one": "{n} ngày", "other": "{n} ngày"},
        "what_happened": "Chuyện gì đã xảy ra", "background": "Bối cảnh",
        "how_it_developed": "Diễn biến", "what_to_watch": "Điều cần theo dõi",
        "original": "tiêu đề bằng {lang}, chưa có bản dịch",
        "offline_note": "Tóm tắt trích xuất tự động (chưa cấu hình mô hình ngôn ngữ)",
        "footer": "Bạn nhận bản tin này vì đã đăng ký newsdedup.", "empty": "Không có tin nào trong ngày.", "unsubscribe": "Hủy đăng ký",
        "key_points": "Điểm chính", "briefing_note": "trích từ các bài báo, không dùng mô hình",
        "perspectives": "Góc nhìn",
        "untranslated": "bằng {lang}, chưa được dịch",
    },
    "th": {
        "subject": "สรุปข่าว {date}", "title": "สรุปข่าวประจำวัน", "top_stories": "ข่าวเด่นวันที่ {date}", "sources": "แหล่งข่าว",
        "more_sources": {"other": "และอีก {n} แห่ง"}, "event": "ส่วนหนึ่งของเหตุการณ์ที่ยังดำเนินอยู่",
        "event_span": "{stories} ใน {days}", "story_count": {"other": "{n} ข่าว"}, "day_count": {"other": "{n} วัน"},
        "what_happened": "เกิดอะไรขึ้น", "background": "ภูมิหลัง", "how_it_developed": "ความคืบหน้า", "what_to_watch": "สิ่งที่ต้องติดตาม",
        "original": "หัวข้อภาษา{lang} ยังไม่มีคำแปล", "offline_note": "สรุปแบบคัดข้อความอัตโนมัติ (ไม่ได้ตั้งค่าโมเดลภาษา)",
        "footer": "คุณได้รับสรุปข่าวนี้เพราะสมัครรับ newsdedup", "empty": "ไม่มีข่าวในวันนี้", "unsubscribe": "ยกเลิกการรับสรุปข่าว",
        "key_points": "ประเด็นสำคัญ", "briefing_note": "นำมาจากบทความโดยตรง ไม่ใช้โมเดล",
        "perspectives": "มุมมอง",
        "untranslated": "ภาษา{lang} ยังไม่ได้แปล",
    },
    "tr": {
        "subject": "Haber özeti {date}", "title": "Günlük haber özeti", "top_stories": "{date} öne çıkan haberler",
        "sources": "Kaynaklar", "more_sources": {"one": "ve {n} kaynak daha", "other": "ve {n} kaynak daha"},
        "event": "Süren bir olayın parçası", "event_span": "{days} içinde {stories}",
        "story_count": {"one": "{n} haber", "other": "{n} haber"}, "day_count": {"one": "{n} gün", "other": "{n} gün"},
        "what_happened": "Ne oldu", "background": "Arka plan",
        "how_it_developed": "Nasıl gelişti", "what_to_watch": "Takip edilecekler",
        "original": "{lang} başlık, henüz çeviri yok",
        "offline_note": "Otomatik alıntı özeti (dil modeli yapılandırılmadı)",
        "footer": "newsdedup'a abone olduğunuz için bu özeti alıyorsunuz.", "empty": "Bu gün için haber yok.", "unsubscribe": "Abonelikten çık",
        "key_points": "Ana noktalar", "briefing_note": "makalelerin kendisinden alındı, model yok",
        "perspectives": "Bakış açıları",
        "untranslated": "{lang} metin, henüz çevrilmedi",
    },
}


def labels_for(lang: str) -> dict:
    base = LABELS["en"]
    return {**base, **LABELS.get(lang, {})}


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
