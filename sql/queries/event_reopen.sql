-- Rerun of partition hour %(hour)s: reopen the events it closed (closing is re-decided).
UPDATE events
   SET status = 'open', closed_at = NULL, closed_partition = NULL, updated_at = now()
 WHERE closed_partition = %(hour)s
RETURNING id
