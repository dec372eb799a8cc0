-- Scored stories with an article in [%(since)s, %(until)s) (since NULL = no lower bound), with
-- the counts a feed shows and a hash of their article ids (changes when the story gains one).
-- Articles include duplicates, so every outlet that carried the story is counted; an outlet is
-- item_outlet() (migration 076), so an aggregator's copy of an article counts once with its
-- publisher.
SELECT s.id, sc.significance, es.event_id, s.first_published_at, s.latest_published_at,
       a.articles, a.sources, coalesce(a.langs, '{}'), a.articles_hash
  FROM stories s
  JOIN story_scores sc ON sc.story_id = s.id
  LEFT JOIN event_stories es ON es.story_id = s.id
  CROSS JOIN LATERAL (
        SELECT count(*) AS articles, count(DISTINCT item_outlet(i.outlet, i.url, i.source_id)) AS sources,
               array_agg(DISTINCT i.lang ORDER BY i.lang) FILTER (WHERE i.lang IS NOT NULL AND i.lang <> 'und') AS langs,
               md5(string_agg(i.id, ',' ORDER BY i.id)) AS articles_hash
          FROM story_articles sa
          JOIN items i ON i.id = sa.item_id
         WHERE sa.story_id = s.id
       ) a
 WHERE (%(since)s::timestamptz IS NULL OR s.latest_published_at >= %(since)s)
   AND s.first_published_at < %(until)s
   AND sc.significance >= %(min_significance)s
 ORDER BY sc.significance DESC, a.sources DESC, a.articles DESC, s.id
