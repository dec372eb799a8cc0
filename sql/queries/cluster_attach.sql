-- Memberships written by partition H (pass 1/3 attachments and pass 2 members) with what admitted
-- each one (neighbour for pass 2, threshold in force), one statement.
INSERT INTO story_items (item_id, story_id, pass, similarity, gap_hours, story_age_hours, via_item_id,
                         threshold, partition_hour)
SELECT u.item_id, u.story_id, u.pass, u.sim, u.gap, u.age, u.via, u.threshold, %(h)s
  FROM unnest(%(item_ids)s::text[], %(story_ids)s::text[], %(passes)s::smallint[],
              %(sims)s::real[], %(gaps)s::real[], %(ages)s::real[], %(vias)s::text[], %(thresholds)s::real[])
       AS u(item_id, story_id, pass, sim, gap, age, via, threshold)
