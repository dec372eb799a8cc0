-- The joins the events stage refused for a story, or for an event (`newsdedup explain`).
SELECT partition_hour, story_id, event_id, similarity, kinds, story_anchors, event_anchors
  FROM event_vetoes
 WHERE story_id = %(id)s OR event_id = %(id)s
 ORDER BY partition_hour, story_id, event_id
