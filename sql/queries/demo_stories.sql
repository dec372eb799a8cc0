-- The demo's story list: articles, outlets, languages and headline of every story.
SELECT s.id, count(*) AS articles,
       count(DISTINCT item_outlet(i.outlet, i.url, i.source_id)) AS sources,
       array_agg(DISTINCT i.lang ORDER BY i.lang) AS langs,
       -- The scored headline is in the pivot language when the story has such an article
       -- (or was rewritten by a model), so both lists of the demo read in one language.
       coalesce(nullif(sc.headline, ''),
                (SELECT title FROM items WHERE id = s.representative_item_id)) AS headline
  FROM stories s
  JOIN story_articles a ON a.story_id = s.id
  JOIN items i ON i.id = a.item_id
  LEFT JOIN story_scores sc ON sc.story_id = s.id
 GROUP BY s.id, sc.headline
 ORDER BY count(DISTINCT i.lang) DESC, count(*) DESC, s.id
