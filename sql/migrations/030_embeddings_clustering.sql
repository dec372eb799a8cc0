-- Embeddings / clustering.
-- Keep vectors inline: a 512-d vector is 2,056 bytes, just over the 2 kB TOAST threshold, and a
-- detoast per distance made an exact KNN scan of 11k items take 141 ms instead of a few ms
-- (EXPLAIN ANALYZE on the gnews dev set: 132k buffer hits per query). MAIN still allows
-- out-of-line storage as a last resort, so large (openai) vectors keep working.
ALTER TABLE item_embeddings ALTER COLUMN embedding SET STORAGE MAIN;
ALTER TABLE embedding_cache ALTER COLUMN embedding SET STORAGE MAIN;
ALTER TABLE stories ALTER COLUMN centroid SET STORAGE MAIN;

-- Pass-2 window scans filter on (model, published_at) and membership.
CREATE INDEX IF NOT EXISTS story_items_story_pass_idx ON story_items (story_id, pass);
