-- Every source of the given stories with its own article (headline and time): the digest's
-- digest_story_sources rule (one per source, canonical before duplicate, earliest), plus the
-- article's title and publication time, which a story page lists.
SELECT story_id, source_name, url, lang, title, published_at
  FROM (
        SELECT DISTINCT ON (sa.story_id, i.source_id)
               sa.story_id, i.source_id, src.name AS source_name, i.url, i.lang, i.title, i.published_at
          FROM story_articles sa
          JOIN items i ON i.id = sa.item_id
          JOIN sources src ON src.id = i.source_id
         WHERE sa.story_id = ANY(%(story_ids)s)
         ORDER BY sa.story_id, i.source_id, sa.is_duplicate, i.published_at, i.id
       ) per_source
 ORDER BY story_id, published_at, source_name
