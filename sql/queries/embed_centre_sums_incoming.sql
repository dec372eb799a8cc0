-- Centring, step 1 of an hourly run (stages/embeddings/store.py upsert_centred): this partition's
-- per-language sums of the raw vectors its rows are about to hold, before they are written, so that
-- embed_upsert_centred.sql writes each row once, centred. The same rows, values and order as
-- embed_centre_sums.sql reads back after a raw upsert (embed_upsert.sql): an item's raw vector is the
-- cache's, or its stored one where the upsert would keep the row (same text, hour and time).
-- pgvector sums in float4: item id order, as embed_centre_sums.sql.
WITH incoming AS (
    SELECT u.id AS item_id, coalesce(i.lang, '') AS lang, i.partition_hour,
           CASE WHEN coalesce(old.text_hash = u.h AND old.raw_embedding IS NOT NULL
                              AND old.partition_hour = i.partition_hour AND old.published_at = i.published_at, false)
                THEN old.raw_embedding ELSE c.embedding END AS raw
      FROM unnest(%(ids)s::text[], %(hashes)s::text[]) AS u(id, h)
      JOIN items i ON i.id = u.id
      JOIN embedding_cache c ON c.model = %(model)s AND c.text_hash = u.h
      LEFT JOIN item_embeddings old ON old.item_id = u.id AND old.model = %(model)s
)
INSERT INTO embedding_language_means (model, lang, partition_hour, vec_sum, item_count)
SELECT %(model)s, n.lang, n.partition_hour, sum(n.raw ORDER BY n.item_id), count(*)
  FROM incoming n
 WHERE NOT EXISTS (SELECT 1 FROM item_duplicates d WHERE d.item_id = n.item_id)
 GROUP BY n.lang, n.partition_hour
