-- Each source's health as of %(as_of)s (sources/health.py): its last successful fetch (fetched, or
-- not modified, and not refused by the parser), the failures since (the current error streak: how
-- many, since when, the last reason), its items over the last seven days, its last item, and the
-- usual interval between the hours that brought it new items (the median gap over 14 days).
WITH wanted AS (
    SELECT unnest(%(ids)s::text[]) AS source_id
), fetches AS (
    SELECT f.id, f.source_id, f.fetched_at,
           f.status = 'error' OR coalesce(f.parse_status, '') = 'failed' AS failed,
           coalesce(f.error, f.parse_error) AS reason
      FROM feed_fetches f
      JOIN wanted w ON w.source_id = f.source_id
     WHERE f.fetched_at <= %(as_of)s
), last_ok AS (
    SELECT source_id, max(fetched_at) AS last_success
      FROM fetches
     WHERE NOT failed
     GROUP BY source_id
), streak AS (
    SELECT f.source_id, count(*) AS failures, min(f.fetched_at) AS failing_since,
           (array_agg(f.reason ORDER BY f.fetched_at DESC, f.id DESC))[1] AS last_error,
           max(f.fetched_at) AS last_failure
      FROM fetches f
      LEFT JOIN last_ok o ON o.source_id = f.source_id
     WHERE f.failed AND (o.last_success IS NULL OR f.fetched_at > o.last_success)
     GROUP BY f.source_id
), seen AS (
    SELECT s.source_id,
           count(*) FILTER (WHERE s.first_seen_at > %(as_of)s - interval '7 days') AS items_week,
           max(s.first_seen_at) AS last_item
      FROM item_sources s
      JOIN wanted w ON w.source_id = s.source_id
     WHERE s.first_seen_at <= %(as_of)s
     GROUP BY s.source_id
), hours AS (
    SELECT source_id,
           extract(epoch FROM partition_hour - lag(partition_hour) OVER (PARTITION BY source_id ORDER BY partition_hour))
               / 3600.0 AS gap_hours
      FROM (SELECT DISTINCT s.source_id, s.partition_hour
              FROM item_sources s
              JOIN wanted w ON w.source_id = s.source_id
             WHERE s.first_seen_at > %(as_of)s - interval '14 days' AND s.first_seen_at <= %(as_of)s) AS distinct_hours
), usual AS (
    SELECT source_id, percentile_cont(0.5) WITHIN GROUP (ORDER BY gap_hours) AS usual_gap_hours,
           count(*) AS gaps
      FROM hours
     WHERE gap_hours IS NOT NULL
     GROUP BY source_id
)
SELECT w.source_id, o.last_success, coalesce(k.failures, 0) AS failures, k.failing_since, k.last_error,
       k.last_failure, coalesce(n.items_week, 0) AS items_week, n.last_item, u.usual_gap_hours,
       coalesce(u.gaps, 0) AS gaps
  FROM wanted w
  LEFT JOIN last_ok o ON o.source_id = w.source_id
  LEFT JOIN streak k ON k.source_id = w.source_id
  LEFT JOIN seen n ON n.source_id = w.source_id
  LEFT JOIN usual u ON u.source_id = w.source_id
 ORDER BY w.source_id
