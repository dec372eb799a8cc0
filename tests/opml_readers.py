"""Two feed readers' published OPML rules, for checking what `newsdedup sources export` writes, and
exports shaped like theirs, for reading: Miniflux (internal/reader/opml) and FreshRSS (lib_opml and
its export view), as their published source reads and writes OPML; the files and the checks are
our own."""

from __future__ import annotations

import email.utils

from lxml import etree

# Miniflux's export (internal/reader/opml/serializer.go): categories one level deep, `title` and
# `text` both, `xmlUrl`, `htmlUrl`, `description`, no `type` on categories.
MINIFLUX_EXPORT = b"""<?xml version="1.0" encoding="UTF-8"?>
<opml version="2.0">
    <head>
        <title>Miniflux</title>
        <dateCreated>Sun, 06 Dec 2026 03:00:00 UTC</dateCreated>
    </head>
    <body>
        <outline text="World">
            <outline title="BBC News - World" text="BBC News - World" xmlUrl="https://feeds.bbci.co.uk/news/world/rss.xml" htmlUrl="https://www.bbc.co.uk/news/world" description=""></outline>
            <outline title="Le Monde.fr - International" text="Le Monde.fr - International" xmlUrl="https://www.lemonde.fr/international/rss_full.xml" htmlUrl="https://www.lemonde.fr/international/rss_full.xml" description=""></outline>
        </outline>
        <outline text="All">
            <outline title="NHK" text="NHK" xmlUrl="https://www3.nhk.or.jp/rss/news/cat0.xml" htmlUrl="https://www3.nhk.or.jp/" description=""></outline>
        </outline>
    </body>
</opml>
"""

# FreshRSS's export (app/views/index/opml.phtml through lib_opml): `frss:` attributes in their own
# namespace, `type="rss"`, categories as top-level outlines.
FRESHRSS_EXPORT = """<?xml version="1.0" encoding="UTF-8"?>
<opml version="2.0" xmlns:frss="https://freshrss.org/opml">
  <head>
    <title>FreshRSS</title>
    <dateCreated>Sun, 06 Dec 2026 03:00:00 +0000</dateCreated>
  </head>
  <body>
    <outline text="Uncategorized">
      <outline text="tagesschau.de" type="rss" xmlUrl="https://www.tagesschau.de/xml/rss2/" htmlUrl="https://www.tagesschau.de/" description="Nachrichten" frss:priority="10"/>
      <outline text="El País" type="rss" xmlUrl="https://feeds.elpais.com/mrss-s/pages/ep/site/elpais.com/portada" htmlUrl="https://elpais.com/" description="" frss:cssFullContent="article"/>
    </outline>
  </body>
</opml>
""".encode()


FRESHRSS_HEAD_ELEMENTS = {"title", "dateCreated", "dateModified", "ownerName", "ownerEmail", "ownerId", "docs",
                          "expansionState", "vertScrollState", "windowTop", "windowLeft", "windowBottom",
                          "windowRight"}


def conformance_problems(data: bytes) -> list[str]:
    """What FreshRSS's strict OPML parser (lib_opml, LibOpml::parseString and parseOutline) would
    refuse: version 1.0/1.1/2.0 on <opml>; one <head> whose children are the specification's (or
    namespaced), dates in RFC 822/1123; one <body> of one or more <outline>s, only <outline>s inside
    them; `text` on every outline (2.0); `type="rss"` with an http(s) `xmlUrl`. Plus Miniflux's
    (internal/reader/opml): the document element is `opml` and feeds are `body>outline` trees with
    a non-blank `xmlUrl`."""
    problems = []
    root = etree.fromstring(data, etree.XMLParser(resolve_entities=False, no_network=True))
    if root.tag != "opml":
        return [f"root is {root.tag}"]
    if root.get("version") not in ("1.0", "1.1", "2.0"):
        problems.append("version")
    heads, bodies = root.findall("head"), root.findall("body")
    if len(heads) != 1 or len(bodies) != 1:
        return problems + ["one head and one body"]
    for child in heads[0]:
        name = etree.QName(child).localname
        if child.tag not in FRESHRSS_HEAD_ELEMENTS and etree.QName(child).namespace is None:
            problems.append(f"head element {name}")
        if name in ("dateCreated", "dateModified"):
            try:
                email.utils.parsedate_to_datetime(child.text)
            except (TypeError, ValueError):
                problems.append(f"{name} is not an RFC 822 date")
            if not (child.text or "").strip()[-5:].lstrip("+-").isdigit():
                problems.append(f"{name}: PHP's RFC 1123 format wants a numeric zone")
    if not len(bodies[0]) or any(child.tag != "outline" for child in bodies[0]):
        problems.append("body holds only outlines, at least one")
    for outline in bodies[0].iter("outline"):
        if not outline.get("text"):
            problems.append(f"outline on line {outline.sourceline} has no text")
        if any(child.tag != "outline" for child in outline):
            problems.append("outline holds only outlines")
        if outline.get("type", "").lower() == "rss" and not (outline.get("xmlUrl") or "").startswith(
                ("http://", "https://")):
            problems.append(f"rss outline on line {outline.sourceline} without an http xmlUrl")
    return problems


def miniflux_subscriptions(data: bytes) -> list[tuple[str, str, str]]:
    """(title, feed URL, category) as Miniflux's getSubscriptionsFromOutlines reads them: a feed is
    an outline with a non-blank xmlUrl, its title the `title` else `text`, its category the name of
    the outline directly around it."""
    root = etree.fromstring(data)

    def walk(outlines, category):
        for outline in outlines:
            if (outline.get("xmlUrl") or "").strip():
                yield (outline.get("title") or outline.get("text") or "", outline.get("xmlUrl"), category)
            elif len(outline):
                yield from walk(outline.findall("outline"), outline.get("title") or outline.get("text") or "")

    return list(walk(root.find("body").findall("outline"), ""))
