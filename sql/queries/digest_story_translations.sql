-- Finished story translations (status 0) of the selected stories.
SELECT story_id, lang, headline, summary
  FROM story_translations
 WHERE story_id = ANY(%(story_ids)s) AND status = 0 AND headline IS NOT NULL
