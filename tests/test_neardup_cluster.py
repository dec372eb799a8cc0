"""cluster_headlines: exact and near passes, gate buckets, representatives, no chaining."""

import random
from dataclasses import replace
from datetime import UTC, datetime, timedelta

import numpy as np
import pytest

from newsdedup_dagster.stages.neardup import (
    DuplicateMatch,
    HeadlineIndex,
    HeadlineItem,
    NearDupConfig,
    build_idf,
    cluster_headlines,
    score_pair,
)
from newsdedup_dagster.stages.neardup.cluster import blocking_pairs, decode_gram, encode_grams

T0 = datetime(2026, 11, 2, 5, 0, tzinfo=UTC)


def item(item_id, title, lang="ko", minutes=0, url="", syndicator=False, existing=False):
    return HeadlineItem(item_id=item_id, title=title, lang=lang, url=url, source_is_syndicator=syndicator,
                        published_at=T0 + timedelta(minutes=minutes), is_existing_canonical=existing)


def as_map(matches):
    return {m.item_id: (m.canonical_item_id, m.rule) for m in matches}


def test_rewritten_reports_merge_and_template_stays_apart():
    items = [
        item("a", "진천군, 온디바이스 AI 기반 스마트 돌봄 구축 본격 착수 - 연합뉴스", minutes=10),
        item("b", "진천군 온디바이스 AI기반 스마트돌봄 본격화", minutes=5),
        item("c", "어드밴트, 온디바이스 AI 서비스 실증·확산 사업 참여"),
        item("d", "엠젠솔루션, 온디바이스 AI 서비스 실증·확산 사업 참여"),
    ]
    result = as_map(cluster_headlines(items))
    assert result == {"b": ("a", "near")}  # a is newer: it represents the group


def test_original_outlet_preferred_over_syndicator_in_near_merge():
    items = [
        # The syndicated copy is newer, but the original outlet wins.
        item("naver", "진천군 온디바이스 AI기반 스마트돌봄 본격화", minutes=30,
             url="https://n.news.naver.com/mnews/article/001/0001"),
        item("orig", "진천군, 온디바이스 AI 기반 스마트 돌봄 구축 본격 착수", minutes=0,
             url="https://www.yna.co.kr/view/AKR2026"),
        item("flagged", "진천군, 온디바이스 AI 기반 스마트돌봄 구축 본격 착수 - 다음뉴스", minutes=40, syndicator=True),
    ]
    matches = cluster_headlines(items)
    assert as_map(matches) == {"naver": ("orig", "near"), "flagged": ("orig", "exact")}
    near = next(m for m in matches if m.item_id == "naver")
    assert 0.3 <= near.similarity < 1.0


def test_direct_link_preferred_over_opaque_redirect():
    items = [
        item("redirect", "Liz Truss resigns as UK prime minister", "en", minutes=20,
             url="https://news.google.com/rss/articles/CBMiSGh0dHBzOi8vd3d3?oc=5"),
        item("direct", "UK Prime Minister Liz Truss resigns - Reuters", "en", minutes=0,
             url="https://www.reuters.com/world/uk/truss-resigns-2022-10-20/"),
    ]
    # news.google.com is also a syndicator host: both rules point the same way here.
    assert as_map(cluster_headlines(items)) == {"redirect": ("direct", "near")}
    items = [
        item("short", "Liz Truss resigns as UK prime minister", "en", minutes=20, url="https://t.co/abc123"),
        item("direct", "UK Prime Minister Liz Truss resigns - Reuters", "en", minutes=0, url="https://reuters.com/x"),
    ]
    assert as_map(cluster_headlines(items)) == {"short": ("direct", "near")}


def test_unrelated_articles_never_merge():
    titles = [
        ("Storm knocks out power to thousands in Florida", "en"),
        ("Central bank raises interest rates again", "en"),
        ("Apple unveils new iPhone with faster chip", "en"),
        ("진천군, 하반기 공무원 인사 발령", "ko"),
        ("진천군, 온디바이스 AI 기반 스마트 돌봄 구축", "ko"),
        ("岸田首相、能登半島の被災地を視察", "ja"),
        ("岸田首相、来月訪米へ バイデン大統領と会談", "ja"),
    ]
    items = [item(str(i), t, lang) for i, (t, lang) in enumerate(titles)]
    assert cluster_headlines(items) == []


def test_spacing_variants_merge_in_the_exact_pass():
    items = [item("x", "진천군 스마트 돌봄 구축 본격 착수", minutes=1), item("y", "진천군 스마트돌봄 구축 본격착수")]
    assert cluster_headlines(items) == [DuplicateMatch("y", "x", "exact", 1.0)]


def test_no_chaining_through_a_bridge():
    a = "Apple unveils new iPhone with faster chip and better camera"
    b = "Apple unveils new iPhone with faster chip"
    c = "New Apple iPhone has faster chip"
    idf = build_idf([a, b, c])
    t = NearDupConfig().threshold_for("en")
    # Preconditions: A~B and B~C, but not A~C.
    assert score_pair(a, b, idf, lang="en") >= t
    assert score_pair(b, c, idf, lang="en") >= t
    assert score_pair(a, c, idf, lang="en") < t
    items = [item("A", a, "en", minutes=30), item("B", b, "en", minutes=20), item("C", c, "en", minutes=10)]
    assert as_map(cluster_headlines(items)) == {"B": ("A", "near")}  # C stays on its own


def test_small_batch_three_items():
    """Three items only: batch IDF alone would make every shared gram common."""
    items = [
        item("1", "진천군, 온디바이스 AI 기반 스마트 돌봄 구축 본격 착수", minutes=3),
        item("2", "진천군 온디바이스 AI기반 스마트돌봄 본격화", minutes=2),
        item("3", "진천군, 하반기 공무원 인사 발령", minutes=1),
    ]
    assert as_map(cluster_headlines(items)) == {"2": ("1", "near")}
    background = [f"지역 소식 {i}호 발표 내용 정리 {i * 7}" for i in range(500)]
    assert as_map(cluster_headlines(items, background)) == {"2": ("1", "near")}


def test_english_and_japanese_cases():
    items = [
        item("en1", "Liz Truss resigns as UK prime minister - BBC News", "en", minutes=5),
        item("en2", "UK Prime Minister Liz Truss resigns | Reuters", "en"),
        item("ja1", "東京株式市場、日経平均が一時4万円台を回復", "ja", minutes=5),
        item("ja2", "日経平均、一時4万円台回復 東京株式市場", "ja"),
        item("ja3", "岸田首相、能登半島の被災地を視察", "ja"),
    ]
    assert as_map(cluster_headlines(items)) == {"en2": ("en1", "near"), "ja2": ("ja1", "near")}


def test_languages_are_never_compared():
    items = [item("en", "Kipchoge breaks marathon world record in Berlin", "en"),
             item("fr", "Kipchoge breaks marathon world record in Berlin", "fr")]
    assert cluster_headlines(items) == []


def test_empty_lead_token_is_its_own_bucket():
    # ko is gated; these headlines start with an emoji, so their lead token is "".
    e1 = item("e1", "🔥 진천군 온디바이스 AI 기반 스마트 돌봄 구축 본격 착수", minutes=2)
    e2 = item("e2", "🔥 진천군 온디바이스 AI기반 스마트돌봄 본격화", minutes=1)
    # Same text with a real lead token: a different bucket.
    n1 = item("n1", "진천군 온디바이스 AI기반 스마트돌봄 본격 착수 소식")
    assert as_map(cluster_headlines([e1, e2, n1])) == {"e2": ("e1", "near")}
    # Inside the empty bucket the gate is off: different first words still merge.
    e3 = item("e3", "🔥 어드밴트, 온디바이스 AI 서비스 실증·확산 사업 참여", minutes=5)
    e4 = item("e4", "🔥 엠젠솔루션, 온디바이스 AI 서비스 실증·확산 사업 참여", minutes=4)
    assert as_map(cluster_headlines([e3, e4])) == {"e4": ("e3", "near")}


def test_later_better_representative_switches_the_canonical():
    syndicated = item("old", "진천군 온디바이스 AI기반 스마트돌봄 본격화", minutes=0,
                      url="https://v.daum.net/v/20261102050000123", existing=True)
    original = item("new", "진천군, 온디바이스 AI 기반 스마트 돌봄 구축 본격 착수", minutes=-30,
                    url="https://www.yna.co.kr/view/AKR1")
    # The original outlet arrives an hour later (but was published earlier): it takes over.
    assert as_map(cluster_headlines([syndicated, original])) == {"old": ("new", "near")}
    # A syndicated newcomer never displaces an original canonical.
    first = replace(original, is_existing_canonical=True)
    second = replace(syndicated, is_existing_canonical=False, published_at=T0 + timedelta(hours=2))
    assert as_map(cluster_headlines([first, second])) == {"old": ("new", "near")}


def test_newer_copy_of_equal_standing_switches_unless_configured():
    existing = item("e", "Liz Truss resigns as UK prime minister", "en", minutes=0, existing=True)
    newer = item("n", "UK Prime Minister Liz Truss resigns - Reuters", "en", minutes=60)
    assert as_map(cluster_headlines([existing, newer])) == {"e": ("n", "near")}  # "then newest"
    keep = NearDupConfig(keep_existing_canonical_on_tie=True)
    assert as_map(cluster_headlines([existing, newer], config=keep)) == {"n": ("e", "near")}


def test_existing_canonicals_are_not_merged_with_each_other():
    e1 = item("e1", "Liz Truss resigns as UK prime minister", "en", minutes=0, existing=True)
    e2 = item("e2", "UK Prime Minister Liz Truss resigns - Reuters", "en", minutes=5, existing=True)
    assert cluster_headlines([e1, e2]) == []
    # A new copy of e1 joins e1 (exact pass); e2 still matches e1 but stays canonical.
    new = item("n", "Liz Truss resigns as UK prime minister | AP", "en", minutes=-10)
    assert as_map(cluster_headlines([e1, e2, new])) == {"n": ("e1", "exact")}
    # A new item that is the better representative takes both existing ones.
    best = item("b", "Liz Truss resigns as UK prime minister | AP", "en", minutes=30)
    assert as_map(cluster_headlines([e1, e2, best])) == {"e1": ("b", "exact"), "e2": ("b", "near")}


def test_exact_duplicates_of_a_near_duplicate_point_at_the_final_canonical():
    items = [
        item("lead", "진천군, 온디바이스 AI 기반 스마트 돌봄 구축 본격 착수", minutes=50),
        item("r1", "진천군 온디바이스 AI기반 스마트돌봄 본격화", minutes=10),
        item("r2", "진천군 온디바이스 AI기반 스마트 돌봄 본격화 - 뉴스1", minutes=20),
    ]
    result = as_map(cluster_headlines(items))
    assert result == {"r1": ("lead", "near"), "r2": ("lead", "near")}


def test_deterministic_whatever_the_input_order():
    titles = [
        "진천군, 온디바이스 AI 기반 스마트 돌봄 구축 본격 착수", "진천군 온디바이스 AI기반 스마트돌봄 본격화",
        "진천군 스마트 돌봄 구축 본격 착수", "진천군 스마트돌봄 구축 본격착수",
        "어드밴트, 온디바이스 AI 서비스 실증·확산 사업 참여", "엠젠솔루션, 온디바이스 AI 서비스 실증·확산 사업 참여",
    ]
    items = [item(f"i{k}", t, minutes=k % 2) for k, t in enumerate(titles)]  # ties on time: id decides
    expected = cluster_headlines(items)
    rng = random.Random(3)
    for _ in range(5):
        shuffled = items[:]
        rng.shuffle(shuffled)
        assert cluster_headlines(shuffled) == expected
    assert [m.item_id for m in expected] == sorted(m.item_id for m in expected)


def test_engine_scores_equal_pair_scores():
    titles = ["Liz Truss resigns as UK prime minister - BBC", "UK Prime Minister Liz Truss resigns | Reuters",
              "Truss quits as UK prime minister after 45 days", "Quake kills 12 in northern Chile",
              "Quake kills 15 in north Chile", "Kipchoge breaks marathon world record in Berlin"]
    background = ["Stocks fall on rate fears", "Kipchoge wins Berlin marathon again"]
    index = HeadlineIndex(titles, ["en"] * len(titles), background)
    idf = build_idf(titles + background)
    pairs = index.scored_pairs(list(range(len(titles))), "en")
    assert pairs
    for i, k, score in pairs:
        assert score == pytest.approx(score_pair(titles[i], titles[k], idf, lang="en"), abs=1e-9)
        assert index.score(i, k) == pytest.approx(score, abs=1e-9)


def test_blocking_finds_the_same_duplicates_as_exhaustive_search():
    rng = random.Random(11)
    vocab = [f"w{k}x{k * 7 % 13}" for k in range(400)]
    titles, pairs = [], []
    for k in range(150):
        words = rng.sample(vocab, 7)
        titles.append(" ".join(words))
        if k % 3 == 0:
            copy = words[:]
            del copy[rng.randrange(1, 7)]
            titles.append(" ".join(copy) + " - Wire")
            pairs.append((len(titles) - 2, len(titles) - 1))
    items = [item(f"{k:04d}", t, "en", minutes=-k) for k, t in enumerate(titles)]
    exhaustive = cluster_headlines(items, config=NearDupConfig(exhaustive_bucket_size=10_000))
    blocked = cluster_headlines(items, config=NearDupConfig(exhaustive_bucket_size=10))
    assert blocked == exhaustive
    assert {(m.canonical_item_id, m.item_id) for m in exhaustive} == {(f"{a:04d}", f"{b:04d}") for a, b in pairs}


def test_encode_grams_matches_char_ngrams():
    keys = ["스마트돌봄", "ab", "", "abcab"]
    rows, grams = encode_grams(keys, 3)
    got = {}
    for r, g in zip(rows.tolist(), grams.tolist()):
        got.setdefault(r, set()).add(decode_gram(g, 3))
    assert got == {0: {"스마트", "마트돌", "트돌봄"}, 1: {"ab"}, 3: {"abc", "bca", "cab"}}


def test_blocking_pairs_needs_three_shared_rare_columns():
    # rows 0 and 1 share columns 1, 2, 3; row 2 shares only 1, 2 with them.
    rows = np.array([0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2], dtype=np.int64)
    cols = np.array([1, 2, 3, 4, 1, 2, 3, 5, 1, 2, 6], dtype=np.int64)
    weights = np.ones(len(rows))
    ia, ib = blocking_pairs(rows, cols, weights, 3, k=4)
    assert list(zip(ia.tolist(), ib.tolist())) == [(0, 1)]


def test_empty_and_degenerate_inputs():
    assert cluster_headlines([]) == []
    assert cluster_headlines([item("x", "")]) == []
    assert cluster_headlines([item("x", "같은 제목"), item("x", "같은 제목")]) == []  # duplicate ids collapse
    same = [item("a", "!!!", minutes=1), item("b", "???")]
    assert cluster_headlines(same) == []  # nothing left after normalisation: never a match


def test_same_result_in_processes_with_different_hash_seeds():
    """Set iteration order (and so float summation order) changes with the hash
    seed; the result must not."""
    import json
    import os
    import subprocess
    import sys

    script = (
        "import json\n"
        "from newsdedup_dagster.stages.neardup import HeadlineItem, cluster_headlines\n"
        "titles = ['Liz Truss resigns as UK prime minister - BBC', 'UK Prime Minister Liz Truss resigns | Reuters',\n"
        "          'Truss quits as UK prime minister after 45 days', 'Quake kills 12 in northern Chile',\n"
        "          'Quake kills 12 in north Chile', 'Kipchoge breaks marathon world record in Berlin',\n"
        "          'Kipchoge breaks the marathon world record in Berlin again']\n"
        "items = [HeadlineItem(f'i{k}', t, 'en') for k, t in enumerate(titles)]\n"
        "print(json.dumps([m.__dict__ for m in cluster_headlines(items)]))\n"
    )
    outputs = []
    for seed in ("1", "2"):
        env = {**os.environ, "PYTHONHASHSEED": seed}
        done = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, done.stderr
        outputs.append(json.loads(done.stdout))
    assert outputs[0] == outputs[1] and outputs[0]
