-- Every outlet of the given stories with its own article (headline and time). An outlet is
-- item_outlet() (migration 076: the attributed outlet, else the link's publisher host, else the
-- feed), so an aggregator's copy of a Reuters article and Reuters' own item are one outlet: per
-- outlet the publisher's own item first (not a syndicator), canonical before duplicate, earliest;
-- with the feed's own outlet, so that an aggregator's copy is named by its publisher
-- (digest.render.outlet_name).
SELECT story_id, source_name, url, lang, title, published_at, syndicator, outlet, feed_outlet
  FROM (
        SELECT DISTINCT ON (sa.story_id, pub.host)
               sa.story_id, src.name AS source_name, i.url, i.lang, i.title, i.published_at, src.syndicator,
               pub.host AS outlet, item_outlet(NULL, src.feed_url, src.id) AS feed_outlet
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
