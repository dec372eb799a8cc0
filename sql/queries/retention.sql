-- name: prune_archive_days
-- Retention: forget the archived front pages of days before %(cutoff)s (one batch of %(limit)s); the
-- caller removes their pages, whose output directory, language and day are returned.
WITH old AS (
    SELECT output_dir, lang, day FROM publish_archive_days
     WHERE day < (%(cutoff)s AT TIME ZONE 'UTC')::date
     ORDER BY output_dir, lang, day LIMIT %(limit)s FOR UPDATE SKIP LOCKED
), gone AS (
    DELETE FROM publish_archive_days a USING old
     WHERE a.output_dir = old.output_dir AND a.lang = old.lang AND a.day = old.day
    RETURNING a.output_dir, a.lang, a.day, pg_column_size(a.*) AS bytes
)
SELECT count(*), coalesce(sum(bytes), 0),
       coalesce(array_agg(json_build_array(output_dir, lang, day::text)), '{}')
  FROM gone

-- name: prune_article_texts
-- Retention: drop the kept text and page of article rows whose hour is older than %(cutoff)s (one
-- batch of %(limit)s), with the feed bodies' age. The row stays (status, word count, language,
-- times, byline), marked text_pruned_at.
WITH old AS (
    SELECT item_id, coalesce(pg_column_size(text_gzip), 0) + coalesce(pg_column_size(html_gzip), 0)
           + coalesce(pg_column_size(lead), 0) AS bytes
      FROM article_texts
     WHERE fetched_hour < %(cutoff)s
       AND (text_gzip IS NOT NULL OR html_gzip IS NOT NULL)
     ORDER BY fetched_hour
     LIMIT %(limit)s
       FOR UPDATE SKIP LOCKED
), done AS (
    UPDATE article_texts a SET text_gzip = NULL, html_gzip = NULL, lead = NULL, text_pruned_at = now()
      FROM old WHERE a.item_id = old.item_id
    RETURNING old.bytes
)
SELECT count(*), coalesce(sum(bytes), 0) FROM done

-- name: prune_embedding_cache
-- Retention: delete embedding cache entries no item vector uses, created before %(cutoff)s (a grace
-- period for a run that is filling the cache right now), except the centring prior's texts (needed
-- to rebuild the prior). One batch of %(limit)s.
WITH unused AS (
    SELECT c.text_hash, c.model
      FROM embedding_cache c
     WHERE c.created_at < %(cutoff)s
       AND c.text_hash <> ALL(%(keep_hashes)s::text[])
       AND NOT EXISTS (SELECT 1 FROM item_embeddings e WHERE e.text_hash = c.text_hash AND e.model = c.model)
     LIMIT %(limit)s
       FOR UPDATE OF c SKIP LOCKED
), gone AS (
    DELETE FROM embedding_cache c USING unused
     WHERE c.text_hash = unused.text_hash AND c.model = unused.model
    RETURNING pg_column_size(c.*) AS bytes
)
SELECT count(*), coalesce(sum(bytes), 0) FROM gone

-- name: prune_feed_bodies
-- Retention: drop the archived body of fetches whose hour is older than %(cutoff)s (one batch of
-- %(limit)s). The row stays (status, sizes, items parsed). Only bodies already parsed: a fetch whose
-- parse never ran keeps its body until it has been.
WITH old AS (
    SELECT id, pg_column_size(body_gzip) AS bytes
      FROM feed_fetches
     WHERE partition_hour < %(cutoff)s
       AND body_gzip IS NOT NULL
       AND (items_parsed IS NOT NULL OR parse_error IS NOT NULL)
     ORDER BY partition_hour
     LIMIT %(limit)s
       FOR UPDATE SKIP LOCKED
), done AS (
    UPDATE feed_fetches f SET body_gzip = NULL, body_pruned_at = now()
      FROM old WHERE f.id = old.id
    RETURNING old.bytes
)
SELECT count(*), coalesce(sum(bytes), 0) FROM done

-- name: prune_item_vectors
-- Retention: delete item vectors (item_embeddings rows: centred + raw) of items ingested before
-- %(cutoff)s (one batch of %(limit)s), taking them out of the HNSW working set. Nothing reads them
-- once the item is older than every clustering window (docs/OPERATING.md#retention).
WITH old AS (
    SELECT item_id, model
      FROM item_embeddings
     WHERE partition_hour < %(cutoff)s AND published_at < %(cutoff)s
     LIMIT %(limit)s
       FOR UPDATE SKIP LOCKED
), gone AS (
    DELETE FROM item_embeddings e USING old
     WHERE e.item_id = old.item_id AND e.model = old.model
    RETURNING pg_column_size(e.*) + coalesce(pg_column_size(e.raw_embedding), 0) AS bytes
)
SELECT count(*), coalesce(sum(bytes), 0) FROM gone

-- name: prune_llm_calls
-- Retention: move llm_calls rows older than %(cutoff)s into llm_call_daily_totals (one batch of
-- %(limit)s), in one statement: a row is either still detailed or counted in its day's totals.
WITH old AS (
    SELECT id FROM llm_calls WHERE created_at < %(cutoff)s ORDER BY id LIMIT %(limit)s FOR UPDATE SKIP LOCKED
), gone AS (
    DELETE FROM llm_calls c USING old WHERE c.id = old.id
    RETURNING (c.created_at AT TIME ZONE 'UTC')::date AS day, c.task, c.model, c.status, c.tokens_in, c.tokens_out,
              c.tokens_cached, c.cost_usd, coalesce(c.latency_ms, 0) AS latency_ms, pg_column_size(c.*) AS bytes
), added AS (
    INSERT INTO llm_call_daily_totals AS t (day, task, model, status, calls, tokens_in, tokens_out, tokens_cached,
                                             cost_usd, latency_ms_sum)
    SELECT day, task, model, status, count(*), sum(tokens_in), sum(tokens_out), sum(tokens_cached), sum(cost_usd),
           sum(latency_ms)
      FROM gone GROUP BY day, task, model, status
    ON CONFLICT (day, task, model, status) DO UPDATE
       SET calls = t.calls + excluded.calls, tokens_in = t.tokens_in + excluded.tokens_in,
           tokens_out = t.tokens_out + excluded.tokens_out, tokens_cached = t.tokens_cached + excluded.tokens_cached,
           cost_usd = t.cost_usd + excluded.cost_usd, latency_ms_sum = t.latency_ms_sum + excluded.latency_ms_sum
    RETURNING 1
)
SELECT count(*), coalesce(sum(bytes), 0) FROM gone

-- name: prune_table_sizes
-- On-disk size (heap + TOAST + indexes) and row count estimate of the application's tables.
SELECT c.relname, pg_total_relation_size(c.oid), greatest(c.reltuples, 0)::bigint
  FROM pg_class c
  JOIN pg_namespace n ON n.oid = c.relnamespace
 WHERE n.nspname = current_schema() AND c.relkind IN ('r', 'p') AND c.relname <> 'schema_migrations'
 ORDER BY pg_total_relation_size(c.oid) DESC
