-- The stories of these events (their anchors are what a joining story is checked against).
SELECT event_id, story_id FROM event_stories WHERE event_id = ANY(%(event_ids)s) ORDER BY event_id, story_id
