-- The event of each article's story, else the story itself (`newsdedup eval --level events`).
SELECT sa.item_id, coalesce(es.event_id, sa.story_id)
  FROM story_articles sa
  LEFT JOIN event_stories es ON es.story_id = sa.story_id
