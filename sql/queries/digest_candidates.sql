-- Scored stories first published on the day [%(start)s, %(end)s), with their event, main
-- region (most common source country over every article, duplicates included) and counts
-- (sources = outlets, item_outlet() of migration 076).
-- A story belongs to the day it broke, so consecutive digests never repeat a story.
SELECT s.id, sc.significance, es.event_id, r.region, coalesce(r.sources, 0), coalesce(r.articles, 0)
  FROM stories s
  JOIN story_scores sc ON sc.story_id = s.id
  LEFT JOIN event_stories es ON es.story_id = s.id
  LEFT JOIN LATERAL (
        SELECT mode() WITHIN GROUP (ORDER BY src.country) AS region,
               count(DISTINCT item_outlet(i.outlet, i.url, i.source_id)) AS sources, count(*) AS articles
          FROM story_articles sa
          JOIN items i ON i.id = sa.item_id
          JOIN sources src ON src.id = i.source_id
         WHERE sa.story_id = s.id
       ) r ON true
 WHERE s.first_published_at >= %(start)s AND s.first_published_at < %(end)s
 ORDER BY sc.significance DESC, s.id
