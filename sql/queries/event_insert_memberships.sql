-- Memberships decided in partition hour %(hour)s. The primary key on story_id is the
-- invariant "a story belongs to at most one event".
INSERT INTO event_stories (story_id, event_id, similarity, partition_hour)
SELECT m.story_id, m.event_id, m.similarity, %(hour)s
  FROM unnest(%(story_ids)s::text[], %(event_ids)s::text[], %(similarities)s::real[])
       AS m(story_id, event_id, similarity)
ON CONFLICT (story_id) DO NOTHING
