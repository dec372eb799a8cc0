"""Pure digest selection rules."""

from __future__ import annotations

import pytest
from helpers import calibrate

from newsdedup_dagster import config
from newsdedup_dagster.stages.digest.select import DigestCandidate as C, DigestSettings, select_stories


def ids(selected):
    return [s.story_id for s in selected]


def test_ranked_by_significance_then_sources_then_id():
    cands = [C("b", 5.0, source_count=2), C("a", 5.0, source_count=2), C("c", 5.0, source_count=9), C("d", 9.0)]
    assert ids(select_stories(cands, DigestSettings(10, 1, 0, 0))) == ["d", "c", "a", "b"]


def test_no_two_stories_from_one_event_unless_configured():
    cands = [C("e1a", 9, "ev1"), C("e1b", 8, "ev1"), C("e2a", 7, "ev2"), C("free", 6), C("free2", 5)]
    assert ids(select_stories(cands, DigestSettings(10, 1, 0, 0))) == ["e1a", "e2a", "free", "free2"]
    # the event rule is hard: it is not relaxed even when the digest is short
    assert "e1b" not in ids(select_stories(cands, DigestSettings(10, 1, 0, 0)))
    assert ids(select_stories(cands, DigestSettings(10, 2, 0, 0))) == ["e1a", "e1b", "e2a", "free", "free2"]


def test_region_diversity_prefers_other_countries_then_fills():
    cands = [C(f"us{i}", 9 - i * 0.1, region="US") for i in range(5)] + [C("fr", 5, region="FR"), C("jp", 4, region="JP")]
    picked = select_stories(cands, DigestSettings(5, 1, 2, 0))
    assert ids(picked) == ["us0", "us1", "us2", "fr", "jp"]
    assert [s.relaxed_region for s in picked] == [False, False, True, False, False]
    # unknown region is not limited
    unknown = [C(f"x{i}", 5 - i * 0.1) for i in range(4)]
    assert len(select_stories(unknown, DigestSettings(4, 1, 1, 0))) == 4


def test_max_stories_and_min_significance():
    cands = [C(f"s{i}", float(i)) for i in range(20)]
    picked = select_stories(cands, DigestSettings(5, 1, 0, 3.0))
    assert ids(picked) == ["s19", "s18", "s17", "s16", "s15"]
    assert [s.rank for s in picked] == [1, 2, 3, 4, 5]
    assert select_stories([C("low", 1.0)], DigestSettings(5, 1, 0, 3.0)) == []


def test_settings_from_env_and_validation(monkeypatch, tmp_path):
    monkeypatch.setenv("NEWSDEDUP_DIGEST_MAX_STORIES", "7")
    calibrate(monkeypatch, tmp_path, digest={"max_per_event": 2})
    s = config.digest_settings()
    assert (s.max_stories, s.max_per_event) == (7, 2)
    with pytest.raises(ValueError):
        DigestSettings(0, 1, 0, 0)
