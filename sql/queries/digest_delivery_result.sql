-- The outcome of one delivery attempt (written right after the SMTP transaction, so a crash
-- between two recipients cannot cause a resend of the first).
UPDATE deliveries
   SET status = %(status)s, attempts = attempts + 1, error = %(error)s, permanent = %(permanent)s,
       message_id = coalesce(%(message_id)s, message_id), outbox_path = coalesce(%(outbox_path)s, outbox_path),
       email = %(email)s,
       sent_at = CASE WHEN %(status)s IN ('sent', 'outbox') THEN now() ELSE sent_at END,
       updated_at = now()
 WHERE digest_date = %(day)s AND subscriber_id = %(subscriber_id)s AND status IN ('pending', 'failed')
