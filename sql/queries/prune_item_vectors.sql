-- Retention: delete item vectors (item_embeddings rows: centred + raw) of items ingested before
-- %(cutoff)s (one batch of %(limit)s), taking them out of the HNSW working set. Nothing reads them
-- once the item is older than every clustering window (docs/OPERATING.md#retention).
WITH old AS (
    SELECT item_id, model
      FROM item_embeddings
     WHERE partition_hour < %(cutoff)s AND published_at < %(cutoff)s
     LIMIT %(limit)s
       FOR UPDATE SKIP LOCKED
), gone AS (
    DELETE FROM item_embeddings e USING old
     WHERE e.item_id = old.item_id AND e.model = old.model
    RETURNING pg_column_size(e.*) + coalesce(pg_column_size(e.raw_embedding), 0) AS bytes
)
SELECT count(*), coalesce(sum(bytes), 0) FROM gone
