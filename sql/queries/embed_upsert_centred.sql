-- Centring on: one row per canonical item, written once and centred (after
-- embed_centre_sums_incoming.sql): embedding = l2_normalize(raw - mean_lang), raw_embedding = raw,
-- bit for bit what embed_upsert.sql followed by embed_centre_apply.sql stores. Writing the raw
-- vector first and the centred one over it put every row into both HNSW indexes twice (item_embeddings'
-- and, through the cluster_recent_mirror trigger, cluster_recent_items'), the first time all of the
-- hour's raw vectors in one narrow cone: at 20,000 items an hour (bench/hour.py --scale 10) that
-- statement ran for minutes. `incoming` is embed_centre_sums_incoming.sql's; the means are
-- embed_centre_apply.sql's, computed once (MATERIALIZED; see there).
WITH incoming AS (
    SELECT k.*, CASE WHEN k.kept THEN k.old_raw ELSE k.cached END AS raw
      FROM (SELECT u.id AS item_id, u.h AS text_hash, coalesce(i.lang, '') AS lang, i.partition_hour,
                   i.published_at, c.embedding AS cached, old.raw_embedding AS old_raw, old.embedding AS old_embedding,
                   coalesce(old.text_hash = u.h AND old.raw_embedding IS NOT NULL
                            AND old.partition_hour = i.partition_hour AND old.published_at = i.published_at,
                            false) AS kept
              FROM unnest(%(ids)s::text[], %(hashes)s::text[]) AS u(id, h)
              JOIN items i ON i.id = u.id
              JOIN embedding_cache c ON c.model = %(model)s AND c.text_hash = u.h
              LEFT JOIN item_embeddings old ON old.item_id = u.id AND old.model = %(model)s) k
), rows AS (
    SELECT lang, partition_hour, vec_sum, item_count
      FROM embedding_language_means
     WHERE model = %(model)s AND partition_hour < %(end)s
), all_totals AS MATERIALIZED (
    SELECT sum(vec_sum ORDER BY partition_hour, lang) AS s, sum(item_count)::float8 AS n FROM rows
), lang_totals AS (
    SELECT lang, sum(vec_sum ORDER BY partition_hour) AS s, sum(item_count)::float8 AS n
      FROM rows WHERE lang <> %(prior_lang)s GROUP BY lang
), means AS MATERIALIZED (
    SELECT t.lang,
           t.s * array_fill((1.0 / (t.n + %(lang_prior)s))::real, ARRAY[%(dims)s])::vector
         + a.s * array_fill((%(lang_prior)s / ((t.n + %(lang_prior)s) * a.n))::real, ARRAY[%(dims)s])::vector
           AS mean
      FROM lang_totals t CROSS JOIN all_totals a
)
INSERT INTO item_embeddings (item_id, model, text_hash, embedding, raw_embedding, partition_hour, published_at)
SELECT n.item_id, %(model)s, n.text_hash,
       -- a language without a mean (only a duplicate's, in a race with near-duplicates):
       -- embed_centre_apply.sql leaves such a row as the raw upsert left it
       CASE WHEN m.mean IS NOT NULL THEN l2_normalize(n.raw - m.mean) WHEN n.kept THEN n.old_embedding ELSE n.raw END,
       n.raw, n.partition_hour, n.published_at
  FROM incoming n
  LEFT JOIN means m ON m.lang = n.lang
ON CONFLICT (item_id, model) DO UPDATE
   SET text_hash = EXCLUDED.text_hash, embedding = EXCLUDED.embedding, raw_embedding = EXCLUDED.raw_embedding,
       partition_hour = EXCLUDED.partition_hour, published_at = EXCLUDED.published_at
 WHERE item_embeddings.text_hash IS DISTINCT FROM EXCLUDED.text_hash
    OR item_embeddings.raw_embedding IS NULL
    OR item_embeddings.partition_hour IS DISTINCT FROM EXCLUDED.partition_hour
    OR item_embeddings.published_at IS DISTINCT FROM EXCLUDED.published_at
    -- the means moved (an earlier hour was re-materialised): compared bit for bit (vector = would
    -- take -0 for 0)
    OR vector_send(item_embeddings.embedding) IS DISTINCT FROM vector_send(EXCLUDED.embedding)
