"""The embedded text: headline + cleaned lead (shared/text/item_text.py). Fixtures copy the shapes real
feeds give their descriptions (WordPress, Guardian, Reuters/AP datelines, Google News, Yonhap,
Xinhua, photo credits, copyright footers); the property tests throw arbitrary text at the cleaner."""

from __future__ import annotations

import pytest
from hypothesis import example, given, settings, strategies as st

from newsdedup_dagster.shared.text.item_text import (
    LEAD_CHARS,
    MAX_CHARS,
    clean_summary,
    cut_lead,
    embedding_text,
    lead_of,
)

TITLE = "Strong earthquake hits northern Chile"
BODY = "A magnitude 7.1 earthquake struck northern Chile on Monday, officials said."

# (feed shape, summary) -> the lead must be exactly BODY.
BOILERPLATE_SHAPES = [
    ("wordpress", f"{BODY} The post Strong earthquake hits northern Chile appeared first on Andes Daily."),
    ("guardian", f"{BODY} Continue reading..."),
    ("continue-arrow", f"{BODY} Continue reading →"),
    ("read-more", f"{BODY} Read more »"),
    ("read-full", f"{BODY} Read the full story here."),
    ("ellipsis-bracket", f"{BODY} […]"),
    ("reuters-dateline", f"SANTIAGO (Reuters) - {BODY}"),
    ("ap-dateline", f"SANTIAGO, Chile (AP) — {BODY}"),
    ("byline", f"By Jane Doe and John Roe, Reuters - {BODY}"),
    ("reuters-credits", f"{BODY} (Reporting by Jane Doe; Editing by John Roe)"),
    ("photo-credit", f"(Photo by Jane Doe/Getty Images) {BODY}"),
    ("getty-caption", f"{BODY} Photograph: Jane Doe/Getty Images"),
    ("copyright", f"{BODY} © 2026 Andes Daily. All rights reserved."),
    ("link", f"{BODY} https://example.com/chile-quake?utm_source=rss"),
    ("newsletter", f"{BODY} Sign up for our daily newsletter."),
]


@pytest.mark.parametrize("shape,summary", BOILERPLATE_SHAPES, ids=[s for s, _ in BOILERPLATE_SHAPES])
def test_boilerplate_is_dropped(shape, summary):
    assert clean_summary(summary) == BODY
    assert embedding_text(TITLE, summary) == f"{TITLE}. {BODY}"


def test_korean_and_chinese_agency_bylines_are_dropped():
    ko = "(서울=연합뉴스) 홍길동 기자 = 진천군이 홀로 사는 노인 300가구에 AI 돌봄 단말을 설치한다. 무단 전재 및 재배포 금지"
    assert clean_summary(ko) == "진천군이 홀로 사는 노인 300가구에 AI 돌봄 단말을 설치한다."
    zh = "新华社合肥11月2日电（记者 张三）全超导托卡马克核聚变实验装置实现1500秒稳态运行。"
    assert clean_summary(zh) == "全超导托卡马克核聚变实验装置实现1500秒稳态运行。"


@pytest.mark.parametrize("summary", [
    None, "", "   ", "Continue reading...", "Read more »", "© 2026 Andes Daily. All rights reserved.",
    TITLE, f"{TITLE}  Andes Daily",                       # Google News: headline + outlet name
    f"{TITLE} - Andes Daily", TITLE.upper() + ".", "earthquake hits northern",
])
def test_no_lead_means_the_headline_alone(summary):
    assert embedding_text(TITLE, summary) == TITLE


def test_a_summary_that_repeats_the_headline_keeps_only_what_follows():
    assert lead_of(TITLE, f"{TITLE}. {BODY}") == BODY
    # ... but a first sentence that merely starts with the headline's words is kept whole.
    assert lead_of("U.S. stocks", "U.S. stocks closed higher on Monday as technology shares rallied again.") == \
        "U.S. stocks closed higher on Monday as technology shares rallied again."


def test_lead_is_cut_at_a_sentence_boundary():
    first = "The quake struck at 08:28 local time at a depth of 35 km, the national seismic service said."
    second = "Rescue teams were sent to the coastal towns of Iquique and Arica, where power was cut."
    third = "Schools will stay closed on Tuesday."
    lead = cut_lead(" ".join([first, second, third]), 200)
    assert lead == f"{first} {second}"
    assert cut_lead(f"Mr. Smith of the U.S. Geological Survey said the quake was shallow. {second}", 80) == \
        "Mr. Smith of the U.S. Geological Survey said the quake was shallow."
    # One long sentence: cut at a word boundary.
    long = "word " * 100
    assert cut_lead(long, 50).endswith("word") and len(cut_lead(long, 50)) <= 50
    # Scripts without spaces: full stops are boundaries.
    assert cut_lead("全超导装置实现稳态运行。再次刷新世界纪录。这是第三句话。", 24) == "全超导装置实现稳态运行。再次刷新世界纪录。"


def test_modes():
    assert embedding_text(TITLE, BODY, "title") == TITLE
    assert embedding_text(TITLE, BODY, "title_summary") == embedding_text(TITLE, BODY, "title_lead")
    assert embedding_text("  EU   approves\nAI act ", None) == "EU approves AI act"
    assert embedding_text("Is it over?", BODY) == f"Is it over? {BODY}"
    assert embedding_text("", BODY) == BODY
    with pytest.raises(ValueError):
        embedding_text("a", mode="everything")


# ----------------------------------------------------------------------------------- properties
TEXT = st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=600)
WORDS = st.lists(st.sampled_from(["Continue", "reading", "The", "post", "appeared", "first", "on", "By", "(Reuters)",
                                  "-", "©", "2026", "Photo:", "Getty", "Images", "/", "quake", "Chile", ".", "…",
                                  "기자", "=", "（记者", "）", "https://x.y/z", "Read", "more", "»", "All", "rights",
                                  "reserved."]), max_size=40).map(" ".join)


@settings(max_examples=300, deadline=None)
@given(title=TEXT, summary=st.one_of(TEXT, WORDS, st.none()), limit=st.integers(0, 400))
@example(title="", summary="0 A", limit=2)  # a cut right after a space once left it trailing
@example(title="a" * (MAX_CHARS - 1) + " b", summary=None, limit=0)  # so did the headline's own cut
def test_embedding_text_is_total_bounded_and_stable(title, summary, limit):
    text = embedding_text(title, summary, lead_chars=limit)
    assert isinstance(text, str)
    assert len(text) <= MAX_CHARS + 2 + max(limit, 0)
    assert text == text.strip() and "  " not in text
    assert text == embedding_text(title, summary, lead_chars=limit)  # deterministic (cache key)
    head = " ".join(title.split())[:MAX_CHARS].rstrip()
    assert text.startswith(head)  # the headline always leads


@settings(max_examples=300, deadline=None)
@given(summary=st.one_of(TEXT, WORDS))
def test_clean_summary_is_idempotent_and_never_grows(summary):
    once = clean_summary(summary)
    assert len(once) <= len(" ".join(summary.split()))
    assert clean_summary(once) == once


@settings(max_examples=200, deadline=None)
@given(body=st.lists(st.sampled_from(["The quake struck at dawn.", "Ten people were hurt.", "Power was cut!",
                                      "Is the tsunami risk over?", "Schools will close."]), min_size=1, max_size=12),
       limit=st.integers(30, 300))
def test_cut_lead_keeps_whole_sentences_within_the_limit(body, limit):
    text = " ".join(body)
    lead = cut_lead(text, limit)
    assert len(lead) <= limit
    assert text.startswith(lead)
    if lead and len(text) > limit:
        assert lead[-1] in ".!?"  # every sentence here fits in 30 chars, so never cut mid-sentence


def test_default_lead_budget_is_a_positive_number_of_characters():
    assert 0 < LEAD_CHARS <= 400


# ----------------------------------------------------------------------------------- token budgets
def test_a_character_budget_gives_chinese_and_japanese_three_times_the_tokens_a_token_budget_does_not():
    from newsdedup_dagster.shared.text.item_text import e5_token_counter

    count = e5_token_counter()
    en = ("The quake struck at 08:28 local time at a depth of 35 km, the national seismic service said. "
          "Rescue teams were sent to the coastal towns of Iquique and Arica, where power was cut.")
    ja = ("3日午前8時28分ごろ、三陸沖を震源とする地震があり、岩手県宮古市で震度5強の揺れを観測しました。"
          "震源の深さは約20キロ、マグニチュードは6.1と推定されています。気象庁は若干の海面変動があるかもしれない"
          "ものの被害の心配はないとしています。")
    by_chars = {lang: count(cut_lead(text, 200)) for lang, text in (("en", en), ("ja", ja))}
    assert by_chars["ja"] > 1.5 * by_chars["en"]
    for text in (en, ja):
        lead = cut_lead(text, 200, tokens=24)
        assert 0 < count(lead) <= 24 and text.startswith(lead)
    # Whole sentences where one fits: the Japanese lead keeps its first sentence, not a fragment.
    first = ja.split("。")[0] + "。"
    assert cut_lead(ja, 200, tokens=count(first) + 3) == first


def test_token_budgets_of_zero_are_the_character_cut_exactly():
    from newsdedup_dagster.shared.text.item_text import embedding_parts

    summary = "Rescue teams reached Iquique on Monday. Power was cut in Arica. " * 6
    assert embedding_parts(TITLE, summary) == embedding_parts(TITLE, summary, lead_tokens=0, head_tokens=0)
    assert embedding_parts(TITLE, summary, lead_tokens=8) != embedding_parts(TITLE, summary)


def test_the_headline_budget_cuts_a_long_headline_at_a_word_and_the_lead_follows_it():
    from newsdedup_dagster.shared.text.item_text import e5_token_counter, embedding_parts, headline_text

    count = e5_token_counter()
    title = "Strong earthquake hits northern Chile as rescuers search the coastal towns of Iquique and Arica " * 3
    head = headline_text(title, tokens=16)
    assert count(head) <= 16 and " ".join(title.split()).startswith(head) and not head.endswith(" ")
    parts = embedding_parts(title, BODY, lead_tokens=12, head_tokens=16)
    assert parts[0] == head and parts[1].startswith(head) and count(parts[1]) <= 16 + 12 + 2


def _words(text: str) -> int:
    """A counter for the properties: one token per word, two per long word (prefix-monotone)."""
    return sum(1 + (len(word) > 6) for word in text.split())


@settings(max_examples=300, deadline=None)
@given(text=st.one_of(TEXT, WORDS), tokens=st.integers(0, 80), sentences=st.booleans())
@example(text="a. b", tokens=1, sentences=True)
def test_cut_to_tokens_is_a_prefix_within_the_budget(text, tokens, sentences):
    from newsdedup_dagster.shared.text.item_text import cut_to_tokens, e5_token_counter, normalise_space

    for count in (_words, e5_token_counter()):
        cut = cut_to_tokens(text, tokens, count, sentences)
        assert normalise_space(text).startswith(cut)
        assert count(cut) <= max(tokens, 0)
        assert cut == cut.strip()
        assert cut == cut_to_tokens(text, tokens, count, sentences)  # deterministic (cache key)
        if tokens > 0 and count(normalise_space(text)) <= tokens:
            assert cut == normalise_space(text)  # nothing is cut that fits


@settings(max_examples=150, deadline=None)
@given(title=TEXT, summary=st.one_of(TEXT, WORDS, st.none()), lead_tokens=st.integers(0, 64),
       head_tokens=st.integers(0, 64))
def test_embedding_text_with_token_budgets_stays_within_them(title, summary, lead_tokens, head_tokens):
    from newsdedup_dagster.shared.text.item_text import e5_token_counter, embedding_parts, headline_text

    count = e5_token_counter()
    parts = embedding_parts(title, summary, lead_tokens=lead_tokens, head_tokens=head_tokens)
    head = headline_text(title, head_tokens)
    if head_tokens:
        assert count(head) <= head_tokens
    assert parts[0] == head or (not head and len(parts) == 1)
    if len(parts) == 2:
        lead = parts[1][len(head):].lstrip(". ")
        assert lead and (not lead_tokens or count(lead) <= lead_tokens)


def test_the_default_settings_embed_the_character_cut_text_of_every_sample_day_item():
    """The token budgets are an option: by default every item's embedded text is the character cut's,
    so vectors, the eval cache and calibrated thresholds carry over unchanged."""
    from newsdedup_dagster.evaluation.clustering import sample_day_rows
    from newsdedup_dagster.shared.text.item_text import embedding_parts
    from newsdedup_dagster.stages.embeddings.settings import EmbeddingSettings
    from newsdedup_dagster.stages.embeddings.store import item_parts

    settings = EmbeddingSettings()
    assert (settings.lead_tokens, settings.head_tokens) == (0, 0)
    for row in sample_day_rows():
        assert item_parts(row.title, row.text, settings) == embedding_parts(row.title, row.text)
