-- Model results kept by what they were computed from (shared/models/cache.py), so rebuilding stories or
-- re-running hours reuses them instead of paying again. Not tied to stories: a rebuilt story
-- with the same articles finds its answer here after the old story row is gone.
CREATE TABLE IF NOT EXISTS llm_results (
    cache_key       text PRIMARY KEY,           -- sha256 of the fields below
    task            text NOT NULL,
    model           text NOT NULL,
    prompt_version  text NOT NULL,
    target_langs    text NOT NULL DEFAULT '',
    input_hash      text NOT NULL,              -- sha256 of the system + user text the model read
    -- ok: the model's (cleaned) JSON reply; invalid / rejected: a permanent failure (the same
    -- request fails the same way on a rebuild: marked -1 again without paying for it again)
    status          text NOT NULL DEFAULT 'ok' CHECK (status IN ('ok', 'invalid', 'rejected')),
    result          jsonb,
    error           text,
    attempts        integer NOT NULL DEFAULT 1,
    tokens_in       integer NOT NULL DEFAULT 0,
    tokens_out      integer NOT NULL DEFAULT 0,
    cost_usd        numeric(12, 6) NOT NULL DEFAULT 0,
    created_at      timestamptz NOT NULL DEFAULT now(),
    last_used_at    timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX IF NOT EXISTS llm_results_last_used_idx ON llm_results (last_used_at);
-- A reused answer is an llm_calls row with cached = true and zero tokens and cost.
ALTER TABLE llm_calls ADD COLUMN IF NOT EXISTS cached boolean NOT NULL DEFAULT false;
ALTER TABLE llm_calls ADD COLUMN IF NOT EXISTS cache_key text;
-- The model's own significance when the evidence cap (stages/llm/scoring.py: bound_significance) lowered it.
ALTER TABLE story_scores ADD COLUMN IF NOT EXISTS model_significance real;
