-- Events whose stories changed since their narrative (needs_narrative = 1), most significant
-- first; the interval rule is applied in Python (narrative.due_for_regeneration).
SELECT e.id, coalesce(e.narrative_title, e.title), e.needs_narrative, e.narrative_partition, e.narrative,
       e.narrative_attempts, coalesce(e.narrative_offline, false)
  FROM events e
 WHERE e.needs_narrative = 1
 ORDER BY e.significance DESC NULLS LAST, e.last_published_at DESC, e.id
 LIMIT %(limit)s
