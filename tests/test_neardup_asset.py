"""item_duplicates[H] through Dagster against the real embedded Postgres: rules, the anchor /
representative model, idempotent reruns and the later-better-representative switch."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from helpers import calibrate
from hourly_helpers import stage_hour

H0 = datetime(2026, 11, 2, 5, tzinfo=UTC)


def _key(hour: datetime) -> str:
    return hour.strftime("%Y-%m-%d-%H:%M")


def _source(conn, sid, lang, syndicator=False):
    conn.execute(
        "INSERT INTO sources (id, name, feed_url, language, syndicator) VALUES (%s, %s, %s, %s, %s) ON CONFLICT DO NOTHING",
        (sid, sid, f"https://{sid}.example/feed", lang, syndicator),
    )


def _item(conn, iid, title, source, lang, hour, url=None, minutes=10):
    url = url or f"https://{source}.example/{iid}"
    conn.execute(
        "INSERT INTO items (id, canonical_url, url, title, lang, published_at, partition_hour, source_id) "
        "VALUES (%s, %s, %s, %s, %s, %s, %s, %s)",
        (iid, url, url, title, lang, hour + timedelta(minutes=minutes), hour, source),
    )


def _run(url, hour, later_partitions=None):
    options = {"item_duplicates": {"later_partitions": later_partitions}} if later_partitions else None
    result = stage_hour("item_duplicates", _key(hour), url, options=options)
    assert result.success
    return result.metadata


def _dups(conn):
    return {r[0]: (r[1], r[2]) for r in conn.execute("SELECT item_id, canonical_item_id, rule FROM item_duplicates")}


def _seed_korean(conn):
    _source(conn, "yonhap", "ko")
    _source(conn, "naver", "ko", syndicator=True)
    _source(conn, "etnews", "ko")
    _item(conn, "orig", "진천군, 온디바이스 AI 기반 스마트 돌봄 구축 본격 착수", "yonhap", "ko", H0)
    _item(conn, "copy", "진천군 온디바이스 AI기반 스마트돌봄 본격화", "naver", "ko", H0, minutes=20)
    _item(conn, "adv", "어드밴트, 온디바이스 AI 서비스 실증·확산 사업 참여", "etnews", "ko", H0)
    _item(conn, "mzen", "엠젠솔루션, 온디바이스 AI 서비스 실증·확산 사업 참여", "etnews", "ko", H0, minutes=30)
    _item(conn, "other", "서울 아침 기온 영하 5도…올겨울 첫 한파특보", "yonhap", "ko", H0)
    conn.commit()


def test_rewritten_copy_merges_template_subjects_stay_apart_and_rerun_is_identical(conn, clean_db):
    _seed_korean(conn)
    meta = _run(clean_db, H0)
    dups = _dups(conn)
    assert dups == {"copy": ("orig", "near")}  # original outlet is canonical, not the syndicator
    assert meta["rule_near"].value == 1 and meta["duplicates"].value == 1
    before = conn.execute("SELECT item_id, canonical_item_id, rule, similarity FROM item_duplicates ORDER BY 1").fetchall()
    _run(clean_db, H0)
    after = conn.execute("SELECT item_id, canonical_item_id, rule, similarity FROM item_duplicates ORDER BY 1").fetchall()
    assert before == after
    rep = conn.execute("SELECT anchor_item_id, representative_item_id, member_count FROM duplicate_groups").fetchall()
    assert rep == [("orig", "orig", 2)]


def test_url_variant_rule(conn, clean_db):
    _source(conn, "bbc", "en")
    _source(conn, "gnews", "en", syndicator=True)
    _item(conn, "a", "Storm closes schools across northern England", "bbc", "en", H0,
          url="https://www.bbc.co.uk/news/uk-1")
    _item(conn, "b", "Thousands of pupils stay home as storm shuts schools", "gnews", "en", H0,
          url="http://bbc.co.uk/news/uk-1/")
    conn.commit()
    _run(clean_db, H0)
    assert _dups(conn) == {"b": ("a", "url")}


def test_later_better_representative_switches_group_representative(conn, clean_db):
    # Hour 0: only the syndicated copy exists (canonical, embedded later on).
    _source(conn, "naver", "ko", syndicator=True)
    _source(conn, "yonhap", "ko")
    _item(conn, "copy", "진천군 온디바이스 AI기반 스마트돌봄 본격화", "naver", "ko", H0)
    conn.commit()
    _run(clean_db, H0)
    assert _dups(conn) == {}
    # Hour 1: the original outlet's report arrives.
    h1 = H0 + timedelta(hours=1)
    _item(conn, "orig", "진천군, 온디바이스 AI 기반 스마트 돌봄 구축 본격 착수", "yonhap", "ko", h1)
    conn.commit()
    _run(clean_db, h1)
    # The anchor (already embedded and in a story) stays; the representative switches.
    assert _dups(conn) == {"orig": ("copy", "near")}
    assert conn.execute("SELECT representative_item_id FROM duplicate_groups WHERE anchor_item_id = 'copy'").fetchone() == ("orig",)
    # Rerunning hour 1 gives the same; rerunning hour 0 leaves hour 1's decision alone.
    _run(clean_db, h1)
    _run(clean_db, H0)
    assert _dups(conn) == {"orig": ("copy", "near")}
    assert conn.execute("SELECT representative_item_id FROM duplicate_groups").fetchall() == [("orig",)]


def _groups(conn):
    return conn.execute("SELECT anchor_item_id, representative_item_id, member_count, updated_partition "
                        "FROM duplicate_groups ORDER BY 1").fetchall()


def test_rerun_with_reset_forgets_later_hours_and_replay_rebuilds_them(conn, clean_db, monkeypatch):
    monkeypatch.delenv("NEWSDEDUP_CALIBRATION_FILE", raising=False)
    _source(conn, "yonhap", "ko")
    _source(conn, "naver", "ko", syndicator=True)
    _source(conn, "etnews", "ko")
    h1, h2 = H0 + timedelta(hours=1), H0 + timedelta(hours=2)
    _item(conn, "orig", "진천군, 온디바이스 AI 기반 스마트 돌봄 구축 본격 착수", "yonhap", "ko", H0)
    _item(conn, "copy", "진천군 온디바이스 AI기반 스마트돌봄 본격화", "naver", "ko", h1)
    _item(conn, "reprint", "진천군, 온디바이스 AI 기반 스마트 돌봄 구축 본격 착수", "etnews", "ko", h2)
    conn.commit()
    for hour in (H0, h1, h2):
        _run(clean_db, hour)
    first = (_dups(conn), _groups(conn))
    assert first == ({"copy": ("orig", "near"), "reprint": ("orig", "exact")}, [("orig", "reprint", 3, h2)])

    # keep (the default outside backfills): hour 2's decision stays and the group still counts it.
    meta = _run(clean_db, h1)
    assert meta["later_duplicates_removed"].value == 0 and (_dups(conn), _groups(conn)) == first

    # reset: hour 1 sees only what had arrived by hour 1, as its first run did.
    meta = _run(clean_db, h1, "reset")
    assert meta["later_partitions"].value == "reset" and meta["later_duplicates_removed"].value == 1
    assert _dups(conn) == {"copy": ("orig", "near")}
    assert _groups(conn) == [("orig", "orig", 2, h1)]  # the syndicated copy never represents
    _run(clean_db, H0, "reset")
    assert _dups(conn) == {} and _groups(conn) == []

    # Replaying the later hours in time order rebuilds exactly the first build.
    _run(clean_db, h1, "reset")
    _run(clean_db, h2, "reset")
    assert (_dups(conn), _groups(conn)) == first


def test_later_partitions_from_the_calibration_file(conn, clean_db, monkeypatch, tmp_path):
    _source(conn, "a", "en")
    h1 = H0 + timedelta(hours=1)
    _item(conn, "a1", "Tesla recalls 100,000 cars over seat belt fault", "a", "en", H0)
    _item(conn, "a2", "Tesla recalls 100,000 cars over seat belt fault", "a", "en", h1)
    conn.commit()
    _run(clean_db, H0)
    _run(clean_db, h1)
    assert _dups(conn) == {"a2": ("a1", "exact")}
    calibrate(monkeypatch, tmp_path, clustering={"later_partitions": "reset"})
    assert _run(clean_db, H0)["later_duplicates_removed"].value == 1
    assert _dups(conn) == {}


def test_languages_never_merge(conn, clean_db):
    _source(conn, "a", "en")
    _source(conn, "b", "fr")
    _item(conn, "en1", "Tesla recalls 100,000 cars", "a", "en", H0)
    _item(conn, "fr1", "Tesla recalls 100,000 cars", "b", "fr", H0)  # same text, different declared language
    conn.commit()
    _run(clean_db, H0)
    assert _dups(conn) == {}


def test_unknown_later_partitions_is_refused(conn, clean_db):
    import pytest

    from newsdedup_dagster.stages.neardup.store import dedup_partition

    with pytest.raises(ValueError, match="later_partitions"):
        dedup_partition(conn, H0, later_partitions="wipe")
