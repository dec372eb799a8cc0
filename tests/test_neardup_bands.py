"""The banded candidate lookup (migration 121) decides as the whole-window path does, on the sample
day with the default window and with a window short enough that hours leave it; its pure parts
(band hashing, rarest grams) hold for any input."""

from __future__ import annotations

from hypothesis import given, strategies as st

from newsdedup_dagster.evaluation.neardup_candidates import agreement, decide, sample_day, seed
from newsdedup_dagster.shared.text.headline import NearDupConfig
from newsdedup_dagster.stages.neardup.bands import BAND_KINDS, band_hash, min_shared_grams, rarest_terms, signature
from newsdedup_dagster.stages.neardup.store import move_window


def test_sample_day_bands_decide_as_the_whole_window(conn):
    hours = seed(conn, *sample_day())
    for lookback in (36, 3):  # 3 h: hours leave the window and their counts and bands go
        reference = decide(conn, hours, "window", lookback_hours=lookback)
        banded = decide(conn, hours, "bands", lookback_hours=lookback)
        figures = agreement(reference, banded)
        assert len(reference) > 20
        assert figures["recall"] >= 0.99 and figures["precision"] == 1.0, figures


def _kept(conn):
    return [conn.execute("SELECT lang, exact_key, items FROM neardup_df_docs ORDER BY 1, 2").fetchall(),
            conn.execute("SELECT lang, kind, term, df FROM neardup_df ORDER BY 1, 2, 3").fetchall(),
            # which rare grams an item stores depends on the counts when its hour entered: compare the items
            conn.execute("SELECT DISTINCT partition_hour, item_id FROM neardup_bands ORDER BY 1, 2").fetchall()]


def test_counts_after_moving_the_window_back_and_forth_are_those_of_a_run_in_order(conn):
    hours = seed(conn, *sample_day())
    decide(conn, hours, "bands", lookback_hours=3)
    in_order = _kept(conn)
    assert in_order[0] and in_order[1] and in_order[2]
    with conn.transaction():  # a rerun of an early hour moves the window back, the next run forward again
        move_window(conn, hours[4], 3, NearDupConfig())
        assert _kept(conn) != in_order
        move_window(conn, hours[-1], 3, NearDupConfig())
    assert _kept(conn) == in_order


@given(st.sampled_from(BAND_KINDS), st.text(max_size=40))
def test_band_hash_is_a_signed_64_bit_function_of_kind_and_text(kind, text):
    h = band_hash(kind, text)
    assert -(1 << 63) <= h < (1 << 63)
    assert h == band_hash(kind, text)
    assert all(band_hash(other, text) != h for other in BAND_KINDS if other != kind)


@given(st.sets(st.text(min_size=1, max_size=3), max_size=30), st.dictionaries(st.text(min_size=1, max_size=3),
       st.integers(0, 1000)), st.integers(1, 12))
def test_rarest_terms_are_the_k_lowest_frequencies_whatever_the_order(terms, df, k):
    rare = rarest_terms(terms, df, k)
    assert rare == rarest_terms(list(reversed(sorted(terms))), df, k)
    assert len(rare) == min(k, len(terms)) and set(rare) <= terms
    if rare:
        worst = max(df.get(t, 0) for t in rare)
        assert all(df.get(t, 0) >= worst for t in terms - set(rare))
    assert 1 <= min_shared_grams(len(rare)) <= max(1, len(rare))


@given(st.text(max_size=20), st.text(max_size=20), st.sets(st.text(min_size=1, max_size=3), max_size=10))
def test_signature_has_one_band_per_key_and_rare_gram(exact_key, url_key, grams):
    bands = signature(exact_key, url_key, grams)
    assert len(bands) == bool(exact_key) + bool(url_key) + len(grams)
    assert signature(exact_key, url_key, grams, lead="x")[0] == ("l", band_hash("l", "x"))
    assert signature(exact_key, url_key, sorted(grams, reverse=True)) == bands
