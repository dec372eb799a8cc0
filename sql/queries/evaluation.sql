-- name: calibrate_item_vectors
-- Every stored vector of the model, as text (the events calibration reads them into numpy).
SELECT item_id, embedding::text FROM item_embeddings WHERE model = %s

-- name: eval_article_texts_copy
-- Evaluation data's article leads into the temporary database.
COPY article_texts (item_id, status, url, lead, fetched_hour)
FROM STDIN

-- name: eval_cache_copy_out
-- Cached raw vectors of these texts from the persistent evaluation cache.
COPY (SELECT text_hash, model, embedding FROM eval_embedding_cache
      WHERE model = %s AND text_hash = ANY(%s)) TO STDOUT

-- name: eval_cache_incoming_copy_in
-- The temporary database's raw vectors into the staging table (eval_cache_incoming_create).
COPY incoming FROM STDIN

-- name: eval_cache_incoming_create
-- Staging table for vectors on their way into the evaluation cache.
CREATE TEMP TABLE incoming (text_hash text, model text, embedding vector) ON COMMIT DROP

-- name: eval_cache_store
-- New vectors into the persistent evaluation cache; those it holds stay.
INSERT INTO eval_embedding_cache SELECT * FROM incoming ON CONFLICT DO NOTHING

-- name: eval_cache_table_create
-- The persistent evaluation cache: raw vectors kept across evaluation runs.
CREATE TABLE IF NOT EXISTS eval_embedding_cache (
    text_hash text NOT NULL,
    model text NOT NULL,
    embedding vector NOT NULL,
    PRIMARY KEY (text_hash, model)
)

-- name: eval_database_drop
-- Drop the evaluation's temporary database, its name composed with psycopg.sql (FORCE: sessions left open are ended).
DROP DATABASE IF EXISTS {} WITH (FORCE)

-- name: eval_embedding_cache_copy_in
-- Raw vectors from the evaluation cache into the temporary database's embedding_cache.
COPY embedding_cache (text_hash, model, embedding) FROM STDIN

-- name: eval_embedding_cache_copy_out
-- The temporary database's raw vectors of the model, for the evaluation cache.
COPY (SELECT text_hash, model, embedding FROM embedding_cache WHERE model = %s) TO STDOUT

-- name: eval_embedding_cache_count
-- How many raw vectors of the model the temporary database holds.
SELECT count(*) FROM embedding_cache WHERE model = %s

-- name: eval_event_articles
-- The event of each article's story, else the story itself (`newsdedup eval --level events`).
SELECT sa.item_id, coalesce(es.event_id, sa.story_id)
  FROM story_articles sa
  LEFT JOIN event_stories es ON es.story_id = sa.story_id

-- name: eval_items_copy
-- Evaluation data's items into the temporary database, as the ingest stage would have written them.
COPY items (id, canonical_url, url, title, summary, lang, lang_origin, published_at, date_flag,
            partition_hour, source_id)
FROM STDIN

-- name: eval_sources_copy
-- Evaluation data's sources into the temporary database.
COPY sources (id, name, feed_url, language) FROM STDIN

-- name: eval_stories_clear
-- Forget every story before clustering again with other settings.
TRUNCATE story_items, stories CASCADE

-- name: eval_story_articles
-- item id -> story id of every article in a story (the clustering's prediction).
SELECT item_id, story_id FROM story_articles

-- name: neardup_candidates_reset
-- Forget every near-duplicate decision and the kept window (counts, bands), to decide the hours again.
TRUNCATE item_duplicates, duplicate_groups, neardup_df_window, neardup_df_docs, neardup_df, neardup_bands

-- name: neardup_candidates_decisions
-- Each duplicate and the anchor it was pointed at.
SELECT item_id, canonical_item_id FROM item_duplicates

-- name: neardup_candidates_sources
-- Sources of a generated or sample set.
INSERT INTO sources (id, name, feed_url, language, syndicator)
SELECT s.id, s.id, 'https://' || s.id || '.example/feed', s.lang, s.syndicator
  FROM unnest(%(ids)s::text[], %(langs)s::text[], %(syndicators)s::boolean[]) AS s(id, lang, syndicator)
ON CONFLICT DO NOTHING

-- name: neardup_candidates_items
-- Items of a generated or sample set, each in its hour.
INSERT INTO items (id, canonical_url, url, title, lang, published_at, partition_hour, source_id)
SELECT i.id, i.url, i.url, i.title, i.lang, i.published_at, date_trunc('hour', i.published_at), i.source_id
  FROM unnest(%(ids)s::text[], %(urls)s::text[], %(titles)s::text[], %(langs)s::text[],
              %(published)s::timestamptz[], %(sources)s::text[]) AS i(id, url, title, lang, published_at, source_id)
ON CONFLICT DO NOTHING
