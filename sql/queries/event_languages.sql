-- The languages of the articles of these stories, and of these events' stories (the events
-- stage's cross-language threshold, stages/events/grouping.py rule 3).
SELECT si.story_id AS id, array_agg(DISTINCT i.lang) FILTER (WHERE i.lang IS NOT NULL)
  FROM story_items si
  JOIN items i ON i.id = si.item_id
 WHERE si.story_id = ANY(%(story_ids)s)
 GROUP BY si.story_id
UNION ALL
SELECT es.event_id AS id, array_agg(DISTINCT i.lang) FILTER (WHERE i.lang IS NOT NULL)
  FROM event_stories es
  JOIN story_items si ON si.story_id = es.story_id
  JOIN items i ON i.id = si.item_id
 WHERE es.event_id = ANY(%(event_ids)s)
 GROUP BY es.event_id
