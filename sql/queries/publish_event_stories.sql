-- Every scored story of the given events, in timeline order, with its number of outlets
-- (publisher hosts, as publish_candidates.sql counts them).
SELECT es.event_id, es.story_id, s.first_published_at,
       (SELECT count(DISTINCT item_outlet(i.outlet, i.url, i.source_id))
          FROM story_articles sa JOIN items i ON i.id = sa.item_id
         WHERE sa.story_id = s.id) AS sources
  FROM event_stories es
  JOIN stories s ON s.id = es.story_id
  JOIN story_scores sc ON sc.story_id = s.id
 WHERE es.event_id = ANY(%(event_ids)s)
 ORDER BY es.event_id, s.first_published_at, es.story_id
