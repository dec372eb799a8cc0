-- Every outlet of the given stories with its own article (headline and time). An outlet is
-- item_outlet() (migration 076: the attributed outlet, else the link's publisher host, else the
-- feed), so an aggregator's copy of a Reuters article and Reuters' own item are one outlet: per
-- outlet the publisher's own item first (not a syndicator), canonical before duplicate, earliest. The Python side names a syndicator's item by its host
-- (publish.model.outlet_name).
SELECT story_id, source_name, url, lang, title, published_at, syndicator, feed_url
  FROM (
        SELECT DISTINCT ON (sa.story_id, pub.host)
               sa.story_id, src.name AS source_name, i.url, i.lang, i.title, i.published_at, src.syndicator,
               src.feed_url
          FROM story_articles sa
          JOIN items i ON i.id = sa.item_id
          JOIN sources src ON src.id = i.source_id
         CROSS JOIN LATERAL (
               SELECT item_outlet(i.outlet, i.url, i.source_id) AS host
              ) pub
         WHERE sa.story_id = ANY(%(story_ids)s)
         ORDER BY sa.story_id, pub.host, src.syndicator, sa.is_duplicate, i.published_at, i.id
       ) per_outlet
 ORDER BY story_id, published_at, source_name
