-- Centring, step 2: embedding = l2_normalize(raw - mean_lang) for this partition's items, where
--   mean_all  = running (sum, count) over every partition up to and including this one, prior included
--   mean_lang = (sum_lang + lang_prior * mean_all) / (count_lang + lang_prior)
-- (the language's running mean shrunk towards mean_all; see stages/embeddings/store.py centre_partition).
-- pgvector has no vector / scalar operator: scaling is `* array_fill(f, dims)::vector`.
-- Sums in a fixed row order (pgvector adds in float4: another order changes the last bits).
-- `all_totals` and `means` are MATERIALIZED: each computed once. Inlined, the planner (no
-- statistics yet for the hour just written) put `means` in a nested loop and re-ran its aggregates,
-- over every hour's sums up to `end`, once per updated row: rows x hours of sums, growing with both
-- (and `all_totals` once per language). The hourly runs write their rows centred at once
-- (embed_upsert_centred.sql, the same means); this statement serves `newsdedup reembed`
-- (switch_centring).
WITH rows AS (
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
UPDATE item_embeddings e
   SET embedding = l2_normalize(coalesce(e.raw_embedding, e.embedding) - m.mean),
       raw_embedding = coalesce(e.raw_embedding, e.embedding)
  FROM items i, means m
 WHERE e.model = %(model)s AND e.partition_hour >= %(start)s AND e.partition_hour < %(end)s
   AND i.id = e.item_id AND m.lang = coalesce(i.lang, '')
