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
