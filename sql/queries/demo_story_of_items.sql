-- The story of each gold-labelled item (the demo's gold line).
SELECT item_id, story_id FROM story_articles WHERE item_id = ANY(%s)
