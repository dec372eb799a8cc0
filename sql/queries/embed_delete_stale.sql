-- Idempotence: the partition's rows for items that are no longer canonical (became a duplicate
-- since the last run) or no longer in the partition.
DELETE FROM item_embeddings e
 WHERE e.model = %(model)s
   AND e.partition_hour >= %(start)s AND e.partition_hour < %(end)s
   AND NOT (e.item_id = ANY(%(ids)s))
