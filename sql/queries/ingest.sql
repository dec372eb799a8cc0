-- name: advisory_lock_pair
-- Session lock (namespace, key): one ingest of an hour at a time; held across the run's commits.
SELECT pg_advisory_lock(%s, %s)

-- name: advisory_unlock_pair
-- Releases advisory_lock_pair's lock.
SELECT pg_advisory_unlock(%s, %s)

-- name: ingest_fetch_insert
-- Archive fetch results (bodies gzip-compressed by the caller). One row per
-- source per call, so callers map the returned ids back by source_id.
INSERT INTO feed_fetches (source_id, partition_hour, mode, url, final_url, fetched_at, status, http_status,
                          elapsed_ms, attempts, etag, last_modified, content_type, error, body_gzip, body_bytes)
SELECT * FROM unnest(%(source_ids)s::text[], %(partition_hours)s::timestamptz[], %(modes)s::text[],
                     %(urls)s::text[], %(final_urls)s::text[], %(fetched_ats)s::timestamptz[], %(statuses)s::text[],
                     %(http_statuses)s::integer[], %(elapsed_ms)s::integer[], %(attempts)s::integer[],
                     %(etags)s::text[], %(last_modifieds)s::text[], %(content_types)s::text[], %(errors)s::text[],
                     %(bodies)s::bytea[], %(body_bytes)s::integer[])
RETURNING id, source_id

-- name: ingest_fetch_update_parse
-- Record the outcome of parsing archived fetches.
UPDATE feed_fetches AS f
   SET parse_error = t.parse_error, items_parsed = t.items_parsed, parse_status = t.parse_status,
       entries_total = t.entries_total, skipped = t.skipped, repairs = t.repairs
  FROM unnest(%(ids)s::bigint[], %(parse_errors)s::text[], %(items_parsed)s::integer[], %(parse_statuses)s::text[],
              %(entries_totals)s::integer[], %(skipped)s::jsonb[], %(repairs)s::jsonb[])
       AS t(id, parse_error, items_parsed, parse_status, entries_total, skipped, repairs)
 WHERE f.id = t.id
   AND (f.parse_error, f.items_parsed, f.parse_status, f.entries_total, f.skipped, f.repairs)
       IS DISTINCT FROM (t.parse_error, t.items_parsed, t.parse_status, t.entries_total, t.skipped, t.repairs)

-- name: ingest_fetches_for_partition
-- Archived fetches of one partition hour, oldest first within each source
-- (re-parsing them in this order reproduces the live run).
SELECT id, source_id, mode, url, final_url, fetched_at, status, http_status, elapsed_ms, attempts,
       etag, last_modified, content_type, error, body_gzip
  FROM feed_fetches
 WHERE partition_hour = %(partition_hour)s
 ORDER BY source_id, fetched_at, id

-- name: ingest_item_sources_upsert
-- Every (item, source) pair seen: one item reported by two sources has two rows.
-- Same idempotency rule as items: only the hour that first saw the pair rewrites it.
INSERT INTO item_sources AS s (item_id, source_id, url, guid, fetch_id, partition_hour)
SELECT * FROM unnest(%(item_ids)s::text[], %(source_ids)s::text[], %(urls)s::text[], %(guids)s::text[],
                     %(fetch_ids)s::bigint[], %(partition_hours)s::timestamptz[])
ON CONFLICT (item_id, source_id) DO UPDATE
   SET url = EXCLUDED.url, guid = EXCLUDED.guid, fetch_id = EXCLUDED.fetch_id
 WHERE s.partition_hour = EXCLUDED.partition_hour
   AND (s.url, s.guid, s.fetch_id) IS DISTINCT FROM (EXCLUDED.url, EXCLUDED.guid, EXCLUDED.fetch_id)
RETURNING s.item_id, s.source_id, (xmax = 0) AS inserted

-- name: ingest_items_upsert
-- Insert parsed items. An item first ingested in another hour is left as it
-- is (raw is immutable per hour; its partition stays the hour it was first
-- seen). A rerun of the same hour rewrites only the rows that hour owns, and
-- only when a value changed (e.g. after a parser fix), so reruns are idempotent.
INSERT INTO items AS i (id, canonical_url, url, guid, title, summary, content, author, lang, lang_origin,
                        published_at, date_flag, partition_hour, source_id, fetch_id, outlet)
SELECT * FROM unnest(%(ids)s::text[], %(canonical_urls)s::text[], %(urls)s::text[], %(guids)s::text[],
                     %(titles)s::text[], %(summaries)s::text[], %(contents)s::text[], %(authors)s::text[],
                     %(langs)s::text[], %(lang_origins)s::text[], %(published_ats)s::timestamptz[],
                     %(date_flags)s::text[], %(partition_hours)s::timestamptz[], %(source_ids)s::text[],
                     %(fetch_ids)s::bigint[], %(outlets)s::text[])
ON CONFLICT (id) DO UPDATE
   SET url = EXCLUDED.url, guid = EXCLUDED.guid, title = EXCLUDED.title, summary = EXCLUDED.summary,
       content = EXCLUDED.content, author = EXCLUDED.author, lang = EXCLUDED.lang,
       lang_origin = EXCLUDED.lang_origin, published_at = EXCLUDED.published_at, date_flag = EXCLUDED.date_flag,
       source_id = EXCLUDED.source_id, fetch_id = EXCLUDED.fetch_id, outlet = EXCLUDED.outlet
 WHERE i.partition_hour = EXCLUDED.partition_hour
   AND (i.url, i.guid, i.title, i.summary, i.content, i.author, i.lang, i.lang_origin, i.published_at,
        i.date_flag, i.source_id, i.fetch_id, i.outlet)
       IS DISTINCT FROM
       (EXCLUDED.url, EXCLUDED.guid, EXCLUDED.title, EXCLUDED.summary, EXCLUDED.content, EXCLUDED.author,
        EXCLUDED.lang, EXCLUDED.lang_origin, EXCLUDED.published_at, EXCLUDED.date_flag, EXCLUDED.source_id,
        EXCLUDED.fetch_id, EXCLUDED.outlet)
RETURNING i.id, (xmax = 0) AS inserted

-- name: ingest_partition_counts
-- Items owned by one partition hour, per source (for asset metadata).
SELECT source_id, count(*) AS items
  FROM item_sources
 WHERE partition_hour = %(partition_hour)s
 GROUP BY source_id
 ORDER BY source_id

-- name: ingest_sources_disable_missing
-- Sources no longer in the configuration are disabled, never deleted (their
-- items and archived fetches still reference them). Sources created from a
-- JSON-lines replay dump are not part of the configuration and are left alone.
UPDATE sources
   SET enabled = false, disabled_at = now(), updated_at = now()
 WHERE enabled
   AND NOT (id = ANY(%(ids)s::text[]))
   AND feed_url NOT LIKE 'replay:jsonl/%%'
RETURNING id

-- name: ingest_sources_release_urls
-- A source id that left the configuration keeps its row, but a new id may now
-- use its feed_url (a renamed source). feed_url is UNIQUE, so the retired row's
-- URL gets a '#retired-for=<new id>' suffix. Runs before the upsert.
UPDATE sources AS s
   SET feed_url = s.feed_url || '#retired-for=' || t.id,
       updated_at = now()
  FROM unnest(%(ids)s::text[], %(feed_urls)s::text[]) AS t(id, feed_url)
 WHERE s.feed_url = t.feed_url
   AND s.id <> t.id
   AND NOT (s.id = ANY(%(ids)s::text[]))
RETURNING s.id

-- name: ingest_sources_select
-- Stored source rows (configuration and conditional-GET validators) by id.
SELECT id, name, feed_url, language, country, syndicator, enabled, replay_file, etag, last_modified
  FROM sources
 WHERE id = ANY(%(ids)s::text[])
 ORDER BY id

-- name: ingest_sources_update_validators
-- Store the ETag / Last-Modified a live fetch returned (each may change on its own).
UPDATE sources AS s
   SET etag = t.etag, last_modified = t.last_modified, updated_at = now()
  FROM unnest(%(ids)s::text[], %(etags)s::text[], %(last_modifieds)s::text[]) AS t(id, etag, last_modified)
 WHERE s.id = t.id
   AND (s.etag, s.last_modified) IS DISTINCT FROM (t.etag, t.last_modified)

-- name: ingest_sources_upsert
-- Sync configured sources into `sources`: insert new ids, update changed ones,
-- never delete. A changed feed_url drops the stored validators (they belonged
-- to the old URL). Returns one row per inserted or changed source.
INSERT INTO sources AS s (id, name, feed_url, language, country, syndicator, enabled, replay_file)
SELECT * FROM unnest(%(ids)s::text[], %(names)s::text[], %(feed_urls)s::text[], %(languages)s::text[],
                     %(countries)s::text[], %(syndicators)s::boolean[], %(enabled)s::boolean[],
                     %(replay_files)s::text[])
ON CONFLICT (id) DO UPDATE
   SET name = EXCLUDED.name,
       feed_url = EXCLUDED.feed_url,
       language = EXCLUDED.language,
       country = EXCLUDED.country,
       syndicator = EXCLUDED.syndicator,
       enabled = EXCLUDED.enabled,
       replay_file = EXCLUDED.replay_file,
       etag = CASE WHEN s.feed_url IS DISTINCT FROM EXCLUDED.feed_url THEN NULL ELSE s.etag END,
       last_modified = CASE WHEN s.feed_url IS DISTINCT FROM EXCLUDED.feed_url THEN NULL ELSE s.last_modified END,
       disabled_at = CASE WHEN EXCLUDED.enabled THEN NULL
                          WHEN s.enabled THEN now()
                          ELSE s.disabled_at END,
       updated_at = now()
 WHERE (s.name, s.feed_url, s.language, s.country, s.syndicator, s.enabled, s.replay_file)
       IS DISTINCT FROM
       (EXCLUDED.name, EXCLUDED.feed_url, EXCLUDED.language, EXCLUDED.country, EXCLUDED.syndicator,
        EXCLUDED.enabled, EXCLUDED.replay_file)
RETURNING s.id, (xmax = 0) AS inserted
