-- name: sources_alert_close
-- A source recovered (or was disabled or removed): its alert is no longer open.
DELETE FROM source_alerts
 WHERE source_id = %(source_id)s

-- name: sources_alert_raise
-- A source reported failing or quiet (again, when its state changed): the alert open for it now.
INSERT INTO source_alerts (source_id, state, since, detail, raised_at)
VALUES (%(source_id)s, %(state)s, %(since)s, %(detail)s, %(raised_at)s)
ON CONFLICT (source_id) DO UPDATE
   SET state = EXCLUDED.state, since = EXCLUDED.since, detail = EXCLUDED.detail, raised_at = EXCLUDED.raised_at

-- name: sources_alerts_open
-- The source alerts open now: which sources were last reported failing or quiet.
SELECT source_id, state, since, detail, raised_at
  FROM source_alerts
 ORDER BY source_id

-- name: sources_health
-- Each source's health as of %(as_of)s (sources/health.py): its last successful fetch (fetched, or
-- not modified, and not refused by the parser), the failures since (the current error streak: how
-- many, since when, the last reason), its items over the last seven days, its last item, and the
-- usual interval between the hours that brought it new items (the median gap over the 14 days up to
-- its last item, so that a source silent for weeks still has one). One index range per source and
-- part (feed_fetches_source_time_idx, item_sources_source_seen_idx), whatever the history's length.
WITH wanted AS (
    SELECT unnest(%(ids)s::text[]) AS source_id
)
SELECT w.source_id, ok.fetched_at AS last_success, coalesce(streak.failures, 0) AS failures,
       streak.failing_since, streak.last_error, streak.last_failure, coalesce(week.items, 0) AS items_week,
       newest.first_seen_at AS last_item, usual.gap_hours AS usual_gap_hours, coalesce(usual.gaps, 0) AS gaps
  FROM wanted w
  LEFT JOIN LATERAL (
        SELECT f.fetched_at
          FROM feed_fetches f
         WHERE f.source_id = w.source_id AND f.fetched_at <= %(as_of)s
           AND f.status <> 'error' AND coalesce(f.parse_status, '') <> 'failed'
         ORDER BY f.fetched_at DESC
         LIMIT 1) ok ON true
  LEFT JOIN LATERAL (
        SELECT count(*) AS failures, min(f.fetched_at) AS failing_since, max(f.fetched_at) AS last_failure,
               (array_agg(coalesce(f.error, f.parse_error) ORDER BY f.fetched_at DESC, f.id DESC))[1] AS last_error
          FROM feed_fetches f
         WHERE f.source_id = w.source_id AND f.fetched_at <= %(as_of)s
           AND f.fetched_at > coalesce(ok.fetched_at, '-infinity')
           AND (f.status = 'error' OR coalesce(f.parse_status, '') = 'failed')) streak ON true
  LEFT JOIN LATERAL (
        SELECT s.first_seen_at
          FROM item_sources s
         WHERE s.source_id = w.source_id AND s.first_seen_at <= %(as_of)s
         ORDER BY s.first_seen_at DESC
         LIMIT 1) newest ON true
  LEFT JOIN LATERAL (
        SELECT count(*) AS items
          FROM item_sources s
         WHERE s.source_id = w.source_id
           AND s.first_seen_at > %(as_of)s - interval '7 days' AND s.first_seen_at <= %(as_of)s) week ON true
  LEFT JOIN LATERAL (
        SELECT percentile_cont(0.5) WITHIN GROUP (ORDER BY gaps.gap_hours) AS gap_hours,
               count(gaps.gap_hours) AS gaps
          FROM (SELECT extract(epoch FROM hours.partition_hour
                                          - lag(hours.partition_hour) OVER (ORDER BY hours.partition_hour)) / 3600.0
                           AS gap_hours
                  FROM (SELECT DISTINCT s.partition_hour
                          FROM item_sources s
                         WHERE s.source_id = w.source_id
                           AND s.first_seen_at > newest.first_seen_at - interval '14 days'
                           AND s.first_seen_at <= newest.first_seen_at) AS hours) AS gaps) usual ON true
 ORDER BY w.source_id
