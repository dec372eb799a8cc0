-- The finished translations of the given stories' briefings, only those of the briefing's current
-- version (material and lines): what the site and the digest show in a reader's language.
SELECT t.story_id, t.lang, t.lines
  FROM briefing_translations t
  JOIN story_briefings b ON b.story_id = t.story_id AND b.material = t.material
                        AND md5(b.briefing::text) = t.briefing_md5
 WHERE t.story_id = ANY(%(story_ids)s) AND t.status = 0 AND t.lines IS NOT NULL
