"""Render a day's digest per language: HTML (Jinja2 with autoescaping) + plain text (pure).

Which text a reader of language L sees, per story:
- the story's translation into L (story_translations status 0), else
- the rewritten headline/summary if they are already in L (story_scores.pivot_lang = L), else
- the story's own article in L, else
- the pivot-language headline and summary (never a third language a source happened to write
  in), or, when the story has no pivot text, the representative article's title; either is
  marked with its language (`lang` attribute in HTML, a note in text).
Event narratives: the translation into L (event_translations status 0), else the narrative in
its own language; an offline extractive narrative carries a visible note and is written in L
(stages/events/narrative.py `narrative_lines`: its own words in L, the stories' headlines as reported).
Each section is a line of runs, so that every stretch in another language is isolated (`<bdi>`
with its `lang` and direction) and named ("in English, no translation yet"), like every other
text shown in a language that is not L.
Briefings, in a compact form: the category's name in L and the first key points (their
translation into L when the briefing's current version has one, briefing_translations; else in the
briefing's own language, marked), each followed by the outlets of the articles it cites; a point
none of whose citations names an outlet of the story is left out; an extractive briefing is marked;
then the perspectives (the country named in L, its line, its outlets), two countries or none.

Hostile feed text (`<script>`, `"><img onerror=...>`) is data: the HTML environment
autoescapes every value, links keep only http(s) URLs, and subjects lose line breaks (no
header injection).

Each reader's copy carries that reader's unsubscribe link (`personalised`): the stored digest
holds UNSUBSCRIBE_SLOT, an HTML comment no feed text can produce (every value is escaped, so
`<!--` comes only from the template), replaced per message; the text part gets the link appended.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date
from pathlib import Path

from jinja2 import Environment, FileSystemLoader, StrictUndefined, select_autoescape

from newsdedup_dagster.shared.presentation.labels import labels_for
from newsdedup_dagster.shared.presentation.stories import DigestView, locale_helpers
from newsdedup_dagster.shared.text.markdown import escape_markdown

TEMPLATES_DIR = Path(__file__).resolve().parent / "templates"
UNSUBSCRIBE_SLOT = "<!--newsdedup:unsubscribe-->"

__all__ = ["RenderedDigest", "render", "markdown_preview", "personalised", "UNSUBSCRIBE_SLOT"]






















@dataclass
class RenderedDigest:
    day: date
    lang: str
    subject: str
    html: str
    text: str
    story_ids: list[str]
    event_ids: list[str]
    markdown: str


















def _environments() -> tuple[Environment, Environment]:
    html_env = Environment(
        loader=FileSystemLoader(TEMPLATES_DIR),
        autoescape=select_autoescape(enabled_extensions=("html", "html.j2"), default_for_string=True, default=True),
        undefined=StrictUndefined, trim_blocks=True, lstrip_blocks=True,
    )
    # Plain text must not be HTML-escaped ("&amp;" in a text mail is a bug, not a defence).
    text_env = Environment(loader=FileSystemLoader(TEMPLATES_DIR), autoescape=False, undefined=StrictUndefined,
                           trim_blocks=True, lstrip_blocks=True, keep_trailing_newline=True)
    return html_env, text_env


_ENVS: tuple[Environment, Environment] | None = None


def _envs() -> tuple[Environment, Environment]:
    global _ENVS
    if _ENVS is None:
        _ENVS = _environments()
    return _ENVS


def _fmt(template: str, **values) -> str:
    return template.format(**values)






def render(view: DigestView) -> RenderedDigest:
    html_env, text_env = _envs()
    context = {"v": view, "L": view.labels, "fmt": _fmt, **locale_helpers(view.lang, view.labels)}
    html = html_env.get_template("digest.html.j2").render(**context)
    text = text_env.get_template("digest.txt.j2").render(**context)
    return RenderedDigest(
        day=view.day, lang=view.lang, subject=view.subject, html=html, text=text,
        story_ids=[s.story_id for s in view.stories],
        event_ids=sorted({s.event.event_id for s in view.stories if s.event}),
        markdown=markdown_preview(view),
    )


def personalised(html: str, text: str, lang: str, unsubscribe_link: str) -> tuple[str, str]:
    """(html, text) of one reader's copy: the rendered digest in `lang` with the reader's
    unsubscribe link in its footer (in the slot of the HTML, at the end of the text)."""
    html_env, text_env = _envs()
    context = {"L": labels_for(lang), "link": unsubscribe_link}
    footer = html_env.get_template("unsubscribe.html.j2").render(**context).rstrip("\n")
    if UNSUBSCRIBE_SLOT in html:
        html = html.replace(UNSUBSCRIBE_SLOT, footer, 1)
    else:   # a digest rendered without the slot: before the end of the body
        head, body_end, tail = html.rpartition("</body>")
        html = f"{head}{footer}\n{body_end}{tail}" if body_end else html + footer
    return html, text.rstrip("\n") + "\n" + text_env.get_template("unsubscribe.txt.j2").render(**context)


def markdown_preview(view: DigestView, limit: int = 5) -> str:
    """The top of the digest as markdown, for asset metadata."""
    lines = [f"**{escape_markdown(view.subject)}** ({view.lang}, {len(view.stories)} stories)", ""]
    for s in view.stories[:limit]:
        marker = f" _({s.headline_lang}, original)_" if s.is_original else ""
        lines.append(f"{s.rank}. **{escape_markdown(s.headline)}**{marker} — {escape_markdown(s.summary[:200])}")
        if s.event:
            lines.append(f"   - event: {escape_markdown(s.event.title)} ({s.event.story_count} stories, {s.event.days} days)")
    if len(view.stories) > limit:
        lines.append(f"\n… {len(view.stories) - limit} more")
    if not view.stories:
        lines.append(escape_markdown(view.labels["empty"]))
    return "\n".join(lines)
