-- Anchor vetoes of H, one row per story: added to the story's pass-2 row of H or a new row.
INSERT INTO story_decisions (story_id, partition_hour, edges, cut_groups, vetoes)
SELECT u.story_id, %(h)s, '[]'::jsonb, '[]'::jsonb, u.vetoes
  FROM unnest(%(story_ids)s::text[], %(vetoes)s::jsonb[]) AS u(story_id, vetoes)
ON CONFLICT (story_id, partition_hour) DO UPDATE SET vetoes = story_decisions.vetoes || EXCLUDED.vetoes
