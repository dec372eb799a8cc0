#!/usr/bin/env python3
"""Render the bundled sample day from its source of truth.

Input:  newsdedup_dagster/sample_data/articles.yaml  (hand-written, invented news)
Output: newsdedup_dagster/sample_data/feeds/<source_id>.xml  one RSS 2.0 / Atom 1.0 / RSS 1.0 (RDF)
                                                              file per source, all items of the day
        newsdedup_dagster/sample_data/sources.yaml         the day's sources, sources-file format
        newsdedup_dagster/sample_data/gold.jsonl           one line per item, gold story/event labels

Usage:
    python bench/make_sample_feeds.py            # (re)write the outputs next to articles.yaml
    python bench/make_sample_feeds.py --check    # exit 1 if the committed outputs are stale
    python bench/make_sample_feeds.py --stats    # print counts only

Everything is deterministic: URLs, GUIDs and ids derive from a hash of (story, source, ordinal),
so re-running on an unchanged articles.yaml reproduces the committed files byte for byte.
Only the standard library and PyYAML are used.
"""

from __future__ import annotations

import argparse
import base64
import collections
import datetime as dt
import email.utils
import hashlib
import json
import re
import sys
import unicodedata
from pathlib import Path
from xml.sax.saxutils import escape as xml_escape

import yaml

REPO_ROOT = Path(__file__).resolve().parent.parent
SAMPLE_DIR = REPO_ROOT / "newsdedup_dagster" / "sample_data"
ARTICLES_PATH = SAMPLE_DIR / "articles.yaml"

# Where a syndicator or an outlet appends tracking parameters when `link: tracking`.
TRACKING_SUFFIX = {
    "guardian-en": "?utm_source=rss&utm_medium=feed&utm_campaign=world-news",
    "yahoo-en": "?utm_source=yahoo&utm_medium=syndication&utm_campaign=partner-feed",
}
DEFAULT_TRACKING_SUFFIX = "?utm_source=rss&utm_medium=feed"

# Naver News press ids ("oid") of the outlets whose copies it carries in the sample.
NAVER_OID = {"yonhap-ko": "001", "etnews-ko": "030", "ccdailynews-ko": "656", "via": "422"}
NAVER_SECTION = {"yonhap-ko": "104", "etnews-ko": "105", "ccdailynews-ko": "102", "via": "102"}

DEFAULT_SECTION = {
    "reuters-en": "world",
    "guardian-en": "world",
    "lemonde-fr": "international",
    "franceinfo-fr": "monde",
    "xinhua-zh": "world",
    "spiegel-de": "ausland",
    "elpais-es": "internacional",
    "tass-ru": "obschestvo",
}

SOURCE_KEYS = ("id", "name", "feed_url", "language", "country", "syndicator", "enabled")


# --------------------------------------------------------------------------- small pure helpers

def stable_hash(*parts: str) -> str:
    return hashlib.sha256("|".join(parts).encode("utf-8")).hexdigest()


def hash_digits(h: str, n: int, salt: str = "") -> str:
    """n decimal digits derived from a hex hash (deterministic, leading zeros kept)."""
    value = int(stable_hash(h, salt), 16)
    return str(value % (10 ** n)).zfill(n)


def hash_alnum(h: str, n: int, alphabet: str = "0123456789abcdefghijklmnopqrstuvwxyz") -> str:
    value = int(stable_hash(h, "alnum"), 16)
    out = []
    for _ in range(n):
        value, r = divmod(value, len(alphabet))
        out.append(alphabet[r])
    return "".join(out)


GERMAN_TRANSLITERATION = str.maketrans({"ä": "ae", "ö": "oe", "ü": "ue", "Ä": "Ae", "Ö": "Oe", "Ü": "Ue", "ß": "ss"})


def slugify(text: str, max_len: int = 80) -> str:
    # German outlets write "Ätna" as "aetna" in URLs; other accents just lose their mark
    text = text.translate(GERMAN_TRANSLITERATION)
    ascii_text = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode("ascii")
    slug = re.sub(r"[^a-z0-9]+", "-", ascii_text.lower()).strip("-")
    if len(slug) > max_len:
        slug = slug[:max_len].rsplit("-", 1)[0]
    return slug


def strip_query(url: str) -> str:
    return re.split(r"[?#]", url, maxsplit=1)[0]


def amp_variant(url: str) -> str:
    """The AMP page of an article URL, the way each publisher in the sample spells it."""
    base = strip_query(url)
    if "://www.theguardian.com/" in base:
        return base.replace("://www.theguardian.com/", "://amp.theguardian.com/")
    if "bbc.co.uk/" in base or "bbc.com/" in base:
        return base + ".amp"
    if base.endswith(".html"):
        return base[: -len(".html")] + ".amp.html"
    return base.rstrip("/") + "/amp/"


def google_news_article_url(original_url: str) -> str:
    """Opaque news.google.com redirect URL.

    Google News RSS links are base64url-encoded protobufs; those starting with
    "CBMi" carry field 1 = 19 and field 4 = the original URL. We encode the
    original URL the same way so the link is realistic (and deterministic).
    """
    raw = original_url.encode("utf-8")
    length = len(raw)
    varint = bytearray()
    while True:
        byte = length & 0x7F
        length >>= 7
        if length:
            varint.append(byte | 0x80)
        else:
            varint.append(byte)
            break
    payload = b"\x08\x13\x22" + bytes(varint) + raw
    token = base64.urlsafe_b64encode(payload).decode("ascii").rstrip("=")
    return f"https://news.google.com/rss/articles/{token}?oc=5"


def parse_offset(tz: str) -> dt.timezone:
    m = re.fullmatch(r"([+-])(\d\d):(\d\d)", tz)
    if not m:
        raise ValueError(f"bad tz offset {tz!r}")
    sign = 1 if m.group(1) == "+" else -1
    return dt.timezone(sign * dt.timedelta(hours=int(m.group(2)), minutes=int(m.group(3))))


def rfc822(moment: dt.datetime) -> str:
    if moment.utcoffset() == dt.timedelta(0):
        return email.utils.format_datetime(moment.astimezone(dt.UTC), usegmt=True)
    return email.utils.format_datetime(moment)


def iso(moment: dt.datetime) -> str:
    text = moment.isoformat(timespec="seconds")
    return text.replace("+00:00", "Z")


def esc(text: str) -> str:
    return xml_escape(text, {'"': "&quot;"})


# --------------------------------------------------------------------------- URL / GUID per outlet

def own_url(source_id: str, item: dict, h: str, local: dt.datetime) -> str:
    """The article URL an outlet would publish for this item (before tracking/AMP variants)."""
    section = item.get("section") or DEFAULT_SECTION.get(source_id, "news")
    slug = slugify(item["title"])
    ymd = local.strftime("%Y%m%d")
    if source_id == "bbc-en":
        path = f"/{section}" if section.startswith("sport") else "/news"
        return f"https://www.bbc.co.uk{path}/articles/c{hash_alnum(h, 10)}o"
    if source_id == "reuters-en":
        return f"https://www.reuters.com/{section}/{slug}-{local:%Y-%m-%d}/"
    if source_id == "guardian-en":
        return f"https://www.theguardian.com/{section}/{local:%Y}/{local:%b}/{local:%d}/{slug}".lower()
    if source_id == "yahoo-en":
        return f"https://www.yahoo.com/news/{slugify(item['title'], 60)}-{hash_digits(h, 9)}.html"
    if source_id == "nhk-ja":
        return f"https://www3.nhk.or.jp/news/html/{ymd}/k1001{hash_digits(h, 7)}1000.html"
    if source_id == "asahi-ja":
        code = hash_alnum(h, 7, "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ")
        return f"https://www.asahi.com/articles/ASTB{local.day:02d}{code}UTIL0{hash_digits(h, 2)}.html"
    if source_id == "lemonde-fr":
        return (f"https://www.lemonde.fr/{section}/article/{local:%Y/%m/%d}/"
                f"{slug}_66{hash_digits(h, 5)}_{hash_digits(section, 4)}.html")
    if source_id == "franceinfo-fr":
        return f"https://www.francetvinfo.fr/{section}/{slug}_70{hash_digits(h, 5)}.html"
    if source_id == "xinhua-zh":
        return f"https://www.news.cn/{section}/{ymd}/{stable_hash(h, 'xinhua')[:32]}/c.html"
    if source_id == "people-zh":
        return f"http://world.people.com.cn/n1/{local:%Y}/{local:%m%d}/c1002-40{hash_digits(h, 6)}.html"
    if source_id == "yonhap-ko":
        return f"https://www.yna.co.kr/view/AKR{ymd}{hash_digits(h, 6)}00{hash_digits(h, 1, 'y')}"
    if source_id == "ccdailynews-ko":
        return f"https://www.ccdailynews.com/news/articleView.html?idxno=22{hash_digits(h, 5)}"
    if source_id == "etnews-ko":
        return f"https://www.etnews.com/{ymd}000{hash_digits(h, 3)}"
    if source_id == "dw-de":
        return f"https://www.dw.com/de/{slug}/a-7{hash_digits(h, 7)}"
    if source_id == "spiegel-de":
        u = stable_hash(h, "spiegel")
        uuid = f"{u[:8]}-{u[8:12]}-{u[12:16]}-{u[16:20]}-{u[20:32]}"
        return f"https://www.spiegel.de/{section}/{slug}-a-{uuid}"
    if source_id == "elpais-es":
        return f"https://elpais.com/{section}/{local:%Y-%m-%d}/{slug}.html"
    if source_id == "tass-ru":
        return f"https://tass.ru/{section}/2{hash_digits(h, 7)}"
    raise ValueError(f"no URL scheme for source {source_id!r}")


def outlet_link(source_id: str, url: str) -> str:
    """Link as the outlet's own feed prints it (some always add tracking parameters)."""
    if source_id == "bbc-en":
        return url + "?at_medium=RSS&at_campaign=rss"
    if source_id == "asahi-ja":
        return url + "?ref=rss"
    if source_id == "yonhap-ko":
        return url + "?input=1195m"
    if source_id == "franceinfo-fr":
        return url + "#xtor=RSS-3-[lestitres]"
    return url


def outlet_guid(source_id: str, url: str, link: str, h: str) -> str:
    if source_id == "bbc-en":
        return strip_query(url) + "#0"
    if source_id == "reuters-en":
        return f"tag:reuters.com,2026:newsml_L{hash_alnum(h, 9, '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ')}:0"
    if source_id in ("guardian-en", "yonhap-ko", "franceinfo-fr"):
        return strip_query(url)
    if source_id == "dw-de":
        return "https://www.dw.com/a-" + url.rsplit("/a-", 1)[1]
    if source_id == "yahoo-en":
        u = stable_hash(h, "yahoo")
        return f"{u[:8]}-{u[8:12]}-3{u[13:16]}-a{u[17:20]}-{u[20:32]}"
    return link


# --------------------------------------------------------------------------- model

def load_articles(path: Path = ARTICLES_PATH) -> dict:
    with open(path, encoding="utf-8") as fh:
        return yaml.safe_load(fh)


def build_items(doc: dict) -> list[dict]:
    """Expand articles.yaml into one record per feed item, with final link/guid/timestamps.

    Originals are resolved before the copies that point at them (`dup_of`), so a copy's
    link can be the original's exact URL, its AMP page, a tracking variant or an opaque
    Google News redirect.
    """
    day = dt.date.fromisoformat(str(doc["day"]))
    sources = {s["id"]: s for s in doc["sources"]}
    items: list[dict] = []
    for story in doc["stories"]:
        ordinal: collections.Counter = collections.Counter()
        story_items = []
        for raw in story["items"]:
            src = raw["src"]
            if src not in sources:
                raise ValueError(f"{story['story']}: unknown source {src!r}")
            ordinal[src] += 1
            hh, mm = (int(x) for x in str(raw["t"]).split(":"))
            published = dt.datetime(day.year, day.month, day.day, hh, mm, tzinfo=dt.UTC)
            story_items.append({
                "raw": raw,
                "source": src,
                "h": stable_hash(story["story"], src, str(ordinal[src])),
                "published": published,
                "local": published.astimezone(parse_offset(sources[src]["tz"])),
                "story": story["story"],
                "event": story.get("event"),
            })
        by_source = collections.defaultdict(list)
        for it in story_items:
            by_source[it["source"]].append(it)
        # originals first, then copies (a copy may only point at an original)
        for it in sorted(story_items, key=lambda x: "dup_of" in x["raw"]):
            raw, src, h = it["raw"], it["source"], it["h"]
            original = None
            if "dup_of" in raw:
                candidates = by_source.get(raw["dup_of"], [])
                if len(candidates) != 1 or "link" not in candidates[0]:
                    raise ValueError(f"{story['story']}: dup_of {raw['dup_of']!r} must name exactly "
                                     f"one original item of this story")
                original = candidates[0]
            resolved = resolve_link(src, raw, h, it["local"], original)
            it.update(resolved)
            it["origin_name"] = (sources[original["source"]]["name"] if original
                                 else raw.get("via_name"))
            it["dup_of"] = original["link"] if original else None
        items.extend(story_items)
    items.sort(key=lambda x: (x["published"], x["source"], x["link"]))
    validate(items, day)
    return items


def resolve_link(src: str, raw: dict, h: str, local: dt.datetime, original: dict | None) -> dict:
    """link (as printed in the feed), guid, canonical (the article URL without feed tracking),
    origin_url / origin_site (the original article a copy points at, if any) for one item."""
    mode = raw.get("link")
    if "url" in raw:
        link = raw["url"]
        return {"link": link, "guid": raw.get("guid", link), "canonical": link,
                "origin_url": None, "origin_site": None}
    if original is not None:
        origin = original["canonical"]
    elif "via" in raw:
        origin = raw["via"]
    else:
        origin = None
    origin_site = sources_site_of(origin) if origin else None

    def done(link: str, guid: str, canonical: str | None = None) -> dict:
        return {"link": link, "guid": guid, "canonical": canonical or link,
                "origin_url": origin, "origin_site": origin_site}

    if src == "gnews-en":
        if origin is None:
            raise ValueError("gnews-en items need dup_of or via")
        opaque = google_news_article_url(origin)
        token = opaque.split("/articles/")[1].split("?")[0]
        if mode == "same":
            return done(original["link"], token)
        if mode == "amp":
            return done(amp_variant(origin), token)
        return done(opaque, token)
    if src == "naver-ko":
        key = original["source"] if original else "via"
        link = (f"https://n.news.naver.com/mnews/article/{NAVER_OID[key]}/00{hash_digits(h, 8)}"
                f"?sid={NAVER_SECTION[key]}")
        return done(link, link)
    if original is not None and mode in ("same", "tracking", "amp"):
        if mode == "same":
            # the very same article URL (and GUID) printed by a second source
            return done(original["link"], raw.get("guid") or original["guid"], original["canonical"])
        if mode == "amp":
            link = amp_variant(origin)
        else:
            link = strip_query(origin) + TRACKING_SUFFIX.get(src, DEFAULT_TRACKING_SUFFIX)
        return done(link, raw.get("guid") or link, origin)
    # the outlet's own article (also the default for yahoo-en copies: Yahoo hosts them)
    url = own_url(src, raw, h, local)
    if raw.get("amp"):
        url = amp_variant(url)
    if mode == "tracking":
        link = url + TRACKING_SUFFIX.get(src, DEFAULT_TRACKING_SUFFIX)
    else:
        link = outlet_link(src, url)
    return done(link, raw.get("guid") or outlet_guid(src, url, link, h), url)


def sources_site_of(url: str) -> str:
    m = re.match(r"(https?://[^/]+)", url)
    return m.group(1) if m else url


def validate(items: list[dict], day: dt.date) -> None:
    seen_links, seen_guids = set(), set()
    for it in items:
        if it["published"].date() != day:
            raise ValueError(f"{it['story']}: item outside {day}")
        key = (it["source"], it["link"])
        if key in seen_links:
            raise ValueError(f"duplicate link within {it['source']}: {it['link']}")
        seen_links.add(key)
        gkey = (it["source"], it["guid"])
        if gkey in seen_guids:
            raise ValueError(f"duplicate guid within {it['source']}: {it['guid']}")
        seen_guids.add(gkey)
        if not it["raw"].get("title"):
            raise ValueError(f"{it['story']}: item without title")


# --------------------------------------------------------------------------- rendering

def title_suffix_name(title: str) -> str:
    return title.rsplit(" - ", 1)[1] if " - " in title else ""


def description_of(source_id: str, it: dict) -> str:
    raw = it["raw"]
    if source_id == "gnews-en":
        base_title, name = raw["title"].rsplit(" - ", 1)
        return (f'<a href="{it["link"]}" target="_blank">{base_title}</a>'
                f'&nbsp;&nbsp;<font color="#6f6f6f">{name}</font>')
    return raw.get("summary", "")


def render_rss2(src: dict, items: list[dict]) -> str:
    sid = src["id"]
    out = [f'<?xml version="1.0" encoding="{src.get("encoding", "UTF-8")}"?>',
           '<rss version="2.0" xmlns:atom="http://www.w3.org/2005/Atom" '
           'xmlns:dc="http://purl.org/dc/elements/1.1/">',
           "<channel>",
           f"<title>{esc(src['feed_title'])}</title>",
           f"<link>{esc(src['site'])}</link>",
           f"<description>{esc(src['feed_description'])}</description>",
           f"<language>{esc(src['language'])}</language>",
           f'<atom:link href="{esc(src["feed_url"])}" rel="self" type="application/rss+xml"/>']
    if items:
        out.append(f"<lastBuildDate>{rfc822(items[0]['local'])}</lastBuildDate>")
    for it in items:
        raw = it["raw"]
        permalink = it["guid"] == it["link"]
        out.append("<item>")
        out.append(f"<title>{esc(raw['title'])}</title>")
        out.append(f"<link>{esc(it['link'])}</link>")
        desc = description_of(sid, it)
        if sid in ("spiegel-de", "elpais-es"):
            out.append(f"<description><![CDATA[<p>{desc}</p>]]></description>")
        else:
            out.append(f"<description>{esc(desc)}</description>")
        attr = "" if permalink else ' isPermaLink="false"'
        out.append(f"<guid{attr}>{esc(it['guid'])}</guid>")
        out.append(f"<pubDate>{rfc822(it['local'])}</pubDate>")
        if raw.get("section") and sid not in ("gnews-en", "yahoo-en", "naver-ko"):
            out.append(f"<category>{esc(raw['section'].split('/')[-1])}</category>")
        if sid in ("gnews-en", "yahoo-en") and it["origin_site"]:
            # Google News names the outlet as in its title suffix ("- BBC"); Yahoo uses the outlet name
            name = title_suffix_name(raw["title"]) if sid == "gnews-en" else it["origin_name"]
            out.append(f'<source url="{esc(it["origin_site"])}">{esc(name)}</source>')
        if sid == "guardian-en":
            out.append("<dc:creator>Guardian staff and agencies</dc:creator>")
        out.append("</item>")
    out += ["</channel>", "</rss>", ""]
    return "\n".join(out)


def render_atom(src: dict, items: list[dict]) -> str:
    out = [f'<?xml version="1.0" encoding="{src.get("encoding", "UTF-8")}"?>',
           f'<feed xmlns="http://www.w3.org/2005/Atom" xml:lang="{esc(src["language"])}">',
           f"<title>{esc(src['feed_title'])}</title>",
           f"<subtitle>{esc(src['feed_description'])}</subtitle>",
           f'<link rel="alternate" type="text/html" href="{esc(src["site"])}"/>',
           f'<link rel="self" type="application/atom+xml" href="{esc(src["feed_url"])}"/>',
           f"<id>{esc(src['feed_url'])}</id>",
           f"<updated>{iso(items[0]['local']) if items else '2026-11-02T00:00:00Z'}</updated>",
           f"<author><name>{esc(src['name'])}</name></author>"]
    for it in items:
        raw = it["raw"]
        out += ["<entry>",
                f"<title>{esc(raw['title'])}</title>",
                f'<link rel="alternate" type="text/html" href="{esc(it["link"])}"/>',
                f"<id>{esc(it['guid'])}</id>",
                f"<published>{iso(it['local'])}</published>",
                f"<updated>{iso(it['local'])}</updated>",
                f'<summary type="text">{esc(raw.get("summary", ""))}</summary>']
        if raw.get("section"):
            out.append(f'<category term="{esc(raw["section"].split("/")[-1])}"/>')
        out.append("</entry>")
    out += ["</feed>", ""]
    return "\n".join(out)


def render_rdf(src: dict, items: list[dict]) -> str:
    out = [f'<?xml version="1.0" encoding="{src.get("encoding", "UTF-8")}"?>',
           '<rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#" '
           'xmlns="http://purl.org/rss/1.0/" xmlns:dc="http://purl.org/dc/elements/1.1/">',
           f'<channel rdf:about="{esc(src["feed_url"])}">',
           f"<title>{esc(src['feed_title'])}</title>",
           f"<link>{esc(src['site'])}</link>",
           f"<description>{esc(src['feed_description'])}</description>",
           f"<dc:language>{esc(src['language'])}</dc:language>"]
    if items:
        out.append(f"<dc:date>{iso(items[0]['local'])}</dc:date>")
    out.append("<items><rdf:Seq>")
    out += [f'<rdf:li rdf:resource="{esc(it["link"])}"/>' for it in items]
    out += ["</rdf:Seq></items>", "</channel>"]
    for it in items:
        raw = it["raw"]
        out += [f'<item rdf:about="{esc(it["link"])}">',
                f"<title>{esc(raw['title'])}</title>",
                f"<link>{esc(it['link'])}</link>",
                f"<description>{esc(raw.get('summary', ''))}</description>",
                f"<dc:date>{iso(it['local'])}</dc:date>",
                "</item>"]
    out += ["</rdf:RDF>", ""]
    return "\n".join(out)


RENDERERS = {"rss2": render_rss2, "atom": render_atom, "rdf": render_rdf}


def render_feed(src: dict, items: list[dict]) -> bytes:
    """One source's feed, newest item first, encoded as declared (strict: fails on unencodable text)."""
    newest_first = sorted(items, key=lambda x: (x["published"], x["link"]), reverse=True)
    text = RENDERERS[src["format"]](src, newest_first)
    return text.encode(src.get("encoding", "utf-8"), errors="strict")


SOURCES_HEADER = """\
# Sources of the bundled sample day 2026-11-02 (rendered by bench/make_sample_feeds.py
# from articles.yaml; do not edit by hand).
#
# Sources-file format (same as newsdedup_dagster/sources/starter_sources.yaml):
#   sources:                 top-level list of mappings, one per feed
#     - id: bbc-en           slug [a-z0-9-], unique
#       name: BBC News       display name
#       feed_url: https://…  http/https RSS or Atom URL, unique
#       language: en         ISO 639-1 code of the feed's items
#       country: GB          ISO 3166-1 alpha-2 code of the outlet
#       syndicator: false    true for aggregators that republish other outlets' articles
#                            (news.google.com, news.naver.com, v.daum.net, yahoo, msn); default false
#       enabled: true        default true
#       replay_file: feeds/bbc-en.xml   optional: a recorded feed body (path relative to this
#                            file) read instead of fetching feed_url, for offline replay
#
# The feed_url values below look like the outlets' real feeds but the sample content is
# invented; the replay files are what the demo reads.
"""


def render_sources_yaml(doc: dict) -> bytes:
    # Written by hand rather than yaml.safe_dump so the bytes do not depend on the PyYAML
    # version (the test compares them); JSON string literals are valid YAML scalars.
    lines = ["sources:"]
    for s in doc["sources"]:
        row = {k: s[k] for k in SOURCE_KEYS if k in s}
        row.setdefault("syndicator", False)
        row.setdefault("enabled", True)
        row["replay_file"] = f"feeds/{s['id']}.xml"
        for n, (key, value) in enumerate(row.items()):
            prefix = "  - " if n == 0 else "    "
            lines.append(f"{prefix}{key}: {json.dumps(value, ensure_ascii=False)}")
    return (SOURCES_HEADER + "\n".join(lines) + "\n").encode("utf-8")


def gold_records(items: list[dict]) -> list[dict]:
    return [{
        "url": it["link"],
        "guid": it["guid"],
        "source": it["source"],
        "lang": it["lang"],
        "published_at": it["published"].strftime("%Y-%m-%dT%H:%M:%SZ"),
        "title": it["raw"]["title"],
        "story": it["story"],
        "event": it["event"],
        "dup_of": it["dup_of"],
    } for it in items]


def render_all(articles_path: Path = ARTICLES_PATH) -> dict[str, bytes]:
    """All generated files, keyed by path relative to the sample_data directory."""
    doc = load_articles(articles_path)
    items = build_items(doc)
    sources = {s["id"]: s for s in doc["sources"]}
    for it in items:
        it["lang"] = sources[it["source"]]["language"]
    files: dict[str, bytes] = {}
    for sid, src in sources.items():
        files[f"feeds/{sid}.xml"] = render_feed(src, [it for it in items if it["source"] == sid])
    files["sources.yaml"] = render_sources_yaml(doc)
    files["gold.jsonl"] = "".join(
        json.dumps(rec, ensure_ascii=False) + "\n" for rec in gold_records(items)).encode("utf-8")
    return files


# --------------------------------------------------------------------------- stats

def stats(gold: list[dict]) -> dict:
    stories = collections.Counter(r["story"] for r in gold)
    per_story_langs = collections.defaultdict(set)
    for r in gold:
        per_story_langs[r["story"]].add(r["lang"])
    return {
        "items": len(gold),
        "sources": len({r["source"] for r in gold}),
        "stories": len(stories),
        "stories_with_3plus_languages": sum(1 for s in per_story_langs.values() if len(s) >= 3),
        "single_item_stories": sum(1 for n in stories.values() if n == 1),
        "events": sorted({r["event"] for r in gold if r["event"]}),
        "languages": dict(sorted(collections.Counter(r["lang"] for r in gold).items())),
        "syndicated_or_duplicate_items": sum(1 for r in gold if r["dup_of"]),
        "items_per_hour": dict(sorted(collections.Counter(r["published_at"][11:13] for r in gold).items())),
        "items_per_source": dict(sorted(collections.Counter(r["source"] for r in gold).items())),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--articles", type=Path, default=ARTICLES_PATH)
    parser.add_argument("--out", type=Path, default=None, help="output dir (default: next to articles.yaml)")
    parser.add_argument("--check", action="store_true", help="compare with files on disk, write nothing")
    parser.add_argument("--stats", action="store_true", help="print counts only")
    args = parser.parse_args(argv)
    out_dir = args.out or args.articles.parent
    files = render_all(args.articles)
    gold = [json.loads(line) for line in files["gold.jsonl"].decode("utf-8").splitlines()]
    if args.stats:
        print(json.dumps(stats(gold), ensure_ascii=False, indent=2))
        return 0
    if args.check:
        stale = [rel for rel, data in files.items()
                 if not (out_dir / rel).exists() or (out_dir / rel).read_bytes() != data]
        expected = {f"feeds/{p.name}" for p in (out_dir / "feeds").glob("*.xml")}
        extra = sorted(expected - set(files))
        for rel in stale:
            print(f"stale: {rel}")
        for rel in extra:
            print(f"not generated (remove it): {rel}")
        return 1 if stale or extra else 0
    for rel, data in files.items():
        path = out_dir / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
    print(json.dumps(stats(gold), ensure_ascii=False, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
