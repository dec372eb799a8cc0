-- Pass-2 explanation: the edges around each story founded by H (kept or cut by the guard).
INSERT INTO story_edges (story_id, partition_hour, item_a, item_b, similarity, directions, kept, cut_group)
SELECT u.story_id, %(h)s, u.a, u.b, u.sim, u.dirs, u.kept, u.grp
  FROM unnest(%(story_ids)s::text[], %(as)s::text[], %(bs)s::text[], %(sims)s::real[],
              %(dirs)s::smallint[], %(kept)s::boolean[], %(groups)s::int[])
       AS u(story_id, a, b, sim, dirs, kept, grp)
