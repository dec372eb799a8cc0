-- Events open as of partition hour %(hour)s: created no later than it and not closed before
-- it (a rerun of an old hour does not see events founded or closed by later hours as such).
SELECT e.id, e.first_published_at, e.last_published_at
  FROM events e
 WHERE e.created_partition <= %(hour)s
   AND (e.status = 'open' OR e.closed_partition > %(hour)s)
 ORDER BY e.id
