-- What the digest shows for the selected stories (language-independent parts) and their events.
SELECT s.id, sc.significance, sc.headline, sc.summary, sc.pivot_lang,
       coalesce(i.title, sc.headline) AS original_title, i.lang AS original_lang, s.first_published_at,
       e.id AS event_id, coalesce(e.narrative_title, e.title) AS event_title, e.narrative, e.narrative_lang,
       coalesce(e.narrative_offline, false), e.story_count, e.first_published_at, e.last_published_at
  FROM stories s
  JOIN story_scores sc ON sc.story_id = s.id
  LEFT JOIN items i ON i.id = s.representative_item_id
  LEFT JOIN event_stories es ON es.story_id = s.id
  LEFT JOIN events e ON e.id = es.event_id
 WHERE s.id = ANY(%(story_ids)s)
