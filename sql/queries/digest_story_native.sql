-- Per story and language, the story's own best article in that language (canonical before
-- duplicate, original outlet before syndicator, earliest): what a reader of that language sees
-- when no translation exists yet (e.g. offline), instead of a headline in another language.
SELECT DISTINCT ON (sa.story_id, i.lang) sa.story_id, i.lang, i.title, i.summary
  FROM story_articles sa
  JOIN items i ON i.id = sa.item_id
  JOIN sources src ON src.id = i.source_id
 WHERE sa.story_id = ANY(%(story_ids)s) AND i.lang IS NOT NULL AND i.title <> ''
 ORDER BY sa.story_id, i.lang, sa.is_duplicate, src.syndicator, i.published_at, i.id
