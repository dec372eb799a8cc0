"""The default event threshold on real multilingual headlines (the default offline embedder,
e5 with per-language centring as item_embeddings stores it; and USE with its own threshold):
a multi-day, multi-language event is grouped; unrelated news is not."""

from __future__ import annotations

import numpy as np
import pytest
from test_events_fixtures import add_story, at, hour_of

from newsdedup_dagster import config
from newsdedup_dagster.shared.text.centring_prior import PRIOR_TEXTS, PRIOR_WEIGHT
from newsdedup_dagster.stages.embeddings.providers import CENTRE_MIN_LANG_ITEMS, E5Embedder, USEEmbedder
from newsdedup_dagster.stages.events import store
from newsdedup_dagster.stages.events.grouping import event_id_for
from newsdedup_dagster.stages.events.settings import EVENT_THRESHOLDS, event_threshold_for

STORIES = [  # (story id, hour, lang, headline)
    ("eu-en", 9.0, "en", "EU lawmakers propose sweeping rules for artificial intelligence"),
    ("quake-en", 10.0, "en", "Magnitude 7.1 earthquake strikes off the coast of Japan"),
    ("eu-fr", 33.0, "fr", "Le Parlement européen vote la loi sur l'intelligence artificielle"),
    ("bakery-en", 34.0, "en", "Local bakery wins award for best croissant"),
    ("eu-zh", 57.0, "zh", "欧盟签署人工智能法案"),
    ("eu-de", 58.0, "de", "EU-Staaten unterzeichnen das KI-Gesetz"),
]


def centred(embedder, texts, langs):
    """What the embed_centre_* statements store for one partition holding just these items (a fresh database:
    the running mean is mostly the cold-start prior)."""
    raw = embedder.embed(texts).astype(np.float64)
    prior = embedder.embed(list(PRIOR_TEXTS)).astype(np.float64).mean(0)
    mean_all = (raw.sum(0) + PRIOR_WEIGHT * prior) / (len(raw) + PRIOR_WEIGHT)
    out = []
    for v, lang in zip(raw, langs):
        same = raw[[item_lang == lang for item_lang in langs]]
        mean = (same.sum(0) + CENTRE_MIN_LANG_ITEMS * mean_all) / (len(same) + CENTRE_MIN_LANG_ITEMS)
        out.append((v - mean) / np.linalg.norm(v - mean))
    return np.asarray(out, dtype=np.float32)


@pytest.mark.parametrize("model", ["e5:multilingual-e5-small-q4", "use:multilingual-v3"])
def test_default_threshold_groups_a_multilingual_multi_day_event(conn, model, monkeypatch):
    texts, langs = [s[3] for s in STORIES], [s[2] for s in STORIES]
    if model.startswith("e5"):
        monkeypatch.delenv("NEWSDEDUP_EMBEDDING_PROVIDER", raising=False)
        vectors = centred(E5Embedder(), texts, langs)  # the default provider: centred vectors
    else:
        monkeypatch.setenv("NEWSDEDUP_EMBEDDING_PROVIDER", "use")
        vectors = USEEmbedder().embed(texts)  # USE keeps raw vectors
    # defaults: the configured model's threshold, 72 h
    settings = config.merged(config.grouping_settings(), min_significance=3.0)
    assert settings.threshold == EVENT_THRESHOLDS[model] == event_threshold_for(model)
    for (sid, hour, lang, title), vec in zip(STORIES, vectors):
        # Under its own model: a 384-dimension e5 centroid filed as USE's would meet USE's 512-dimension
        # HNSW index whenever an earlier test in this process built it.
        add_story(conn, sid, sid, hour, titles={lang: title}, vector=vec, significance=5.0, model=model)
        store.group_hour(conn, hour_of(at(hour)), settings)
    members = dict(conn.execute("SELECT story_id, event_id FROM event_stories").fetchall())
    conn.commit()
    eu = event_id_for("eu-en")
    assert [s for s, e in sorted(members.items()) if e == eu] == ["eu-de", "eu-en", "eu-fr", "eu-zh"]
    assert members["quake-en"] == event_id_for("quake-en") and members["bakery-en"] == event_id_for("bakery-en")
