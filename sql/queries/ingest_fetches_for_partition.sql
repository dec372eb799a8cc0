-- Archived fetches of one partition hour, oldest first within each source
-- (re-parsing them in this order reproduces the live run).
SELECT id, source_id, mode, url, final_url, fetched_at, status, http_status, elapsed_ms, attempts,
       etag, last_modified, content_type, error, body_gzip
  FROM feed_fetches
 WHERE partition_hour = %(partition_hour)s
 ORDER BY source_id, fetched_at, id
