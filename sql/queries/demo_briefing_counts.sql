-- The demo's line about briefings: stories briefed, with key points, with quotes, points and
-- quotes published, lines the checks dropped, with players, players named.
SELECT count(*),
       count(*) FILTER (WHERE jsonb_array_length(briefing -> 'points') > 0),
       count(*) FILTER (WHERE jsonb_array_length(briefing -> 'quotes') > 0),
       coalesce(sum(jsonb_array_length(briefing -> 'points')), 0),
       coalesce(sum(jsonb_array_length(briefing -> 'quotes')), 0),
       coalesce(sum((SELECT sum(value::int) FROM jsonb_each_text(dropped))), 0),
       count(*) FILTER (WHERE jsonb_array_length(coalesce(briefing -> 'players', '[]')) > 0),
       coalesce(sum(jsonb_array_length(coalesce(briefing -> 'players', '[]'))), 0)
  FROM story_briefings
