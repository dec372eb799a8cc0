INSERT INTO story_scores (story_id, scale, impact, novelty, breadth, credibility, urgency, significance,
                          headline, summary, pivot_lang, model, offline, item_count, languages,
                          source_count, partition_hour, scored_at, model_significance)
VALUES (%(story_id)s, %(scale)s, %(impact)s, %(novelty)s, %(breadth)s, %(credibility)s, %(urgency)s,
        %(significance)s, %(headline)s, %(summary)s, %(pivot_lang)s, %(model)s, %(offline)s,
        %(article_count)s, %(languages)s, %(source_count)s, %(hour)s, clock_timestamp(), %(model_significance)s)
ON CONFLICT (story_id) DO UPDATE SET
    scale = excluded.scale, impact = excluded.impact, novelty = excluded.novelty,
    breadth = excluded.breadth, credibility = excluded.credibility, urgency = excluded.urgency,
    significance = excluded.significance, headline = excluded.headline, summary = excluded.summary,
    pivot_lang = excluded.pivot_lang, model = excluded.model, offline = excluded.offline,
    item_count = excluded.item_count, languages = excluded.languages,
    source_count = excluded.source_count, partition_hour = excluded.partition_hour,
    scored_at = excluded.scored_at, model_significance = excluded.model_significance
