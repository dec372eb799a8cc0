-- Record per model whether the stored item vectors are centred per language.
-- Centred and raw vectors of one model cannot be compared (thresholds are calibrated on one kind),
-- so toggling embeddings.centre (calibration file) on a database that already holds vectors is an error until
-- `newsdedup reembed` rewrites them (stages/embeddings/store.py ensure_model / switch_centring).
-- NULL = not known yet; ensure_model records the configured choice on the next run.
ALTER TABLE embedding_models ADD COLUMN IF NOT EXISTS centring boolean;

-- Databases embedded before this migration: centring writes per-language sums, so a model with
-- stored vectors and sums was centred, one with vectors and no sums was raw.
UPDATE embedding_models m
   SET centring = EXISTS (SELECT 1 FROM embedding_language_means l
                           WHERE l.model = m.model AND l.partition_hour > '-infinity'::timestamptz)
 WHERE m.centring IS NULL
   AND EXISTS (SELECT 1 FROM item_embeddings e WHERE e.model = m.model);

-- raw_embedding is read once per item per partition (centring), `embedding` by every KNN scan and
-- centroid recompute. Two inline 384-d vectors (2 x 1,544 bytes) exceed the 2 kB TOAST threshold
-- but stay inline under STORAGE MAIN, so a heap page holds 2 rows instead of 5. EXTERNAL moves the
-- raw vector out of line first (uncompressed; float vectors barely compress), keeping `embedding`
-- inline (migration 030). Applies to rows written from now on.
-- bench/clustering.py, 100k window of 384-d rows: heap 393 MB -> 197 MB (toast 9 -> 159 MB), exact
-- pass-2 KNN for 500 items 156 s -> 79 s (load average 3.3 vs 0.8 then: partly the machine).
ALTER TABLE item_embeddings ALTER COLUMN raw_embedding SET STORAGE EXTERNAL;
