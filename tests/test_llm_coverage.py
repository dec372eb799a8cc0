"""Coverage counted in independent outlets (stages/llm/scoring.py: independent_outlets, coverage_shares):
pure rules, and a property: one source never outranks three outlets on coverage alone."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from hypothesis import given, settings, strategies as st

from newsdedup_dagster.stages.llm import scoring
from newsdedup_dagster.stages.llm.scoring import Appearance, StoryFacts, coverage_significance, independent_outlets

T0 = datetime(2026, 11, 2, 6, tzinfo=UTC)


def at(minutes: float) -> datetime:
    return T0 + timedelta(minutes=minutes)


def test_one_feed_is_one_outlet_in_its_declared_language():
    loud = [Appearance("loud", False, "en", f"site{n}.example", at(n)) for n in range(32)]
    coverage = independent_outlets(loud)
    assert (coverage.outlets, coverage.languages) == (1, ["en"])


def test_an_aggregator_copy_of_a_counted_outlet_adds_nothing():
    aps = [Appearance("reuters", False, "en", "reuters.com", at(0)),
           Appearance("gnews", True, "en", "reuters.com", at(5)),
           Appearance("gnews", True, "en", "theguardian.com", at(9)),
           Appearance("gnews", True, "en", "apnews.com", at(7))]
    coverage = independent_outlets(aps)
    # Reuters once; Google News adds one publisher not yet counted (its earliest): AP.
    assert coverage.outlets == 2 and coverage.languages == ["en"]
    assert (coverage.first_at, coverage.latest_at) == (at(0), at(7))


def test_a_publishers_feed_stands_for_the_outlet_it_lists_most():
    aps = [Appearance("bbc", False, "en", "reuters.com", at(0)),
           Appearance("bbc", False, "en", "bbc.co.uk", at(1)), Appearance("bbc", False, "en", "bbc.co.uk", at(2)),
           Appearance("reuters", False, "en", "reuters.com", at(3)),
           Appearance("lemonde", False, "fr", None, at(4))]
    coverage = independent_outlets(aps)
    assert coverage.outlets == 3 and coverage.languages == ["en", "fr"]


def _facts(aps: list[Appearance]) -> StoryFacts:
    coverage = independent_outlets(aps)
    times = [a.published_at for a in aps]
    return StoryFacts("s", len(aps), coverage.outlets, coverage.languages, min(times), max(times),
                      outlets_first_at=coverage.first_at, outlets_latest_at=coverage.latest_at)


LOUD_ENTRY = st.builds(
    Appearance, source_id=st.just("loud"), syndicator=st.just(False),
    language=st.sampled_from(["en", "fr", "de", "ja", None]),
    outlet=st.one_of(st.none(), st.sampled_from(["a.example", "b.example", "c.example", "d.example"])),
    published_at=st.integers(0, 600).map(at))


@settings(max_examples=300, deadline=None)
@given(st.lists(LOUD_ENTRY, min_size=1, max_size=64), st.lists(st.integers(0, 600), min_size=3, max_size=3))
def test_one_source_never_outranks_three_outlets_on_coverage(loud, minutes):
    """Whatever one publisher's feed posts (entries, languages, links, times), its story's coverage
    significance is below that of any story carried by three outlets."""
    three = [Appearance(f"src{n}", False, "en", f"outlet{n}.example", at(m)) for n, m in enumerate(minutes)]
    assert coverage_significance(_facts(loud)) == 0.0
    assert coverage_significance(_facts(loud)) < coverage_significance(_facts(three))
    capped = scoring.bound_significance(10.0, _facts(loud))
    assert capped <= scoring.SIGNIFICANCE_MARGIN < coverage_significance(_facts(three)) + scoring.SIGNIFICANCE_MARGIN
