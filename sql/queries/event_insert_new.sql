-- New events founded in partition hour %(hour)s, one per founding story; aggregates are
-- recomputed right after by event_refresh. A rerun finds the same id and keeps the narrative.
INSERT INTO events (id, model, title, centroid, first_published_at, last_published_at,
                    created_partition, updated_partition, quiet_hours, story_count)
SELECT n.event_id, s.model, coalesce(sc.headline, i.title, s.id), s.centroid,
       s.first_published_at, s.latest_published_at, %(hour)s, %(hour)s, %(quiet_hours)s, 1
  FROM unnest(%(event_ids)s::text[], %(story_ids)s::text[]) AS n(event_id, story_id)
  JOIN stories s ON s.id = n.story_id
  LEFT JOIN story_scores sc ON sc.story_id = s.id
  LEFT JOIN items i ON i.id = s.representative_item_id
ON CONFLICT (id) DO UPDATE
   SET status = 'open', closed_at = NULL, closed_partition = NULL,
       created_partition = LEAST(events.created_partition, EXCLUDED.created_partition),
       quiet_hours = EXCLUDED.quiet_hours, updated_at = now()
