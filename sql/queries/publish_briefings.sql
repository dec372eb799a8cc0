-- The briefings of the given stories, with the outlet (item_outlet(), as publish_story_sources.sql
-- names it) of every article of the story, so a citation can point at its outlet's source line.
SELECT b.story_id, b.category, b.method, b.lang, b.briefing,
       (SELECT jsonb_object_agg(sa.item_id, item_outlet(i.outlet, i.url, i.source_id))
          FROM story_articles sa JOIN items i ON i.id = sa.item_id
         WHERE sa.story_id = b.story_id) AS outlets
  FROM story_briefings b
 WHERE b.story_id = ANY(%(story_ids)s)
