-- Narrative translations to do (status 1) for the most significant events with work pending.
WITH top AS (
    SELECT e.id
      FROM events e
     WHERE e.narrative IS NOT NULL
       AND NOT coalesce(e.narrative_offline, false)
       AND EXISTS (SELECT 1 FROM event_translations t WHERE t.event_id = e.id AND t.status = 1)
     ORDER BY e.significance DESC NULLS LAST, e.id
     LIMIT %(limit_events)s
)
SELECT t.event_id, t.lang, t.attempts, coalesce(e.narrative_title, e.title), e.narrative, e.narrative_lang,
       e.narrative_generated_at
  FROM event_translations t
  JOIN top ON top.id = t.event_id
  JOIN events e ON e.id = t.event_id
 WHERE t.status = 1
 ORDER BY e.significance DESC NULLS LAST, t.event_id, t.lang
