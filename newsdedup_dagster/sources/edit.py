"""Adding entries to the sources file without losing what a person wrote there.

The file is read back through ruamel.yaml's round-trip mode, so its comments, key order, quoting
and flow or block style stay as they were; new entries are appended to `sources:` in the style of
the entries already there (one flow mapping a line, as in the starter file, or blocks). The result
is validated by the loader the pipeline uses (`ingest.sources.parse_sources_yaml`) before it
replaces the file, in one rename: a reader never sees half a file.

Also here: the identity of a feed address for duplicates (`feed_url_key`), an id proposed from a
name, a country proposed from a host's country-code domain, and the merge plan of an OPML import.
Pure but for `write_sources_file`.
"""

from __future__ import annotations

import io
import os
import re
import tempfile
import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlsplit

from ruamel.yaml import YAML
from ruamel.yaml.comments import CommentedMap, CommentedSeq
from ruamel.yaml.scalarstring import DoubleQuotedScalarString

from newsdedup_dagster.shared.http.canonical_url import canonical_url, public_suffix, registrable_domain
from newsdedup_dagster.shared.sources import ISO_3166_1_ALPHA2, SOURCE_ID_RE, Source, parse_sources_yaml
from newsdedup_dagster.sources.opml import OpmlDocument, Refusal

# Country-code domains used as generic ones (.io, .co, .tv, .fm ...): no country follows from them.
GENERIC_CCTLDS = frozenset({"ac", "ad", "ai", "am", "as", "cc", "co", "fm", "gg", "io", "la", "ly", "me", "ms",
                            "nu", "sh", "so", "st", "tk", "to", "tv", "vc", "ws"})


@dataclass(frozen=True)
class NewSource:
    """An entry to append to the sources file."""

    id: str
    name: str
    feed_url: str
    language: str
    country: str
    outlet: str | None = None
    category: str | None = None
    enabled: bool = True
    allow_private: bool = False

    def as_mapping(self) -> dict:
        values = {"id": self.id, "name": self.name, "feed_url": self.feed_url, "language": self.language,
                  "country": self.country}
        if self.outlet:
            values["outlet"] = self.outlet
        if self.category:
            values["category"] = self.category
        if not self.enabled:
            values["enabled"] = False
        if self.allow_private:
            values["allow_private"] = True
        return values


def feed_url_key(url: str) -> str:
    """Two addresses of one feed have one key: the canonical URL (host case, default port, tracking
    parameters, fragment) without its scheme and trailing slash, since http and https serve the
    same feed."""
    canonical = canonical_url(url.strip())
    return re.sub(r"^https?://", "", canonical, flags=re.IGNORECASE).rstrip("/")


def country_from_host(host: str | None) -> str | None:
    """GB from bbc.co.uk, FR from lemonde.fr; None for .com, .org and generic-use country codes."""
    if not host:
        return None
    suffix = public_suffix(host.lower().rstrip("."))
    code = suffix.rsplit(".", 1)[-1] if suffix else ""
    code = {"uk": "gb"}.get(code, code)
    if len(code) != 2 or code in GENERIC_CCTLDS:
        return None
    return code.upper() if code.upper() in ISO_3166_1_ALPHA2 else None


def slug(text: str) -> str:
    """Lower-case ASCII letters, digits and '-' from any name; '' when nothing is left."""
    ascii_text = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode("ascii")
    return re.sub(r"-{2,}", "-", re.sub(r"[^a-z0-9]+", "-", ascii_text.lower())).strip("-")[:56].strip("-")


def propose_id(name: str | None, feed_url: str, language: str | None, taken: set[str]) -> str:
    """A free id: the name's slug (else the feed host's outlet) with the language, as the starter
    file names them ('bbc-world-en'); '-2', '-3' ... when taken."""
    host = urlsplit(feed_url).hostname or ""
    base = slug(name or "") or slug(registrable_domain(host).split(".")[0] if host else "") or "feed"
    if language and not base.endswith(f"-{language}"):
        base = f"{base}-{language}"
    candidate, number = base, 2
    while candidate in taken or not SOURCE_ID_RE.match(candidate):
        candidate = f"{base[:58]}-{number}"
        number += 1
    return candidate


@dataclass
class ImportPlan:
    """What an OPML import adds, what it leaves out as duplicates, and what it refuses."""

    added: list[NewSource] = field(default_factory=list)
    duplicates: list[str] = field(default_factory=list)   # one line each
    refused: list[Refusal] = field(default_factory=list)


def plan_import(document: OpmlDocument, existing: Iterable[Source], *, default_language: str | None = None,
                default_country: str | None = None, enabled: bool = True) -> ImportPlan:
    """Each OPML feed becomes a new entry, a duplicate (its address already in the sources file or
    earlier in this file) or a refusal. Language: the outline's, else `default_language`. Country:
    the outline's `newsdedup:country`, else the site's (or feed's) country-code domain, else
    `default_country`: in a list of many feeds the flag fills the gaps, a .de feed stays German.
    An id written in the file (`newsdedup:id`) is kept; else one is proposed."""
    plan = ImportPlan(refused=list(document.refused))
    existing = list(existing)
    by_key = {feed_url_key(s.feed_url): f"source {s.id!r} of the sources file" for s in existing}
    existing_ids = {s.id: feed_url_key(s.feed_url) for s in existing}
    taken = set(existing_ids)
    ids_in_file: dict[str, int] = {}
    for feed in document.feeds:
        key = feed_url_key(feed.feed_url)
        if key in by_key:
            plan.duplicates.append(f"line {feed.line}: {feed.feed_url} is already {by_key[key]}")
            continue
        language = feed.language or default_language
        if not language:
            plan.refused.append(Refusal(feed.line, "no language: the outline has no 'language' attribute "
                                                   "(give one with --language)"))
            continue
        country = _country(feed, default_country)
        if country is None:
            plan.refused.append(Refusal(feed.line, "no country: none written, none follows from the domain "
                                                   "(give one with --country)"))
            continue
        if feed.source_id is not None:
            problem = _written_id_problem(feed.source_id, key, existing_ids, ids_in_file)
            if problem:
                plan.refused.append(Refusal(feed.line, problem))
                continue
            source_id = feed.source_id
            ids_in_file[source_id] = feed.line
        else:
            source_id = propose_id(feed.title, feed.feed_url, language, taken | set(ids_in_file))
        taken.add(source_id)
        by_key[key] = f"listed on line {feed.line} of this file"
        plan.added.append(NewSource(
            id=source_id, name=feed.title or urlsplit(feed.feed_url).hostname or source_id, feed_url=feed.feed_url,
            language=language, country=country, outlet=site_outlet(feed.feed_url, feed.site_url),
            category=feed.category, enabled=enabled if feed.enabled is None else feed.enabled))
    return plan


def _country(feed, default_country: str | None) -> str | None:
    written = (feed.country or "").upper()
    if written in ISO_3166_1_ALPHA2:
        return written
    return (country_from_host(urlsplit(feed.site_url).hostname if feed.site_url else None)
            or country_from_host(urlsplit(feed.feed_url).hostname) or default_country)


def _written_id_problem(source_id: str, key: str, existing_ids: dict[str, str], ids_in_file: dict[str, int]
                        ) -> str | None:
    if not SOURCE_ID_RE.match(source_id):
        return f"id {source_id[:70]!r} is not a slug (lower-case letters, digits, '-' or '_')"
    if source_id in ids_in_file:
        return f"duplicate id {source_id!r} (first on line {ids_in_file[source_id]})"
    if source_id in existing_ids and existing_ids[source_id] != key:
        return f"id {source_id!r} is already used by another feed in the sources file"
    return None


def site_outlet(feed_url: str, site_url: str | None) -> str | None:
    """The site's outlet when it differs from the feed host's (feeds.bbci.co.uk for bbc.co.uk)."""
    if not site_url:
        return None
    feed_host, site_host = urlsplit(feed_url).hostname, urlsplit(site_url).hostname
    if not feed_host or not site_host:
        return None
    outlet = registrable_domain(site_host)
    return outlet if outlet and outlet != registrable_domain(feed_host) else None


# ------------------------------------------------------------------ the file


def _round_trip(text: str) -> YAML:
    yaml = YAML(typ="rt")
    yaml.preserve_quotes = True
    yaml.width = 4096   # never fold a long line a person wrote on one
    # The list's own indentation, as found ("sources:\n  - ..." in the starter file).
    match = re.search(r"^sources:[^\n]*\n(?:\s*(?:#[^\n]*)?\n)*( *)- ", text, flags=re.MULTILINE)
    offset = len(match.group(1)) if match else 2
    yaml.indent(mapping=2, sequence=offset + 2, offset=offset)
    return yaml


_PLAIN = re.compile(r"[A-Za-z0-9][A-Za-z0-9 ._/-]*[A-Za-z0-9._/-]|[A-Za-z0-9]")
_YAML_WORDS = frozenset({"true", "false", "yes", "no", "on", "off", "null", "y", "n"})


def _scalar(key: str, value):
    """A value as the entry holds it: addresses always in double quotes (as the starter file writes
    them), other text in quotes when plain YAML could read it as something else or end it early
    ('ceid=US:en', '# 1', 'yes')."""
    if not isinstance(value, str):
        return value
    if key == "feed_url" or not _PLAIN.fullmatch(value) or value.lower() in _YAML_WORDS \
            or re.fullmatch(r"[0-9._-]+", value):
        return DoubleQuotedScalarString(value)
    return value


def append_sources(text: str, entries: Iterable[NewSource]) -> str:
    """The sources file's text with `entries` appended to its list; everything else as it was."""
    entries = list(entries)
    if not entries:
        return text
    yaml = _round_trip(text)
    document = yaml.load(text)
    sources = document["sources"]
    if not isinstance(sources, CommentedSeq):
        raise ValueError("the sources file's 'sources:' is not a list")
    flow = bool(sources) and isinstance(sources[-1], CommentedMap) and sources[-1].fa.flow_style()
    for entry in entries:
        mapping = CommentedMap((key, _scalar(key, value)) for key, value in entry.as_mapping().items())
        if flow:
            mapping.fa.set_flow_style()
        sources.append(mapping)
    out = io.StringIO()
    yaml.dump(document, out)
    return out.getvalue()


def write_sources_file(path: Path, text: str) -> list[Source]:
    """Validate `text` as a sources file (raises SourcesConfigError, nothing written) and put it in
    place of `path` by one rename, keeping the file's permissions. Returns its sources."""
    path = Path(path)
    sources = parse_sources_yaml(text, base_dir=path.parent, origin=str(path))
    mode = path.stat().st_mode & 0o7777 if path.exists() else 0o644
    handle, temporary = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as out:
            out.write(text)
            out.flush()
            os.fsync(out.fileno())
        os.chmod(temporary, mode)
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
    return sources
