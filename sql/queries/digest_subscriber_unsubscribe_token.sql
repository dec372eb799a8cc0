-- Deactivate the subscriber whose unsubscribe link carries %(token)s. Idempotent (a one-click
-- unsubscribe may be posted twice): an already removed reader is returned with was_active false.
-- The token of a removed reader stays valid until the reader subscribes again.
WITH target AS (
    SELECT id, active FROM subscribers WHERE unsubscribe_token = %(token)s FOR UPDATE
), removed AS (
    UPDATE subscribers s SET active = false, unsubscribed_at = now()
      FROM target t WHERE s.id = t.id AND t.active
    RETURNING s.id
)
SELECT t.id, t.active AS was_active FROM target t
