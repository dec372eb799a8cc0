-- Translation states of the briefings written in partition H (their current version), per status.
SELECT t.status, count(*) AS n
  FROM briefing_translations t
  JOIN story_briefings b ON b.story_id = t.story_id AND b.material = t.material
                        AND md5(b.briefing::text) = t.briefing_md5
 WHERE b.partition_hour = %(hour)s
 GROUP BY t.status
 ORDER BY t.status
