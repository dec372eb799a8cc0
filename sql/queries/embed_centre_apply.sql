-- Centring, step 2: embedding = l2_normalize(raw - running mean of the item's language over every
-- partition up to and including this one); languages with fewer than %(min_items)s items so far use
-- the running mean of all languages. l2_normalize is scale-invariant, so the mean is applied as
-- raw * n - sum (no vector / scalar operator needed), done as raw - sum * (1/n) for float range.
WITH lang_totals AS (
    SELECT lang, sum(vec_sum) AS s, sum(item_count) AS n
      FROM embedding_language_means
     WHERE model = %(model)s AND partition_hour < %(end)s
     GROUP BY lang
), all_totals AS (
    SELECT sum(s) AS s, sum(n) AS n FROM lang_totals
), means AS (
    SELECT t.lang,
           CASE WHEN t.n >= %(min_items)s
                THEN t.s * array_fill((1.0 / t.n)::real, ARRAY[%(dims)s])::vector
                ELSE a.s * array_fill((1.0 / a.n)::real, ARRAY[%(dims)s])::vector END AS mean
      FROM lang_totals t CROSS JOIN all_totals a
)
UPDATE item_embeddings e
   SET embedding = l2_normalize(coalesce(e.raw_embedding, e.embedding) - m.mean),
       raw_embedding = coalesce(e.raw_embedding, e.embedding)
  FROM items i, means m
 WHERE e.model = %(model)s AND e.partition_hour >= %(start)s AND e.partition_hour < %(end)s
   AND i.id = e.item_id AND m.lang = coalesce(i.lang, '')
