-- Briefing translation work for partition H: rows still at status 1 whose briefing is still the
-- version they were made for (briefed in H or earlier), most significant stories first.
SELECT t.story_id, t.lang, t.attempts, b.briefing, b.lang, t.material, t.briefing_md5
  FROM briefing_translations t
  JOIN story_briefings b ON b.story_id = t.story_id AND b.material = t.material
                        AND md5(b.briefing::text) = t.briefing_md5
  LEFT JOIN story_scores sc ON sc.story_id = t.story_id
 WHERE t.status = 1 AND b.partition_hour <= %(hour)s
 ORDER BY sc.significance DESC NULLS LAST, t.story_id, t.lang
 LIMIT %(limit)s
