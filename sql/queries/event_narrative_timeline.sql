-- The stories of the given events in time order, with what a narrative needs (no vectors):
-- headline/summary (scored, else the representative's title), their language, significance,
-- number of distinct sources and the languages of every article (duplicates included).
SELECT es.event_id, s.id, s.first_published_at,
       coalesce(sc.headline, i.title) AS headline,
       coalesce(sc.summary, i.summary, '') AS summary,
       CASE WHEN sc.pivot_lang IS NULL OR sc.pivot_lang = 'und' THEN i.lang ELSE sc.pivot_lang END AS lang,
       sc.significance,
       a.sources, a.langs
  FROM event_stories es
  JOIN stories s ON s.id = es.story_id
  LEFT JOIN story_scores sc ON sc.story_id = s.id
  LEFT JOIN items i ON i.id = s.representative_item_id
  LEFT JOIN LATERAL (
        SELECT count(DISTINCT ai.source_id) AS sources,
               array_agg(DISTINCT ai.lang ORDER BY ai.lang) FILTER (WHERE ai.lang IS NOT NULL) AS langs
          FROM story_articles sa JOIN items ai ON ai.id = sa.item_id
         WHERE sa.story_id = s.id
       ) a ON true
 WHERE es.event_id = ANY(%(event_ids)s)
 ORDER BY es.event_id, s.first_published_at, s.id
