-- Stories new or changed in partition hour %(hour)s (they gained items in it, or the stories
-- stage updated them in it), with score and current event. No vectors leave the database.
SELECT s.id, s.model, s.first_published_at, s.latest_published_at, sc.significance, es.event_id
  FROM stories s
  LEFT JOIN story_scores sc ON sc.story_id = s.id
  LEFT JOIN event_stories es ON es.story_id = s.id
 WHERE s.id IN (SELECT si.story_id FROM story_items si WHERE si.partition_hour = %(hour)s
                UNION
                SELECT s2.id FROM stories s2 WHERE s2.updated_partition = %(hour)s)
 ORDER BY s.first_published_at, s.id
