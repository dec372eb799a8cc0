-- The briefing category of each of the given stories that has a briefing.
SELECT story_id, category FROM story_briefings WHERE story_id = ANY(%(story_ids)s)
