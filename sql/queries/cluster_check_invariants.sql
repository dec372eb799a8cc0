-- Invariant figures for partition H's stories (asset checks). One row.
--  multi_story_items: H's articles (canonical or duplicate) that appear in more than one story
--  pass1_gate_violations: H's pass-1 attachments whose stored similarity / gap / age broke the gates,
--                         plus pass-3 attachments without a stored similarity >= story_threshold;
--                         an attachment whose stored threshold is below story_threshold (one
--                         across languages, stages/clustering/passes.py story_bar) is held to that
--                         threshold, never below story_threshold - cross_margin
--  age_violations: H's memberships (any pass) made after the story's maximum age
--  centroid_max_error: max L2 distance between a touched story's centroid and the avg of its
--                      `window` most recent members, recomputed here
WITH touched AS (
    SELECT DISTINCT si.story_id FROM story_items si WHERE si.partition_hour = %(h)s
)
SELECT
  (SELECT count(*) FROM (
       SELECT a.item_id FROM story_articles a
        WHERE a.item_id IN (SELECT si.item_id FROM story_items si WHERE si.partition_hour = %(h)s
                            UNION
                            SELECT d.item_id FROM item_duplicates d
                              JOIN story_items si ON si.item_id = d.canonical_item_id
                             WHERE si.partition_hour = %(h)s)
        GROUP BY a.item_id HAVING count(DISTINCT a.story_id) > 1) x)
      AS multi_story_items,
  (SELECT count(*) FROM story_items si
    WHERE si.partition_hour = %(h)s AND si.pass = 1
      AND (si.similarity < greatest(least(coalesce(si.threshold, %(story_threshold)s), %(story_threshold)s), %(story_threshold)s - %(cross_margin)s) - 1e-5 OR si.gap_hours > %(max_gap_hours)s + 1e-3
           OR si.similarity IS NULL OR si.gap_hours IS NULL))
  + (SELECT count(*) FROM story_items si
    WHERE si.partition_hour = %(h)s AND si.pass = 3
      AND (si.similarity < greatest(least(coalesce(si.threshold, %(story_threshold)s), %(story_threshold)s), %(story_threshold)s - %(cross_margin)s) - 1e-5 OR si.similarity IS NULL))
      AS pass1_gate_violations,
  (SELECT count(*) FROM story_items si
    WHERE si.partition_hour = %(h)s AND si.pass = 1 AND si.story_age_hours > %(story_max_age_hours)s + 1e-3)
      AS age_violations,
  (SELECT coalesce(max(s.centroid <-> (
              SELECT avg(r.embedding) FROM (
                  SELECT e.embedding FROM story_items si JOIN item_embeddings e
                      ON e.item_id = si.item_id AND e.model = s.model
                   WHERE si.story_id = s.id
                   ORDER BY e.published_at DESC, e.item_id DESC LIMIT %(window)s) r)), 0)
     FROM stories s JOIN touched t ON t.story_id = s.id)
      AS centroid_max_error,
  (SELECT coalesce(max(s.item_count), 0) FROM stories s JOIN touched t ON t.story_id = s.id)
      AS largest_touched
