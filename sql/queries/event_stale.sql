-- Events whose stored story_count no longer matches their memberships (a stories rerun
-- deleted member stories by cascade, or a rerun of this hour undid memberships): refreshed
-- before grouping, deleted if left without stories.
-- Also events with a member story that changed in this hour (its centroid moved): a first run and
-- a rerun of the hour must compare stories with the same event centroids.
SELECT e.id
  FROM events e
  LEFT JOIN (SELECT event_id, count(*) AS n FROM event_stories GROUP BY event_id) c ON c.event_id = e.id
 WHERE coalesce(c.n, 0) <> e.story_count
    OR EXISTS (SELECT 1 FROM event_stories es JOIN stories s ON s.id = es.story_id
                WHERE es.event_id = e.id AND s.updated_partition = %(hour)s)
 ORDER BY e.id
