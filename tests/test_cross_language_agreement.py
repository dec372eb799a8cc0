"""Joins across languages on agreeing anchors (shared/text/anchors.py joins_across_languages,
stages/clustering/guard.py join_across_languages, the clustering setting cross_language_margin): two
items in different languages that name the same earthquake magnitude and conflict on nothing are
joined down to item_threshold minus the margin, and the guard's groups such an edge joins are one
story when they share no language; an item joins a story with no member in its language down to
story_threshold minus the margin on the same terms (passes 1 and 3). Pairs that conflict, that share
only a common word, or that are written in one language keep the thresholds. Pure: anchors are read from text, edges are given,
no database."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

import pytest

from newsdedup_dagster.shared.text import anchors as an
from newsdedup_dagster.stages.clustering import passes
from newsdedup_dagster.stages.clustering.guard import join_across_languages
from newsdedup_dagster.stages.clustering.settings import settings_for

# The sample day's Iwate quake (gold story quake-iwate-m61), headline and lead as the feeds give them.
IWATE = {
    "ja1": ("ja", "岩手県で震度5強 宮古市 若干の海面変動の可能性",
            "3日午前8時28分ごろ、三陸沖を震源とする地震があり、岩手県宮古市で震度5強の揺れを観測しました。"
            "震源の深さは約20キロ、マグニチュードは6.1と推定されています。"),
    "ja2": ("ja", "三陸沖でM6.1 岩手・宮古で震度5強、東北新幹線が一時運転見合わせ",
            "3日午前8時28分ごろ、三陸沖を震源とする地震があり、岩手県宮古市で震度5強を観測した。"),
    "zh": ("zh", "日本岩手县近海发生6.1级地震", "据日本气象厅消息，当地时间3日8时28分，日本三陆近海发生6.1级地震，岩手县宫古市震感最强。"),
    "en": ("en", "Strong 6.1 quake jolts northeast Japan's Iwate; bullet trains halted",
           "A magnitude 6.1 earthquake shook Iwate prefecture in northeastern Japan on Tuesday morning local time."),
    "ko": ("ko", "日 이와테현 앞바다서 규모 6.1 지진…미야코시 진도 5강",
           "일본 동북부 산리쿠 앞바다에서 3일 오전 8시 28분께 규모 6.1의 지진이 발생했다."),
}
# the day's other quake, and reports that share only a common word with the Iwate ones
IBARAKI_KO = ("ko", "日 이바라키현 앞바다서 규모 5.4 지진…쓰나미 우려 없어",
              "일본 이바라키현 앞바다에서 2일 오전 9시 31분께 규모 5.4의 지진이 발생했다.")
CHILE_ES = ("es", "Sismo de magnitud 6,1 sacude el norte de Chile", "El temblor se sintió en Antofagasta y Calama.")
JAPAN_TRAINS_KO = ("ko", "일본 신칸센 운행 재개", "일본 동북부 신칸센 일부 구간 운행이 재개됐다.")
IWATE_EN_BIS = ("en", "Magnitude 6.1 earthquake off Iwate, no tsunami threat",
                "Japan's weather agency said there was no risk of a tsunami.")
# cosines of the sample day's embeddings (e5, centred per language) between the five items
COSINES = {("ja1", "ja2"): 0.628, ("ja1", "zh"): 0.565, ("ja2", "zh"): 0.509, ("en", "ko"): 0.440,
           ("en", "zh"): 0.369, ("ko", "zh"): 0.334, ("ja2", "ko"): 0.309, ("en", "ja2"): 0.282}


def anchors(item) -> an.Anchors:
    lang, title, lead = item
    return an.extract(title, lead, lang)


# ----------------------------------------------------------------- the pair rule
@pytest.mark.parametrize("a, b", [("en", "zh"), ("ko", "zh"), ("en", "ja2"), ("ja1", "ko")])
def test_a_cross_language_pair_that_names_the_same_magnitude_joins(a, b):
    assert an.joins_across_languages(anchors(IWATE[a]), anchors(IWATE[b])) == ("magnitudes",)
    assert an.joins_across_languages(anchors(IWATE[b]), anchors(IWATE[a])) == ("magnitudes",)


@pytest.mark.parametrize("a, b", [
    (IWATE["en"], IBARAKI_KO),      # M6.1 | 규모 5.4: the magnitudes conflict
    (IWATE["zh"], IBARAKI_KO),
    (IWATE["en"], CHILE_ES),        # the same magnitude, but Chile is not Japan: places conflict
    (IWATE["ja2"], JAPAN_TRAINS_KO),   # one side names no magnitude: only common words (日本, 新幹線) shared
])
def test_a_cross_language_pair_that_conflicts_or_shares_only_a_common_word_does_not_join(a, b):
    assert an.joins_across_languages(anchors(a), anchors(b)) == ()
    assert an.joins_across_languages(anchors(b), anchors(a)) == ()


def test_a_same_language_pair_never_joins_below_the_threshold():
    assert an.agreement(anchors(IWATE["en"]), anchors(IWATE_EN_BIS)) == ("magnitudes",)
    assert an.joins_across_languages(anchors(IWATE["en"]), anchors(IWATE_EN_BIS)) == ()
    assert an.joins_across_languages(anchors(IWATE["ja1"]), anchors(IWATE["ja2"])) == ()


def test_an_item_of_unknown_language_never_joins_below_the_threshold():
    unknown = anchors(("", IWATE["en"][1], IWATE["en"][2]))
    assert an.joins_across_languages(unknown, anchors(IWATE["zh"])) == ()
    assert an.joins_across_languages(anchors(IWATE["zh"]), unknown) == ()


def test_agreement_is_the_same_magnitude_to_its_decimal_not_the_tolerance():
    ru = anchors(("ru", "У берегов Японии произошло землетрясение магнитудой 6,0", ""))
    en = anchors(IWATE["en"])
    assert an.conflict(ru, en) is None          # 6.0 and 6.1: within the tolerance, no conflict
    assert an.agreement(ru, en) == ()           # ... but not the same number: no evidence either


def test_the_rules_turn_the_conflicts_the_join_respects():
    no_places = an.AnchorRules(places=False)
    assert an.joins_across_languages(anchors(IWATE["en"]), anchors(CHILE_ES), no_places) == ("magnitudes",)


# ----------------------------------------------------------------- the groups
def _pairs():
    return {tuple(sorted(p)): 2 * w for p, w in COSINES.items()}


def _lang(item: str) -> str:
    return IWATE[item][0]


def test_two_groups_in_disjoint_languages_joined_by_an_agreeing_edge_are_one():
    found = {k: anchors(v) for k, v in IWATE.items()}
    groups, joined = join_across_languages(
        [["ja1", "ja2", "zh"], ["en", "ko"]], _pairs(),
        lambda a, b: bool(an.joins_across_languages(found[a], found[b])), _lang, lambda x, y: True)
    assert groups == [["en", "ja1", "ja2", "ko", "zh"]]
    assert joined and {joined[0][0], joined[0][1]} == {"en", "zh"}   # the strongest agreeing edge


def test_groups_that_share_a_language_or_conflict_stay_apart():
    agree = lambda a, b: True  # noqa: E731
    four = {p: w for p, w in _pairs().items() if "en" not in p}
    shared = join_across_languages([["ja1", "zh"], ["ja2", "ko"]], four, agree, _lang, lambda x, y: True)
    assert shared[0] == [["ja1", "zh"], ["ja2", "ko"]] and not shared[1]
    # an item in no group is a group of its own: en joins the group it shares no language with
    alone = join_across_languages([["ja1", "zh"], ["ja2", "ko"]], _pairs(), agree, _lang, lambda x, y: True)
    assert alone[0] == [["en", "ja2", "ko"], ["ja1", "zh"]]
    refused = join_across_languages([["ja1", "ja2", "zh"], ["en", "ko"]], _pairs(), agree, _lang,
                                    lambda x, y: False)
    assert refused[0] == [["en", "ko"], ["ja1", "ja2", "zh"]] and not refused[1]
    nothing = join_across_languages([["ja1", "ja2", "zh"], ["en", "ko"]], _pairs(), lambda a, b: False, _lang,
                                    lambda x, y: True)
    assert nothing[0] == [["en", "ko"], ["ja1", "ja2", "zh"]]


def test_the_join_does_not_depend_on_the_order_of_groups_and_edges():
    found = {k: anchors(v) for k, v in IWATE.items()}
    agree = lambda a, b: bool(an.joins_across_languages(found[a], found[b]))  # noqa: E731
    one = join_across_languages([["ja1", "ja2", "zh"], ["en", "ko"]], _pairs(), agree, _lang, lambda x, y: True)
    other = join_across_languages([["ko", "en"], ["zh", "ja2", "ja1"]], dict(reversed(list(_pairs().items()))),
                                  agree, _lang, lambda x, y: True)
    assert one == other


# ----------------------------------------------------------------- pass 2 on the sample's edges
@dataclass
class _Info:
    model: str = "e5:multilingual-e5-small-q4"


def _pass2(margin: float, extra: dict | None = None) -> list[list[str]]:
    """Pass 2's anchor check, guard and joins on the five items' directed edges (no database: the
    anchors are known, so nothing is read)."""
    settings = settings_for(_Info.model, {"cross_language_margin": margin})
    h = datetime(2026, 11, 2, 23, tzinfo=UTC)
    items = dict(IWATE, **(extra or {}))
    hour = passes._Hour(published={k: h + timedelta(minutes=i) for i, k in enumerate(sorted(items))})
    hour.anchors = {k: anchors(v) for k, v in items.items()}
    hour.remaining = sorted(items)
    raw = [(a, b, w) for (a, b), w in COSINES.items() if w >= settings.item_threshold - margin]
    raw += [(b, a, w) for a, b, w in raw]
    result = passes.ClusterResult(partition=h, model=_Info.model)
    kept = passes._anchor_check_edges(None, settings, hour, raw, result)
    passes._pass2_components(_Info(), settings, hour, kept, result)
    return [s.members for s in hour.stories]


def test_pass2_makes_the_iwate_quake_one_story_with_the_margin_and_two_without():
    assert _pass2(0.07) == [["en", "ja1", "ja2", "ko", "zh"]]
    assert sorted(_pass2(0.0)) == [["en", "ko"], ["ja1", "ja2", "zh"]]


def test_pass2_keeps_a_low_edge_only_across_languages_where_the_anchors_agree():
    settings = settings_for(_Info.model, {"cross_language_margin": 0.07})
    h = datetime(2026, 11, 2, 23, tzinfo=UTC)
    items = {"en": IWATE["en"], "zh": IWATE["zh"], "en2": IWATE_EN_BIS, "ko": JAPAN_TRAINS_KO}
    hour = passes._Hour(published={k: h for k in items})
    hour.anchors = {k: anchors(v) for k, v in items.items()}
    raw = [("en", "zh", 0.35), ("en", "en2", 0.35), ("zh", "ko", 0.35), ("en", "ko", 0.45)]
    kept = passes._anchor_check_edges(None, settings, hour, raw, passes.ClusterResult(partition=h, model="m"))
    assert kept == [("en", "zh", 0.35), ("en", "ko", 0.45)]
    # margin 0 or the anchor check off: the item threshold alone
    off = settings_for(_Info.model, {"cross_language_margin": 0.0})
    assert passes._anchor_check_edges(None, off, hour, raw, passes.ClusterResult(partition=h, model="m")) \
        == [("en", "ko", 0.45)]


# ----------------------------------------------------------------- passes 1 and 3: an item and a story
def _attach(matches, members, margin=0.10):
    settings = settings_for(_Info.model, {"cross_language_margin": margin})
    h = datetime(2026, 11, 3, 0, tzinfo=UTC)
    items = dict(IWATE, en2=IWATE_EN_BIS, trains=JAPAN_TRAINS_KO, ibaraki=IBARAKI_KO)
    hour = passes._Hour(published={k: h for k in items})
    hour.anchors = {k: anchors(v) for k, v in items.items()}
    result = passes.ClusterResult(partition=h, model=_Info.model)
    return passes._anchor_check_attachments(None, settings, hour, matches, 1, result, members=members), hour


def test_an_item_joins_a_story_in_other_languages_below_the_story_threshold_when_they_agree():
    story = {"s": ["ja1", "ja2", "zh"]}
    kept, hour = _attach([("en", "s", 0.31), ("ko", "s", 0.36)], story)
    assert kept == [("en", "s", 0.31), ("ko", "s", 0.36)]
    assert not hour.vetoes                                     # nothing was refused
    # below the bar, or no margin: not kept
    assert _attach([("en", "s", 0.29)], story)[0] == []
    assert _attach([("en", "s", 0.36)], story, margin=0.0)[0] == []


def test_an_item_below_the_story_threshold_stays_out_when_the_story_has_its_language_or_nothing_agrees():
    assert _attach([("en2", "s", 0.35)], {"s": ["en", "zh"]})[0] == []          # an English member
    assert _attach([("trains", "s", 0.35)], {"s": ["ja1", "ja2", "zh"]})[0] == []   # no magnitude
    assert _attach([("ibaraki", "s", 0.35)], {"s": ["ja1", "ja2", "zh"]})[0] == []  # 5.4 | 6.1
    # at the story threshold the rule is the anchor check's, as before
    kept, hour = _attach([("ibaraki", "s", 0.45), ("trains", "s", 0.45)], {"s": ["ja1", "ja2", "zh"]})
    assert kept == [("trains", "s", 0.45)] and "magnitudes" in hour.vetoes["s"][0][4]


def test_the_threshold_an_attachment_is_recorded_with():
    settings = settings_for(_Info.model, {"cross_language_margin": 0.10})
    assert passes.story_bar(settings, 0.45) == pytest.approx(0.40)
    assert passes.story_bar(settings, 0.40) == pytest.approx(0.40)
    assert passes.story_bar(settings, 0.33) == pytest.approx(0.30)


def test_explain_marks_an_edge_below_the_item_threshold_and_measures_margins_from_the_item_threshold():
    from newsdedup_dagster.stages.clustering import explain

    h = datetime(2026, 11, 2, 23, tzinfo=UTC)

    def member(item, lang, sim, threshold, via):
        return explain.Member(item, item, lang, "src", h, 2, sim, threshold, 0.0, via, None, h)

    story = explain.Explanation("st_x", "headline", h, 3, members=[
        member("ja1", "ja", 0.565, 0.40, "zh"), member("zh", "zh", 0.565, 0.40, "ja1"),
        member("en", "en", 0.369, 0.30, "zh")])
    story.edges = [explain.Edge("ja1", "zh", 0.565, 2, True, None, h), explain.Edge("en", "zh", 0.369, 2, True, None, h)]
    story.weakest = explain.weakest_admission(story)
    assert story.weakest.threshold == pytest.approx(0.40) and story.weakest.margin == pytest.approx(-0.031)
    text = explain.render_text(story)
    line = next(x for x in text.splitlines() if "-- zh" in x and "0.369" in x and "weakest" not in x)
    assert "below the item threshold: two languages, the same magnitude" in line
    assert "below the item threshold" not in next(x for x in text.splitlines() if "ja1" in x and "-- zh" in x)
