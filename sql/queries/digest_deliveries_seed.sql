-- One delivery row per (day, active subscriber), created once: the row is the idempotency key,
-- so a retried or re-materialised partition never sends twice; a reader's local day gets at most
-- one (deliveries_subscriber_local_day_idx). The caller chose each reader's edition and when it is due.
INSERT INTO deliveries (digest_date, subscriber_id, digest_id, status, email, lang, due_at, local_day)
SELECT %(day)s, u.subscriber_id, u.digest_id, 'pending', u.email, u.lang, u.due_at, u.local_day
  FROM unnest(%(subscriber_ids)s::bigint[], %(digest_ids)s::bigint[], %(emails)s::text[], %(langs)s::text[],
              %(due_at)s::timestamptz[], %(local_days)s::date[])
       AS u(subscriber_id, digest_id, email, lang, due_at, local_day)
ON CONFLICT DO NOTHING
