-- One link per outlet per story (item_outlet(), migration 076: an aggregator's copy of a
-- publisher's article is that publisher's), the publisher's own item first, canonical before
-- duplicate, earliest; outlets ordered by when they reported it. With the feed's own outlet, so
-- that an aggregator's copy is named by its publisher (digest.render.outlet_name).
SELECT story_id, source_name, url, lang, count(*) OVER (PARTITION BY story_id) AS total, syndicator, outlet,
       feed_outlet
  FROM (
        SELECT DISTINCT ON (sa.story_id, item_outlet(i.outlet, i.url, i.source_id))
               sa.story_id, src.name AS source_name, i.url, i.lang, i.published_at, src.syndicator,
               item_outlet(i.outlet, i.url, i.source_id) AS outlet,
               item_outlet(NULL, src.feed_url, src.id) AS feed_outlet
          FROM story_articles sa
          JOIN items i ON i.id = sa.item_id
          JOIN sources src ON src.id = i.source_id
         WHERE sa.story_id = ANY(%(story_ids)s)
         ORDER BY sa.story_id, item_outlet(i.outlet, i.url, i.source_id), src.syndicator, sa.is_duplicate,
                  i.published_at, i.id
       ) per_outlet
 ORDER BY story_id, published_at, source_name
