-- Deliveries of the day still to do: never sent, or failed transiently with attempts left.
-- Rows already 'sent' or 'outbox' are never picked again.
SELECT d.subscriber_id, s.email, d.lang, d.digest_id, d.attempts
  FROM deliveries d
  JOIN subscribers s ON s.id = d.subscriber_id
 WHERE d.digest_date = %(day)s
   AND s.active
   AND (d.status = 'pending' OR (d.status = 'failed' AND NOT d.permanent AND d.attempts < %(max_attempts)s))
 ORDER BY d.subscriber_id
