"""Interface strings of the archive and the country pages, per published language (merged into
`labels.labels_for`; English for a language missing here). Plain text (templates escape)."""

from __future__ import annotations

__all__ = ["ARCHIVE_LABELS"]

ARCHIVE_LABELS: dict[str, dict[str, str]] = {
    "en": {"archive": "Archive", "previous_day": "Previous day", "next_day": "Next day",
           "previous_month": "Previous month", "next_month": "Next month", "countries": "Countries"},
    "fr": {"archive": "Archives", "previous_day": "Jour précédent", "next_day": "Jour suivant",
           "previous_month": "Mois précédent", "next_month": "Mois suivant", "countries": "Pays"},
    "de": {"archive": "Archiv", "previous_day": "Vorheriger Tag", "next_day": "Nächster Tag",
           "previous_month": "Vorheriger Monat", "next_month": "Nächster Monat", "countries": "Länder"},
    "es": {"archive": "Archivo", "previous_day": "Día anterior", "next_day": "Día siguiente",
           "previous_month": "Mes anterior", "next_month": "Mes siguiente", "countries": "Países"},
    "pt": {"archive": "Arquivo", "previous_day": "Dia anterior", "next_day": "Dia seguinte",
           "previous_month": "Mês anterior", "next_month": "Mês seguinte", "countries": "Países"},
    "ru": {"archive": "Архив", "previous_day": "Предыдущий день", "next_day": "Следующий день",
           "previous_month": "Предыдущий месяц", "next_month": "Следующий месяц", "countries": "Страны"},
    "ar": {"archive": "الأرشيف", "previous_day": "اليوم السابق", "next_day": "اليوم التالي",
           "previous_month": "الشهر السابق", "next_month": "الشهر التالي", "countries": "البلدان"},
    "hi": {"archive": "पुरालेख", "previous_day": "पिछला दिन", "next_day": "अगला दिन",
           "previous_month": "पिछला महीना", "next_month": "अगला महीना", "countries": "देश"},
    "zh": {"archive": "往期存档", "previous_day": "前一天", "next_day": "后一天",
           "previous_month": "上个月", "next_month": "下个月", "countries": "国家和地区"},
    "ja": {"archive": "アーカイブ", "previous_day": "前の日", "next_day": "次の日",
           "previous_month": "前の月", "next_month": "次の月", "countries": "国・地域"},
    "ko": {"archive": "지난 뉴스", "previous_day": "이전 날", "next_day": "다음 날",
           "previous_month": "이전 달", "next_month": "다음 달", "countries": "국가"},
}
