-- The outcome of one delivery attempt, written and committed right after the SMTP transaction
-- (so a crash between two recipients cannot cause a resend of the first), and only while this run
-- holds the claim. %(counts)s = 0 when the server was never reached (a connection failure is not
-- the recipient's attempt and must not use up its retries).
UPDATE deliveries
   SET status = %(status)s, attempts = attempts + %(counts)s, error = %(error)s, permanent = %(permanent)s,
       message_id = coalesce(%(message_id)s, message_id), outbox_path = coalesce(%(outbox_path)s, outbox_path),
       email = %(email)s,
       sent_at = CASE WHEN %(status)s IN ('sent', 'outbox') THEN now() ELSE sent_at END,
       handed_over_at = CASE WHEN %(status)s IN ('sent', 'outbox') THEN handed_over_at END,
       claimed_until = NULL,
       updated_at = now()
 WHERE digest_date = %(day)s AND subscriber_id = %(subscriber_id)s
   AND status = 'sending' AND claim_token = %(token)s
RETURNING subscriber_id
