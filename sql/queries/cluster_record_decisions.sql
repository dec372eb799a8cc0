-- Pass-2 explanation rows of H: one per story founded, its edges and cut groups as JSON arrays.
INSERT INTO story_decisions (story_id, partition_hour, edges, cut_groups)
SELECT u.story_id, %(h)s, u.edges, u.cut_groups
  FROM unnest(%(story_ids)s::text[], %(edges)s::jsonb[], %(cut_groups)s::jsonb[]) AS u(story_id, edges, cut_groups)
