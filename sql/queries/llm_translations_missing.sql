-- Translations missing for the stories scored in partition H: one per configured language other
-- than the story's pivot language that has no story_translations row.
SELECT count(*)
  FROM story_scores sc, unnest(%(langs)s::text[]) AS l(lang)
 WHERE sc.partition_hour = %(hour)s
   AND l.lang <> sc.pivot_lang
   AND NOT EXISTS (SELECT 1 FROM story_translations t WHERE t.story_id = sc.story_id AND t.lang = l.lang);
