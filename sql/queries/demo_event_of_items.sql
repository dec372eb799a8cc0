-- The event of each gold-labelled item's story, else the story (the demo's gold line for events).
SELECT sa.item_id, coalesce(es.event_id, sa.story_id)
  FROM story_articles sa
  LEFT JOIN event_stories es ON es.story_id = sa.story_id
 WHERE sa.item_id = ANY(%s)
