-- Canonical embedded items of partition H not yet in a story (a later partition's pass 2 may
-- already have taken one when H is re-materialised out of order).
SELECT e.item_id
  FROM item_embeddings e
 WHERE e.model = %(model)s AND e.partition_hour >= %(h)s AND e.partition_hour < %(h_end)s
   AND NOT EXISTS (SELECT 1 FROM item_duplicates d WHERE d.item_id = e.item_id)
   AND NOT EXISTS (SELECT 1 FROM story_items si WHERE si.item_id = e.item_id)
 ORDER BY e.item_id
