-- One demo hour's progress line: what each stage wrote for the hour %(h)s.
SELECT
  (SELECT count(*) FROM items WHERE partition_hour = %(h)s),
  (SELECT count(*) FROM item_duplicates WHERE partition_hour = %(h)s),
  (SELECT count(*) FROM item_embeddings WHERE partition_hour = %(h)s),
  (SELECT count(*) FROM story_items WHERE partition_hour = %(h)s AND pass <> 2),
  (SELECT count(*) FROM stories WHERE created_partition = %(h)s),
  (SELECT count(*) FROM feed_fetches WHERE partition_hour = %(h)s AND status = 'error')
