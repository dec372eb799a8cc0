-- The joins this hour's anchor check refused (stages/events/store.py), one row per (story, event).
INSERT INTO event_vetoes (partition_hour, story_id, event_id, similarity, kinds, story_anchors, event_anchors)
SELECT %(hour)s, v.story_id, v.event_id, v.similarity, v.kinds, v.story_anchors, v.event_anchors
  FROM jsonb_to_recordset(%(rows)s::jsonb)
       AS v(story_id text, event_id text, similarity real, kinds jsonb, story_anchors jsonb, event_anchors jsonb)
ON CONFLICT (partition_hour, story_id, event_id) DO UPDATE
   SET similarity = EXCLUDED.similarity, kinds = EXCLUDED.kinds,
       story_anchors = EXCLUDED.story_anchors, event_anchors = EXCLUDED.event_anchors
