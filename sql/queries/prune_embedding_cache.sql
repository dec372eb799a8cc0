-- Retention: delete embedding cache entries no item vector uses, created before %(cutoff)s (a grace
-- period for a run that is filling the cache right now), except the centring prior's texts (needed
-- to rebuild the prior). One batch of %(limit)s.
WITH unused AS (
    SELECT c.text_hash, c.model
      FROM embedding_cache c
     WHERE c.created_at < %(cutoff)s
       AND c.text_hash <> ALL(%(keep_hashes)s::text[])
       AND NOT EXISTS (SELECT 1 FROM item_embeddings e WHERE e.text_hash = c.text_hash AND e.model = c.model)
     LIMIT %(limit)s
       FOR UPDATE OF c SKIP LOCKED
), gone AS (
    DELETE FROM embedding_cache c USING unused
     WHERE c.text_hash = unused.text_hash AND c.model = unused.model
    RETURNING pg_column_size(c.*) AS bytes
)
SELECT count(*), coalesce(sum(bytes), 0) FROM gone
