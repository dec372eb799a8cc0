-- Canonical items of one partition: ingested in [start, end) and not a duplicate of another item,
-- with the first paragraph of the item's page where article_texts extracted it (the lead of an item
-- whose feed gives none).
SELECT i.id, i.title, i.summary, i.published_at, i.partition_hour, a.lead AS page_lead
  FROM items i
  LEFT JOIN article_texts a ON a.item_id = i.id AND a.status = 'ok'
 WHERE i.partition_hour >= %(start)s AND i.partition_hour < %(end)s
   AND NOT EXISTS (SELECT 1 FROM item_duplicates d WHERE d.item_id = i.id)
 ORDER BY i.id
