"""Article extraction on small pages shaped like the real news pages where the stored text lost
recall against trafilatura alone (bench/articles.py --real): one page per cause.

- a subscription page whose JSON-LD names its paywalled part (`hasPart.cssSelector`): the free
  part is kept, the named part is not, and a page that does not name the part keeps nothing;
- a table of figures in the article, and an article laid out in a table: tables are text;
- a title written in angle brackets (`&lt;The Palace&gt;`): plain extracted text is not markup.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from newsdedup_dagster.stages.articles.extract import extract_page, first_paragraph, paywalled_parts

PAGES = Path(__file__).resolve().parent / "data" / "articles_real_shaped"
URL = "https://news.example/2019/11/19/story"
FREE = "forty thousand cars a day"
LOCKED = "supplier that went bankrupt in 2009"


def read(name: str) -> str:
    return (PAGES / name).read_text(encoding="utf-8")


def extract(page: str):
    return extract_page(page.encode("utf-8"), "text/html", URL)


def test_the_free_part_of_a_paywalled_page_is_kept_and_the_named_part_is_not():
    result = extract(read("paywall_teaser.html"))
    assert result.reason is None, result.detail
    assert FREE in result.text and "lost a season of customers" in result.text
    assert LOCKED not in result.text and "container traffic" not in result.text
    assert FREE in result.lead


def test_a_paywalled_page_that_does_not_name_its_paywalled_part_keeps_no_text():
    page = read("paywall_teaser.html").replace(
        ',"hasPart":{"@type":"WebPageElement","isAccessibleForFree":false,"cssSelector":".paywall"}', "")
    assert "hasPart" not in page
    result = extract(page)
    assert result.reason == "paywall" and result.text is None


@pytest.mark.parametrize("selector", ["article > .paywall", ".paywall p", "[data-locked]", "div:not(.free)"])
def test_a_paywalled_part_named_by_a_selector_not_understood_keeps_no_text(selector):
    page = read("paywall_teaser.html").replace('"cssSelector":".paywall"', f'"cssSelector":"{selector}"')
    assert paywalled_parts(page) is None
    assert extract(page).reason == "paywall"


def test_a_page_whose_text_is_all_inside_the_paywalled_part_keeps_no_text():
    page = read("paywall_teaser.html").replace('<div class="article-content">', '<div class="article-content paywall">')
    result = extract(page)
    assert result.reason == "paywall" and result.text is None and "paywalled" in result.detail


def test_an_unparsable_json_ld_block_keeps_no_text():
    page = read("paywall_teaser.html").replace('"cssSelector":".paywall"}', '"cssSelector":".paywall"')
    assert paywalled_parts(page) is None
    assert extract(page).reason == "paywall"


def test_paywalled_parts_reads_lists_of_parts_and_selectors():
    page = ('<script type="application/ld+json">[{"@type":"NewsArticle","isAccessibleForFree":"False",'
            '"hasPart":[{"@type":"WebPageElement","isAccessibleForFree":"False","cssSelector":[".locked", '
            '"div#premium"]},{"@type":"WebPageElement","isAccessibleForFree":true,"cssSelector":".free"}]}]</script>')
    xpaths = paywalled_parts(page)
    assert xpaths is not None and len(xpaths) == 2
    assert "//div[@id='premium']" in xpaths


def test_a_table_of_figures_in_the_article_is_kept_and_the_lead_is_prose():
    result = extract(read("table_of_figures.html"))
    assert result.reason is None, result.detail
    for figure in ("225.86", "-12.99", "113.40", "HARDWARE RETAIL CORP."):
        assert figure in result.text
    assert "$27.2 billion" in result.text and "online ordering" in result.text
    assert result.lead.startswith("Shares of the country's largest hardware retailer")


def test_a_table_before_the_first_paragraph_is_never_the_lead():
    page = read("table_of_figures.html")
    table = page[page.index("<table"):page.index("</table>") + len("</table>")]
    page = page.replace(table, "").replace("<h1>", table + "<h1>", 1)
    result = extract(page)
    assert result.reason is None and "225.86" in result.text
    assert result.lead.startswith("Shares of the country's largest hardware retailer")


def test_an_article_laid_out_in_a_table_is_kept():
    result = extract(read("layout_table.html"))
    assert result.reason is None, result.detail
    assert "Half a century after the last crew left the lunar surface" in result.text
    assert "a lander design that none of the competing teams" in result.text
    assert "Half a century after" in result.lead and "Archive" not in result.lead


def test_a_title_in_angle_brackets_stays_in_the_text_and_the_lead():
    result = extract(read("angle_brackets.html"))
    assert result.reason is None, result.detail
    assert result.text.count("<The Palace: Tale of Jang Noksu>") == 2
    assert "next Monday & are expected" in result.text
    assert "<The Palace: Tale of Jang Noksu> opened" in result.lead


def test_first_paragraph_keeps_literal_markup_characters_and_skips_table_rows():
    text = "| Ticker | Last |\n|---|---|\n| HWR | 225.86 |\nThe council approved <Plan B> after a long debate."
    assert first_paragraph(text, "Council approves") == "The council approved <Plan B> after a long debate."
    # The headline is skipped as before.
    assert first_paragraph("Council approves budget\nThe council approved the budget on Tuesday night.",
                           "Council approves budget") == "The council approved the budget on Tuesday night."
