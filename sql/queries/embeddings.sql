-- name: embed_cache_count_texts
-- How many of these texts the cache holds for the model.
SELECT count(*) FROM embedding_cache WHERE model = %s AND text_hash = ANY(%s)

-- name: embed_cache_insert
-- New vectors, one row per (text hash, model); vectors arrive as pgvector text literals.
INSERT INTO embedding_cache (text_hash, model, embedding)
SELECT h, %(model)s, v::vector
  FROM unnest(%(hashes)s::text[], %(vectors)s::text[]) AS u(h, v)
ON CONFLICT (text_hash, model) DO NOTHING

-- name: embed_cache_lookup
-- Which of these text hashes the cache already holds for the model.
SELECT text_hash FROM embedding_cache WHERE model = %(model)s AND text_hash = ANY(%(hashes)s)

-- name: embed_centre_apply
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
-- (embed_upsert_centred, the same means); this statement serves `newsdedup reembed`
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

-- name: embed_centre_delete
-- Centring, step 0: forget this partition's per-language sums (they are rebuilt next).
DELETE FROM embedding_language_means
 WHERE model = %(model)s AND partition_hour >= %(start)s AND partition_hour < %(end)s

-- name: embed_centre_prior
-- Centring, cold-start prior (once per model): PRIOR_WEIGHT pseudo-items whose mean is the mean of
-- the prior texts' raw vectors (shared/text/centring_prior.py; already in embedding_cache). Stored at
-- partition -infinity so every partition's running mean includes it.
INSERT INTO embedding_language_means (model, lang, partition_hour, vec_sum, item_count)
SELECT %(model)s, %(prior_lang)s, '-infinity'::timestamptz,
       sum(c.embedding ORDER BY c.text_hash) * array_fill((%(prior_weight)s::real / count(*))::real, ARRAY[%(dims)s])::vector,
       %(prior_weight)s
  FROM embedding_cache c
 WHERE c.model = %(model)s AND c.text_hash = ANY(%(prior_hashes)s)
HAVING count(*) > 0
ON CONFLICT (model, partition_hour, lang) DO NOTHING

-- name: embed_centre_sums
-- Centring, step 1: this partition's per-language sums of raw vectors (after embed_centre_delete,
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

-- name: embed_centre_sums_incoming
-- Centring, step 1 of an hourly run (stages/embeddings/store.py upsert_centred): this partition's
-- per-language sums of the raw vectors its rows are about to hold, before they are written, so that
-- embed_upsert_centred writes each row once, centred. The same rows, values and order as
-- embed_centre_sums reads back after a raw upsert (embed_upsert): an item's raw vector is the
-- cache's, or its stored one where the upsert would keep the row (same text, hour and time).
-- pgvector sums in float4: item id order, as embed_centre_sums.
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

-- name: embed_create_index
-- Per-model partial HNSW expression index (cosine). Formatted by
-- newsdedup_dagster/stages/embeddings/store.py with psycopg.sql: {index}, {table}, {expr}, {opclass},
-- {model} (a literal), {m}, {ef_construction}, {predicate} (more of the WHERE clause, or nothing).
-- Queries must use the same {expr}, `model = <the same literal/parameter>` and the predicate to hit it.
CREATE INDEX IF NOT EXISTS {index} ON {table}
USING hnsw (({expr}) {opclass})
WITH (m = {m}, ef_construction = {ef_construction})
WHERE model = {model}{predicate}

-- name: embed_delete_stale
-- Idempotence: the partition's rows for items that are no longer canonical (became a duplicate
-- since the last run) or no longer in the partition.
DELETE FROM item_embeddings e
 WHERE e.model = %(model)s
   AND e.partition_hour >= %(start)s AND e.partition_hour < %(end)s
   AND NOT (e.item_id = ANY(%(ids)s))

-- name: embed_hour_missing_vectors
-- Canonical items of the hour without a vector of the active model (the step's check).
SELECT count(*) FROM items i
 WHERE i.partition_hour >= %s AND i.partition_hour < %s
   AND NOT EXISTS (SELECT 1 FROM item_duplicates d WHERE d.item_id = i.id)
   AND NOT EXISTS (SELECT 1 FROM item_embeddings e WHERE e.item_id = i.id AND e.model = %s)

-- name: embed_index_definition
-- An index's build options and definition (to tell whether it was built as asked).
SELECT reloptions, pg_get_indexdef(oid) FROM pg_class WHERE relname = %s AND relkind = 'i'

-- name: embed_index_drop
-- Drop an index, its name composed with psycopg.sql.
DROP INDEX {}

-- name: embed_language_means_delete
-- Forget the model's per-language sums (switch_centring rebuilds them).
DELETE FROM embedding_language_means WHERE model = %s

-- name: embed_model_activate
-- Register the model as active; returns its centring choice.
INSERT INTO embedding_models (model, provider, dims, index_type, active, centring)
VALUES (%s, %s, %s, %s, true, %s)
-- a model active before keeps its recorded choice: its old vectors are stored that way
ON CONFLICT (model) DO UPDATE SET active = true,
    centring = coalesce(embedding_models.centring, EXCLUDED.centring)
RETURNING centring

-- name: embed_model_active
-- The active embedding model (no row: none yet).
SELECT model, provider, dims, index_type, centring FROM embedding_models WHERE active

-- name: embed_model_centring_set
-- Record whether the model's stored vectors are centred.
UPDATE embedding_models SET centring = %s WHERE model = %s

-- name: embed_model_get
-- One embedding model's record.
SELECT model, provider, dims, index_type, centring FROM embedding_models WHERE model = %s

-- name: embed_models_deactivate_others
-- Only one model is active: every other one is deactivated.
UPDATE embedding_models SET active = false WHERE active AND model <> %s

-- name: embed_partition_items
-- Canonical items of one partition: ingested in [start, end) and not a duplicate of another item,
-- with the first paragraph of the item's page where article_texts extracted it (the lead of an item
-- whose feed gives none).
SELECT i.id, i.title, i.summary, i.published_at, i.partition_hour, a.lead AS page_lead
  FROM items i
  LEFT JOIN article_texts a ON a.item_id = i.id AND a.status = 'ok'
 WHERE i.partition_hour >= %(start)s AND i.partition_hour < %(end)s
   AND NOT EXISTS (SELECT 1 FROM item_duplicates d WHERE d.item_id = i.id)
 ORDER BY i.id

-- name: embed_partitions
-- The hours holding vectors of the model, in order (switch_centring recentres each).
SELECT DISTINCT partition_hour FROM item_embeddings WHERE model = %s ORDER BY 1

-- name: embed_raw_keep
-- Keep the raw vector of rows written before migration 031 (they hold it in `embedding` only).
UPDATE item_embeddings SET raw_embedding = embedding WHERE model = %s AND raw_embedding IS NULL

-- name: embed_raw_restore
-- Centring off: the stored vector is the raw one again.
UPDATE item_embeddings SET embedding = raw_embedding WHERE model = %s

-- name: embed_upsert
-- One vector per canonical item, copied from the cache (Python never round-trips cached vectors).
-- Both columns get the raw vector. Models with centring on write through embed_upsert_centred
-- instead (each row once, centred: what this statement followed by embed_centre_apply stores).
INSERT INTO item_embeddings (item_id, model, text_hash, embedding, raw_embedding, partition_hour, published_at)
SELECT i.id, %(model)s, u.h, c.embedding, c.embedding, i.partition_hour, i.published_at
  FROM unnest(%(ids)s::text[], %(hashes)s::text[]) AS u(id, h)
  JOIN items i ON i.id = u.id
  JOIN embedding_cache c ON c.model = %(model)s AND c.text_hash = u.h
ON CONFLICT (item_id, model) DO UPDATE
   SET text_hash = EXCLUDED.text_hash, embedding = EXCLUDED.embedding, raw_embedding = EXCLUDED.raw_embedding,
       partition_hour = EXCLUDED.partition_hour, published_at = EXCLUDED.published_at
 WHERE item_embeddings.text_hash IS DISTINCT FROM EXCLUDED.text_hash
    OR item_embeddings.raw_embedding IS NULL
    OR item_embeddings.partition_hour IS DISTINCT FROM EXCLUDED.partition_hour
    OR item_embeddings.published_at IS DISTINCT FROM EXCLUDED.published_at
    -- centring off (again): the stored vector must be the raw one
    OR (NOT %(centred)s AND item_embeddings.embedding IS DISTINCT FROM EXCLUDED.embedding)

-- name: embed_upsert_centred
-- Centring on: one row per canonical item, written once and centred (after
-- embed_centre_sums_incoming): embedding = l2_normalize(raw - mean_lang), raw_embedding = raw,
-- bit for bit what embed_upsert followed by embed_centre_apply stores. Writing the raw
-- vector first and the centred one over it put every row into both HNSW indexes twice (item_embeddings'
-- and, through the cluster_recent_mirror trigger, cluster_recent_items'), the first time all of the
-- hour's raw vectors in one narrow cone: at 20,000 items an hour (bench/hour.py --scale 10) that
-- statement ran for minutes. `incoming` is embed_centre_sums_incoming's; the means are
-- embed_centre_apply's, computed once (MATERIALIZED; see there).
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
       -- embed_centre_apply leaves such a row as the raw upsert left it
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

-- name: reembed_embedded_texts
-- Every canonical item with a vector of the model: what its embedded text is made of now (headline,
-- feed summary, the page's first paragraph) and the hash of the text its stored vector came from.
SELECT i.id, i.title, i.summary, a.lead AS page_lead, e.text_hash, i.partition_hour
  FROM item_embeddings e
  JOIN items i ON i.id = e.item_id
  LEFT JOIN article_texts a ON a.item_id = i.id AND a.status = 'ok'
 WHERE e.model = %(model)s
   AND NOT EXISTS (SELECT 1 FROM item_duplicates d WHERE d.item_id = i.id)
