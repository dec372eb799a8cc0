INSERT INTO story_briefings (story_id, material, lang, method, category, briefing, dropped, partition_hour)
VALUES (%(story_id)s, %(material)s, %(lang)s, %(method)s, %(category)s, %(briefing)s, %(dropped)s, %(hour)s)
ON CONFLICT (story_id) DO UPDATE
   SET material = EXCLUDED.material, lang = EXCLUDED.lang, method = EXCLUDED.method,
       category = EXCLUDED.category, briefing = EXCLUDED.briefing, dropped = EXCLUDED.dropped,
       partition_hour = EXCLUDED.partition_hour, briefed_at = now()
