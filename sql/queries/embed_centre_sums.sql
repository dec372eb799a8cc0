-- Centring, step 1: this partition's per-language sums of raw vectors (after embed_centre_delete.sql,
-- so a re-materialisation rewrites exactly H's rows). Canonical items of [start, end) only.
-- pgvector sums in float4, so the order of the rows changes the last bits: sum in item id order
-- (a rerun finds the rows in another physical order and must give the same vectors).
INSERT INTO embedding_language_means (model, lang, partition_hour, vec_sum, item_count)
SELECT e.model, coalesce(i.lang, ''), e.partition_hour, sum(coalesce(e.raw_embedding, e.embedding) ORDER BY e.item_id), count(*)
  FROM item_embeddings e
  JOIN items i ON i.id = e.item_id
 WHERE e.model = %(model)s AND e.partition_hour >= %(start)s AND e.partition_hour < %(end)s
   AND NOT EXISTS (SELECT 1 FROM item_duplicates d WHERE d.item_id = e.item_id)
 GROUP BY e.model, coalesce(i.lang, ''), e.partition_hour
