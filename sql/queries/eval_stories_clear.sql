TRUNCATE story_items, stories CASCADE
