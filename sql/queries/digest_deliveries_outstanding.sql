-- Deliveries of the day that a later run still has to do (after this run released its claims):
-- pending, transient failures with attempts left, claims left by a dead or stuck run. Rows claimed by
-- a live run are that run's job. Final rows (sent, outbox, permanent or exhausted failures) never count.
-- Pending rows whose local delivery time has not come (%(now)s) are scheduled, not outstanding.
SELECT count(*) FILTER (WHERE d.status = 'pending' AND (d.due_at IS NULL OR d.due_at <= %(now)s)) AS pending,
       count(*) FILTER (WHERE d.status = 'failed') AS retryable_failed,
       count(*) FILTER (WHERE d.status = 'sending') AS abandoned,
       count(*) FILTER (WHERE d.status = 'pending' AND d.due_at > %(now)s) AS scheduled
  FROM deliveries d
  JOIN subscribers s ON s.id = d.subscriber_id
 WHERE d.digest_date = %(day)s
   AND s.active
   AND s.subscribed_at < %(day_end)s   -- not a reader who left and joined again after the day
   AND d.digest_id = ANY(%(digest_ids)s::bigint[])
   AND (d.status = 'pending'
        OR (d.status = 'failed' AND NOT d.permanent AND d.attempts < %(max_attempts)s)
        OR (d.status = 'sending'
            AND (d.claimed_until IS NULL OR d.claimed_until < now()
                 OR NOT EXISTS (SELECT 1 FROM pg_locks l
                                 WHERE l.locktype = 'advisory'
                                   AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())
                                   AND l.classid = %(lock_space)s::oid
                                   AND l.objid = d.claim_token::oid
                                   AND l.objsubid = 2
                                   AND l.granted))))
