-- A source reported failing or quiet (again, when its state changed): the alert open for it now.
INSERT INTO source_alerts (source_id, state, since, detail, raised_at)
VALUES (%(source_id)s, %(state)s, %(since)s, %(detail)s, %(raised_at)s)
ON CONFLICT (source_id) DO UPDATE
   SET state = EXCLUDED.state, since = EXCLUDED.since, detail = EXCLUDED.detail, raised_at = EXCLUDED.raised_at
