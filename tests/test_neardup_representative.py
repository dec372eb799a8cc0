"""Representative choice: original over syndicator, direct over redirect, newest, id."""

import random
from datetime import UTC, datetime, timedelta

from newsdedup_dagster.stages.neardup import HeadlineItem, choose_representative, is_opaque_redirect, is_syndicated
from newsdedup_dagster.stages.neardup.representative import is_syndicator_host

T0 = datetime(2026, 11, 2, 5, 0, tzinfo=UTC)


def make(item_id, url="https://www.example.com/a", minutes=0, syndicator=False, existing=False, published=True):
    return HeadlineItem(item_id, "t", "en", url, syndicator, T0 + timedelta(minutes=minutes) if published else None,
                        existing)


def test_syndicator_hosts():
    for url in ("https://news.google.com/rss/articles/CBMi", "https://n.news.naver.com/mnews/article/001/1",
                "https://news.naver.com/main/read.naver?oid=1", "https://v.daum.net/v/2026", "https://www.msn.com/en-us/news/x",
                "https://news.yahoo.com/x", "https://uk.news.yahoo.com/x", "https://news.yahoo.co.jp/articles/x"):
        assert is_syndicator_host(url), url
    for url in ("https://www.yna.co.kr/view/AKR1", "https://www.reuters.com/world/x", "https://notyahoo.com/x",
                "https://msn.com.evil.example/x", "", "not a url"):
        assert not is_syndicator_host(url), url
    assert is_syndicated(make("x", syndicator=True))  # the source's flag alone is enough


def test_opaque_redirects():
    assert is_opaque_redirect("https://news.google.com/rss/articles/CBMiSGh0dHBz?oc=5")
    assert is_opaque_redirect("http://feedproxy.google.com/~r/Reuters/worldNews/~3/abc/")
    assert is_opaque_redirect("https://t.co/AbC123")
    assert not is_opaque_redirect("https://www.reuters.com/world/uk/truss-resigns/")
    assert not is_opaque_redirect("")


def test_preference_order():
    original_old = make("o1", minutes=0)
    original_new = make("o2", minutes=10)
    syndicated_newest = make("s1", "https://v.daum.net/v/1", minutes=60)
    redirect_newest = make("r1", "https://t.co/x", minutes=90)
    assert choose_representative([syndicated_newest, original_old]) is original_old
    assert choose_representative([redirect_newest, original_old]) is original_old
    assert choose_representative([original_old, original_new]) is original_new
    undated = make("u0", published=False)
    assert choose_representative([undated, original_old]) is original_old
    # Full tie: the smallest id, whatever the order.
    a, b = make("a"), make("b")
    assert choose_representative([b, a]) is a and choose_representative([a, b]) is a


def test_representative_is_order_independent():
    members = [make(f"m{k}", minutes=k % 3, syndicator=k % 4 == 0) for k in range(12)]
    expected = choose_representative(members)
    rng = random.Random(5)
    for _ in range(10):
        rng.shuffle(members)
        assert choose_representative(members) is expected


def test_naive_datetimes_are_utc():
    aware = make("a", minutes=0)
    naive = HeadlineItem("n", "t", "en", "https://x.example/1", False, datetime(2026, 11, 2, 5, 30))
    assert choose_representative([aware, naive]) is naive


def test_keep_existing_canonical_on_tie():
    existing = make("e", minutes=0, existing=True)
    newer = make("n", minutes=30)
    assert choose_representative([existing, newer]) is newer
    assert choose_representative([existing, newer], keep_existing_canonical=True) is existing
    # Rules 1-2 still win over keeping the existing one.
    syndicated_existing = make("s", "https://v.daum.net/v/1", existing=True)
    assert choose_representative([syndicated_existing, newer], keep_existing_canonical=True) is newer
