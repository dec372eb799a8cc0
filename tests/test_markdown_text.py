"""Feed and model text in the Dagster UI's Markdown: rendered as CommonMark with tables (as the UI
renders asset metadata), a headline written as Markdown makes no link, no image and no HTML, and
reads as it was. Through the real asset for the top-stories table; explain's table is in
tests/test_explain.py."""

from __future__ import annotations

from datetime import date

from fake_openai import Reply
from hypothesis import given, settings, strategies as st
from markdown_it import MarkdownIt
from test_llm_stages import add_story, llm_env, online, run, score_requests  # noqa: F401  (fixtures re-exported)

from newsdedup_dagster.assets.llm import LLMResource
from newsdedup_dagster.shared.presentation.stories import DigestStory, DigestView
from newsdedup_dagster.shared.text.markdown import escape_markdown, markdown_cell
from newsdedup_dagster.stages.digest.render import markdown_preview

HOSTILE_HEADLINE = "![](https://tracker.example/t.png) [Read more](https://phish.example)"
LIVE = ("link_open", "image", "html_inline", "html_block", "code_inline", "em_open", "strong_open")


def rendered(md: str) -> list:
    """The inline tokens' children of `md` parsed as CommonMark with GitHub's tables."""
    parser = MarkdownIt("commonmark").enable("table")
    return [child for token in parser.parse(md) if token.type == "inline" for child in (token.children or [])]


def live_parts(md: str, allowed: tuple[str, ...] = ()) -> list[str]:
    """Token types of `md` that would be live in the UI (links, images, HTML), beyond `allowed`."""
    return [t.type for t in rendered(md) if t.type in LIVE and t.type not in allowed]


def shown_text(md: str) -> str:
    return "".join(shown_blocks(md))


def shown_blocks(md: str) -> list[str]:
    """The text each inline block of `md` (a paragraph, a table cell) shows."""
    parser = MarkdownIt("commonmark").enable("table")
    return ["".join(c.content for c in token.children or [] if c.type in ("text", "text_special"))
            for token in parser.parse(md) if token.type == "inline"]


def test_the_hostile_headline_in_a_table_cell_is_text():
    raw = f"| # | headline |\n|---|---|\n| 1 | {HOSTILE_HEADLINE} |"
    assert {"image", "link_open"} <= set(live_parts(raw))          # the attack, unescaped
    md = f"| # | headline |\n|---|---|\n| 1 | {markdown_cell(HOSTILE_HEADLINE, 200)} |"
    assert live_parts(md) == []
    assert HOSTILE_HEADLINE in shown_text(md)


def test_a_cell_is_cut_before_it_is_escaped():
    cell = markdown_cell("[x](https://phish.example) " + "a" * 200, 12)
    assert live_parts(cell) == [] and shown_text(cell) == "[x](https:/…" and len(shown_text(cell)) == 12


PRINTABLE = st.text(alphabet=st.characters(blacklist_categories=("Cc", "Cs", "Co", "Cn")), max_size=120)
MARKDOWNISH = st.lists(st.sampled_from(["![", "](", "[", "]", "(", ")", "<", ">", "<b>", "</a>", "&amp;", "&#60;",
                                        "`", "*", "_", "~", "|", "\\", "#", "=", "-", "1.", "https://x.example/",
                                        "www.x.example", "a@b.example", "\n", "\n\n    ", " ", "word"]),
                       max_size=30).map("".join)


@settings(max_examples=300, deadline=None)
@given(st.one_of(PRINTABLE, MARKDOWNISH))
def test_any_text_renders_as_itself_on_one_line_in_a_cell(text):
    md = f"| a |\n|---|\n| {escape_markdown(text)} |"
    assert live_parts(md) == []
    assert shown_blocks(md) == ["a", " ".join(text.split())]


def test_the_digest_preview_uses_the_same_escaping():
    story = DigestStory(rank=1, story_id="s1", headline=HOSTILE_HEADLINE, headline_lang="en", is_original=True,
                        summary=f"<img src=x onerror=alert(1)> {HOSTILE_HEADLINE}", summary_lang="en", sources=[],
                        more_sources=0, significance=7.0, event=None)
    view = DigestView(day=date(2026, 11, 2), lang="en", dir="ltr", labels={"empty": ""}, subject=HOSTILE_HEADLINE,
                      stories=[story])
    md = markdown_preview(view)
    assert live_parts(md, allowed=("strong_open", "em_open")) == []
    assert shown_text(md).count(HOSTILE_HEADLINE) == 3


def test_top_stories_metadata_shows_a_markdown_headline_as_text(conn, clean_db, monkeypatch):
    """The story_scores asset (offline: the representative article's own headline) puts the
    headline in its top-stories table as text."""
    monkeypatch.delenv("NEWSDEDUP_LLM_BASE_URL", raising=False)
    add_story(conn, "mk", 3)
    conn.execute("UPDATE items SET title = %s WHERE id = 'mk-i0'", (HOSTILE_HEADLINE,))
    conn.commit()
    result = run(["story_scores"], clean_db, LLMResource())
    md = result["story_scores"].metadata["top_stories"].value
    assert live_parts(md) == []
    assert HOSTILE_HEADLINE in shown_text(md)


def test_errors_metadata_quoting_a_model_shows_it_as_text(conn, clean_db, fake, llm_env, online):  # noqa: F811 (fixtures)
    """A validator's error names the value it refused: the model's Markdown reaches the asset's
    `errors` list quoted, and stays text there."""
    reply = {"scale": HOSTILE_HEADLINE[:34], "impact": 7, "novelty": 5, "breadth": 4, "credibility": 8, "urgency": 6,
             "significance": 6.5, "headline": "h", "summary": "One sentence here. Two sentences here."}
    fake.push(Reply.json(reply), match=score_requests, times=10)
    add_story(conn, "mk", 2)
    result = run(["story_scores"], clean_db, online(max_attempts=2))
    md = result["story_scores"].metadata["errors"].value
    assert live_parts(md) == []
    assert HOSTILE_HEADLINE[:34] in shown_text(md)
