-- Events open as of partition hour %(hour)s: created no later than it, not closed before it
-- (a rerun of an old hour does not see events founded or closed by later hours as such), and
-- with at least one story (an event emptied by a rerun is re-founded under the same id).
SELECT e.id, e.first_published_at, e.last_published_at
  FROM events e
 WHERE e.created_partition <= %(hour)s
   AND (e.status = 'open' OR e.closed_partition > %(hour)s)
   AND EXISTS (SELECT 1 FROM event_stories es WHERE es.event_id = e.id)
 ORDER BY e.id
