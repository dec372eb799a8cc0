-- One delivery row per (day, active subscriber), created once: the row is the idempotency key,
-- so a retried or re-materialised partition never sends twice. A subscriber whose language
-- was not rendered gets the %(fallback_lang)s digest. A day goes only to readers subscribed by its
-- end (%(day_end)s): a past day run again is not mailed to readers who joined since.
INSERT INTO deliveries (digest_date, subscriber_id, digest_id, status, email, lang)
SELECT %(day)s, s.id, coalesce(d.id, f.id), 'pending', s.email, coalesce(d.lang, f.lang)
  FROM subscribers s
  LEFT JOIN digests d ON d.digest_date = %(day)s AND d.lang = s.lang
  LEFT JOIN digests f ON f.digest_date = %(day)s AND f.lang = %(fallback_lang)s
 WHERE s.active AND s.subscribed_at < %(day_end)s AND coalesce(d.id, f.id) IS NOT NULL
ON CONFLICT (digest_date, subscriber_id) DO NOTHING
