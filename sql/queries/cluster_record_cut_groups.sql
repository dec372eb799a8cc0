-- Pass-2 explanation: the communities the guard cut away from each story founded by H.
INSERT INTO story_cut_groups (story_id, partition_hour, cut_group, item_ids, became_story_id)
SELECT u.story_id, %(h)s, u.grp, string_to_array(u.items, E'\x1f'), u.became
  FROM unnest(%(story_ids)s::text[], %(groups)s::int[], %(items)s::text[], %(became)s::text[])
       AS u(story_id, grp, items, became)
