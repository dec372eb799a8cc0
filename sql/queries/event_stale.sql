-- Events whose stored story_count no longer matches their memberships (a stories rerun
-- deleted member stories by cascade, or a rerun of this hour undid memberships): refreshed
-- before grouping, deleted if left without stories.
SELECT e.id
  FROM events e
  LEFT JOIN (SELECT event_id, count(*) AS n FROM event_stories GROUP BY event_id) c ON c.event_id = e.id
 WHERE coalesce(c.n, 0) <> e.story_count
 ORDER BY e.id
