-- Canonical items of one partition: ingested in [start, end) and not a duplicate of another item.
SELECT i.id, i.title, i.summary, i.published_at, i.partition_hour
  FROM items i
 WHERE i.partition_hour >= %(start)s AND i.partition_hour < %(end)s
   AND NOT EXISTS (SELECT 1 FROM item_duplicates d WHERE d.item_id = i.id)
 ORDER BY i.id
