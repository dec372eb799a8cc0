-- Merges the anchor check refused (clustering/anchors.py), per story and hour, so `newsdedup
-- explain` shows which anchors conflicted:
--   vetoes  [[item, other item or null, cosine, pass, kinds, item's anchors, other side's anchors], ...]
--           pass 2: the KNN edge item -- other was dropped before the guard (item is a member of
--           this story, other was kept out); pass 1 / 3: item's best centroid match was this story
--           (other is null; the other side's anchors are the story's members')
-- A story that only refused items in H (pass 1) gets a row with empty edges and cut groups.
ALTER TABLE story_decisions ADD COLUMN IF NOT EXISTS vetoes jsonb NOT NULL DEFAULT '[]'::jsonb;
