"""Interface strings of the digest email, per language (the 16 narrative languages).
Unknown languages fall back to English. `{date}`, `{n}`, `{days}`, `{lang}` are filled by the
renderer; the values are plain text (the HTML template escapes them)."""

from __future__ import annotations

RTL_LANGS = frozenset({"ar", "fa", "he", "ur", "ckb"})

KEYS = ("subject", "title", "top_stories", "sources", "more_sources", "event", "event_span", "what_happened",
        "background", "how_it_developed", "what_to_watch", "original", "offline_note", "footer", "empty")

LABELS: dict[str, dict[str, str]] = {
    "en": {
        "subject": "News digest {date}", "title": "Daily news digest", "top_stories": "Top stories of {date}",
        "sources": "Sources", "more_sources": "and {n} more", "event": "Part of an ongoing event",
        "event_span": "{n} stories over {days} days", "what_happened": "What happened", "background": "Background",
        "how_it_developed": "How it developed", "what_to_watch": "What to watch",
        "original": "original headline ({lang}), no translation yet",
        "offline_note": "Automatic extractive summary (no language model configured)",
        "footer": "You receive this digest because you subscribed to newsdedup.",
        "empty": "No stories for this day.",
    },
    "zh": {
        "subject": "新闻摘要 {date}", "title": "每日新闻摘要", "top_stories": "{date} 要闻", "sources": "来源",
        "more_sources": "及另外 {n} 个", "event": "持续事件的一部分", "event_span": "{days} 天内 {n} 篇报道",
        "what_happened": "发生了什么", "background": "背景", "how_it_developed": "事态发展", "what_to_watch": "后续关注",
        "original": "原文标题（{lang}），暂无译文", "offline_note": "自动摘录摘要（未配置语言模型）",
        "footer": "您收到此摘要是因为您订阅了 newsdedup。", "empty": "当天没有新闻。",
    },
    "ja": {
        "subject": "ニュースダイジェスト {date}", "title": "デイリーニュースダイジェスト", "top_stories": "{date} の主要ニュース",
        "sources": "情報源", "more_sources": "ほか {n} 件", "event": "継続中の出来事の一部",
        "event_span": "{days} 日間で {n} 件の記事", "what_happened": "何が起きたか", "background": "背景",
        "how_it_developed": "経緯", "what_to_watch": "今後の注目点", "original": "原文の見出し（{lang}）、翻訳はまだありません",
        "offline_note": "自動抽出による要約（言語モデル未設定）", "footer": "newsdedup に登録されているため、このダイジェストをお送りしています。",
        "empty": "この日のニュースはありません。",
    },
    "ko": {
        "subject": "뉴스 다이제스트 {date}", "title": "오늘의 뉴스 다이제스트", "top_stories": "{date} 주요 뉴스",
        "sources": "출처", "more_sources": "외 {n}곳", "event": "진행 중인 사건의 일부", "event_span": "{days}일 동안 기사 {n}건",
        "what_happened": "무슨 일이 있었나", "background": "배경", "how_it_developed": "전개 과정", "what_to_watch": "주목할 점",
        "original": "원문 제목({lang}), 아직 번역 없음", "offline_note": "자동 발췌 요약(언어 모델 미설정)",
        "footer": "newsdedup을 구독하셨기 때문에 이 다이제스트를 받으셨습니다.", "empty": "이 날의 뉴스가 없습니다.",
    },
    "fr": {
        "subject": "Revue de presse {date}", "title": "Revue de presse quotidienne", "top_stories": "L'essentiel du {date}",
        "sources": "Sources", "more_sources": "et {n} autres", "event": "Fait partie d'un événement en cours",
        "event_span": "{n} articles sur {days} jours", "what_happened": "Ce qui s'est passé", "background": "Contexte",
        "how_it_developed": "Évolution", "what_to_watch": "À suivre",
        "original": "titre original ({lang}), pas encore traduit",
        "offline_note": "Résumé extractif automatique (aucun modèle de langue configuré)",
        "footer": "Vous recevez cette revue car vous êtes abonné à newsdedup.", "empty": "Aucun article ce jour-là.",
    },
    "de": {
        "subject": "Nachrichtenüberblick {date}", "title": "Täglicher Nachrichtenüberblick", "top_stories": "Top-Meldungen vom {date}",
        "sources": "Quellen", "more_sources": "und {n} weitere", "event": "Teil eines laufenden Ereignisses",
        "event_span": "{n} Meldungen in {days} Tagen", "what_happened": "Was geschah", "background": "Hintergrund",
        "how_it_developed": "Verlauf", "what_to_watch": "Worauf zu achten ist",
        "original": "Originalschlagzeile ({lang}), noch nicht übersetzt",
        "offline_note": "Automatische extraktive Zusammenfassung (kein Sprachmodell konfiguriert)",
        "footer": "Sie erhalten diesen Überblick, weil Sie newsdedup abonniert haben.", "empty": "Keine Meldungen an diesem Tag.",
    },
    "es": {
        "subject": "Resumen de noticias {date}", "title": "Resumen diario de noticias", "top_stories": "Lo más destacado del {date}",
        "sources": "Fuentes", "more_sources": "y {n} más", "event": "Parte de un acontecimiento en curso",
        "event_span": "{n} noticias en {days} días", "what_happened": "Qué pasó", "background": "Contexto",
        "how_it_developed": "Cómo evolucionó", "what_to_watch": "Qué vigilar",
        "original": "titular original ({lang}), aún sin traducción",
        "offline_note": "Resumen extractivo automático (sin modelo de lenguaje configurado)",
        "footer": "Recibe este resumen porque está suscrito a newsdedup.", "empty": "No hay noticias para este día.",
    },
    "pt": {
        "subject": "Resumo de notícias {date}", "title": "Resumo diário de notícias", "top_stories": "Destaques de {date}",
        "sources": "Fontes", "more_sources": "e mais {n}", "event": "Parte de um acontecimento em curso",
        "event_span": "{n} notícias em {days} dias", "what_happened": "O que aconteceu", "background": "Contexto",
        "how_it_developed": "Como evoluiu", "what_to_watch": "O que acompanhar",
        "original": "título original ({lang}), ainda sem tradução",
        "offline_note": "Resumo extrativo automático (nenhum modelo de linguagem configurado)",
        "footer": "Você recebe este resumo porque assinou o newsdedup.", "empty": "Sem notícias neste dia.",
    },
    "it": {
        "subject": "Rassegna stampa {date}", "title": "Rassegna stampa quotidiana", "top_stories": "Le notizie principali del {date}",
        "sources": "Fonti", "more_sources": "e altre {n}", "event": "Parte di un evento in corso",
        "event_span": "{n} notizie in {days} giorni", "what_happened": "Cosa è successo", "background": "Contesto",
        "how_it_developed": "Come si è sviluppato", "what_to_watch": "Cosa seguire",
        "original": "titolo originale ({lang}), non ancora tradotto",
        "offline_note": "Riassunto estrattivo automatico (nessun modello linguistico configurato)",
        "footer": "Ricevi questa rassegna perché sei iscritto a newsdedup.", "empty": "Nessuna notizia per questo giorno.",
    },
    "ru": {
        "subject": "Обзор новостей {date}", "title": "Ежедневный обзор новостей", "top_stories": "Главное за {date}",
        "sources": "Источники", "more_sources": "и ещё {n}", "event": "Часть продолжающегося события",
        "event_span": "{n} сюжетов за {days} дн.", "what_happened": "Что произошло", "background": "Предыстория",
        "how_it_developed": "Как развивались события", "what_to_watch": "За чем следить",
        "original": "оригинальный заголовок ({lang}), перевода пока нет",
        "offline_note": "Автоматическая выдержка (языковая модель не настроена)",
        "footer": "Вы получаете этот обзор, потому что подписались на newsdedup.", "empty": "За этот день новостей нет.",
    },
    "ar": {
        "subject": "موجز الأخبار {date}", "title": "الموجز الإخباري اليومي", "top_stories": "أبرز أخبار {date}",
        "sources": "المصادر", "more_sources": "و{n} أخرى", "event": "جزء من حدث مستمر",
        "event_span": "{n} أخبار خلال {days} أيام", "what_happened": "ماذا حدث", "background": "الخلفية",
        "how_it_developed": "كيف تطورت الأحداث", "what_to_watch": "ما يجب متابعته",
        "original": "العنوان الأصلي ({lang})، لا توجد ترجمة بعد",
        "offline_note": "ملخص استخراجي تلقائي (لم يُضبط نموذج لغوي)",
        "footer": "تتلقى هذا الموجز لأنك مشترك في newsdedup.", "empty": "لا توجد أخبار لهذا اليوم.",
    },
    "hi": {
        "subject": "समाचार सार {date}", "title": "दैनिक समाचार सार", "top_stories": "{date} की प्रमुख खबरें",
        "sources": "स्रोत", "more_sources": "और {n} अन्य", "event": "एक जारी घटना का हिस्सा",
        "event_span": "{days} दिनों में {n} खबरें", "what_happened": "क्या हुआ", "background": "पृष्ठभूमि",
        "how_it_developed": "घटनाक्रम", "what_to_watch": "आगे क्या देखें",
        "original": "मूल शीर्षक ({lang}), अभी अनुवाद नहीं", "offline_note": "स्वचालित उद्धरण सारांश (कोई भाषा मॉडल कॉन्फ़िगर नहीं)",
        "footer": "आपको यह सार इसलिए मिला क्योंकि आपने newsdedup की सदस्यता ली है।", "empty": "इस दिन कोई खबर नहीं।",
    },
    "id": {
        "subject": "Ringkasan berita {date}", "title": "Ringkasan berita harian", "top_stories": "Berita utama {date}",
        "sources": "Sumber", "more_sources": "dan {n} lainnya", "event": "Bagian dari peristiwa yang sedang berlangsung",
        "event_span": "{n} berita dalam {days} hari", "what_happened": "Apa yang terjadi", "background": "Latar belakang",
        "how_it_developed": "Perkembangan", "what_to_watch": "Yang perlu dicermati",
        "original": "judul asli ({lang}), belum diterjemahkan",
        "offline_note": "Ringkasan ekstraktif otomatis (tidak ada model bahasa yang dikonfigurasi)",
        "footer": "Anda menerima ringkasan ini karena berlangganan newsdedup.", "empty": "Tidak ada berita hari ini.",
    },
    "vi": {
        "subject": "Bản tin {date}", "title": "Bản tin hằng ngày", "top_stories": "Tin nổi bật ngày {date}",
        "sources": "Nguồn", "more_sources": "và {n} nguồn khác", "event": "Thuộc một sự kiện đang diễn ra",
        "event_span": "{n} tin trong {days} ngày", "what_happened": "Chuyện gì đã xảy ra", "background": "Bối cảnh",
        "how_it_developed": "Diễn biến", "what_to_watch": "Điều cần theo dõi",
        "original": "tiêu đề gốc ({lang}), chưa có bản dịch",
        "offline_note": "Tóm tắt trích xuất tự động (chưa cấu hình mô hình ngôn ngữ)",
        "footer": "Bạn nhận bản tin này vì đã đăng ký newsdedup.", "empty": "Không có tin nào trong ngày.",
    },
    "th": {
        "subject": "สรุปข่าว {date}", "title": "สรุปข่าวประจำวัน", "top_stories": "ข่าวเด่นวันที่ {date}", "sources": "แหล่งข่าว",
        "more_sources": "และอีก {n} แห่ง", "event": "ส่วนหนึ่งของเหตุการณ์ที่ยังดำเนินอยู่", "event_span": "{n} ข่าวใน {days} วัน",
        "what_happened": "เกิดอะไรขึ้น", "background": "ภูมิหลัง", "how_it_developed": "ความคืบหน้า", "what_to_watch": "สิ่งที่ต้องติดตาม",
        "original": "หัวข้อต้นฉบับ ({lang}) ยังไม่มีคำแปล", "offline_note": "สรุปแบบคัดข้อความอัตโนมัติ (ไม่ได้ตั้งค่าโมเดลภาษา)",
        "footer": "คุณได้รับสรุปข่าวนี้เพราะสมัครรับ newsdedup", "empty": "ไม่มีข่าวในวันนี้",
    },
    "tr": {
        "subject": "Haber özeti {date}", "title": "Günlük haber özeti", "top_stories": "{date} öne çıkan haberler",
        "sources": "Kaynaklar", "more_sources": "ve {n} kaynak daha", "event": "Süren bir olayın parçası",
        "event_span": "{days} günde {n} haber", "what_happened": "Ne oldu", "background": "Arka plan",
        "how_it_developed": "Nasıl gelişti", "what_to_watch": "Takip edilecekler",
        "original": "özgün başlık ({lang}), henüz çeviri yok",
        "offline_note": "Otomatik alıntı özeti (dil modeli yapılandırılmadı)",
        "footer": "newsdedup'a abone olduğunuz için bu özeti alıyorsunuz.", "empty": "Bu gün için haber yok.",
    },
}


def labels_for(lang: str) -> dict[str, str]:
    base = LABELS["en"]
    return {**base, **LABELS.get(lang, {})}


def text_direction(lang: str) -> str:
    return "rtl" if lang in RTL_LANGS else "ltr"
