-- name: briefing_articles
-- The articles a briefing is built from: per story the representative first, then the newest (at
-- most 40), each with its page's main text (gzip) while the page is ok and not pruned, and its
-- outlet's country (none for an aggregator's item: the aggregator's country is not the publisher's).
SELECT story_id, item_id, source_name, lang, title, summary, text_gzip, country
  FROM (
    SELECT sa.story_id, i.id AS item_id, coalesce(src.name, i.source_id) AS source_name, i.lang, i.title,
           coalesce(nullif(i.summary, ''), i.content, '') AS summary,
           CASE WHEN art.status = 'ok' AND art.text_pruned_at IS NULL THEN art.text_gzip END AS text_gzip,
           CASE WHEN src.syndicator THEN NULL ELSE src.country END AS country,
           row_number() OVER (PARTITION BY sa.story_id
                              ORDER BY (i.id = s.representative_item_id) DESC NULLS LAST,
                                       i.published_at DESC, i.id) AS rn
      FROM story_articles sa
      JOIN stories s ON s.id = sa.story_id
      JOIN items i ON i.id = sa.item_id
      LEFT JOIN sources src ON src.id = i.source_id
      LEFT JOIN article_texts art ON art.item_id = i.id
     WHERE sa.story_id = ANY(%(story_ids)s)
  ) x
 WHERE rn <= 40
 ORDER BY story_id, rn

-- name: briefing_candidates
-- Stories of hour H (an article ingested in H, or scored in H) whose articles, or their pages'
-- status, changed since their briefing (or that have none): what to brief this hour.
WITH touched AS (
    SELECT DISTINCT sa.story_id
      FROM story_articles sa
      JOIN items i ON i.id = sa.item_id
     WHERE i.partition_hour = %(hour)s
    UNION
    SELECT story_id FROM story_scores WHERE partition_hour = %(hour)s
), material AS (
    SELECT t.story_id,
           md5(string_agg(sa.item_id || ':' || coalesce(a.status, '-'), ',' ORDER BY sa.item_id)) AS material
      FROM touched t
      JOIN story_articles sa ON sa.story_id = t.story_id
      LEFT JOIN article_texts a ON a.item_id = sa.item_id AND a.text_pruned_at IS NULL
     GROUP BY t.story_id
)
SELECT m.story_id, m.material
  FROM material m
  LEFT JOIN story_briefings b ON b.story_id = m.story_id
 WHERE b.material IS DISTINCT FROM m.material
 ORDER BY m.story_id

-- name: briefing_earlier_stories
-- What a model's background may cite besides the articles: per story of the list, the scored stories
-- of its event first reported on an earlier UTC day than the story (the latest 5), with their
-- headline and summary as scored.
SELECT story_id, earlier_id, headline, summary, lang, first_published_at
  FROM (
    SELECT es.story_id, o.story_id AS earlier_id, sc.headline, sc.summary, sc.pivot_lang AS lang,
           os.first_published_at,
           row_number() OVER (PARTITION BY es.story_id ORDER BY os.first_published_at DESC, o.story_id) AS rn
      FROM event_stories es
      JOIN stories s ON s.id = es.story_id
      JOIN event_stories o ON o.event_id = es.event_id AND o.story_id <> es.story_id
      JOIN stories os ON os.id = o.story_id
      JOIN story_scores sc ON sc.story_id = o.story_id
     WHERE es.story_id = ANY(%(story_ids)s)
       AND (os.first_published_at AT TIME ZONE 'UTC')::date < (s.first_published_at AT TIME ZONE 'UTC')::date
  ) x
 WHERE rn <= 5
 ORDER BY story_id, first_published_at, earlier_id

-- name: briefing_upsert
-- A story's briefing; a rerun replaces it.
INSERT INTO story_briefings (story_id, material, lang, method, category, briefing, dropped, partition_hour)
VALUES (%(story_id)s, %(material)s, %(lang)s, %(method)s, %(category)s, %(briefing)s, %(dropped)s, %(hour)s)
ON CONFLICT (story_id) DO UPDATE
   SET material = EXCLUDED.material, lang = EXCLUDED.lang, method = EXCLUDED.method,
       category = EXCLUDED.category, briefing = EXCLUDED.briefing, dropped = EXCLUDED.dropped,
       partition_hour = EXCLUDED.partition_hour, briefed_at = now()
