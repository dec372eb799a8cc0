"""The sources YAML file: which feeds to ingest.

Format::

    sources:
      - id: bbc-world            # slug, unique
        name: BBC News - World
        feed_url: https://feeds.bbci.co.uk/news/world/rss.xml   # http/https, unique
        language: en             # ISO 639-1
        country: GB              # ISO 3166-1 alpha-2
        syndicator: false        # optional, default false (aggregators such as news.google.com)
        enabled: true            # optional, default true
        replay_file: replay/bbc-world.xml   # optional, relative to this YAML file
        outlet: bbc.co.uk        # optional: the outlet this feed publishes for, when its feed
                                 # host differs (default: registrable domain of feed_url)
        allow_private: false     # optional, default false: true lets this feed (and only this
                                 # feed) reach the non-public networks NEWSDEDUP_FETCH_ALLOW_PRIVATE names
        fetch_article: false     # optional, default true: false: the article stage never fetches
                                 # a page of this feed's items or of its outlet
        category: News/Europe    # optional: a reader's folder, kept from OPML (free text)

`load_sources(path)` validates every entry and raises one
`SourcesConfigError` listing *all* problems, each naming the file and line,
the entry (index and id), the field and what is wrong. A problem with a list
or mapping names its kind and line, never its content, and YAML aliases
(`*name`) are refused: a few nested aliases expand into gigabytes.
"""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import yaml

from newsdedup_dagster.shared.http.canonical_url import feed_outlet, registrable_domain

# ISO 639-1 two-letter language codes (all 183 current codes).
ISO_639_1: frozenset[str] = frozenset(
    """aa ab ae af ak am an ar as av ay az ba be bg bi bm bn bo br bs ca ce ch co cr cs cu cv cy
    da de dv dz ee el en eo es et eu fa ff fi fj fo fr fy ga gd gl gn gu gv ha he hi ho hr ht hu
    hy hz ia id ie ig ii ik io is it iu ja jv ka kg ki kj kk kl km kn ko kr ks ku kv kw ky la lb
    lg li ln lo lt lu lv mg mh mi mk ml mn mr ms mt my na nb nd ne ng nl nn no nr nv ny oc oj om
    or os pa pi pl ps pt qu rm rn ro ru rw sa sc sd se sg si sk sl sm sn so sq sr ss st su sv sw
    ta te tg th ti tk tl tn to tr ts tt tw ty ug uk ur uz ve vi vo wa wo xh yi yo za zh zu""".split()
)

# ISO 3166-1 alpha-2 country codes (all 249 officially assigned) plus XK
# (Kosovo: user-assigned, but used by the EU, IMF and most news sites).
ISO_3166_1_ALPHA2: frozenset[str] = frozenset(
    """AD AE AF AG AI AL AM AO AQ AR AS AT AU AW AX AZ BA BB BD BE BF BG BH BI BJ BL BM BN BO BQ
    BR BS BT BV BW BY BZ CA CC CD CF CG CH CI CK CL CM CN CO CR CU CV CW CX CY CZ DE DJ DK DM DO
    DZ EC EE EG EH ER ES ET FI FJ FK FM FO FR GA GB GD GE GF GG GH GI GL GM GN GP GQ GR GS GT GU
    GW GY HK HM HN HR HT HU ID IE IL IM IN IO IQ IR IS IT JE JM JO JP KE KG KH KI KM KN KP KR KW
    KY KZ LA LB LC LI LK LR LS LT LU LV LY MA MC MD ME MF MG MH MK ML MM MN MO MP MQ MR MS MT MU
    MV MW MX MY MZ NA NC NE NF NG NI NL NO NP NR NU NZ OM PA PE PF PG PH PK PL PM PN PR PS PT PW
    PY QA RE RO RS RU RW SA SB SC SD SE SG SH SI SJ SK SL SM SN SO SR SS ST SV SX SY SZ TC TD TF
    TG TH TJ TK TL TM TN TO TR TT TV TW TZ UA UG UM US UY UZ VA VC VE VG VI VN VU WF WS YE YT ZA
    ZM ZW XK""".split()
)

SOURCE_ID_RE = re.compile(r"^[a-z0-9](?:[a-z0-9_-]{0,62}[a-z0-9])?$")
REQUIRED_KEYS = ("id", "name", "feed_url", "language", "country")
OPTIONAL_KEYS = ("syndicator", "enabled", "replay_file", "outlet", "allow_private", "fetch_article", "category")
ALLOWED_KEYS = REQUIRED_KEYS + OPTIONAL_KEYS


@dataclass(frozen=True)
class Source:
    """One configured feed."""

    id: str
    name: str
    feed_url: str
    language: str  # ISO 639-1, lower case
    country: str  # ISO 3166-1 alpha-2, upper case
    syndicator: bool = False
    enabled: bool = True
    replay_file: Path | None = None  # absolute (resolved against the YAML file's folder)
    # The outlet (registrable domain) whose articles this feed publishes; None: its feed URL's.
    outlet: str | None = None
    # An intranet feed: only such a source may reach the networks the deployment allows
    # (NEWSDEDUP_FETCH_ALLOW_PRIVATE); every other source reaches public addresses only.
    allow_private: bool = False
    # False: the article stage never fetches a page of this feed's items or of its outlet.
    fetch_article: bool = True
    # A reader's folder ("News/Europe"), kept through OPML import and export; nothing else reads it.
    category: str | None = None

    @property
    def own_outlet(self) -> str | None:
        """The outlet this feed publishes for (the publisher's own feed keeps its items)."""
        return self.outlet or feed_outlet(self.feed_url)


class SourcesConfigError(ValueError):
    """Raised by load_sources with every problem found, one per line."""

    def __init__(self, problems: list[str]):
        self.problems = list(problems)
        super().__init__("invalid sources configuration:\n  " + "\n  ".join(self.problems))


def normalise_language(code: Any) -> str | None:
    """'en-US', 'EN', 'en_gb' -> 'en'; legacy 'iw'/'in'/'ji' mapped; None if unknown."""
    if not isinstance(code, str):
        return None
    primary = re.split(r"[-_]", code.strip().lower(), maxsplit=1)[0]
    primary = {"iw": "he", "in": "id", "ji": "yi", "jw": "jv"}.get(primary, primary)
    return primary if primary in ISO_639_1 else None


def _feed_url_key(url: str) -> str:
    """Duplicate-detection key for feed URLs: scheme and host are case-insensitive."""
    parts = urlsplit(url)
    return f"{parts.scheme.lower()}://{parts.netloc.lower()}{parts.path}?{parts.query}"


def _line_of(node: yaml.Node | None) -> int | None:
    return node.start_mark.line + 1 if node is not None else None


# A sources file is at most four levels deep (top mapping, list, entry, value); deeper nesting is
# refused before it can exhaust the composer's recursion.
MAX_NESTING = 16
_SHOWN_CHARS = 80


def _one_line(exc: BaseException, limit: int = 300) -> str:
    text = " ".join(str(exc).split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _kind(node: yaml.Node) -> str:
    """What a node is, for an error message (its content is never quoted: it may be huge)."""
    if isinstance(node, yaml.MappingNode):
        return "a mapping"
    if isinstance(node, yaml.SequenceNode):
        return "a list"
    return "a single value"


def _shown(value: Any) -> str:
    """repr of a scalar for an error message, cut to a readable length."""
    text = repr(value)
    return text if len(text) <= _SHOWN_CHARS else text[: _SHOWN_CHARS - 1] + "…"


class _RefusedYAML(yaml.YAMLError):
    def __init__(self, line: int, message: str):
        super().__init__(message)
        self.line = line
        self.message = message


class _PlainLoader(yaml.SafeLoader):
    """SafeLoader that refuses aliases and deep nesting while composing (nothing is expanded)."""

    def __init__(self, stream):
        super().__init__(stream)
        self._depth = 0

    def compose_node(self, parent, index):
        if self.check_event(yaml.AliasEvent):
            event = self.peek_event()
            raise _RefusedYAML(event.start_mark.line + 1,
                               "YAML aliases (*name) are not allowed in the sources file; write each value out")
        if self._depth >= MAX_NESTING:
            raise _RefusedYAML(self.peek_event().start_mark.line + 1,
                               f"nested more than {MAX_NESTING} levels deep")
        self._depth += 1
        try:
            return super().compose_node(parent, index)
        finally:
            self._depth -= 1


def load_sources(path: str | Path) -> list[Source]:
    """Read and validate a sources YAML file. Raises SourcesConfigError."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise SourcesConfigError([f"{path}: cannot read file: {exc}"]) from exc
    return parse_sources_yaml(text, base_dir=path.parent, origin=str(path))


def parse_sources_yaml(text: str, *, base_dir: str | Path = ".", origin: str = "<sources>") -> list[Source]:
    """Validate sources YAML text. `replay_file` is resolved against base_dir. Every problem of
    every entry is reported at once (file:line: sources[i] (id ...): field ...: message)."""
    problems: list[str] = []
    sources_node = _sources_node(text, origin, problems)
    constructor = yaml.SafeLoader("")  # only used to turn scalar nodes into Python values
    result: list[Source] = []
    seen_ids: dict[str, int] = {}
    seen_urls: dict[str, int] = {}
    for index, entry_node in enumerate(sources_node.value):
        entry_line = _line_of(entry_node)
        if not isinstance(entry_node, yaml.MappingNode):
            problems.append(f"{origin}:{entry_line}: sources[{index}]: entry must be a mapping of keys, "
                            f"got {_kind(entry_node)}")
            continue
        entry_id_guess = next(
            (v.value for k, v in entry_node.value if k.value == "id" and isinstance(v, yaml.ScalarNode)), None
        )
        label = f"sources[{index}]" + (f" (id {_shown(entry_id_guess)})" if entry_id_guess else "")

        def problem(node: yaml.Node | None, field: str | None, message: str,
                    entry_line: int | None = entry_line, label: str = label) -> None:  # this entry's, bound now
            where = f"{origin}:{_line_of(node) or entry_line}"
            problems.append(f"{where}: {label}: " + (f"field {field!r}: " if field else "") + message)

        fields = _entry_fields(entry_node, constructor, problem)
        values = _entry_values(entry_node, fields, base_dir=Path(base_dir), problem=problem)
        _check_unique(index, values, fields, seen_ids, seen_urls, problem)
        if all(key in values for key in REQUIRED_KEYS):
            result.append(Source(**values))
    if problems:
        raise SourcesConfigError(problems)
    return result


def _sources_node(text: str, origin: str, problems: list[str]) -> yaml.SequenceNode:
    """The top level: a mapping whose only key is a non-empty `sources:` list."""
    try:
        root = yaml.compose(text, Loader=_PlainLoader)
    except _RefusedYAML as exc:
        raise SourcesConfigError([f"{origin}:{exc.line}: {exc.message}"]) from None
    except yaml.YAMLError as exc:
        raise SourcesConfigError([f"{origin}: not valid YAML: {_one_line(exc)}"]) from None
    if root is None:
        raise SourcesConfigError([f"{origin}: file is empty; expected a top-level 'sources:' list"])
    if not isinstance(root, yaml.MappingNode):
        raise SourcesConfigError([f"{origin}:{_line_of(root)}: top level must be a mapping with a 'sources:' list"])
    sources_node = None
    for key_node, value_node in root.value:
        if isinstance(key_node, yaml.ScalarNode) and key_node.value == "sources":
            sources_node = value_node
        elif isinstance(key_node, yaml.ScalarNode):
            problems.append(f"{origin}:{_line_of(key_node)}: unknown top-level key {_shown(key_node.value)} "
                            "(expected only 'sources')")
        else:
            problems.append(f"{origin}:{_line_of(key_node)}: a top-level key must be a name, got {_kind(key_node)}")
    if sources_node is None:
        raise SourcesConfigError(problems + [f"{origin}: missing top-level 'sources:' list"])
    if isinstance(sources_node, yaml.ScalarNode) and sources_node.tag.endswith(":null"):
        raise SourcesConfigError(problems + [f"{origin}:{_line_of(sources_node)}: 'sources:' is empty; expected a list"])
    if not isinstance(sources_node, yaml.SequenceNode):
        raise SourcesConfigError(problems + [f"{origin}:{_line_of(sources_node)}: 'sources:' must be a list of entries"])
    return sources_node


def _entry_fields(entry_node: yaml.MappingNode, constructor, problem) -> dict[str, tuple[Any, yaml.Node]]:
    """The entry's known keys with single values, {key: (value, node)}; the rest are problems."""
    fields: dict[str, tuple[Any, yaml.Node]] = {}
    for key_node, value_node in entry_node.value:
        if not isinstance(key_node, yaml.ScalarNode):
            problem(key_node, None, f"a key must be a name, got {_kind(key_node)}")
            continue
        key = key_node.value
        if key in fields:
            problem(key_node, key, "given twice in this entry")
            continue
        if key not in ALLOWED_KEYS:
            hint = difflib.get_close_matches(str(key), ALLOWED_KEYS, n=1)
            problem(key_node, None, f"unknown key {_shown(key)}" + (f" (did you mean {hint[0]!r}?)" if hint else "")
                    + f"; allowed keys: {', '.join(ALLOWED_KEYS)}")
            continue
        if not isinstance(value_node, yaml.ScalarNode):
            problem(value_node, key, f"must be a single value, got {_kind(value_node)}")
            continue
        fields[key] = (constructor.construct_object(value_node, deep=True), value_node)
    return fields


_INVALID = object()


def _entry_values(entry_node: yaml.MappingNode, fields: dict[str, tuple[Any, yaml.Node]], *, base_dir: Path,
                  problem) -> dict[str, Any]:
    """The entry's valid values, normalised; required keys missing and invalid values are problems."""
    values: dict[str, Any] = {}
    for key in REQUIRED_KEYS:
        if key not in fields or fields[key][0] in (None, ""):
            problem(fields[key][1] if key in fields else entry_node, key, "is required")
    for key, (value, node) in fields.items():
        if value in (None, "") and key in REQUIRED_KEYS:
            continue
        value = _field_value(key, value, node, base_dir, problem)
        if value is not _INVALID:
            values[key] = value
    return values


def _field_value(key: str, value: Any, node: yaml.Node, base_dir: Path, problem) -> Any:
    """One field's value, normalised, or _INVALID (after reporting the problem)."""
    if key in ("id", "name", "feed_url", "language", "country", "replay_file", "outlet", "category"):
        if not isinstance(value, str):
            problem(node, key, f"must be a string, got {type(value).__name__} {_shown(value)}")
            return _INVALID
        value = value.strip()
    if key == "id":
        if not SOURCE_ID_RE.match(value):
            problem(node, key, f"{_shown(value)} is not a slug (lower-case letters, digits, '-' or '_', 1-64 chars, "
                               "starting and ending with a letter or digit)")
            return _INVALID
    elif key == "feed_url":
        parts = urlsplit(value)
        if parts.scheme.lower() not in ("http", "https"):
            problem(node, key, f"{_shown(value)} must be an http:// or https:// URL")
            return _INVALID
        if not parts.hostname or re.search(r"\s", value):
            problem(node, key, f"{_shown(value)} is not a valid URL (no host, or contains spaces)")
            return _INVALID
    elif key == "language":
        if value.lower() not in ISO_639_1:
            problem(node, key, f"{_shown(value)} is not an ISO 639-1 code (two letters such as 'en', 'zh', 'ko'; "
                               "no region suffix)")
            return _INVALID
        value = value.lower()
    elif key == "country":
        if value.upper() not in ISO_3166_1_ALPHA2:
            problem(node, key, f"{_shown(value)} is not an ISO 3166-1 alpha-2 code (two letters such as 'GB', 'JP')")
            return _INVALID
        value = value.upper()
    elif key == "outlet":
        if not re.fullmatch(r"[a-z0-9](?:[a-z0-9.-]{0,251}[a-z0-9])?", value.lower()) or ".." in value:
            problem(node, key, f"{_shown(value)} is not a host name such as 'bbc.co.uk'")
            return _INVALID
        value = registrable_domain(value.lower())
    elif key in ("syndicator", "enabled", "allow_private", "fetch_article"):
        if not isinstance(value, bool):
            problem(node, key, f"must be true or false, got {_shown(value)}")
            return _INVALID
    elif key == "replay_file":
        value = (base_dir / value).resolve()
    return value


def _check_unique(index: int, values: dict[str, Any], fields, seen_ids: dict[str, int], seen_urls: dict[str, int],
                  problem) -> None:
    """Ids and feed URLs are unique across the file (the first entry keeps them)."""
    if "id" in values:
        if values["id"] in seen_ids:
            problem(fields["id"][1], "id", f"duplicate id {_shown(values['id'])} (first used by sources[{seen_ids[values['id']]}])")
        else:
            seen_ids[values["id"]] = index
    if "feed_url" in values:
        url_key = _feed_url_key(values["feed_url"])
        if url_key in seen_urls:
            problem(fields["feed_url"][1], "feed_url",
                    f"duplicate feed_url {_shown(values['feed_url'])} (first used by sources[{seen_urls[url_key]}])")
        else:
            seen_urls[url_key] = index
