"""The validators the feed and page tests run, on the committed data in `tests/data/` (no network):

- Atom: RFC 4287's own RELAX NG schema (Appendix B) through lxml, plus the checks that schema
  leaves to prose and that the W3C Feed Validation Service makes: URI characters (RFC 3986
  section 2; the service's `InvalidUriChar`, in links, ids and the HTML content's links alike),
  tag URIs (RFC 4151), an author for every entry, an alternate link or content for every entry
  (RFC 4287 4.1.1/4.1.2), one alternate link per type and language; entries sharing one
  `updated` value are the service's `DuplicateUpdated` warning (`atom_warnings`): two stories
  whose newest article came in the same minute really share it.
- JSON Feed: the JSON Feed 1.1 schema through jsonschema, with `uri` formats checked by the same
  URI rule (jsonschema alone would let any string pass as a URI).
- HTML: the Nu Html Checker (`vnu.jar`, Java), errors only.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from collections import Counter
from functools import lru_cache
from html.parser import HTMLParser
from pathlib import Path

import jsonschema
import rnc2rng
from lxml import etree

DATA = Path(__file__).resolve().parent / "data"
VNU_JAR = DATA / "vnu" / "node_modules" / "vnu-jar" / "build" / "dist" / "vnu.jar"
ATOM = "{http://www.w3.org/2005/Atom}"

# RFC 3986 section 2: unreserved, reserved and "%"; "[" and "]" only around an IPv6 host.
_URI_CHARS = re.compile(r"[A-Za-z0-9\-._~:/?#@!$&'()*+,;=%]*")
_SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.\-]*:")
_BAD_PERCENT = re.compile(r"%(?![0-9A-Fa-f]{2})")
# RFC 4151 section 2.1 (the shape the feed validator accepts).
_TAG = re.compile(r"^tag:([a-z0-9\-._]+?@)?[a-z0-9.\-]+?,\d{4}(-\d{2}(-\d{2})?)?:[0-9a-zA-Z;/?:@&=+$.\-_!~*'()%,]*"
                  r"(#[0-9a-zA-Z;/?:@&=+$.\-_!~*'()%,]*)?$")


def uri_problem(value: str) -> str | None:
    """Why `value` is not an absolute URI a validator accepts (non-ASCII IRI characters allowed),
    or None."""
    if value.startswith("tag:"):
        return None if _TAG.match(value) else f"not a tag URI (RFC 4151): {value!r}"
    if not _SCHEME.match(value):
        return f"not an absolute URI: {value!r}"
    rest = value[value.index(":") + 1:]
    if rest.startswith("//"):  # an IPv6 literal is the one place "[" and "]" may stand
        authority = re.match(r"//[^/?#]*", rest).group(0)
        rest = re.sub(r"@?\[[0-9A-Fa-f:.]+\]", "", authority) + rest[len(authority):]
    ascii_only = "".join(c for c in rest if ord(c) < 128)
    if not _URI_CHARS.fullmatch(ascii_only):
        bad = next(c for c in ascii_only if not _URI_CHARS.fullmatch(c))
        return f"character {bad!r} not allowed in a URI (InvalidUriChar): {value!r}"
    if _BAD_PERCENT.search(value):
        return f"'%' not followed by two hex digits: {value!r}"
    if value.count("#") > 1:
        return f"more than one '#': {value!r}"
    return None


@lru_cache(maxsize=1)
def atom_schema() -> etree.RelaxNG:
    rng = rnc2rng.dumps(rnc2rng.loads((DATA / "atom" / "rfc4287.rnc").read_text(encoding="utf-8")))
    # The appendix declares `namespace local = ""`; its XML form `xmlns:local=""` is not allowed in
    # XML 1.0 namespaces (a prefix cannot be undeclared), and nothing refers to the prefix.
    rng = rng.replace(' xmlns:local=""', "")
    return etree.RelaxNG(etree.fromstring(rng.encode("utf-8")))


class _Hrefs(HTMLParser):
    def __init__(self):
        super().__init__()
        self.urls: list[str] = []

    def handle_starttag(self, tag, attrs):
        self.urls.extend(v for k, v in attrs if k in ("href", "src") and v)


def atom_errors(document: bytes) -> list[str]:
    """Every problem in one Atom document (empty = valid)."""
    doc = etree.fromstring(document)
    schema = atom_schema()
    errors = [] if schema.validate(doc) else [f"RELAX NG: {e.message} (line {e.line})" for e in schema.error_log]
    uris = []
    for el in doc.iter(f"{ATOM}id", f"{ATOM}icon", f"{ATOM}logo", f"{ATOM}uri"):
        uris.append((el.tag, (el.text or "").strip()))
    for el in doc.iter(f"{ATOM}link"):
        uris.append(("link", el.get("href", "")))
    for el in doc.iter(f"{ATOM}category"):
        if el.get("scheme") is not None:
            uris.append(("category scheme", el.get("scheme")))
    for el in doc.iter(f"{ATOM}content", f"{ATOM}summary", f"{ATOM}title", f"{ATOM}subtitle"):
        if el.get("type") == "html" and el.text:
            parser = _Hrefs()
            parser.feed(el.text)
            uris.extend((f"{el.tag} html", u) for u in parser.urls)
    for where, value in uris:
        problem = uri_problem(value)
        if problem:
            errors.append(f"{where.replace(ATOM, '')}: {problem}")
    feed_has_author = doc.find(f"{ATOM}author") is not None
    for entry in doc.iter(f"{ATOM}entry"):
        eid = entry.findtext(f"{ATOM}id")
        if not feed_has_author and entry.find(f"{ATOM}author") is None:
            errors.append(f"entry {eid}: no author (RFC 4287 4.1.1)")
        alternates = [(link.get("type"), link.get("hreflang")) for link in entry.iter(f"{ATOM}link")
                      if link.get("rel", "alternate") == "alternate"]
        if not alternates and entry.find(f"{ATOM}content") is None:
            errors.append(f"entry {eid}: neither content nor an alternate link (RFC 4287 4.1.2)")
        if len(alternates) != len(set(alternates)):
            errors.append(f"entry {eid}: two alternate links with the same type and hreflang")
    return errors


def atom_warnings(document: bytes) -> list[str]:
    doc = etree.fromstring(document)
    updated = Counter(entry.findtext(f"{ATOM}updated") for entry in doc.iter(f"{ATOM}entry"))
    return [f"{n} entries share updated {stamp} (DuplicateUpdated)" for stamp, n in updated.items() if n > 1]


@lru_cache(maxsize=1)
def json_feed_validator() -> jsonschema.Draft7Validator:
    schema = json.loads((DATA / "jsonfeed" / "schema-v1.1.json").read_text(encoding="utf-8"))
    formats = jsonschema.FormatChecker()

    @formats.checks("uri")
    def _is_uri(value) -> bool:
        return not isinstance(value, str) or uri_problem(value) is None

    return jsonschema.Draft7Validator(schema, format_checker=formats)


def json_feed_errors(text: str) -> list[str]:
    data = json.loads(text)
    errors = [f"{'/'.join(map(str, e.absolute_path))}: {e.message}" for e in json_feed_validator().iter_errors(data)]
    for item in data.get("items", []):
        parser = _Hrefs()
        parser.feed(item.get("content_html") or "")
        errors.extend(f"item {item.get('id')} html: {p}" for p in map(uri_problem, parser.urls) if p)
    return errors


def java() -> str | None:
    return shutil.which("java")


def html_errors(paths: list[Path]) -> list[str]:
    """Errors the Nu Html Checker reports for the given pages (one Java process for all)."""
    out = subprocess.run([java(), "-jar", str(VNU_JAR), "--errors-only", "--format", "json", *map(str, paths)],
                         capture_output=True, text=True, timeout=600)
    report = json.loads(out.stderr or out.stdout or '{"messages": []}')
    return [f"{Path(m.get('url', '')).name}:{m.get('lastLine')}: {m.get('message')}" for m in report["messages"]
            if m.get("type") == "error" or m.get("subType") == "fatal"]
