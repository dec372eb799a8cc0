"""Readers' choices and the editions they make (pure: no database, no Dagster, no environment).

A reader chooses the languages they read, in order of preference (the digest is written in the
first; a story with an article in another language they read links that article as it is,
untranslated), the briefing categories and the outlet countries they want (none = all), and the
local time and IANA time zone (`zoneinfo`) their edition arrives at.

Readers with the same languages, categories and countries share one rendered edition (`Edition`,
named by `Edition.key`; '' is the edition of every story in one language, what every reader got
before choices existed).

When: the edition of UTC day D is due on the reader's local day D + 1 at their delivery time, or as
soon as D is complete (its end, 00:00 UTC on D + 1) when that local time comes earlier (east of
UTC, early in the morning). Either moment falls on the local date D + 1 in the reader's zone, so
each reader's local day gets at most one edition, and consecutive UTC days give consecutive local
days.

    choices = parse_choices(langs="ja,en", categories="sports,science", countries="jp", at="07:00",
                            time_zone="Asia/Tokyo")
    edition_of(choices).key                         # 'also=en;categories=science,sports;countries=JP'
    delivery_moment(date(2026, 11, 2), choices.delivery_time, choices.time_zone)
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, date, datetime, time, timedelta
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError, available_timezones

from newsdedup_dagster.shared.presentation.labels import locale_of
from newsdedup_dagster.shared.presentation.stories import (
    SOURCES_SHOWN,
    DigestView,
    SourceLink,
    StoryRecord,
    clean_line,
    safe_url,
)
from newsdedup_dagster.shared.presentation.taxonomy import CATEGORIES

__all__ = ["Choices", "Edition", "delivery_moment", "edition_of", "local_day", "parse_categories", "read_as_is",
           "parse_choices", "parse_countries", "parse_langs", "parse_time", "parse_time_zone"]

_LANG = re.compile(r"^[a-z]{2,3}(-[A-Za-z0-9]{2,8})?$")
_TIME = re.compile(r"^([01]?\d|2[0-3]):([0-5]\d)$")
# ISO 3166-1 user-assigned codes and CLDR groupings: no country (as stages/publish/countries.py).
_NOT_A_COUNTRY = re.compile(r"^(AA|Q[M-Z]|X[A-Z]|ZZ|EU|EZ|UN)$")
MAX_CHOICES = 40      # languages, categories or countries one reader may list


@dataclass(frozen=True)
class Choices:
    """One reader's choices, checked."""

    lang: str                              # the digest's language
    also_reads: tuple[str, ...] = ()       # further languages read, in order of preference
    categories: tuple[str, ...] = ()       # taxonomy order; () = all
    countries: tuple[str, ...] = ()        # sorted ISO 3166-1 alpha-2; () = all
    delivery_time: time = time(0, 0)
    time_zone: str = "UTC"


@dataclass(frozen=True)
class Edition:
    """What a group of readers with the same choices receive (the delivery time is no part of it)."""

    lang: str
    also_reads: tuple[str, ...] = ()
    categories: tuple[str, ...] = ()
    countries: tuple[str, ...] = ()

    @property
    def key(self) -> str:
        parts = [f"{name}={','.join(values)}" for name, values in
                 (("also", self.also_reads), ("categories", self.categories), ("countries", self.countries)) if values]
        return ";".join(parts)

    def wants(self, category: str | None, countries: tuple[str, ...] | frozenset[str]) -> bool:
        """Whether a story of this briefing category, carried by outlets of these countries, is
        in the edition (a story without a category is in no category's edition)."""
        if self.categories and category not in self.categories:
            return False
        return not self.countries or bool(set(self.countries) & set(countries))


def read_as_is(view: DigestView, records: list[StoryRecord], edition: Edition) -> DigestView:
    """`view` (built in the edition's language) for a reader who also reads `edition.also_reads`:
    a story with no text in their first language shows its own article in the first other
    language they read that it has, as it is (untranslated, marked with its language), instead of
    the pivot language's; and every story lists its articles in the reader's languages first, in
    their order of preference, linked as they are."""
    if not edition.also_reads:
        return view
    order = {lang: n for n, lang in enumerate((edition.lang, *edition.also_reads))}
    by_id = {r.story_id: r for r in records}
    for story in view.stories:
        record = by_id.get(story.story_id)
        if record is None:
            continue
        if story.is_original:
            read = next((lang for lang in edition.also_reads if lang in record.native), None)
            if read is not None and story.headline_lang != read:
                title, summary = record.native[read]
                story.headline, story.headline_lang = clean_line(title), read
                story.summary, story.summary_lang = clean_line(summary), read
        ranked = sorted(record.sources, key=lambda x: order.get(x.lang or "", len(order)))   # stable: outlets' order kept
        story.sources = [SourceLink(clean_line(x.name), safe_url(x.url) or "", x.lang) for x in ranked[:SOURCES_SHOWN]]
    return view


def edition_of(choices: Choices) -> Edition:
    return Edition(choices.lang, choices.also_reads, choices.categories, choices.countries)


def delivery_moment(day: date, delivery_time: time, time_zone: str) -> datetime:
    """The instant (UTC) the edition of UTC day `day` is due for a reader at `delivery_time` in
    `time_zone`: that local time on the local date day + 1, but never before the day is over. A
    local time the clock skips (a spring-forward gap) is read with the offset before the change."""
    day_end = datetime.combine(day + timedelta(days=1), time(0), tzinfo=UTC)
    local = datetime.combine(day + timedelta(days=1), delivery_time, tzinfo=ZoneInfo(time_zone))
    return max(day_end, local.astimezone(UTC))


def local_day(moment: datetime, time_zone: str) -> date:
    return moment.astimezone(ZoneInfo(time_zone)).date()


# ------------------------------------------------------------------------ parsing (CLI input)
def _items(value: str | None) -> list[str]:
    items = [x.strip() for x in (value or "").split(",") if x.strip()]
    if len(items) > MAX_CHOICES:
        raise ValueError(f"at most {MAX_CHOICES} values")
    return items


def parse_langs(value: str) -> tuple[str, ...]:
    """'ja,en,fr' -> ('ja', 'en', 'fr'): the first is the digest's language; repeats dropped."""
    langs = tuple(dict.fromkeys(_items(value)))
    if not langs:
        raise ValueError("at least one language")
    for lang in langs:
        if not _LANG.match(lang):
            raise ValueError(f"{lang!r} is not a language code (e.g. en, ja, pt-BR)")
    return langs


def parse_categories(value: str | None) -> tuple[str, ...]:
    """Briefing categories (shared/presentation/taxonomy.py), in the taxonomy's order; '' or 'all' = all."""
    items = [x.lower() for x in _items(value)]
    if items == ["all"]:
        return ()
    unknown = [x for x in items if x not in CATEGORIES]
    if unknown:
        raise ValueError(f"unknown categories {unknown!r} (one of: {', '.join(CATEGORIES)})")
    return tuple(c for c in CATEGORIES if c in items)


def parse_countries(value: str | None) -> tuple[str, ...]:
    """ISO 3166-1 alpha-2 codes CLDR names as a country, sorted; '' or 'all' = all."""
    items = [x.upper() for x in _items(value)]
    if items == ["ALL"]:
        return ()
    known = locale_of("en").territories
    bad = [x for x in items if not re.fullmatch(r"[A-Z]{2}", x) or _NOT_A_COUNTRY.match(x) or x not in known]
    if bad:
        raise ValueError(f"not country codes (ISO 3166-1 alpha-2, e.g. FR, JP): {bad!r}")
    return tuple(sorted(set(items)))


def parse_time(value: str) -> time:
    """'07:00' (24-hour clock, HH:MM)."""
    match = _TIME.match((value or "").strip())
    if not match:
        raise ValueError(f"{value!r} is not a time of day (HH:MM, 24-hour clock)")
    return time(int(match.group(1)), int(match.group(2)))


def parse_time_zone(value: str) -> str:
    """An IANA time zone name the standard library knows ('Asia/Tokyo', 'UTC')."""
    name = (value or "").strip()
    # A name is looked up only when it is one of the known keys: ZoneInfo alone would open paths.
    if name not in _zone_names():
        raise ValueError(f"{value!r} is not an IANA time zone name (e.g. Europe/Paris, Asia/Tokyo, UTC)")
    try:
        ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError) as exc:
        raise ValueError(f"{value!r}: {exc}") from None
    return name


_ZONES: frozenset[str] | None = None


def _zone_names() -> frozenset[str]:
    global _ZONES
    if _ZONES is None:
        _ZONES = frozenset(available_timezones()) | {"UTC"}
    return _ZONES


def parse_choices(langs: str, categories: str | None = None, countries: str | None = None, at: str = "00:00",
                  time_zone: str = "UTC") -> Choices:
    first, *rest = parse_langs(langs)
    return Choices(first, tuple(rest), parse_categories(categories), parse_countries(countries), parse_time(at),
                   parse_time_zone(time_zone))
