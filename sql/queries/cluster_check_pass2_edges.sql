-- Pairs of members of H's pass-2 stories with cosine >= item_threshold (ids only), so Python can
-- check each story is connected at the threshold. Stories are small; this is a per-story self-join.
SELECT a.story_id, a.item_id, b.item_id
  FROM story_items a
  JOIN story_items b ON b.story_id = a.story_id AND b.item_id > a.item_id AND b.partition_hour = %(h)s AND b.pass = 2
  JOIN item_embeddings ea ON ea.item_id = a.item_id AND ea.model = %(model)s
  JOIN item_embeddings eb ON eb.item_id = b.item_id AND eb.model = %(model)s
 WHERE a.partition_hour = %(h)s AND a.pass = 2
   AND 1 - (ea.embedding <=> eb.embedding) >= %(threshold)s - 1e-5
