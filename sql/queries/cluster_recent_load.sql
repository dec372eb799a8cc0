-- Mirror the item_embeddings rows of partitions [lo, hi) (hi NULL: all from lo on) into
-- cluster_recent_items, after the boundary moved back to lo. Rows already there are left alone.
INSERT INTO cluster_recent_items (item_id, model, embedding, partition_hour, published_at)
SELECT e.item_id, e.model, e.embedding, e.partition_hour, e.published_at
  FROM item_embeddings e
 WHERE e.model = %(model)s AND e.partition_hour >= %(lo)s
   AND (%(hi)s::timestamptz IS NULL OR e.partition_hour < %(hi)s::timestamptz)
ON CONFLICT (item_id, model) DO NOTHING
