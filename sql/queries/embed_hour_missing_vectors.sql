-- Canonical items of the hour without a vector of the active model (the step's check).
SELECT count(*) FROM items i
 WHERE i.partition_hour >= %s AND i.partition_hour < %s
   AND NOT EXISTS (SELECT 1 FROM item_duplicates d WHERE d.item_id = i.id)
   AND NOT EXISTS (SELECT 1 FROM item_embeddings e WHERE e.item_id = i.id AND e.model = %s)
