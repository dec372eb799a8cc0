-- The days with deliveries waiting for a local delivery time that has come (%(now)s), each with
-- the latest such time: a new one means new readers' editions fell due since the last run.
SELECT digest_date, max(due_at)
  FROM deliveries
 WHERE status = 'pending' AND due_at <= %(now)s
 GROUP BY digest_date
 ORDER BY digest_date
