-- The most recent members (up to %(limit)s) of stories, with headline, summary and language: the
-- anchors a pass-1 / pass-3 candidate is checked against (shared/text/anchors.py).
SELECT s.story_id, m.id, m.title, m.summary, m.lang
  FROM unnest(%(ids)s::text[]) AS s(story_id)
  JOIN LATERAL (
        SELECT i.id, i.title, i.summary, i.lang
          FROM story_items si
          JOIN items i ON i.id = si.item_id
         WHERE si.story_id = s.story_id
         ORDER BY i.published_at DESC NULLS LAST, i.id
         LIMIT %(limit)s
       ) m ON true
