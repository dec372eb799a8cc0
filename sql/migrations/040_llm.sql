-- LLM stages: accounting of prompt-cache hits, why a story's scoring failed,
-- and partial indexes for the two work queues (needs_score = 1, translation status = 1).
ALTER TABLE llm_calls ADD COLUMN IF NOT EXISTS tokens_cached integer NOT NULL DEFAULT 0;
ALTER TABLE stories ADD COLUMN IF NOT EXISTS score_error text;
ALTER TABLE story_scores ADD COLUMN IF NOT EXISTS languages text[] NOT NULL DEFAULT '{}';
ALTER TABLE story_scores ADD COLUMN IF NOT EXISTS source_count integer NOT NULL DEFAULT 0;
CREATE INDEX IF NOT EXISTS stories_needs_score_idx ON stories (updated_partition) WHERE needs_score = 1;
CREATE INDEX IF NOT EXISTS story_translations_pending_idx ON story_translations (story_id) WHERE status = 1;
CREATE INDEX IF NOT EXISTS llm_calls_story_idx ON llm_calls (story_id) WHERE story_id IS NOT NULL;
