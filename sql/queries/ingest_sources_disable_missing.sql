-- Sources no longer in the configuration are disabled, never deleted (their
-- items and archived fetches still reference them). Sources created from a
-- JSON-lines replay dump are not part of the configuration and are left alone.
UPDATE sources
   SET enabled = false, disabled_at = now(), updated_at = now()
 WHERE enabled
   AND NOT (id = ANY(%(ids)s::text[]))
   AND feed_url NOT LIKE 'replay:jsonl/%%'
RETURNING id
