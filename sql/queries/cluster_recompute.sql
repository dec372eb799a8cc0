-- Story aggregates from the members, in SQL: centroid = avg of the `centroid_window` most recent
-- members' vectors (ties by item id), first/latest published, count, last partition that wrote a
-- member, and the representative = the member nearest the new centroid (ties by item id).
WITH agg AS (
    SELECT si.story_id, count(*) AS n, min(e.published_at) AS first_pub, max(e.published_at) AS latest_pub,
           max(si.partition_hour) AS last_partition
      FROM story_items si
      JOIN item_embeddings e ON e.item_id = si.item_id AND e.model = %(model)s
     WHERE si.story_id = ANY(%(ids)s)
     GROUP BY si.story_id
), cent AS (
    SELECT a.story_id,
           (SELECT avg(r.embedding)
              FROM (SELECT e.embedding
                      FROM story_items si
                      JOIN item_embeddings e ON e.item_id = si.item_id AND e.model = %(model)s
                     WHERE si.story_id = a.story_id
                     ORDER BY e.published_at DESC, e.item_id DESC
                     LIMIT %(window)s) r) AS centroid
      FROM agg a
)
UPDATE stories s
   SET centroid = c.centroid, item_count = a.n, first_published_at = a.first_pub,
       latest_published_at = a.latest_pub, updated_partition = a.last_partition, updated_at = now(),
       -- migration 035: searchable while the latest item is at or after the model's boundary
       searchable = a.latest_pub >= coalesce(
           (SELECT r.stories_from FROM cluster_recent_state r WHERE r.model = %(model)s), '-infinity'),
       representative_item_id = (
           SELECT si.item_id
             FROM story_items si
             JOIN item_embeddings e ON e.item_id = si.item_id AND e.model = %(model)s
            WHERE si.story_id = s.id
            ORDER BY e.embedding <=> c.centroid, si.item_id
            LIMIT 1)
  FROM agg a JOIN cent c ON c.story_id = a.story_id
 WHERE s.id = a.story_id
