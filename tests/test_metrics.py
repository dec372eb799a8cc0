import pytest

from newsdedup_dagster.evaluation.metrics import ari, bcubed, nmi, summary

# Gold: X = {a, b, c}, Y = {d, e}.
GOLD = {"a": "X", "b": "X", "c": "X", "d": "Y", "e": "Y"}


def test_bcubed_hand_computed():
    # Pred: 1 = {a, b}, 2 = {c, d, e}.
    # Precision per item: a 2/2, b 2/2, c 1/3 (only c of {c,d,e} is X),
    #   d 2/3, e 2/3  -> P = (1 + 1 + 1/3 + 2/3 + 2/3) / 5 = 11/15.
    # Recall per item: a 2/3, b 2/3, c 1/3, d 2/2, e 2/2
    #   -> R = (2/3 + 2/3 + 1/3 + 1 + 1) / 5 = 11/15.  F1 = 11/15.
    pred = {"a": 1, "b": 1, "c": 2, "d": 2, "e": 2}
    p, r, f = bcubed(pred, GOLD)
    assert p == pytest.approx(11 / 15)
    assert r == pytest.approx(11 / 15)
    assert f == pytest.approx(11 / 15)


def test_unassigned_items_are_singletons_not_one_cluster():
    # Pred: {a, b, c} = X exactly; d is None and e is missing -> two singletons.
    # Precision: every cluster is pure -> P = 1.
    # Recall: a, b, c 3/3; d 1/2; e 1/2 -> R = (3 + 0.5 + 0.5) / 5 = 0.8.
    # F1 = 2 * 1 * 0.8 / 1.8 = 8/9.  (Were None a label, d+e would merge: R = 1.)
    pred = {"a": "s1", "b": "s1", "c": "s1", "d": None}
    p, r, f = bcubed(pred, GOLD)
    assert (p, r) == (pytest.approx(1.0), pytest.approx(0.8))
    assert f == pytest.approx(8 / 9)


def test_all_in_one_cluster():
    # One cluster of 5: precision a,b,c 3/5, d,e 2/5 -> P = (9/5 + 4/5)/5 = 13/25; R = 1.
    pred = {k: 0 for k in GOLD}
    p, r, _ = bcubed(pred, GOLD)
    assert p == pytest.approx(13 / 25) and r == pytest.approx(1.0)
    assert ari(pred, GOLD) == pytest.approx(0.0)


def test_perfect_clustering_with_other_label_names():
    pred = {"a": 7, "b": 7, "c": 7, "d": 9, "e": 9}
    assert bcubed(pred, GOLD) == (pytest.approx(1.0),) * 3
    assert nmi(pred, GOLD) == pytest.approx(1.0)
    assert ari(pred, GOLD) == pytest.approx(1.0)


def test_extra_predicted_ids_are_ignored_and_summary_keys():
    pred = {"a": 1, "b": 1, "c": 2, "d": 2, "e": 2, "zzz": 1}
    s = summary(pred, GOLD)
    assert set(s) == {
        "bcubed_precision", "bcubed_recall", "bcubed_f1", "nmi", "ari", "clusters", "largest", "items",
    }
    assert s["items"] == 5 and s["clusters"] == 2 and s["largest"] == 3
    assert s["bcubed_f1"] == pytest.approx(11 / 15)


def test_summary_counts_singletons_as_clusters():
    s = summary({"a": 1, "b": 1}, GOLD)  # c, d, e unassigned
    assert s["clusters"] == 4 and s["largest"] == 2


def test_empty_gold():
    assert bcubed({}, {}) == (0.0, 0.0, 0.0)
