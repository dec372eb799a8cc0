-- Close events whose quiet period (or maximum span) has passed as of the end of hour %(hour)s.
UPDATE events
   SET status = 'closed', closed_at = %(now)s, closed_partition = %(hour)s, updated_at = now()
 WHERE id = ANY(%(event_ids)s) AND status = 'open'
RETURNING id
