-- Months of history without slower hours: pass 2 searches a bounded copy of the recent vectors.
--
-- item_embeddings keeps every vector ever embedded (a year at 500 items an hour is 4.4M rows), and a
-- time-filtered HNSW search over it walks a graph built over all of them: the further the history
-- reaches, the more neighbours the filter throws away before k survive (bench/clustering.py
-- --history). cluster_recent_items holds exactly the item_embeddings rows with
-- partition_hour >= cluster_recent_state.recent_from (per model), with its own small HNSW index
-- (stages/clustering/store.py builds it), so pass 2's cost follows the window, not the history.
--
-- The invariant is kept in the database, not by the writers of item_embeddings: an AFTER INSERT OR
-- UPDATE trigger mirrors each row at or after recent_from (and drops one that moved before it), the
-- foreign key removes mirrored rows with their source row, and stages/clustering/store.py moves recent_from
-- (prune older hours / load older hours for an out-of-order rerun) under a row lock that the trigger
-- also takes, so a concurrent insert is either mirrored by its trigger or seen by the load.
CREATE TABLE IF NOT EXISTS cluster_recent_state (
    model        text PRIMARY KEY REFERENCES embedding_models(model) ON DELETE CASCADE,
    recent_from  timestamptz NOT NULL
);

CREATE TABLE IF NOT EXISTS cluster_recent_items (
    item_id         text NOT NULL,
    model           text NOT NULL,
    embedding       vector NOT NULL,
    partition_hour  timestamptz NOT NULL,
    published_at    timestamptz NOT NULL,
    PRIMARY KEY (item_id, model),
    FOREIGN KEY (item_id, model) REFERENCES item_embeddings (item_id, model) ON DELETE CASCADE
);
-- inline vectors, as in item_embeddings (migration 030: a detoast per distance is the slow path)
ALTER TABLE cluster_recent_items ALTER COLUMN embedding SET STORAGE MAIN;
CREATE INDEX IF NOT EXISTS cluster_recent_items_partition_idx ON cluster_recent_items (model, partition_hour);

CREATE OR REPLACE FUNCTION cluster_recent_mirror() RETURNS trigger
LANGUAGE plpgsql AS $$
DECLARE
    boundary timestamptz;
BEGIN
    -- FOR SHARE waits for a clustering run that is moving the boundary, then reads the new one
    SELECT recent_from INTO boundary FROM cluster_recent_state WHERE model = NEW.model FOR SHARE;
    IF boundary IS NOT NULL AND NEW.partition_hour >= boundary THEN
        INSERT INTO cluster_recent_items (item_id, model, embedding, partition_hour, published_at)
        VALUES (NEW.item_id, NEW.model, NEW.embedding, NEW.partition_hour, NEW.published_at)
        ON CONFLICT (item_id, model) DO UPDATE
           SET embedding = EXCLUDED.embedding, partition_hour = EXCLUDED.partition_hour,
               published_at = EXCLUDED.published_at;
    ELSIF TG_OP = 'UPDATE' THEN
        DELETE FROM cluster_recent_items WHERE item_id = NEW.item_id AND model = NEW.model;
    END IF;
    RETURN NULL;
END $$;

DROP TRIGGER IF EXISTS cluster_recent_mirror ON item_embeddings;
CREATE TRIGGER cluster_recent_mirror
    AFTER INSERT OR UPDATE OF embedding, partition_hour, published_at ON item_embeddings
    FOR EACH ROW EXECUTE FUNCTION cluster_recent_mirror();

-- An existing database: mirror the last three days of each model that has vectors (the default
-- pass-2 window is 18 h; clustering loads older hours itself when a run's window reaches further).
INSERT INTO cluster_recent_state (model, recent_from)
SELECT e.model, max(e.partition_hour) - interval '72 hours'
  FROM item_embeddings e
 GROUP BY e.model
ON CONFLICT (model) DO NOTHING;

INSERT INTO cluster_recent_items (item_id, model, embedding, partition_hour, published_at)
SELECT e.item_id, e.model, e.embedding, e.partition_hour, e.published_at
  FROM item_embeddings e
  JOIN cluster_recent_state r ON r.model = e.model AND e.partition_hour >= r.recent_from
ON CONFLICT (item_id, model) DO NOTHING;
