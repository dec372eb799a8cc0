-- What a model's background may cite besides the articles: per story of the list, the scored stories
-- of its event first reported on an earlier UTC day than the story (the latest 5), with their
-- headline and summary as scored.
SELECT story_id, earlier_id, headline, summary, lang, first_published_at
  FROM (
    SELECT es.story_id, o.story_id AS earlier_id, sc.headline, sc.summary, sc.pivot_lang AS lang,
           os.first_published_at,
           row_number() OVER (PARTITION BY es.story_id ORDER BY os.first_published_at DESC, o.story_id) AS rn
      FROM event_stories es
      JOIN stories s ON s.id = es.story_id
      JOIN event_stories o ON o.event_id = es.event_id AND o.story_id <> es.story_id
      JOIN stories os ON os.id = o.story_id
      JOIN story_scores sc ON sc.story_id = o.story_id
     WHERE es.story_id = ANY(%(story_ids)s)
       AND (os.first_published_at AT TIME ZONE 'UTC')::date < (s.first_published_at AT TIME ZONE 'UTC')::date
  ) x
 WHERE rn <= 5
 ORDER BY story_id, first_published_at, earlier_id
