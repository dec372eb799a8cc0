-- Retention (newsdedup prune): what is thinned keeps a trace.

-- A feed body removed by retention: the fetch row stays (status, sizes, items parsed), the body goes.
ALTER TABLE feed_fetches ADD COLUMN IF NOT EXISTS body_pruned_at timestamptz;

-- Daily totals of llm_calls rows whose detail was removed (cost reports over any period stay exact).
CREATE TABLE IF NOT EXISTS llm_call_daily_totals (
    day            date NOT NULL,              -- UTC day of llm_calls.created_at
    task           text NOT NULL,
    model          text NOT NULL,
    status         text NOT NULL,
    calls          bigint NOT NULL,
    tokens_in      bigint NOT NULL,
    tokens_out     bigint NOT NULL,
    tokens_cached  bigint NOT NULL,
    cost_usd       numeric(16, 6) NOT NULL,
    latency_ms_sum bigint NOT NULL,
    PRIMARY KEY (day, task, model, status)
);

CREATE INDEX IF NOT EXISTS llm_calls_created_idx ON llm_calls (created_at);
CREATE INDEX IF NOT EXISTS feed_fetches_body_idx ON feed_fetches (partition_hour) WHERE body_gzip IS NOT NULL;
