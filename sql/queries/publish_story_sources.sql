-- Every outlet of the given stories with its own article (headline and time). An outlet is the
-- publisher host of the article's link (lower-case, without www./m./amp./mobile.; the source
-- when the link has no host), so an aggregator's copy of a Reuters article and Reuters' own
-- item are one outlet: per host the publisher's own item first (not a syndicator), canonical
-- before duplicate, earliest. The Python side names a syndicator's item by its host
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
               SELECT coalesce(nullif(regexp_replace(lower(substring(i.url from '^[A-Za-z][A-Za-z0-9+.-]*://(?:[^@/?#]*@)?([^:/?#]+)')),
                                                     '^(www|m|amp|mobile)\.', ''), ''),
                               'source:' || i.source_id) AS host
              ) pub
         WHERE sa.story_id = ANY(%(story_ids)s)
         ORDER BY sa.story_id, pub.host, src.syndicator, sa.is_duplicate, i.published_at, i.id
       ) per_outlet
 ORDER BY story_id, published_at, source_name
