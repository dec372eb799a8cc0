SELECT item_id, story_id FROM story_articles
