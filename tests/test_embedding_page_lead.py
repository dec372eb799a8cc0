"""An item whose feed gives no lead is embedded with its page's first paragraph (article_texts), and
only such an item: a feed's own lead is kept, a failed page gives nothing, the setting turns it off.
The eval path (`--page-leads`, `--headlines-only`) loads the same leads the stage would store."""

from __future__ import annotations

import html
from dataclasses import replace
from datetime import timedelta

from clustering_fixtures import EU_AI, H0, insert_items
from hypothesis import given, settings, strategies as st
from test_embeddings import CountingEmbedder

from newsdedup_dagster.config import SAMPLE_DATA_DIR
from newsdedup_dagster.evaluation.clustering import eval_texts, load_data
from newsdedup_dagster.shared.text.item_text import embedding_key, embedding_parts, text_hash
from newsdedup_dagster.stages.articles.extract import MAX_LEAD_CHARS, first_paragraph
from newsdedup_dagster.stages.articles.store import replay_page_name
from newsdedup_dagster.stages.embeddings import EmbeddingSettings, embed_partition
from newsdedup_dagster.stages.embeddings.store import item_parts

PAGE = "The European Parliament voted 523 to 46 on Wednesday for the first binding rules on AI systems."


def test_the_page_lead_is_used_only_when_the_feed_gives_none():
    on, off = EmbeddingSettings(), EmbeddingSettings(page_lead=False)
    title = "EU approves AI act"
    assert item_parts(title, "", on, PAGE) == embedding_parts(title, PAGE)
    assert len(item_parts(title, "", on, PAGE)) == 2
    # the feed's summary repeats the headline: no feed lead, so the page's
    assert item_parts(title, title, on, PAGE) == embedding_parts(title, PAGE)
    # a feed lead is kept whatever the page says
    assert item_parts(title, "Lawmakers back the act.", on, PAGE) == embedding_parts(title, "Lawmakers back the act.")
    assert item_parts(title, "", off, PAGE) == (title,)
    assert item_parts(title, "", on, None) == (title,)
    # a page lead that only repeats the headline adds nothing
    assert item_parts(title, "", on, title) == (title,)


def _page(conn, item_id, status, lead):
    conn.execute("INSERT INTO article_texts (item_id, status, url, lead, fetched_hour) VALUES (%s, %s, %s, %s, %s)",
                 (item_id, status, f"http://x/{item_id}", lead, H0))


def test_the_hour_embeds_headline_only_items_with_their_pages_lead(conn):
    insert_items(conn, EU_AI, H0)   # headline-only items (no summary)
    _page(conn, "eu-en", "ok", PAGE)
    _page(conn, "eu-ja", "failed", "never stored for a failed page, and never read")
    conn.commit()
    stats = embed_partition(conn, CountingEmbedder(), H0, H0 + timedelta(hours=1), EmbeddingSettings())
    assert stats.page_leads == 1
    hashes = dict(conn.execute("SELECT item_id, text_hash FROM item_embeddings").fetchall())
    conn.commit()
    titles = {item_id: title for item_id, title, *_ in EU_AI}
    assert hashes["eu-en"] == text_hash(embedding_key(embedding_parts(titles["eu-en"], PAGE)))
    assert hashes["eu-ja"] == text_hash(titles["eu-ja"])
    # Off: the same hour embeds headlines only (a rerun rewrites the rows).
    stats = embed_partition(conn, CountingEmbedder(), H0, H0 + timedelta(hours=1), EmbeddingSettings(page_lead=False))
    assert stats.page_leads == 0
    hashes = dict(conn.execute("SELECT item_id, text_hash FROM item_embeddings").fetchall())
    conn.commit()
    assert hashes["eu-en"] == text_hash(titles["eu-en"])


@settings(max_examples=200, deadline=None)
@given(st.lists(st.text(max_size=300), max_size=8), st.text(max_size=40))
def test_first_paragraph_is_a_cleaned_paragraph_of_the_text(paragraphs, title):
    text = "\n".join(paragraphs)
    lead = first_paragraph(text, title)
    if lead is None:
        assert not any(first_paragraph(p) for p in paragraphs if p.strip())
        return
    assert 0 < len(lead) <= MAX_LEAD_CHARS and "\n" not in lead
    assert first_paragraph(lead) == lead


def test_first_paragraph_skips_the_headline_and_short_lines():
    text = "EU approves AI act\nBy a staff writer\n" + PAGE + "\nMore to follow."
    assert first_paragraph(text, "EU approves AI act") == PAGE
    assert first_paragraph("Short.\nAlso short.", "") == "Short."


def test_eval_loads_the_sample_days_pages_and_drops_feed_summaries():
    rows = load_data("sample", page_leads=True, drop_summaries=True)
    with_pages = [r for r in rows if r.page_lead]
    # sample_data/README.md: a page for every item; the extractor refuses the shortest
    # (fewer than articles.min_words words), as the stage does.
    assert 180 <= len(with_pages) <= len(rows) and all(not r.text for r in rows)
    for row in with_pages:
        page = html.unescape((SAMPLE_DATA_DIR / "pages" / replay_page_name(row.url)).read_text(encoding="utf-8"))
        assert row.page_lead.split()[0] in page
    headline_only = eval_texts([replace(r, page_lead="") for r in rows], "title_lead")
    # every page lead changes its item's embedded text (none only repeats its headline)
    assert sum(a != b for a, b in zip(eval_texts(rows, "title_lead"), headline_only)) == len(with_pages)
    # With the feed summaries kept, only the headline-only items (Google News) change: a feed's own
    # lead is never replaced by its page's.
    kept, plain = load_data("sample", page_leads=True), load_data("sample")
    changed = {r.url for r, a, b in zip(kept, eval_texts(kept, "title_lead"), eval_texts(plain, "title_lead"))
               if a != b}
    aggregated = {r.url for r in plain if r.source == "gnews-en"}   # its description: a link and the outlet
    assert changed and changed <= aggregated
    assert all(r.page_lead for r in kept if r.url in changed)
