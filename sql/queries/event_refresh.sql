-- Recompute the aggregates of the given events from their member stories, in SQL:
-- centroid = avg of story centroids, time window, count, significance (max), title (headline
-- of the most significant story), and flag the narrative when the story count changed.
WITH members AS (
    SELECT es.event_id, s.id AS story_id, s.centroid, s.first_published_at, s.latest_published_at,
           s.item_count, sc.significance, coalesce(sc.headline, i.title) AS headline
      FROM event_stories es
      JOIN stories s ON s.id = es.story_id
      LEFT JOIN story_scores sc ON sc.story_id = s.id
      LEFT JOIN items i ON i.id = s.representative_item_id
     WHERE es.event_id = ANY(%(event_ids)s)
), agg AS (
    SELECT event_id, avg(centroid) AS centroid, min(first_published_at) AS first_published_at,
           max(latest_published_at) AS last_published_at, count(*) AS story_count,
           max(significance) AS significance
      FROM members GROUP BY event_id
), top AS (
    SELECT DISTINCT ON (event_id) event_id, headline
      FROM members
     ORDER BY event_id, significance DESC NULLS LAST, item_count DESC, first_published_at, story_id
)
UPDATE events e
   SET centroid = agg.centroid,
       first_published_at = agg.first_published_at,
       last_published_at = agg.last_published_at,
       story_count = agg.story_count,
       significance = agg.significance,
       title = coalesce(top.headline, e.title),
       updated_partition = GREATEST(e.updated_partition, %(hour)s),
       needs_narrative = CASE WHEN e.needs_narrative = -1 THEN -1
                              WHEN agg.story_count <> e.narrative_story_count THEN 1
                              ELSE e.needs_narrative END,
       updated_at = now()
  FROM agg LEFT JOIN top USING (event_id)
 WHERE e.id = agg.event_id
