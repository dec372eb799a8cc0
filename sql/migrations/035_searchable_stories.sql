-- Pass 1 searches the stories that can still take an item, not every story ever made.
--
-- The story-centroid HNSW index covered every story of the model: after months its graph holds
-- years of stories that no new item can join (the gap gate: |item published - story latest| <=
-- max_gap_hours), each hour's search walks past them, and each of the hour's inserts (a new story,
-- a moved centroid) pays for a graph that size. A story is `searchable` while its latest item is
-- at or after cluster_recent_state.stories_from (so the flag follows from a story's latest time and
-- the boundary); the index is partial on it (stages/embeddings/store.py ensure_indexes rebuilds an index
-- built before), stages/clustering/store.py moves the boundary forward each hour and clears the flag
-- behind it (the partial btree below finds those stories without reading the history), and an
-- item published before boundary + max_gap is matched by an exact scan of the stories in its gap
-- window instead (late entries, reruns of old hours).
ALTER TABLE stories ADD COLUMN IF NOT EXISTS searchable boolean NOT NULL DEFAULT true;
ALTER TABLE cluster_recent_state ADD COLUMN IF NOT EXISTS stories_from timestamptz;
CREATE INDEX IF NOT EXISTS stories_searchable_latest_idx ON stories (model, latest_published_at) WHERE searchable;
