-- Record per model whether the stored item vectors are centred per language (issue 5, helper-7).
-- Centred and raw vectors of one model cannot be compared (thresholds are calibrated on one kind),
-- so toggling NEWSDEDUP_EMBEDDING_CENTRE on a database that already holds vectors is an error until
-- `newsdedup reembed` rewrites them (embeddings/store.py ensure_model / switch_centring).
-- NULL = not known yet; ensure_model records the configured choice on the next run.
ALTER TABLE embedding_models ADD COLUMN IF NOT EXISTS centring boolean;

-- Databases embedded before this migration: centring writes per-language sums, so a model with
-- stored vectors and sums was centred, one with vectors and no sums was raw.
UPDATE embedding_models m
   SET centring = EXISTS (SELECT 1 FROM embedding_language_means l
                           WHERE l.model = m.model AND l.partition_hour > '-infinity'::timestamptz)
 WHERE m.centring IS NULL
   AND EXISTS (SELECT 1 FROM item_embeddings e WHERE e.model = m.model);
