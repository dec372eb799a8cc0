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
