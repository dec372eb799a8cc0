-- How many sources of an hour were fetched (or re-read from the archive) since a moment: progress
-- of `newsdedup ingest`.
SELECT count(DISTINCT source_id)
  FROM feed_fetches
 WHERE partition_hour = %(hour)s AND fetched_at >= %(since)s
