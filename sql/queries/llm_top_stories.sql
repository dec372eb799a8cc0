-- Top stories by significance; with an hour, those changed or scored in that partition.
SELECT sc.story_id, sc.significance, sc.scale, sc.impact, sc.novelty, sc.breadth, sc.credibility,
       sc.urgency, sc.headline, sc.summary, sc.pivot_lang, sc.languages, sc.source_count,
       sc.item_count, sc.model, sc.offline, s.needs_score,
       (SELECT count(*) FROM story_translations t WHERE t.story_id = sc.story_id AND t.status = 0) AS translations_done
  FROM story_scores sc
  JOIN stories s ON s.id = sc.story_id
 WHERE %(hour)s::timestamptz IS NULL OR s.updated_partition = %(hour)s OR sc.partition_hour = %(hour)s
 ORDER BY sc.significance DESC, sc.item_count DESC, sc.story_id
 LIMIT %(limit)s
