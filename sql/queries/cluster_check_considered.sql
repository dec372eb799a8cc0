-- Embedded canonical items of H, and how many of them are in a story written by a partition other
-- than H (taken by a later hour's pass 2 before H was re-materialised).
SELECT count(*) AS embedded,
       count(*) FILTER (WHERE EXISTS (SELECT 1 FROM story_items si
                                       WHERE si.item_id = e.item_id AND si.partition_hour <> %(h)s)) AS elsewhere
  FROM item_embeddings e
 WHERE e.model = %(model)s AND e.partition_hour >= %(h)s AND e.partition_hour < %(h_end)s
   AND NOT EXISTS (SELECT 1 FROM item_duplicates d WHERE d.item_id = e.item_id)
