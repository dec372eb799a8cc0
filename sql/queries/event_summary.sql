-- One row per given event for the asset's metadata table: title, days covered, stories,
-- languages of every article (duplicates included, via story_articles).
SELECT e.id, coalesce(e.narrative_title, e.title) AS title, e.status, e.story_count, e.significance,
       e.first_published_at, e.last_published_at,
       (e.last_published_at::date - e.first_published_at::date) + 1 AS days,
       coalesce(l.langs, '{}') AS langs,
       e.narrative_offline
  FROM events e
  LEFT JOIN LATERAL (
        SELECT array_agg(DISTINCT coalesce(i.lang, '?') ORDER BY coalesce(i.lang, '?')) AS langs
          FROM event_stories es
          JOIN story_articles sa ON sa.story_id = es.story_id
          JOIN items i ON i.id = sa.item_id
         WHERE es.event_id = e.id
       ) l ON true
 WHERE e.id = ANY(%(event_ids)s)
 ORDER BY e.significance DESC NULLS LAST, e.story_count DESC, e.id
 LIMIT %(limit)s
