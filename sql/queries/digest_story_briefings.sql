-- The briefings of the given stories (story_briefings), with what the digest's source line calls
-- each article's outlet (digest.render.outlet_name's inputs, as digest_story_sources.sql gives
-- them), so a key point can name the outlets of the articles it cites.
SELECT b.story_id, b.category, b.method, b.briefing,
       (SELECT jsonb_object_agg(sa.item_id, jsonb_build_array(src.name, src.syndicator,
                                                               item_outlet(i.outlet, i.url, i.source_id),
                                                               item_outlet(NULL, src.feed_url, src.id)))
          FROM story_articles sa
          JOIN items i ON i.id = sa.item_id
          JOIN sources src ON src.id = i.source_id
         WHERE sa.story_id = b.story_id) AS outlets
  FROM story_briefings b
 WHERE b.story_id = ANY(%(story_ids)s)
