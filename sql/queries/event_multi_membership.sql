-- Stories listed in more than one event (the primary key forbids it; the check proves it).
SELECT story_id, count(DISTINCT event_id) AS events
  FROM event_stories GROUP BY story_id HAVING count(DISTINCT event_id) > 1
 ORDER BY story_id LIMIT 20
