-- What each of the given stories gained since %(since)s (the end of the day of the reader's previous
-- edition): its articles published since (duplicates aside), the outlets whose first article in it came
-- since (with what the digest names an outlet by: digest.render.outlet_name), and the stories of its
-- event first published since.
WITH per_outlet AS (
    SELECT DISTINCT ON (sa.story_id, item_outlet(i.outlet, i.url, i.source_id))
           sa.story_id, i.published_at AS first_at, src.name, src.syndicator,
           item_outlet(i.outlet, i.url, i.source_id) AS outlet, item_outlet(NULL, src.feed_url, src.id) AS feed_outlet
      FROM story_articles sa
      JOIN items i ON i.id = sa.item_id
      JOIN sources src ON src.id = i.source_id
     WHERE sa.story_id = ANY(%(story_ids)s)
     ORDER BY sa.story_id, item_outlet(i.outlet, i.url, i.source_id), i.published_at, src.syndicator, i.id
)
SELECT s.id,
       (SELECT count(*) FROM story_articles sa JOIN items i ON i.id = sa.item_id
         WHERE sa.story_id = s.id AND NOT sa.is_duplicate AND i.published_at >= %(since)s) AS new_articles,
       (SELECT coalesce(json_agg(json_build_array(p.name, p.syndicator, p.outlet, p.feed_outlet) ORDER BY p.first_at),
                        '[]'::json)
          FROM per_outlet p WHERE p.story_id = s.id AND p.first_at >= %(since)s) AS new_outlets,
       (SELECT count(*) FROM event_stories mine
          JOIN event_stories es ON es.event_id = mine.event_id AND es.story_id <> mine.story_id
          JOIN stories o ON o.id = es.story_id
         WHERE mine.story_id = s.id AND o.first_published_at >= %(since)s) AS new_event_stories
  FROM stories s
 WHERE s.id = ANY(%(story_ids)s)
