"""Pure headline logic: normalisation, lead token, grams, IDF, pair scoring."""

import math
from dataclasses import replace

import pytest

from newsdedup_dagster.shared.text.headline import IdfTable, idf_weight
from newsdedup_dagster.stages.neardup import (
    NearDupConfig,
    build_idf,
    char_ngrams,
    exact_key,
    headline_features,
    is_duplicate,
    lead_token,
    normalize_headline,
    score_pair,
    strip_outlet_suffix,
    weighted_jaccard,
)

KO_REWRITE = ("진천군, 온디바이스 AI 기반 스마트 돌봄 구축 본격 착수", "진천군 온디바이스 AI기반 스마트돌봄 본격화")
KO_TEMPLATE = ("어드밴트, 온디바이스 AI 서비스 실증·확산 사업 참여", "엠젠솔루션, 온디바이스 AI 서비스 실증·확산 사업 참여")
EMPTY_IDF = build_idf([])


# --------------------------------------------------------------------------- normalisation


@pytest.mark.parametrize(
    "title, expected",
    [
        ("진천군 스마트 돌봄 본격 착수 - 연합뉴스", "진천군 스마트 돌봄 본격 착수"),
        ("Liz Truss resigns as prime minister | Reuters", "Liz Truss resigns as prime minister"),
        ("Storm hits coast – BBC News", "Storm hits coast"),
        ("Markets rally - Live updates - CNBC", "Markets rally"),
        # A hyphen inside the headline (no spaces around it) is not a separator.
        ("AI-based care starts in Jincheon", "AI-based care starts in Jincheon"),
        # A long tail is content, not an outlet name.
        ("Fed holds rates - and signals two cuts are coming later this year after all", None),
    ],
)
def test_strip_outlet_suffix(title, expected):
    assert strip_outlet_suffix(title) == (title if expected is None else expected)


def test_normalize_folds_width_case_punctuation_and_tags():
    # Full-width letters/digits (NFKC), case, punctuation, editorial tags, outlet suffix.
    assert normalize_headline("[속보] ＡＩ 돌봄, “본격” 착수!! - 뉴스1") == "ai 돌봄 본격 착수"
    assert normalize_headline("Liz Truss (pictured) RESIGNS: UK's PM quits | Reuters") == "liz truss resigns uk pm quits"
    assert normalize_headline("岸田首相、訪米へ（写真）") == "岸田首相 訪米へ"
    # Digit grouping dropped, decimal point kept, percent kept.
    assert normalize_headline("Sales up 2.5% to $1,000 million") == "sales up 2.5% to 1000 million"


def test_exact_key_ignores_spacing():
    assert exact_key(normalize_headline("진천군 스마트 돌봄 구축")) == exact_key(normalize_headline("진천군 스마트돌봄 구축"))


@pytest.mark.parametrize(
    "title, lead",
    [
        ("진천군, 온디바이스 AI 기반 스마트 돌봄", "진천군"),
        ("진천군 온디바이스 AI기반 스마트돌봄 본격화", "진천군"),
        ("어드밴트·엠젠 공동 참여", "어드밴트"),
        ("Apple: new iPhone unveiled - The Verge", "apple"),
        ("[속보] 삼성전자, 실적 발표", "삼성전자"),
        ("“Trump” says tariffs stay", "trump"),
        ("岸田首相、来月訪米へ", "岸田首相"),
        ("🔥 Breaking: markets fall", ""),  # emoji first: the empty key
        ("… and then there were none", ""),
    ],
)
def test_lead_token(title, lead):
    assert lead_token(title) == lead


def test_char_ngrams_tolerate_spacing():
    spaced, joined = char_ngrams("스마트 돌봄"), char_ngrams("스마트돌봄")
    assert spaced == joined == frozenset({"스마트", "마트돌", "트돌봄"})
    assert char_ngrams("ab") == frozenset({"ab"})
    assert char_ngrams("") == frozenset()


# --------------------------------------------------------------------------- IDF and Jaccard


def test_idf_formula_matches_seed_without_prior():
    idf = build_idf(["abc", "abd", "xyz"], prior_docs=0)
    # "ab" grams: "abc" in 1 doc, "abd" in 1 doc; N = 3.
    assert idf.n_docs == 3
    assert idf.gram_weight("abc") == pytest.approx(math.log(1 + 3 / (1 + 1)))
    assert idf.gram_weight("unseen") == pytest.approx(math.log(1 + 3 / 1))
    assert idf_weight(2, 10, 0) == pytest.approx(math.log(1 + 10 / 3))


def test_idf_counts_each_distinct_headline_once():
    idf = build_idf(["Same title - A", "Same title | B", "Same  title", "other words"])
    assert idf.n_docs == 2  # the three copies normalise to one text


def test_weighted_jaccard():
    weights = {"a": 1.0, "b": 2.0, "c": 3.0}.__getitem__
    assert weighted_jaccard(frozenset("ab"), frozenset("bc"), weights) == pytest.approx(2 / 6)
    assert weighted_jaccard(frozenset("ab"), frozenset("ab"), weights) == 1.0
    assert weighted_jaccard(frozenset(), frozenset("ab"), weights) == 0.0


def test_small_batch_idf_is_stable():
    """The baseline's weakness: with IDF over a 3-item batch, the grams two duplicates share
    are 'common' (df 2 of 3) and lose weight. The prior (and a background corpus)
    keeps the score close to what a large corpus gives."""
    a, b = KO_REWRITE
    batch = [a, b, "어드밴트, 온디바이스 AI 서비스 실증 사업 참여"]
    background = batch + [f"지역 소식 {i}호 발표 내용 정리 {i * 7}" for i in range(300)]
    seed_small = score_pair(a, b, build_idf(batch, prior_docs=0), lang="ko")
    ours_small = score_pair(a, b, build_idf(batch), lang="ko")
    ours_large = score_pair(a, b, build_idf(background), lang="ko")
    threshold = NearDupConfig().threshold_for("ko")
    assert ours_small >= threshold and ours_large >= threshold
    assert abs(ours_small - ours_large) < 0.05
    assert seed_small < ours_small  # the published formula punishes the shared grams
    # A single item "batch" and an empty corpus still score (all grams unseen).
    assert score_pair(a, b, IdfTable(gram_df={}, word_df={}, n_docs=0), lang="ko") == pytest.approx(ours_small, abs=0.05)


# --------------------------------------------------------------------------- pair decisions


def test_rewritten_korean_reports_merge():
    a, b = KO_REWRITE
    assert is_duplicate(a, b, EMPTY_IDF, lang="ko")


def test_shared_template_different_subject_stays_apart():
    a, b = KO_TEMPLATE
    # The text is nearly identical: the lead-token gate is what keeps them apart.
    assert score_pair(a, b, EMPTY_IDF, lang="ko") >= NearDupConfig().threshold_for("ko")
    assert not is_duplicate(a, b, EMPTY_IDF, lang="ko")


def test_spacing_variants_are_exact_duplicates():
    a, b = "진천군 스마트 돌봄 구축 본격 착수", "진천군 스마트돌봄 구축 본격착수"
    assert score_pair(a, b, EMPTY_IDF, lang="ko") == 1.0
    assert is_duplicate(a, b, EMPTY_IDF, lang="ko")


def test_unrelated_headlines_never_match():
    pairs = [
        ("Storm knocks out power to thousands in Florida", "Central bank raises interest rates again", "en"),
        ("진천군, 온디바이스 AI 기반 스마트 돌봄 구축", "진천군, 하반기 공무원 인사 발령", "ko"),
        ("岸田首相、来月訪米へ バイデン大統領と会談", "岸田首相、能登半島の被災地を視察", "ja"),
    ]
    for a, b, lang in pairs:
        assert score_pair(a, b, EMPTY_IDF, lang=lang) < 0.2
        assert not is_duplicate(a, b, EMPTY_IDF, lang=lang)


def test_english_reordered_headline_merges_without_gate():
    a, b = "Liz Truss resigns as UK prime minister - BBC News", "UK Prime Minister Liz Truss resigns | Reuters"
    assert lead_token(a) != lead_token(b)
    assert is_duplicate(a, b, EMPTY_IDF, lang="en")  # en is ungated by default
    gated = replace(NearDupConfig(), gate_by_lang={"en": True})
    assert not is_duplicate(a, b, EMPTY_IDF, lang="en", config=gated)


def test_japanese_rewrite_merges():
    assert is_duplicate("東京株式市場、日経平均が一時4万円台を回復", "日経平均、一時4万円台回復 東京株式市場", EMPTY_IDF, lang="ja")
    assert is_duplicate("岸田首相、来月訪米へ バイデン大統領と会談", "岸田首相が来月訪米 バイデン大統領と首脳会談へ", EMPTY_IDF, lang="ja")


def test_numbers_that_disagree_lower_the_score():
    same = score_pair("Quake kills 12 in northern Chile", "Quake kills 12 in north Chile", EMPTY_IDF, lang="en")
    other = score_pair("Quake kills 12 in northern Chile", "Quake kills 15 in north Chile", EMPTY_IDF, lang="en")
    assert other < same


def test_config_lookups_and_validation():
    cfg = NearDupConfig()
    assert cfg.gate_for("ko") and not cfg.gate_for("en") and not cfg.gate_for("zh") and not cfg.gate_for("ja")
    assert cfg.gate_for("xx") == cfg.gate_default
    assert cfg.threshold_for("ko") == 0.30 and cfg.threshold_for("en") == cfg.threshold
    assert not cfg.word_features_for("ko") and cfg.word_features_for("en") == cfg.word_features
    assert cfg.threshold_for("th") == cfg.gram_only_threshold  # no word features, not in threshold_by_lang
    with pytest.raises(ValueError):
        NearDupConfig(ngram=4)
    with pytest.raises(ValueError):
        NearDupConfig(blocking_grams=2)
    with pytest.raises(TypeError):
        cfg.gate_by_lang["en"] = True  # read-only mapping: a frozen config stays frozen


def test_features_are_computed_once_and_lazily():
    feats = headline_features("Quake kills 12 in northern Chile - AP")
    assert feats.exact_key == "quakekills12innorthernchile"
    assert feats.numbers == frozenset({"12"})
    assert "kill" in feats.words  # light stemming: kills -> kill
    assert feats.length == len(feats.exact_key)


def test_combine_scores_is_one_function_for_scalars_and_arrays():
    """The clustering engine feeds arrays of overlaps to the same combine_scores
    that score_pair uses one pair at a time."""
    import numpy as np

    from newsdedup_dagster.shared.text.headline import PairOverlaps, combine_scores, pair_overlaps

    cfg = NearDupConfig()
    titles = [("Quake kills 12 in northern Chile", "Quake kills 15 in north Chile"), KO_REWRITE,
              ("Liz Truss resigns as UK prime minister", "UK Prime Minister Liz Truss resigns")]
    idf = build_idf([t for pair in titles for t in pair])
    for use_words in (True, False):
        singles = [pair_overlaps(headline_features(a), headline_features(b), idf, use_words) for a, b in titles]
        stacked = PairOverlaps(**{name: np.array([getattr(o, name) for o in singles])
                                  for name in PairOverlaps.__dataclass_fields__})
        expected = [float(combine_scores(o, use_words, cfg)) for o in singles]
        assert combine_scores(stacked, use_words, cfg).tolist() == pytest.approx(expected, abs=1e-9)


def test_lexical_model_score_is_a_probability_and_korean_keeps_the_gram_score():
    a, b = "Liz Truss resigns as UK prime minister", "UK Prime Minister Liz Truss resigns"
    assert 0.0 < score_pair(a, b, EMPTY_IDF, lang="en") < 1.0
    # ko has no word features: word order and particles do not enter its score.
    cfg = NearDupConfig()
    assert not cfg.word_features_for("ko")
    ko = score_pair(*KO_REWRITE, EMPTY_IDF, lang="ko")
    assert ko == score_pair(*KO_REWRITE, EMPTY_IDF, lang="ko", config=replace(cfg, model=None))
