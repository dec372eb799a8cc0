-- Claim up to %(limit)s of the day's due deliveries for this run (token %(token)s): the rows become
-- 'sending' under a lease, so no other run picks them. Due = never tried, failed transiently with
-- attempts left, or 'sending' under a claim that is dead (its session no longer holds the advisory
-- lock (%(lock_space)s, token): the process crashed) or lapsed (claimed_until passed: stuck).
-- SKIP LOCKED: two runs claiming at once take disjoint rows instead of waiting on each other.
-- updated_at < %(pass_started)s: a row this pass already tried is not taken again in the same pass.
-- due_at: a reader's edition waits for their local delivery time (%(now)s: the run's clock).
WITH due AS (
    SELECT d.digest_date, d.subscriber_id,
           d.status = 'sending' AS reclaimed,
           (d.status = 'sending' AND d.handed_over_at IS NOT NULL) AS uncertain
      FROM deliveries d
      JOIN subscribers s ON s.id = d.subscriber_id
     WHERE d.digest_date = %(day)s
       AND s.active
       AND s.subscribed_at < %(day_end)s   -- not a reader who left and joined again after the day
       AND d.digest_id = ANY(%(digest_ids)s::bigint[])
       AND d.updated_at < %(pass_started)s
       AND (d.due_at IS NULL OR d.due_at <= %(now)s)
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
     ORDER BY d.subscriber_id
     LIMIT %(limit)s
       FOR UPDATE OF d SKIP LOCKED
)
UPDATE deliveries d
   SET status = 'sending', claim_token = %(token)s,
       claimed_until = now() + make_interval(secs => %(lease_s)s),
       handed_over_at = NULL,
       uncertain_resends = d.uncertain_resends + due.uncertain::int,
       updated_at = now()
  FROM due, subscribers s
 WHERE d.digest_date = due.digest_date AND d.subscriber_id = due.subscriber_id AND s.id = d.subscriber_id
RETURNING d.subscriber_id, s.email, d.lang, d.digest_id, d.attempts, s.unsubscribe_token, due.reclaimed,
          due.uncertain
